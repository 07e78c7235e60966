// examine_program_image: the program headers, and the dynamic section's
// DT_NEEDED names, read with pread. This runs in exec hooks, possibly in a
// vfork child that shares the parent's memory: no heap, no library that
// allocates (libelf does), no hook. Only the few fields needed are read.
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
bool file_offset(int fd, const Elf64_Ehdr& eh, uint64_t vaddr, uint64_t* offset) {
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + i * sizeof ph)) return false;
    if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
      *offset = ph.p_offset + (vaddr - ph.p_vaddr);
      return true;
    }
  }
  return false;
}

// The sanitizer named by one of the DT_NEEDED entries of the dynamic
// section at `dynamic` (`size` bytes), or "".
const char* sanitizer_needed(int fd, const Elf64_Ehdr& eh, uint64_t dynamic, uint64_t size) {
  uint64_t strtab = 0, strsz = 0;
  bool have_strtab = false;
  // Two passes over the section: the string table's address may come after
  // the DT_NEEDED entries that point into it.
  for (int pass = 0; pass < 2; ++pass) {
    uint64_t strings = 0;
    if (pass == 1 && (!have_strtab || !file_offset(fd, eh, strtab, &strings))) return "";
    for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= size; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      if (!read_at(fd, &d, sizeof d, dynamic + at) || d.d_tag == DT_NULL) break;
      if (pass == 0) {
        if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr, have_strtab = true;
        if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
        continue;
      }
      if (d.d_tag != DT_NEEDED || d.d_un.d_val >= strsz) continue;
      char name[64] = {};
      const uint64_t room = strsz - d.d_un.d_val < sizeof name - 1 ? strsz - d.d_un.d_val : sizeof name - 1;
      if (!read_at(fd, name, room, strings + d.d_un.d_val)) continue;
      for (const SanitizerRuntime& s : kSanitizerRuntimes)
        if (std::strncmp(name, s.prefix, std::strlen(s.prefix)) == 0) return s.why;
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
  const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return image;
  // A 32-bit header is 52 bytes, a 64-bit one 64: a file that is a 32-bit
  // header and nothing else is shorter than Elf64_Ehdr, so this reads what
  // there is (e_machine ends at byte 20).
  Elf64_Ehdr eh{};
  const long got = syscall(SYS_pread64, fd, &eh, sizeof eh, 0);
  const bool elf = got >= 20 && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0;
  if (elf && *foreign_program(eh) != '\0') {
    image.why = foreign_program(eh);
    image.without_preload = true;
  } else if (elf && got == static_cast<long>(sizeof eh) && eh.e_phentsize == sizeof(Elf64_Phdr)) {
    bool interp = false;
    uint64_t dynamic = 0, dynamic_size = 0;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + i * sizeof ph)) break;
      interp |= ph.p_type == PT_INTERP;
      if (ph.p_type == PT_DYNAMIC) dynamic = ph.p_offset, dynamic_size = ph.p_filesz;
    }
    // No interpreter, no loader to read LD_PRELOAD (a static PIE included).
    if (!interp && !is_own_loader(st)) {
      image.why = "static binary";
    } else if (dynamic_size != 0) {
      image.why = sanitizer_needed(fd, eh, dynamic, dynamic_size);
      image.without_preload = *image.why != '\0';
    }
  }
  syscall(SYS_close, fd);
  return image;
}

}  // namespace spoor::preload
