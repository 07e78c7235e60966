// examine_program_image (preload/program_image.h) on ELF headers of other
// classes and machines, written by hand: a 32-bit or foreign program's
// loader cannot load the shim and would say so on the program's stderr,
// so such a program starts without it and is named.
#include <elf.h>
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../program_image.h"
#include "run_command.h"

namespace {

using spoor::preload::examine_program_image;
using spoor::preload::sanitizer_runtime_needed;

// A file holding only an ELF header of the given class and machine.
std::string header_file(const std::string& name, unsigned char elf_class, uint16_t machine) {
  unsigned char header[sizeof(Elf64_Ehdr)] = {};
  std::memcpy(header, ELFMAG, SELFMAG);
  header[EI_CLASS] = elf_class;
  header[EI_DATA] = ELFDATA2LSB;
  header[EI_VERSION] = EV_CURRENT;
  const uint16_t type = ET_EXEC;
  std::memcpy(header + offsetof(Elf64_Ehdr, e_type), &type, sizeof type);
  std::memcpy(header + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof machine);
  const std::string path = spoor::test::temp_path(name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(header), elf_class == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof header);
  return path;
}

#if defined(__aarch64__)
constexpr uint16_t kThisMachine = EM_AARCH64;
#elif defined(__riscv)
constexpr uint16_t kThisMachine = EM_RISCV;
#else
constexpr uint16_t kThisMachine = EM_X86_64;
#endif

// A 64-bit program of this machine, laid out by hand: its program headers
// at `phoff` (beyond the first page, where linkers never put them, or right
// after the ELF header), an interpreter or none, and a dynamic section of
// `dynamic_entries` entries whose DT_NEEDED names are `needed` (the last
// ones), with DT_STRTAB and DT_STRSZ after them.
std::string program_file(const std::string& name, uint64_t phoff, bool interp, size_t dynamic_entries,
                         const std::vector<std::string>& needed) {
  constexpr uint64_t kStringsAt = 0x2800, kDynamicAt = 0x3000, kVaddr = 0x400000;
  std::vector<unsigned char> file(0x6000, 0);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = kThisMachine;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = phoff;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  std::vector<Elf64_Phdr> ph;
  if (interp) ph.push_back({.p_type = PT_INTERP, .p_flags = PF_R, .p_offset = 0x2000, .p_vaddr = kVaddr + 0x2000,
                            .p_paddr = 0, .p_filesz = 28, .p_memsz = 28, .p_align = 1});
  ph.push_back({.p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0, .p_vaddr = kVaddr, .p_paddr = 0,
                .p_filesz = file.size(), .p_memsz = file.size(), .p_align = 0x1000});
  ph.push_back({.p_type = PT_DYNAMIC, .p_flags = PF_R, .p_offset = kDynamicAt, .p_vaddr = kVaddr + kDynamicAt,
                .p_paddr = 0, .p_filesz = dynamic_entries * sizeof(Elf64_Dyn),
                .p_memsz = dynamic_entries * sizeof(Elf64_Dyn), .p_align = 8});
  eh.e_phnum = static_cast<uint16_t>(ph.size());
  if (phoff + ph.size() * sizeof(Elf64_Phdr) > file.size()) file.resize(phoff + ph.size() * sizeof(Elf64_Phdr));
  std::memcpy(file.data(), &eh, sizeof eh);
  std::memcpy(file.data() + phoff, ph.data(), ph.size() * sizeof(Elf64_Phdr));
  std::memcpy(file.data() + 0x2000, "/lib64/ld-linux-x86-64.so.2", 28);
  // Entries: filler (DT_DEBUG), the DT_NEEDED names, DT_STRTAB, DT_STRSZ,
  // then DT_NULL.
  std::string strings(1, '\0');
  std::vector<Elf64_Dyn> dyn(dynamic_entries - needed.size() - 3, Elf64_Dyn{DT_DEBUG, {0}});
  for (const std::string& n : needed) {
    dyn.push_back({DT_NEEDED, {strings.size()}});
    strings += n + '\0';
  }
  dyn.push_back({DT_STRTAB, {kVaddr + kStringsAt}});
  dyn.push_back({DT_STRSZ, {strings.size()}});
  dyn.push_back({DT_NULL, {0}});
  std::memcpy(file.data() + kDynamicAt, dyn.data(), dyn.size() * sizeof(Elf64_Dyn));
  std::memcpy(file.data() + kStringsAt, strings.data(), strings.size());
  const std::string path = spoor::test::temp_path(name);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), static_cast<long>(file.size()));
  return path;
}

TEST(ProgramImage, ASanitizerRuntimeIsFoundInAShortDynamicSection) {
  const auto image = examine_program_image(
      program_file("tsan-program", sizeof(Elf64_Ehdr), true, 12, {"libm.so.6", "libtsan.so.2", "libc.so.6"}).c_str(),
      false);
  EXPECT_STREQ(image.why, "ThreadSanitizer build");
  EXPECT_TRUE(image.without_preload);
}

// Program headers past the first page, which is read whole, and a dynamic
// section longer than the chunk it is read in, the sanitizer's name among
// its last entries.
TEST(ProgramImage, HeadersBeyondTheFirstPageAndALongDynamicSectionAreRead) {
  const auto image = examine_program_image(
      program_file("asan-program", 0x4000, true, 150, {"libstdc++.so.6", "libasan.so.8"}).c_str(), false);
  EXPECT_STREQ(image.why, "AddressSanitizer build");
  EXPECT_TRUE(image.without_preload);
  const auto plain = examine_program_image(
      program_file("plain-program", 0x4000, true, 150, {"libstdc++.so.6", "libm.so.6"}).c_str(), false);
  EXPECT_STREQ(plain.why, "");
  EXPECT_FALSE(plain.without_preload);
}

// The same reading for any ELF file, a library included (spoor record's
// check of the shim it preloads): no interpreter needed.
TEST(ProgramImage, TheSanitizerRuntimeAFileNeedsIsNamed) {
  EXPECT_STREQ(sanitizer_runtime_needed(
                   program_file("asan-library", sizeof(Elf64_Ehdr), false, 12, {"libasan.so.8", "libc.so.6"}).c_str()),
               "AddressSanitizer build");
  EXPECT_STREQ(sanitizer_runtime_needed(
                   program_file("tsan-library", 0x4000, false, 150, {"libm.so.6", "libtsan.so.2"}).c_str()),
               "ThreadSanitizer build");
  EXPECT_STREQ(sanitizer_runtime_needed(
                   program_file("plain-library", sizeof(Elf64_Ehdr), false, 12, {"libunwind.so.8", "libc.so.6"}).c_str()),
               "");
  EXPECT_STREQ(sanitizer_runtime_needed("/nonexistent/libspoor-preload.so"), "");
}

TEST(ProgramImage, AProgramWithoutAnInterpreterIsAStaticBinary) {
  for (const uint64_t phoff : {uint64_t{sizeof(Elf64_Ehdr)}, uint64_t{0x4000}}) {
    const auto image = examine_program_image(program_file("static-program", phoff, false, 8, {}).c_str(), false);
    EXPECT_STREQ(image.why, "static binary") << "program headers at " << phoff;
    EXPECT_FALSE(image.without_preload);
  }
}

// A dynamic section cut short by the end of the file (its DT_NULL gone)
// is read as far as it goes.
TEST(ProgramImage, ADynamicSectionCutByTheFileEndIsReadAsFarAsItGoes) {
  const std::string path = program_file("cut-program", sizeof(Elf64_Ehdr), true, 12, {"libasan.so.8"});
  std::vector<char> bytes(0x3000 + 11 * sizeof(Elf64_Dyn));
  std::ifstream(path, std::ios::binary).read(bytes.data(), static_cast<long>(bytes.size()));
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<long>(bytes.size()));
  const auto image = examine_program_image(path.c_str(), false);
  EXPECT_STREQ(image.why, "AddressSanitizer build");
  EXPECT_TRUE(image.without_preload);
}

TEST(ProgramImage, AThirtyTwoBitProgramStartsWithoutTheShimAndIsNamed) {
  const auto image = examine_program_image(header_file("i386-program", ELFCLASS32, EM_386).c_str(), false);
  EXPECT_STREQ(image.why, "32-bit x86 program");
  EXPECT_TRUE(image.without_preload);
}

TEST(ProgramImage, AnotherMachinesProgramStartsWithoutTheShimAndIsNamed) {
#if defined(__aarch64__)
  const uint16_t foreign = EM_X86_64;
  const char* name = "program for another machine";
#else
  const uint16_t foreign = EM_AARCH64;
  const char* name = "aarch64 program";
#endif
  const auto image = examine_program_image(header_file("foreign-program", ELFCLASS64, foreign).c_str(), false);
  EXPECT_STREQ(image.why, name);
  EXPECT_TRUE(image.without_preload);
}

TEST(ProgramImage, ThisMachinesDynamicProgramTakesTheShim) {
  const auto image = examine_program_image("true", true);
  EXPECT_STREQ(image.why, "");
  EXPECT_FALSE(image.without_preload);
}

// What examine_program_image says of `path` in a child that runs as
// nobody (uid and gid 65534), which gains file capabilities at an exec.
std::string examined_as_nobody(const std::string& path) {
  int out[2];
  if (pipe(out) != 0) return "no pipe";
  const pid_t pid = fork();
  if (pid == 0) {
    close(out[0]);
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
      _exit(1);
    const char* why = examine_program_image(path.c_str(), false).why;
    const bool written = write(out[1], why, std::strlen(why)) >= 0;
    _exit(written ? 0 : 2);
  }
  close(out[1]);
  std::string why;
  char buffer[64];
  ssize_t got;
  while ((got = read(out[0], buffer, sizeof buffer)) > 0) why.append(buffer, static_cast<size_t>(got));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? why : "child failed";
}

// A program given file capabilities (setcap cap_net_raw+ep) runs in the
// loader's secure mode for anyone but root, who gains nothing by them:
// LD_PRELOAD is ignored, and the recording says why instead of guessing
// "a static or setuid program".
TEST(ProgramImage, AProgramWithFileCapabilitiesIsNamedForAUserOtherThanRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "setting file capabilities takes root";
  const std::string path = spoor::test::temp_path("capable-true");
  std::filesystem::copy_file("/bin/true", path, std::filesystem::copy_options::overwrite_existing);
  chmod(path.c_str(), 0755);
  // struct vfs_cap_data, revision 2, effective: CAP_NET_RAW (13) permitted.
  const uint32_t caps[5] = {0x02000001u, 1u << 13, 0, 0, 0};
  if (setxattr(path.c_str(), "security.capability", caps, sizeof caps, 0) != 0)
    GTEST_SKIP() << "no file capabilities on this file system: " << std::strerror(errno);
  EXPECT_STREQ(examine_program_image(path.c_str(), false).why, "") << "root";
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (access(dir.c_str(), X_OK) != 0 || (std::filesystem::status(dir).permissions() & std::filesystem::perms::others_exec) ==
                                            std::filesystem::perms::none)
    GTEST_SKIP() << dir << " is closed to other users";
  EXPECT_EQ(examined_as_nobody(path), "program with file capabilities");
  EXPECT_EQ(examined_as_nobody("/bin/true"), "") << "a plain program";
}

}  // namespace
