// Modules as a trace describes them: biases, overlapping processes, files
// that changed or vanished, a captured vDSO image, and bad files. Every
// address keeps one frame, unresolved ones as module+offset.
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "spoor/symbolizer/file_by_build_id.h"
#include "symbolizer_test_support.h"

namespace spoor::symbolizer::test {
namespace {

const std::string kVariants = SPOOR_SYM_VARIANTS;

TEST(Modules, RuntimeAddressesResolveThroughTheBias) {
  const uint64_t main_address = symbol_address(SPOOR_SYM_PIE, "main");
  ASSERT_NE(main_address, 0u);
  Symbolizer symbolizer;
  ModuleInfo info;
  info.path = SPOOR_SYM_PIE;
  info.build_id = build_id_of(SPOOR_SYM_PIE);
  info.bias = 0x555555554000;
  const ModuleId id = symbolizer.add_module(info);
  const Location& l = symbolizer.symbolize(id, info.bias + main_address);
  EXPECT_TRUE(l.resolved);
  EXPECT_EQ(l.module, SPOOR_SYM_PIE);
  EXPECT_EQ(l.module_address, main_address);
  EXPECT_EQ(l.frames.back().function, "main");
  EXPECT_NE(l.frames.back().file.find("inline_heavy.cpp"), std::string::npos);
  EXPECT_TRUE(symbolizer.problems().empty());
}

TEST(Modules, ProcessesWithOverlappingAddressesEachGetTheirOwn) {
  // Two processes map different files at the same runtime address.
  const uint64_t main_address = symbol_address(SPOOR_SYM_C, "main");
  const uint64_t area = symbol_address(SPOOR_SYM_SHARED, "_ZN7fixture10shape_areaEl");
  ASSERT_NE(main_address, 0u);
  ASSERT_NE(area, 0u);
  Symbolizer symbolizer;
  ModuleInfo first;
  first.path = SPOOR_SYM_C;
  first.bias = 0x7f0000000000;
  ModuleInfo second;
  second.path = SPOOR_SYM_SHARED;
  second.bias = 0x7f0000000000 + main_address - area;
  const ModuleId a = symbolizer.add_module(first);
  const ModuleId b = symbolizer.add_module(second);
  EXPECT_EQ(symbolizer.symbolize(a, first.bias + main_address).frames.back().function, "main");
  EXPECT_EQ(symbolizer.symbolize(b, first.bias + main_address).frames.back().function,
            "fixture::shape_area(long)");
}

TEST(Modules, ResultsAreMemoizedPerAddress) {
  Symbolizer symbolizer;
  const uint64_t main_address = symbol_address(SPOOR_SYM_PIE, "main");
  const Location& first = symbolizer.symbolize_file(SPOOR_SYM_PIE, main_address);
  const Location& again = symbolizer.symbolize_file(SPOOR_SYM_PIE, main_address);
  EXPECT_EQ(&first, &again);
}

TEST(Modules, ChangedBuildIdIsAProblemAndNothingIsMisresolved) {
  const uint64_t main_address = symbol_address(SPOOR_SYM_PIE, "main");
  Symbolizer symbolizer;
  ModuleInfo info;
  info.path = SPOOR_SYM_PIE;
  info.build_id = {0xde, 0xad, 0xbe, 0xef};
  info.bias = 0x1000000;
  const ModuleId id = symbolizer.add_module(info);
  const Location& l = symbolizer.symbolize(id, info.bias + main_address);
  EXPECT_FALSE(l.resolved);
  ASSERT_EQ(l.frames.size(), 1u);
  EXPECT_EQ(l.frames[0].function, "");
  EXPECT_EQ(l.module, SPOOR_SYM_PIE);
  EXPECT_EQ(l.module_address, main_address);
  ASSERT_EQ(symbolizer.problems().size(), 1u);
  EXPECT_NE(symbolizer.problems()[0].message.find("build ID"), std::string::npos)
      << symbolizer.problems()[0].message;
  EXPECT_NE(symbolizer.problems()[0].message.find("deadbeef"), std::string::npos);
  // Where the recorded build was looked for, and what would find it.
  EXPECT_NE(symbolizer.problems()[0].message.find("no file with build ID deadbeef under /usr/lib/debug/.build-id"),
            std::string::npos)
      << symbolizer.problems()[0].message;
}

// The trace's build of a module, found by its build ID where the recorded
// path no longer holds it: the separate debug file of a build-id tree
// names addresses as the binary would.
TEST(Modules, MissingFileIsFoundByItsBuildIdUnderADebugDir) {
  Options options;
  options.debug_dirs.push_back(kVariants + "/buildid/debug");
  Symbolizer symbolizer(options);
  expect_the_gone_pie_named(symbolizer);
}

// A build-id tree holding only the separate debug file: it names
// addresses, but has no code bytes (no .eh_frame) for an unwinder.
TEST(Modules, ADebugFileServesSymbolsButNotUnwinding) {
  unsetenv("DEBUGINFOD_URLS");
  Options options;
  options.debug_dirs.push_back(kVariants + "/buildid/debug");
  const std::vector<uint8_t> id = build_id_of(SPOOR_SYM_PIE);
  const FoundFile for_symbols = file_by_build_id(id, options, FileUse::symbols);
  EXPECT_TRUE(for_symbols.debug_only);
  EXPECT_EQ(for_symbols.path, kVariants + "/buildid/debug/.build-id/" + build_id_hex(id.data(), 1) + "/" +
                                  build_id_hex(id.data() + 1, id.size() - 1) + ".debug");
  EXPECT_EQ(for_symbols.where, "--debug-dir " + kVariants + "/buildid/debug");
  EXPECT_EQ(file_by_build_id(id, options, FileUse::unwinding).path, "");
}

// A file upgraded since the recording: another build at the recorded path.
// Its own symbols would misname every address; the recorded build, found
// by its ID, names them.
TEST(Modules, AChangedFileGivesWayToTheRecordedBuildFoundByItsId) {
  const uint64_t main_address = symbol_address(SPOOR_SYM_PIE, "main");
  Options options;
  options.debug_dirs.push_back(kVariants + "/buildid/debug");
  Symbolizer symbolizer(options);
  ModuleInfo info;
  info.path = SPOOR_SYM_C;  // another program now stands at the path
  info.build_id = build_id_of(SPOOR_SYM_PIE);
  const Location& l = symbolizer.symbolize(symbolizer.add_module(info), main_address);
  EXPECT_TRUE(l.resolved);
  EXPECT_EQ(l.frames.back().function, "main");
  EXPECT_NE(l.frames.back().file.find("inline_heavy.cpp"), std::string::npos) << l.frames.back().file;
  EXPECT_TRUE(symbolizer.problems().empty()) << symbolizer.problems()[0].message;
}

TEST(Modules, MissingFileIsAProblem) {
  Symbolizer symbolizer;
  ModuleInfo info;
  info.path = "/nonexistent/libgone.so";
  const ModuleId id = symbolizer.add_module(info);
  const Location& l = symbolizer.symbolize(id, 0x1234);
  EXPECT_FALSE(l.resolved);
  EXPECT_EQ(l.frames.size(), 1u);
  EXPECT_EQ(l.module, "/nonexistent/libgone.so");
  ASSERT_EQ(symbolizer.problems().size(), 1u);
  EXPECT_NE(symbolizer.problems()[0].message.find("cannot read"), std::string::npos);
  // Once per module, however many addresses.
  symbolizer.symbolize(id, 0x5678);
  EXPECT_EQ(symbolizer.problems().size(), 1u);
}

TEST(Modules, SysrootPrefixesModulePaths) {
  const uint64_t main_address = symbol_address(SPOOR_SYM_PIE, "main");
  const std::string pie = SPOOR_SYM_PIE;
  const size_t slash = pie.rfind('/');
  Options options;
  options.sysroot = pie.substr(0, slash);
  Symbolizer symbolizer(options);
  ModuleInfo info;
  info.path = pie.substr(slash);  // "/spoor_sym_fixture_pie", as a chroot's process saw it
  const ModuleId id = symbolizer.add_module(info);
  EXPECT_EQ(symbolizer.symbolize(id, main_address).frames.back().function, "main");
}

TEST(Modules, NotAnElfFileIsAProblem) {
  Symbolizer symbolizer;
  const Location& l = symbolizer.symbolize_file(kVariants + "/not-elf/prog", 0x1000);
  EXPECT_FALSE(l.resolved);
  EXPECT_EQ(l.frames.size(), 1u);
  EXPECT_EQ(symbolizer.problems().size(), 1u);
}

TEST(Modules, CorruptDwarfNeverCrashes) {
  Symbolizer symbolizer(addr2line_options());
  size_t frames = 0;
  for (uint64_t a : code_addresses(SPOOR_SYM_PIE, 5))
    frames += symbolizer.symbolize_file(kVariants + "/corrupt-dwarf/prog", a).frames.size();
  EXPECT_GT(frames, 0u);
}

TEST(Modules, AddressInNoSectionHasOneUnresolvedFrame) {
  Symbolizer symbolizer(addr2line_options());
  const Location& l = symbolizer.symbolize_file(SPOOR_SYM_PIE, 0xdead0000);
  EXPECT_FALSE(l.resolved);
  ASSERT_EQ(l.frames.size(), 1u);
  EXPECT_EQ(l.module_address, 0xdead0000u);
}

TEST(Modules, UnknownModuleIdHasOneUnresolvedFrame) {
  Symbolizer symbolizer;
  const Location& l = symbolizer.symbolize(42, 0x1234);
  EXPECT_FALSE(l.resolved);
  EXPECT_EQ(l.frames.size(), 1u);
}

// The vDSO has no file: a trace carries its image.
TEST(Modules, InMemoryVdsoImage) {
  const auto* base = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) GTEST_SKIP() << "no vDSO";
  std::ifstream maps("/proc/self/maps");
  std::string line;
  uint64_t size = 0;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") == std::string::npos) continue;
    uint64_t start = 0, end = 0;
    std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &start, &end);
    if (start == reinterpret_cast<uintptr_t>(base)) size = end - start;
  }
  ASSERT_GT(size, 0u);
  std::vector<uint8_t> image(base, base + size);

  // Where clock_gettime is, from the image's own dynamic symbols.
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(reinterpret_cast<char*>(image.data()), image.size());
  ASSERT_NE(elf, nullptr);
  uint64_t target = 0, vaddr_base = UINT64_MAX;
  size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD)
      vaddr_base = std::min<uint64_t>(vaddr_base, ph.p_vaddr);
  }
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data != nullptr && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name != nullptr && std::strcmp(name, "__vdso_clock_gettime") == 0) target = sym.st_value;
    }
  }
  elf_end(elf);
  ASSERT_NE(target, 0u);

  Symbolizer symbolizer;
  ModuleInfo info;
  info.path = "[vdso]";
  info.image = image;
  info.start = reinterpret_cast<uintptr_t>(base);
  info.size = size;
  info.bias = reinterpret_cast<uintptr_t>(base) - vaddr_base;
  const ModuleId id = symbolizer.add_module(info);
  const Location& l = symbolizer.symbolize(id, info.bias + target + 1);
  EXPECT_TRUE(l.resolved);
  EXPECT_NE(l.frames[0].function.find("clock_gettime"), std::string::npos) << l.frames[0].function;
  EXPECT_EQ(l.module, "[vdso]");
}

TEST(Modules, MissingDebugInfoNamesTheDbgsymPackage) {
  unsetenv("DEBUGINFOD_URLS");
  // With merged /usr, dpkg knows coreutils' files under /bin.
  const std::string binary = "/usr/bin/true";
  const CommandResult owner = run("dpkg -S /bin/true 2>/dev/null");
  if (owner.status != 0) GTEST_SKIP() << "dpkg does not know " << binary;
  const std::string package = owner.out.substr(0, owner.out.find_first_of(":,"));
  Symbolizer symbolizer;
  ModuleInfo info;
  info.path = binary;
  symbolizer.symbolize(symbolizer.add_module(info), 0x1000);
  if (symbolizer.problems().empty()) GTEST_SKIP() << "debug info for " << binary << " is installed";
  EXPECT_NE(symbolizer.problems()[0].message.find("install " + package + "-dbgsym"), std::string::npos)
      << symbolizer.problems()[0].message;
  EXPECT_NE(symbolizer.problems()[0].message.find("set DEBUGINFOD_URLS=https://debuginfod.debian.net"),
            std::string::npos)
      << symbolizer.problems()[0].message;
}

}  // namespace
}  // namespace spoor::symbolizer::test
