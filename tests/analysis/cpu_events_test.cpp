// CPU samples by function, and the program's own events and activities.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/auxv.h>

#include "analysis_test_support.h"
#include "spoor/analysis/cpu.h"
#include "spoor/analysis/custom_events.h"
#include "spoor/analysis/symbolized_stacks.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;

// Module /nonexistent/prog at 0x400000 (bias 0x400000): no file, so every
// frame is named module+0xoffset, whatever symbolizer is built in.
SpoorTrace sampled() {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.stack(100, 2, 7, {0x401010, 0x402020, 0x403030});  // leaf, caller, main
  t.stack(100, 3, 8, {0x402030, 0x403030});            // the caller itself, from main
  t.stack(100, 4, 9, {0x403030, 0x403030});            // recursion: main calls main
  t.sample(100, 100, 10, 7, 3);
  t.sample(100, 100, 11, 7, 1);
  t.sample(100, 101, 12, 8, 2);
  t.sample(100, 101, 13, 9, 5);
  return t;
}

const an::FunctionCost* cost(const an::CpuProfile& p, const std::string& name) {
  for (const an::FunctionCost& f : p.functions)
    if (f.function == name) return &f;
  return nullptr;
}

TEST(Cpu, SelfAndInclusivePeriodsPerFunction) {
  an::CpuAnalysis cpu;
  SpoorTrace t = sampled();
  Loaded l = load(t, {&cpu});
  EXPECT_EQ(cpu.periods(), 11u);
  an::SymbolizedStacks symbols(l.model);
  const an::CpuProfile all = cpu.profile(symbols);
  EXPECT_EQ(all.periods, 11u);
  EXPECT_EQ(all.samples, 4u);
  ASSERT_FALSE(all.functions.empty());
  EXPECT_EQ(all.functions[0].function, "prog+0x3030") << "most self time first";
  EXPECT_EQ(all.functions[0].self, 5u);
  EXPECT_EQ(all.functions[0].inclusive, 11u) << "main is on every stack, counted once per sample";
  const an::FunctionCost* leaf = cost(all, "prog+0x1010");
  ASSERT_NE(leaf, nullptr) << "the sampled pc is looked up as it is";
  EXPECT_EQ(leaf->self, 4u);
  EXPECT_EQ(leaf->inclusive, 4u);
  const an::FunctionCost* caller = cost(all, "prog+0x2020");
  ASSERT_NE(caller, nullptr);
  EXPECT_EQ(caller->self, 0u);
  EXPECT_EQ(caller->inclusive, 4u);
}

TEST(Cpu, ProfilesPerThread) {
  an::CpuAnalysis cpu;
  SpoorTrace t = sampled();
  Loaded l = load(t, {&cpu});
  an::SymbolizedStacks symbols(l.model);
  const auto threads = cpu.threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(l.model.threads[threads[0].first].tid, 101u);
  EXPECT_EQ(threads[0].second, 7u);
  const an::CpuProfile p = cpu.profile(symbols, threads[1].first);
  EXPECT_EQ(p.periods, 4u);
  EXPECT_EQ(p.functions[0].function, "prog+0x1010");
}

TEST(Frames, CallerFramesAreLookedUpAtTheCallAndUnknownOnesKeepTheirModule) {
  SpoorTrace t = sampled();
  Loaded l = load(t);
  an::SymbolizedStacks symbols(l.model);
  const an::StackKey key = an::stack_key(l.model.process(100)->images[0], 7);
  const std::vector<an::Frame>& frames = symbols.frames(key, an::StackUse::call);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].module, "/nonexistent/prog");
  EXPECT_EQ(frames[0].module_offset, 0x1010u);
  EXPECT_EQ(frames[0].address, 0x401010u);
  EXPECT_EQ(frames[0].label(), "prog+0x1010");
  EXPECT_TRUE(symbols.frames(0).empty());
  EXPECT_FALSE(symbols.problems().empty()) << "a module that cannot be read is a problem to report";
  const std::vector<an::Frame> outside = symbols.frames_at(l.model.process(100)->images[0], 0x900000, true);
  ASSERT_EQ(outside.size(), 1u);
  EXPECT_EQ(outside[0].label(), "0x900000");
}

TEST(CustomEvents, CountsAndStartStopDurations) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  // Ten jobs of 100, 200, ... 1000 ns, two at a time, matched by activity ID.
  uint64_t now = 1000;
  for (uint8_t j = 1; j <= 10; j += 2) {
    t.job_start(100, 100, now, j);
    t.job_start(100, 100, now + 1, j + 1);
    t.job_stop(100, 100, now + j * 100, j);
    t.job_stop(100, 100, now + 1 + (j + 1) * 100, j + 1);
    now += 5000;
  }
  t.tick(100, 100, now);
  t.tick(100, 100, now + 1);
  t.tick(100, 100, now + 2);
  t.job_start(100, 100, now + 3, 50);  // never stopped
  t.alloc(100, now + 4, 0x10, 1, 0);   // a recorder event: not the program's
  an::CustomEventAnalysis custom;
  Loaded l = load(t, {&custom});
  const auto counts = custom.counts();
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0].event, "JobStart (start)");
  EXPECT_EQ(counts[0].count, 11u);
  EXPECT_EQ(counts[1].event, "JobStop (stop)");
  EXPECT_EQ(counts[1].count, 10u);
  EXPECT_EQ(counts[2].event, "Tick");
  EXPECT_EQ(counts[2].count, 3u);
  const auto acts = custom.activities();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].provider, "My.App");
  EXPECT_EQ(acts[0].kind, "Job");
  EXPECT_EQ(acts[0].count, 10u);
  EXPECT_EQ(acts[0].min_ns, 100);
  EXPECT_EQ(acts[0].median_ns, 500);
  EXPECT_EQ(acts[0].p99_ns, 1000);
  EXPECT_EQ(acts[0].max_ns, 1000);
  EXPECT_EQ(acts[0].total_ns, 5500);
  EXPECT_EQ(custom.unmatched_starts(), 1u);
}

}  // namespace

// A sample taken inside the preloaded library (deferred until it had
// recorded its event) names the library's frames as one, and keeps the
// program's frames above them.
TEST(Frames, TheTracersOwnInnermostFramesBecomeOneFrame) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.module_load(100, 2, 0x7f0000000000, 0x7f0000000000, 0x10000, "/opt/spoor/lib/libspoor-preload.so");
  t.stack(100, 3, 7, {0x7f0000001000, 0x7f0000002000, 0x401010, 0x403030});
  t.sample(100, 100, 10, 7, 1);
  Loaded l = load(t);
  an::SymbolizedStacks symbols(l.model);
  const an::StackKey key = an::stack_key(l.model.process(100)->images[0], 7);
  const std::vector<an::Frame>& frames = symbols.frames(key, an::StackUse::sample);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, an::kTracerFrameName);
  EXPECT_EQ(frames[1].label(), "prog+0x1010");
  EXPECT_EQ(frames[2].label(), "prog+0x3030");
}

// A single address in the preloaded library (where a page fault hit) is
// named the same way as a stack's innermost tracer frames.
TEST(Frames, AnAddressInTheTracerIsTheTracersFrame) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.module_load(100, 2, 0x7f0000000000, 0x7f0000000000, 0x10000, "/opt/spoor/lib/libspoor-preload.so");
  Loaded l = load(t);
  an::SymbolizedStacks symbols(l.model);
  const an::ImageIndex image = l.model.process(100)->images[0];
  const std::vector<an::Frame> tracer = symbols.frames_at(image, 0x7f0000001000, false);
  ASSERT_EQ(tracer.size(), 1u);
  EXPECT_EQ(tracer[0].function, an::kTracerFrameName);
  const std::vector<an::Frame> program = symbols.frames_at(image, 0x401010, false);
  ASSERT_EQ(program.size(), 1u);
  EXPECT_EQ(program[0].label(), "prog+0x1010");
}

// A sample in the vDSO: the recorded image names its function (the vDSO
// has no file to read afterwards). This process's own vDSO plays the
// traced one, at its real address.
TEST(Frames, VdsoFramesAreNamedFromTheRecordedImage) {
  const auto start = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  if (start == 0) GTEST_SKIP() << "no vDSO";
  void* vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
  void* fn = vdso != nullptr ? dlsym(vdso, "__vdso_clock_gettime") : nullptr;
  if (fn == nullptr) GTEST_SKIP() << "no __vdso_clock_gettime";
  const auto* ehdr = reinterpret_cast<const ElfW(Ehdr)*>(start);
  const size_t size = ehdr->e_shoff + size_t{ehdr->e_shnum} * ehdr->e_shentsize;  // as the shim takes it
  const auto* bytes = reinterpret_cast<const uint8_t*>(start);
  const auto pc = reinterpret_cast<uint64_t>(fn) + 1;

  auto trace = [&](bool with_image) {
    SpoorTrace t;
    t.process(100, 1, "prog", {"prog"});
    t.module_load(100, 1, start, start, size, "linux-vdso.so.1");
    if (with_image) {
      t.module_image(100, 2, start, "linux-vdso.so.1", 0, Bytes(bytes, bytes + size / 2));
      t.module_image(100, 3, start, "linux-vdso.so.1", size / 2, Bytes(bytes + size / 2, bytes + size));
    }
    t.stack(100, 4, 7, {pc});
    t.sample(100, 100, 10, 7, 1);
    return t;
  };
  SpoorTrace recorded = trace(true);
  Loaded l = load(recorded);
  an::SymbolizedStacks symbols(l.model);
  const an::StackKey key = an::stack_key(l.model.process(100)->images[0], 7);
  const std::vector<an::Frame>& frames = symbols.frames(key, an::StackUse::sample);
  ASSERT_FALSE(frames.empty());
  EXPECT_NE(frames[0].function.find("clock_gettime"), std::string::npos) << frames[0].label();

  SpoorTrace old = trace(false);  // a trace from before ModuleImage
  Loaded lo = load(old);
  an::SymbolizedStacks old_symbols(lo.model);
  const std::vector<an::Frame>& unnamed = old_symbols.frames(key, an::StackUse::sample);
  ASSERT_FALSE(unnamed.empty());
  EXPECT_EQ(unnamed[0].function, "") << "without the image there is nothing to read";
}
