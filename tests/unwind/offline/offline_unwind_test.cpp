// spoor::unwind on samples a program took of itself (capture_program, built
// -O2 -fomit-frame-pointer): unwound offline, in another process, from the
// copied registers and stack alone, the known chain and main appear in
// order. And bad input: no crash, a short stack and a reason.
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sample_capture.h"
#include "spoor/symbolizer/file_by_build_id.h"
#include "spoor/symbolizer/symbolizer.h"
#include "spoor/unwind/mapping_bias.h"
#include "spoor/unwind/process_unwinder.h"
#include "temp_dir.h"

namespace {

namespace uw = spoor::unwind;
namespace sym = spoor::symbolizer;
using spoor::testing::Capture;
using spoor::testing::CapturedSample;

const Capture& capture() {
  static const Capture c = [] {
    Capture out;
    // One file per test process: ctest runs this binary's tests at once.
    const std::string path = spoor::test::test_temp_path("offline_unwind.capture");
    const std::string cmd = std::string(SPOOR_CAPTURE_PROGRAM) + " " + path + " 40 4";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_TRUE(spoor::testing::read_capture(path, out));
    return out;
  }();
  return c;
}

std::span<const uint8_t> bytes_of(const std::vector<uint64_t>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * 8};
}

uw::UserSample user_sample(const CapturedSample& s) {
  uw::UserSample u;
  u.regs_abi = uw::kRegsAbi64;
  u.regs.mask = s.mask;
  u.regs.values = bytes_of(s.regs);
  u.ip = u.regs.get(uw::kPerfIp).value_or(0);
  u.stack = s.stack;
  return u;
}

// A capture's modules, given to an unwinder and to a symbolizer alike.
struct Unwinding {
  const std::vector<sym::ModuleInfo>& modules;
  uw::ProcessUnwinder unwinder;
  sym::Symbolizer symbols;
  std::vector<sym::ModuleId> ids;

  explicit Unwinding(const Capture& c) : modules(c.modules) {
    for (const auto& m : modules) {
      unwinder.add_module(m);
      ids.push_back(symbols.add_module(m));
    }
  }

  // The outermost function at each pc (frame 0 exact, callers at pc - 1).
  std::vector<std::string> functions(const std::vector<uint64_t>& pcs) {
    std::vector<std::string> out;
    for (size_t i = 0; i < pcs.size(); ++i) {
      const uint64_t at = i == 0 ? pcs[i] : pcs[i] - 1;
      std::string name = "?";
      for (size_t m = 0; m < modules.size(); ++m)
        if (at >= modules[m].start && at - modules[m].start < modules[m].size) {
          name = symbols.symbolize(ids[m], at).frames.back().function;
          break;
        }
      out.push_back(name);
    }
    return out;
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

// Positions of `want` in `names`, in order; false when one is missing or
// out of order.
bool in_order(const std::vector<std::string>& names, const std::vector<std::string>& want) {
  size_t at = 0;
  for (const std::string& w : want) {
    while (at < names.size() && names[at] != w) ++at;
    if (at == names.size()) return false;
    ++at;
  }
  return true;
}

TEST(OfflineUnwind, ChainWithoutFramePointersUnwindsToMain) {
  const Capture& c = capture();
  ASSERT_EQ(c.samples.size(), 40u);
  Unwinding w(c);
  size_t full_chain = 0;
  for (const CapturedSample& s : c.samples) {
    const uw::UnwoundStack u = w.unwinder.unwind(user_sample(s));
    const std::vector<std::string> names = w.functions(u.pcs);
    EXPECT_EQ(u.method, uw::UnwindMethod::dwarf);
    EXPECT_EQ(u.stop_reason, "") << "the walk reached the outermost frame: " << joined(names);
    EXPECT_TRUE(in_order(names, {"main"})) << joined(names) << " / " << u.stop_reason;
    if (in_order(names, {"offline_spin_leaf", "offline_recurse", "offline_chain_c", "offline_chain_b",
                         "offline_chain_a", "main"})) {
      ++full_chain;
      // Frame 0 is the sampled pc itself: the leaf, or (a timer that fired
      // as the leaf began) capture_counter, which the leaf calls first.
      const bool in_leaf = names.front() == "offline_spin_leaf";
      const bool in_leafs_call =
          names.size() > 1 && names[0] == "spoor::testing::capture_counter()" && names[1] == "offline_spin_leaf";
      EXPECT_TRUE(in_leaf || in_leafs_call) << "frame 0 is the sampled pc itself: " << joined(names);
    }
  }
  // The timer can land between calls (in main's loop, a prologue): the
  // spinning leaf holds nearly all the time.
  EXPECT_GE(full_chain, c.samples.size() * 3 / 4);
  EXPECT_TRUE(w.unwinder.problems().empty());
}

// Samples in clock_gettime land in the vDSO, whose CFI only its captured
// image holds: they unwind through it to main all the same.
TEST(OfflineUnwind, SamplesInTheVdsoUnwindThroughItsCapturedImage) {
  Capture c;
  const std::string path = spoor::test::test_temp_path("offline_unwind_vdso.capture");
  const std::string cmd = std::string(SPOOR_CAPTURE_PROGRAM) + " " + path + " 40 1 vdso";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_TRUE(spoor::testing::read_capture(path, c));
  const sym::ModuleInfo* vdso = nullptr;
  for (const auto& m : c.modules)
    if (m.path == "[vdso]") vdso = &m;
  if (vdso == nullptr) GTEST_SKIP() << "no vDSO in this process";
  Unwinding w(c);
  size_t in_vdso = 0;
  for (const CapturedSample& s : c.samples) {
    const uw::UnwoundStack u = w.unwinder.unwind(user_sample(s));
    ASSERT_FALSE(u.pcs.empty());
    if (u.pcs[0] - vdso->start >= vdso->size) continue;
    ++in_vdso;
    const std::vector<std::string> names = w.functions(u.pcs);
    EXPECT_TRUE(in_order(names, {"offline_spin_clock", "offline_chain_a_vdso", "main"}))
        << joined(names) << " / " << u.stop_reason;
  }
  EXPECT_GT(in_vdso, 0u) << "clock_gettime's fast path runs in the vDSO";
  EXPECT_TRUE(w.unwinder.problems().empty());
}

TEST(OfflineUnwind, EmptyStackGivesAShortStackAndSaysWhy) {
  const Capture& c = capture();
  ASSERT_FALSE(c.samples.empty());
  uw::ProcessUnwinder unwinder;
  for (const auto& m : c.modules) unwinder.add_module(m);
  // A sample that unwinds cleanly with its stack: one that landed in the
  // timer's own return path or in libc would fail for reasons of its own.
  CapturedSample s;
  for (const CapturedSample& candidate : c.samples)
    if (unwinder.unwind(user_sample(candidate)).stop_reason.empty()) {
      s = candidate;
      break;
    }
  ASSERT_FALSE(s.regs.empty()) << "no sample unwound cleanly";
  s.stack.clear();
  const uw::UnwoundStack u = unwinder.unwind(user_sample(s));
  ASSERT_FALSE(u.pcs.empty());
  EXPECT_EQ(u.pcs[0], s.regs[uw::kPerfIp]);
  EXPECT_LE(u.pcs.size(), 2u);
  EXPECT_NE(u.stop_reason.find("no copy of the user stack"), std::string::npos) << u.stop_reason;
}

TEST(OfflineUnwind, GarbageRegistersDoNotCrash) {
  const Capture& c = capture();
  uw::ProcessUnwinder unwinder;
  for (const auto& m : c.modules) unwinder.add_module(m);
  uint64_t x = 0x9e3779b97f4a7c15;
  for (int round = 0; round < 50; ++round) {
    CapturedSample s = c.samples[static_cast<size_t>(round) % c.samples.size()];
    for (uint64_t& r : s.regs) r = (x = x * 6364136223846793005u + 1442695040888963407u);
    // Even rounds keep a real pc: with sp made up, the copy still reads as
    // the stack from that sp, so those may well unwind; odd rounds' pc is
    // in no module.
    if (round % 2 == 0) s.regs[uw::kPerfIp] = c.samples[0].regs[uw::kPerfIp];
    const uw::UnwoundStack u = unwinder.unwind(user_sample(s));
    EXPECT_FALSE(u.pcs.empty());
    EXPECT_LT(u.pcs.size(), 256u);
    if (round % 2 == 1) {
      EXPECT_LE(u.pcs.size(), 2u);
      EXPECT_FALSE(u.stop_reason.empty()) << "a made-up pc never unwinds cleanly";
    }
  }
}

TEST(OfflineUnwind, NoRegistersFallsBackToTheCallchainThenThePc) {
  uw::ProcessUnwinder unwinder;
  const std::vector<uint64_t> chain = {0x1000, 0x2000, 0x3000};
  uw::UserSample s;
  s.ip = 0x1000;
  s.callchain = bytes_of(chain);
  uw::UnwoundStack u = unwinder.unwind(s);
  EXPECT_EQ(u.method, uw::UnwindMethod::frame_pointer);
  EXPECT_EQ(u.pcs, chain);
  EXPECT_EQ(u.stop_reason, "no user registers in the sample");
  s.callchain = {};
  u = unwinder.unwind(s);
  EXPECT_EQ(u.method, uw::UnwindMethod::ip_only);
  EXPECT_EQ(u.pcs, std::vector<uint64_t>{0x1000});
}

TEST(OfflineUnwind, RegistersShorterThanTheirMaskReadAsMissing) {
  const std::vector<uint64_t> two = {1, 2};
  uw::PerfRegisters r{uw::kPerfRegsDwarfMask, bytes_of(two)};
  EXPECT_EQ(r.get(uw::kPerfAx), 1u);
  EXPECT_EQ(r.get(uw::kPerfBx), 2u);
  EXPECT_FALSE(r.get(uw::kPerfIp));
  EXPECT_FALSE(r.get(uw::kPerfFlags)) << "not in the mask";
  uw::ProcessUnwinder unwinder;
  uw::UserSample s;
  s.regs_abi = uw::kRegsAbi64;
  s.regs = r;
  s.ip = 0x1234;
  const uw::UnwoundStack u = unwinder.unwind(s);
  EXPECT_EQ(u.pcs, std::vector<uint64_t>{0x1234});
  EXPECT_EQ(u.stop_reason, "the sample's registers lack ip or sp");
}

TEST(OfflineUnwind, AModuleWhoseBuildIdChangedIsNotUsed) {
  const Capture& c = capture();
  // A sample that unwinds cleanly from a pc in a module with a build ID:
  // one that landed in the vDSO or the timer's return path would stop, or
  // not, for reasons of its own.
  uw::ProcessUnwinder intact;
  for (const auto& m : c.modules) intact.add_module(m);
  const CapturedSample* chosen = nullptr;
  for (const CapturedSample& candidate : c.samples) {
    const uw::UserSample u = user_sample(candidate);
    bool in_identified_module = false;
    for (const auto& m : c.modules)
      if (u.ip >= m.start && u.ip - m.start < m.size && !m.build_id.empty()) in_identified_module = true;
    if (in_identified_module && intact.unwind(u).stop_reason.empty()) {
      chosen = &candidate;
      break;
    }
  }
  ASSERT_NE(chosen, nullptr) << "no sample unwound cleanly from a module with a build ID";
  uw::ProcessUnwinder unwinder;
  for (auto m : c.modules) {
    if (!m.build_id.empty()) m.build_id[0] ^= 0xff;
    unwinder.add_module(m);
  }
  const uw::UnwoundStack u = unwinder.unwind(user_sample(*chosen));
  EXPECT_LE(u.pcs.size(), 1u);
  bool said_changed = false;
  for (const auto& p : unwinder.problems())
    said_changed |= p.message.find("changed since recording") != std::string::npos;
  EXPECT_TRUE(said_changed) << unwinder.problems().size() << " problems listed";
}

// The program gone from its recorded path (a trace read on another
// machine, a build deleted since): the binary with the recorded build ID
// in a --debug-dir's build-id tree unwinds the same sample as well.
TEST(OfflineUnwind, AModuleGoneFromItsPathIsFoundByItsBuildId) {
  const Capture& c = capture();
  const auto program = std::find_if(c.modules.begin(), c.modules.end(), [](const sym::ModuleInfo& m) {
    return m.path == SPOOR_CAPTURE_PROGRAM && !m.build_id.empty();
  });
  ASSERT_NE(program, c.modules.end()) << "the capture did not describe its own program with a build ID";
  const std::string id = sym::build_id_hex(program->build_id.data(), program->build_id.size());
  const std::string tree = spoor::test::test_temp_path("unwind-debug-dir");
  const std::string binary = tree + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2);
  ASSERT_EQ(std::system(("mkdir -p '" + binary.substr(0, binary.rfind('/')) + "' && cp '" SPOOR_CAPTURE_PROGRAM "' '" +
                         binary + "'").c_str()),
            0);

  uw::UnwindOptions options;
  options.debug_dirs.push_back(tree);
  uw::ProcessUnwinder moved(options);
  uw::ProcessUnwinder intact;
  uw::ProcessUnwinder lost;
  for (sym::ModuleInfo m : c.modules) {
    intact.add_module(m);
    if (m.path == SPOOR_CAPTURE_PROGRAM) m.path = "/nonexistent/capture_program";
    moved.add_module(m);
    lost.add_module(m);
  }
  size_t compared = 0;
  for (const CapturedSample& s : c.samples) {
    const uw::UnwoundStack expected = intact.unwind(user_sample(s));
    if (!expected.stop_reason.empty()) continue;
    EXPECT_EQ(moved.unwind(user_sample(s)).pcs, expected.pcs);
    ++compared;
  }
  EXPECT_GT(compared, c.samples.size() / 2);
  EXPECT_TRUE(moved.problems().empty()) << moved.problems()[0].message;

  // Without the tree the program's frames end every walk, and the problem
  // says where the build was looked for.
  for (const CapturedSample& s : c.samples) lost.unwind(user_sample(s));
  ASSERT_FALSE(lost.problems().empty());
  EXPECT_NE(lost.problems()[0].message.find("no binary with that build ID under"), std::string::npos)
      << lost.problems()[0].message;
}

// The kernel's mmap record (the executable segment, at the exec: the
// capture's modules are those) and the preload's ModuleLoad (the whole
// image from its load address, once the preload runs) of one mapping, with
// samples unwound in between: one module, and the samples after the second
// description unwind as well as before it.
TEST(OfflineUnwind, AModuleDescribedTwiceOverlappingIsOneModule) {
  const Capture& c = capture();
  uw::ProcessUnwinder unwinder;
  for (const auto& m : c.modules) unwinder.add_module(m);
  auto to_main = [&](size_t from, size_t to) {
    size_t n = 0;
    for (size_t i = from; i < to; ++i) {
      const uw::UnwoundStack u = unwinder.unwind(user_sample(c.samples[i]));
      if (u.method == uw::UnwindMethod::dwarf && u.stop_reason.empty()) ++n;
    }
    return n;
  };
  const size_t half = c.samples.size() / 2;
  const size_t before = to_main(0, half);
  EXPECT_GE(before, half * 3 / 4);
  for (auto m : c.modules) {
    if (m.start > m.bias) {  // the whole image, from its first byte
      m.size += m.start - m.bias;
      m.start = m.bias;
    }
    unwinder.add_module(m);
  }
  EXPECT_EQ(unwinder.module_count(), c.modules.size());
  EXPECT_GE(to_main(half, c.samples.size()), (c.samples.size() - half) * 3 / 4);
  EXPECT_TRUE(unwinder.problems().empty()) << unwinder.problems()[0].path << ": " << unwinder.problems()[0].message;

  auto other = c.modules.front();
  other.bias += 0x100000000;  // the same file mapped again elsewhere
  other.start += 0x100000000;
  unwinder.add_module(other);
  EXPECT_EQ(unwinder.module_count(), c.modules.size() + 1);
}

TEST(MappingBias, ExecutableMappingOfThisTestGivesTheLoaderBias) {
  // Our own r-xp mapping of the test binary, as an mmap record gives it.
  const std::string self = spoor::testing::own_exe();
  ASSERT_FALSE(self.empty());
  uw::Mapping mapping;
  for (const spoor::testing::FileMapping& m : spoor::testing::own_exe_mappings())
    if (m.executable) mapping = {self, m.start, m.end - m.start, m.pgoff, {}};
  ASSERT_FALSE(mapping.path.empty());
  uw::MappingBias biases;
  const auto m = biases.module(mapping);
  ASSERT_TRUE(m);
  for (const sym::ModuleInfo& own : spoor::testing::own_modules())
    if (own.path == self) {
      EXPECT_EQ(m->bias, own.bias);
      EXPECT_EQ(m->build_id, own.build_id);
    }
  EXPECT_FALSE(biases.module({"/nonexistent/lib.so", 0x1000, 0x1000, 0, {}}));
}

}  // namespace

namespace {

// A pc in executable memory no file backs: the stop names it.
TEST(OfflineUnwind, APcInUnbackedMemorySaysWhatMemory) {
  uw::ProcessUnwinder unwinder;
  unwinder.add_unbacked(0x10000, 0x1000, "//anon");
  unwinder.add_unbacked(0x20000, 0x2000, "[vdso]");
  std::vector<uint64_t> regs;
  auto stop_at = [&](uint64_t pc) {
    regs.clear();
    for (unsigned bit = 0; bit < 64; ++bit)
      if (uw::kPerfRegsDwarfMask >> bit & 1) regs.push_back(bit == uw::kPerfIp ? pc : bit == uw::kPerfSp ? 0x7ffd0000 : 0);
    uw::UserSample s;
    s.ip = pc;
    s.regs_abi = uw::kRegsAbi64;
    s.regs = {uw::kPerfRegsDwarfMask, bytes_of(regs)};
    return unwinder.unwind(s).stop_reason;
  };
  EXPECT_NE(stop_at(0x10010).find("anonymous executable memory (JIT code?)"), std::string::npos) << stop_at(0x10010);
  EXPECT_NE(stop_at(0x21000).find("in [vdso]"), std::string::npos) << stop_at(0x21000);
  EXPECT_NE(stop_at(0x30000).find("in no known module"), std::string::npos) << stop_at(0x30000);
}

}  // namespace

namespace {

// The file address of the function `name` in the ELF at `path` (0 if absent).
uint64_t function_address(const std::string& path, const std::string& name) {
  elf_version(EV_CURRENT);
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return 0;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  uint64_t found = 0;
  for (Elf_Scn* scn = nullptr; elf != nullptr && found == 0 && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_SYMTAB || shdr.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data != nullptr && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      const char* n = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (n != nullptr && name == n && GELF_ST_TYPE(sym.st_info) == STT_FUNC) found = sym.st_value;
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return found;
}

// A sample on the first instruction of a function without CFI (the
// compiler runtime's __do_global_dtors_aux, run at exit), with a frame
// register that points below sp, as it does there when the caller used rbp
// for data. libdw's frame-pointer guess and the kernel's frame-pointer
// chain both follow that rbp: the unwinder keeps DWARF's one frame and its
// reason instead of the kernel's made-up caller.
TEST(OfflineUnwind, AFrameRegisterBelowSpIsNotFollowedByEitherWalk) {
  const Capture& c = capture();
  ASSERT_FALSE(c.samples.empty());
  const sym::ModuleInfo* program = nullptr;
  for (const sym::ModuleInfo& m : c.modules)
    if (m.path.find("spoor_capture_program") != std::string::npos) program = &m;
  ASSERT_NE(program, nullptr);
  const uint64_t dtors = function_address(program->path, "__do_global_dtors_aux");
  ASSERT_NE(dtors, 0u) << "no __do_global_dtors_aux in " << program->path;
  uw::ProcessUnwinder unwinder;
  for (const auto& m : c.modules) unwinder.add_module(m);
  CapturedSample s = c.samples[0];
  const uint64_t pc = program->bias + dtors;
  s.regs[uw::kPerfIp] = pc;
  s.regs[uw::kPerfBp] = s.regs[uw::kPerfSp] - 4096;
  uw::UserSample u = user_sample(s);
  const std::vector<uint64_t> chain = {pc, 0x7f0000001234, 0};
  u.callchain = bytes_of(chain);
  const uw::UnwoundStack out = unwinder.unwind(u);
  EXPECT_EQ(out.method, uw::UnwindMethod::dwarf);
  EXPECT_EQ(out.pcs, std::vector<uint64_t>{pc});
  EXPECT_TRUE(out.frame_below_sp);
  EXPECT_NE(out.stop_reason.find("below the sampled sp"), std::string::npos) << out.stop_reason;
}

}  // namespace
