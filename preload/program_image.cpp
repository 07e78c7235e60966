// examine_program_image: the program headers, and the dynamic section's
// DT_NEEDED names, read with pread. This runs in exec hooks, possibly in a
// vfork child that shares the parent's memory: no heap, no library that
// allocates (libelf does), no hook. Only the few fields needed are looked
// at, from the file's first page and one read of the dynamic section; the
// buffers (~9 KiB with the $PATH lookup's) are on the caller's stack.
#include "program_image.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace spoor::preload {
namespace {

// True when `st` is the dynamic loader this program was started with (the
// PT_INTERP of its own headers). Run as a program (`ld.so PROGRAM`, as ldd
// and some launchers do), the loader has no interpreter of its own, like a
// static binary, yet reads LD_PRELOAD for the program it loads.
bool is_own_loader(const struct stat& st) {
  const auto* phdr = reinterpret_cast<const Elf64_Phdr*>(getauxval(AT_PHDR));
  const unsigned long count = getauxval(AT_PHNUM);
  if (phdr == nullptr) return false;
  uintptr_t bias = 0;
  const char* interp = nullptr;
  for (unsigned long i = 0; i < count; ++i)
    if (phdr[i].p_type == PT_PHDR) bias = reinterpret_cast<uintptr_t>(phdr) - phdr[i].p_vaddr;
  for (unsigned long i = 0; i < count; ++i)
    if (phdr[i].p_type == PT_INTERP) interp = reinterpret_cast<const char*>(bias + phdr[i].p_vaddr);
  struct stat loader;
  return interp != nullptr && syscall(SYS_newfstatat, AT_FDCWD, interp, &loader, 0) == 0 &&
         loader.st_dev == st.st_dev && loader.st_ino == st.st_ino;
}

bool read_at(int fd, void* to, size_t size, uint64_t offset) {
  return syscall(SYS_pread64, fd, to, size, static_cast<off_t>(offset)) == static_cast<long>(size);
}

// The program's file with its first bytes read in one system call: the ELF
// header and, in every linker's layout, the program headers. An exec hook
// runs this for each exec, and one pread of 1 KiB costs about what one of
// 16 bytes does (~1.3 us here; header by header, an exec made ~55 reads).
// 1 KiB holds the header and 17 program headers (programs have 10-14; more
// are read one by one), and keeps off the stack of the thread that execs,
// which may be small.
struct ImageFile {
  static constexpr size_t kHead = 1024;
  int fd = -1;
  size_t head_size = 0;  // bytes of `head` read
  alignas(8) unsigned char head[kHead];

  // Opens `path` and reads its first page; false when it cannot be opened
  // (a page that cannot be read leaves head_size 0).
  bool open(const char* path) {
    fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
    if (fd < 0) return false;
    const long got = syscall(SYS_pread64, fd, head, sizeof head, 0);
    head_size = got > 0 ? static_cast<size_t>(got) : 0;
    return true;
  }
  // The ELF header, or the bytes there are (a file shorter than one).
  size_t header(Elf64_Ehdr* eh) const {
    const size_t n = head_size < sizeof *eh ? head_size : sizeof *eh;
    std::memcpy(eh, head, n);
    return n;
  }
  // Program header `i`: from the first page, or read on its own where a
  // file puts its headers further in.
  bool program_header(const Elf64_Ehdr& eh, unsigned i, Elf64_Phdr* ph) const {
    const uint64_t at = eh.e_phoff + uint64_t{i} * sizeof *ph;
    if (eh.e_phoff < head_size && at + sizeof *ph <= head_size) {
      std::memcpy(ph, head + at, sizeof *ph);
      return true;
    }
    return read_at(fd, ph, sizeof *ph, at);
  }
  // Whether it has a PT_INTERP, and where its PT_DYNAMIC lies (size 0:
  // none), from the program headers that can be read.
  struct Segments {
    bool interp = false;
    uint64_t dynamic = 0, dynamic_size = 0;
  };
  Segments segments(const Elf64_Ehdr& eh) const {
    Segments s;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      if (!program_header(eh, i, &ph)) break;
      s.interp |= ph.p_type == PT_INTERP;
      if (ph.p_type == PT_DYNAMIC) s.dynamic = ph.p_offset, s.dynamic_size = ph.p_filesz;
    }
    return s;
  }
};

// The sanitizers whose shared runtime cannot come after the shim, by the
// start of the library's name (gcc's, then clang's -shared-libsan ones).
// LeakSanitizer and UBSan alone intercept too, but start with the shim
// ahead of them (tests/preload: SanitizerBuilds).
struct SanitizerRuntime {
  const char* prefix;
  const char* why;
};
constexpr SanitizerRuntime kSanitizerRuntimes[] = {
    {"libasan.so", "AddressSanitizer build"},
    {"libtsan.so", "ThreadSanitizer build"},
    {"libhwasan.so", "HWAddressSanitizer build"},
    {"libclang_rt.asan", "AddressSanitizer build"},
    {"libclang_rt.tsan", "ThreadSanitizer build"},
    {"libclang_rt.hwasan", "HWAddressSanitizer build"},
};

// The file offset of virtual address `vaddr`, through the PT_LOAD that
// holds it; false when none does.
bool file_offset(const ImageFile& file, const Elf64_Ehdr& eh, uint64_t vaddr, uint64_t* offset) {
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!file.program_header(eh, i, &ph)) return false;
    if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
      *offset = ph.p_offset + (vaddr - ph.p_vaddr);
      return true;
    }
  }
  return false;
}

// The sanitizer named by one of the DT_NEEDED entries of the dynamic
// section at `dynamic` (`size` bytes), or "". The section is read a chunk
// of entries at a time (a program's has 30-40: one read).
const char* sanitizer_needed(const ImageFile& file, const Elf64_Ehdr& eh, uint64_t dynamic, uint64_t size) {
  constexpr size_t kChunk = 64;
  Elf64_Dyn chunk[kChunk];
  const uint64_t entries = size / sizeof(Elf64_Dyn);
  uint64_t n = 0;  // entries in `chunk`
  uint64_t strtab = 0, strsz = 0;
  bool have_strtab = false;
  // Two passes over the section: the string table's address may come after
  // the DT_NEEDED entries that point into it.
  for (int pass = 0; pass < 2; ++pass) {
    uint64_t strings = 0;
    if (pass == 1 && (!have_strtab || !file_offset(file, eh, strtab, &strings))) return "";
    for (uint64_t first = 0; first < entries; first += kChunk) {
      const uint64_t want = entries - first < kChunk ? entries - first : kChunk;
      // A section of one chunk is read once, for both passes.
      if (pass == 0 || entries > kChunk) {
        const long got = syscall(SYS_pread64, file.fd, chunk, want * sizeof(Elf64_Dyn),
                                 static_cast<off_t>(dynamic + first * sizeof(Elf64_Dyn)));
        n = got > 0 ? static_cast<uint64_t>(got) / sizeof(Elf64_Dyn) : 0;
      }
      bool ended = false;  // at DT_NULL, or where the file ends
      for (uint64_t k = 0; k < n && !ended; ++k) {
        const Elf64_Dyn& d = chunk[k];
        if (d.d_tag == DT_NULL) {
          ended = true;
          break;
        }
        if (pass == 0) {
          if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr, have_strtab = true;
          if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
          continue;
        }
        if (d.d_tag != DT_NEEDED || d.d_un.d_val >= strsz) continue;
        char name[64] = {};
        const uint64_t room = strsz - d.d_un.d_val < sizeof name - 1 ? strsz - d.d_un.d_val : sizeof name - 1;
        if (!read_at(file.fd, name, room, strings + d.d_un.d_val)) continue;
        for (const SanitizerRuntime& s : kSanitizerRuntimes)
          if (std::strncmp(name, s.prefix, std::strlen(s.prefix)) == 0) return s.why;
      }
      if (ended || n < want) break;
    }
  }
  return "";
}

// `path` looked up in $PATH into `found` (PATH_MAX bytes), as execvp does;
// false when no executable of that name is there.
bool search_path_for(const char* path, char* found) {
  const char* dirs = std::getenv("PATH");
  if (dirs == nullptr) dirs = "/bin:/usr/bin";
  for (const char* p = dirs; *p;) {
    const size_t len = std::strcspn(p, ":");
    if (len + 1 + std::strlen(path) < PATH_MAX) {
      std::memcpy(found, p, len);
      found[len] = '/';
      std::strcpy(found + len + 1, path);
      if (syscall(SYS_faccessat, AT_FDCWD, found, X_OK, 0) == 0) return true;
    }
    p += len;
    if (*p) ++p;
  }
  return false;
}

#if defined(__x86_64__)
constexpr uint16_t kOwnMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kOwnMachine = EM_AARCH64;
#elif defined(__riscv)
constexpr uint16_t kOwnMachine = EM_RISCV;
#else
#error "the shim's machine: add it here"
#endif

// A program the shim cannot be loaded into: 32-bit (i386 on an x86-64
// kernel with IA-32 emulation, x32) or for another machine (run by
// qemu-user through binfmt_misc). Its loader would print "wrong ELF class"
// or "cannot open" for the shim on the program's stderr.
const char* foreign_program(const Elf64_Ehdr& eh) {
  // e_machine sits at the same offset in 32- and 64-bit headers.
  if (eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == kOwnMachine) return "";
  switch (eh.e_machine) {
    case EM_386: return "32-bit x86 program";
    case EM_X86_64: return "x32 program";
    case EM_ARM: return "32-bit ARM program";
    case EM_AARCH64: return "aarch64 program";
    case EM_RISCV: return "RISC-V program";
    default: return "program for another machine";
  }
}

}  // namespace

ProgramImage examine_program_image(const char* path, bool search_path) {
  ProgramImage image;
  if (path == nullptr) return image;
  char found[PATH_MAX];
  if (search_path && std::strchr(path, '/') == nullptr) {
    if (!search_path_for(path, found)) return image;
    path = found;
  }
  struct stat st;
  if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0) return image;
  if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) || ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
    image.why = "setuid program";
    return image;
  }
  // File capabilities (setcap) that the exec grants put the loader in
  // secure mode as setuid does: it ignores LD_PRELOAD. Root gains nothing
  // from them (it holds every capability), and its loader reads LD_PRELOAD.
  if (geteuid() != 0 && syscall(SYS_getxattr, path, "security.capability", nullptr, 0) > 0) {
    image.why = "program with file capabilities";
    return image;
  }
  ImageFile file;
  if (!file.open(path)) return image;
  // A 32-bit header is 52 bytes, a 64-bit one 64: a file that is a 32-bit
  // header and nothing else is shorter than Elf64_Ehdr, so this looks at
  // what there is (e_machine ends at byte 20).
  Elf64_Ehdr eh{};
  const size_t got = file.header(&eh);
  const bool elf = got >= 20 && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0;
  if (elf && *foreign_program(eh) != '\0') {
    image.why = foreign_program(eh);
    image.without_preload = true;
  } else if (elf && got == sizeof eh && eh.e_phentsize == sizeof(Elf64_Phdr)) {
    const ImageFile::Segments seg = file.segments(eh);
    // No interpreter, no loader to read LD_PRELOAD (a static PIE included).
    if (!seg.interp && !is_own_loader(st)) {
      image.why = "static binary";
    } else if (seg.dynamic_size != 0) {
      image.why = sanitizer_needed(file, eh, seg.dynamic, seg.dynamic_size);
      image.without_preload = *image.why != '\0';
    }
  }
  syscall(SYS_close, file.fd);
  return image;
}

const char* sanitizer_runtime_needed(const char* path) {
  ImageFile file;
  if (!file.open(path)) return "";
  Elf64_Ehdr eh{};
  const char* why = "";
  if (file.header(&eh) == sizeof eh && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_phentsize == sizeof(Elf64_Phdr)) {
    const ImageFile::Segments seg = file.segments(eh);
    if (seg.dynamic_size != 0) why = sanitizer_needed(file, eh, seg.dynamic, seg.dynamic_size);
  }
  syscall(SYS_close, file.fd);
  return why;
}

}  // namespace spoor::preload
