// The trace model: processes, images, modules, threads and stacks as a
// hand-built trace describes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analysis_test_support.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;

// pid 100 forks pid 200, which execs; the recorder (pid 99) reaps 100;
// 100 reaps 200. Both images of 200 use stack ID 1 for different stacks.
SpoorTrace family() {
  SpoorTrace t;
  t.process(99, 1, "spoor", {"spoor", "record"});
  t.process(100, 99, "prog", {"prog", "--x"});
  t.process(200, 100, "prog", {"prog", "--x"});
  t.exec_block(200, 100, "other", {"other", "-v"});  // the exec's PROCESS block
  t.process_start(100, 1000, 99, 0, "/bin/prog");
  t.module_load(100, 1001, 0x400000, 0x400000, 0x10000, "/bin/prog");
  t.thread_name(100, 100, 1002, "main");
  t.stack(100, 1003, 1, {0x401000, 0x402000});
  t.thread_start(100, 101, 2000, 100);
  t.thread_name(100, 101, 2001, "worker");
  t.fork(100, 3000, 200);
  t.thread_end(100, 101, 5000);
  t.alloc(100, 6000, 0x1000, 10, 1);
  t.process_exit(100, 8000, 200, 0, 9);
  t.process_start(200, 3100, 100, 0, "/bin/prog");
  t.stack(200, 3101, 1, {0x401100});
  t.process_start(200, 4000, 100, 1, "/bin/other");
  t.module_load(200, 4001, 0x500000, 0x500000, 0x1000, "/bin/other");
  t.stack(200, 4002, 1, {0x500100, 0x500200, 0x500300});
  t.alloc(200, 4003, 0x2000, 20, 1);
  t.process_exit(99, 9000, 100, 7, 0);
  return t;
}

const an::ProcessInfo& by_pid(const an::TraceModel& m, uint32_t pid) {
  const an::ProcessInfo* p = m.process(pid);
  EXPECT_NE(p, nullptr) << "pid " << pid;
  return *p;
}

TEST(Model, ProcessesCarryCommandLinesParentsAndHowTheyEnded) {
  SpoorTrace t = family();
  Loaded l = load(t);
  const an::TraceModel& m = l.model;
  ASSERT_EQ(m.processes.size(), 3u);
  EXPECT_TRUE(by_pid(m, 99).recorder);
  const an::ProcessInfo& p = by_pid(m, 100);
  EXPECT_FALSE(p.recorder);
  EXPECT_EQ(p.ppid, 99u);
  EXPECT_EQ(p.command_line, (std::vector<std::string>{"prog", "--x"}));
  ASSERT_TRUE(p.end.has_value()) << "the recorder's ProcessExit names pid 100 in its pid field";
  EXPECT_EQ(p.end->exit_code, 7);
  EXPECT_EQ(p.end->signal, 0);
  EXPECT_EQ(p.end_ns, 9000);
  EXPECT_EQ(p.start_ns, 1000);
  EXPECT_EQ(p.forked, (std::vector<uint32_t>{200}));
  const an::ProcessInfo& c = by_pid(m, 200);
  ASSERT_TRUE(c.end.has_value()) << "the parent's ProcessExit, written in the parent's stream";
  EXPECT_EQ(c.end->signal, 9);
  EXPECT_EQ(c.end_ns, 8000);
  EXPECT_EQ(c.command_line, (std::vector<std::string>{"other", "-v"}));
}

// A process writes its own ProcessExit as it calls exit or _exit; a
// reaper's later one is the kernel's word and wins (a destructor may still
// have crashed), but the process ended when it said so.
// The loader asks each visitor once per kind what it reads, and passes it
// those events only, every one of them, in time order; a visitor that
// wants everything (the default) still sees every event.
class KindCounter final : public an::EventVisitor {
 public:
  explicit KindCounter(std::vector<an::EventKind> kinds) : kinds_(std::move(kinds)) {}
  bool wants(an::EventKind kind) const override {
    return kinds_.empty() || std::find(kinds_.begin(), kinds_.end(), kind) != kinds_.end();
  }
  void on_event(const spoor::reader::Event& e, const an::EventContext& c) override {
    seen.push_back(c.known->kind);
    times.push_back(e.time_ns);
  }
  std::vector<an::EventKind> seen;
  std::vector<int64_t> times;

 private:
  std::vector<an::EventKind> kinds_;
};

TEST(Model, EachVisitorGetsTheKindsOfEventsItWants) {
  SpoorTrace t = family();
  KindCounter heap({an::EventKind::heap_alloc});
  KindCounter threads({an::EventKind::thread_start, an::EventKind::thread_end});
  KindCounter all({});
  Loaded l = load(t, {&heap, &threads, &all});
  EXPECT_EQ(heap.seen, std::vector<an::EventKind>(2, an::EventKind::heap_alloc));
  EXPECT_EQ(heap.times, (std::vector<int64_t>{4003, 6000}));
  EXPECT_EQ(threads.seen, (std::vector<an::EventKind>{an::EventKind::thread_start, an::EventKind::thread_end}));
  EXPECT_EQ(all.seen.size(), l.model.events);
  EXPECT_TRUE(std::is_sorted(all.times.begin(), all.times.end()));
}

TEST(Model, AReapersExitStatusWinsOverTheProcessesOwnAndKeepsItsTime) {
  SpoorTrace t;
  t.process(99, 1, "spoor", {"spoor", "record"});
  t.process(100, 99, "prog", {"prog"});
  t.process(200, 100, "child", {"child"});
  t.process(300, 100, "child", {"child"});
  t.process_start(100, 1000, 99, 0, "/bin/prog");
  t.fork(100, 1100, 200);
  t.fork(100, 1200, 300);
  t.process_start(200, 1150, 100, 0, "/bin/prog");
  t.process_exit(200, 2000, 200, 3, 0);  // its own: exit(3)
  t.process_start(300, 1250, 100, 0, "/bin/prog");
  t.process_exit(300, 2500, 300, 0, 0);  // its own: exit(0), then a crash
  t.process_exit(100, 3000, 300, 0, 11);
  t.process_exit(100, 3100, 200, 4, 0);  // the parent reaps it
  t.process_exit(99, 4000, 100, 0, 0);
  Loaded l = load(t);
  const an::ProcessInfo& only_own = by_pid(l.model, 200);
  ASSERT_TRUE(only_own.end.has_value());
  EXPECT_EQ(only_own.end->exit_code, 4) << "the parent's status";
  EXPECT_EQ(only_own.end->time_ns, 2000) << "the child's own time";
  const an::ProcessInfo& crashed = by_pid(l.model, 300);
  ASSERT_TRUE(crashed.end.has_value());
  EXPECT_EQ(crashed.end->signal, 11) << "the reaper saw it killed after its own exit(0)";
  EXPECT_EQ(crashed.end->time_ns, 2500);
  EXPECT_FALSE(crashed.end->by_itself);

  SpoorTrace own;
  own.process(100, 99, "prog", {"prog"});
  own.process_start(100, 1000, 99, 0, "/bin/prog");
  own.process_exit(100, 2000, 100, 5, 0);
  Loaded alone = load(own);
  const an::ProcessInfo& p = by_pid(alone.model, 100);
  ASSERT_TRUE(p.end.has_value()) << "its own word, when no reaper's came";
  EXPECT_EQ(p.end->exit_code, 5);
  EXPECT_TRUE(p.end->by_itself);
}

// A trace read while its recording goes on can name a process (its PROCESS
// block) before any event of it arrives: it began at its parent's Fork
// when that is in, at its reaper's word when only that is, and else when
// is unknown, said so and placed after every event read.
TEST(Model, AProcessWithoutEventsStartsAtItsForkOrIsSaidUnknown) {
  SpoorTrace t;
  t.process(99, 1, "spoor", {"spoor", "record"});
  t.process(100, 99, "prog", {"prog"});
  t.process(200, 100, "child", {"child"});
  t.process(300, 100, "child", {"child"});
  t.process(400, 100, "child", {"child"});
  t.process_start(100, 1000, 99, 0, "/bin/prog");
  t.fork(100, 1500, 200);
  t.alloc(100, 2000, 0x1000, 10, 0);
  t.process_exit(100, 2500, 300, 0, 9);
  Loaded l = load(t);
  const an::ProcessInfo& forked = by_pid(l.model, 200);
  EXPECT_TRUE(forked.start_known);
  EXPECT_EQ(forked.start_ns, 1500) << "its parent's Fork";
  EXPECT_GE(forked.end_ns, forked.start_ns);
  const an::ProcessInfo& reaped = by_pid(l.model, 300);
  EXPECT_TRUE(reaped.start_known);
  EXPECT_EQ(reaped.start_ns, 2500) << "its reaper's word";
  const an::ProcessInfo& named = by_pid(l.model, 400);
  EXPECT_FALSE(named.start_known);
  EXPECT_EQ(named.start_ns, l.model.last_ns) << "after every event read, not before the trace";
  EXPECT_EQ(named.end_ns, named.start_ns);
  EXPECT_TRUE(by_pid(l.model, 100).start_known);
}

// glibc's system() and pclose() reap their shell inside libc: the status
// their CommandEnd carries goes to the one child that started between the
// command's two events and has no reaper's word, and to none when two
// could be its shell.
TEST(Model, ACommandsStatusEndsTheOneChildThatStartedWithinIt) {
  SpoorTrace t;
  t.process(99, 1, "spoor", {"spoor", "record"});
  t.process(100, 99, "prog", {"prog"});
  t.process_start(100, 500, 99, 0, "/bin/prog");
  for (const uint32_t pid : {200u, 300u, 301u, 400u, 401u, 500u, 501u, 600u})
    t.process(pid, 100, "sh", {"sh", "-c", "x"});
  // system(): its shell said exit(0) itself, then was killed.
  t.command_start(100, 1000, 1, "kill -KILL $$");
  t.process_start(200, 1100, 100, 0, "/bin/sh");
  t.process_exit(200, 1500, 200, 0, 0);
  t.command_end(100, 2000, 1, 0, 9);
  // Two children in one command's time (another thread's fork): neither.
  t.command_start(100, 3000, 2, "exit 1");
  t.process_start(300, 3100, 100, 0, "/bin/sh");
  t.process_start(301, 3200, 100, 0, "/bin/sh");
  t.command_end(100, 4000, 2, 1, 0);
  // A system() while a popen() pipe is open: each takes its own shell.
  t.command_start(100, 5000, 3, "cat");
  t.process_start(400, 5100, 100, 0, "/bin/sh");
  t.command_start(100, 6000, 4, "kill -TERM $$");
  t.process_start(401, 6100, 100, 0, "/bin/sh");
  t.command_end(100, 7000, 4, 0, 15);
  t.command_end(100, 9000, 3, 0, 13);
  // A child its own wait call reaped is not the command's.
  t.command_start(100, 10000, 5, "kill -HUP $$");
  t.process_start(500, 10100, 100, 0, "/bin/sh");
  t.process_exit(100, 10300, 500, 2, 0);
  t.process_start(501, 10200, 100, 0, "/bin/sh");
  t.alloc(501, 10400, 0x1000, 8, 0);
  t.command_end(100, 11000, 5, 0, 1);
  // A popen() never closed: no status.
  t.command_start(100, 12000, 6, "sleep 9");
  t.process_start(600, 12100, 100, 0, "/bin/sh");
  t.process_exit(99, 13000, 100, 0, 0);
  Loaded l = load(t);
  const an::TraceModel& m = l.model;

  const an::ProcessInfo& killed = by_pid(m, 200);
  ASSERT_TRUE(killed.end.has_value());
  EXPECT_EQ(killed.end->signal, 9) << "system()'s status, over the shell's own exit(0)";
  EXPECT_EQ(killed.end->time_ns, 1500) << "it ended when it said so";
  EXPECT_FALSE(killed.end->by_itself);
  EXPECT_FALSE(by_pid(m, 300).end.has_value()) << "two children could be the shell";
  EXPECT_FALSE(by_pid(m, 301).end.has_value());
  const an::ProcessInfo& piped = by_pid(m, 400);
  ASSERT_TRUE(piped.end.has_value());
  EXPECT_EQ(piped.end->signal, 13);
  const an::ProcessInfo& inner = by_pid(m, 401);
  ASSERT_TRUE(inner.end.has_value());
  EXPECT_EQ(inner.end->signal, 15);
  const an::ProcessInfo& waited = by_pid(m, 500);
  ASSERT_TRUE(waited.end.has_value());
  EXPECT_EQ(waited.end->exit_code, 2) << "its reaper's word stands";
  EXPECT_EQ(waited.end->signal, 0);
  const an::ProcessInfo& shell = by_pid(m, 501);
  ASSERT_TRUE(shell.end.has_value());
  EXPECT_EQ(shell.end->signal, 1);
  EXPECT_EQ(shell.end->time_ns, 10400) << "no end of its own: its last event";
  EXPECT_FALSE(by_pid(m, 600).end.has_value()) << "a pipe never closed says nothing";
}

// An Exec that neither failed nor was followed by the new image's
// ProcessStart: the program ran without reaching the recorder (another
// network namespace before the recorder listened on a file too, a program
// that could not load the shim). The model says so instead of leaving the
// exec out; an exec that failed, or whose image attached, says nothing.
TEST(Model, AnExecWhoseNewImageNeverAttachedIsSaid) {
  SpoorTrace t;
  t.process(99, 1, "spoor", {"spoor", "record"});
  t.process(100, 99, "prog", {"prog"});
  t.process(300, 99, "prog", {"prog"});
  t.exec_block(300, 99, "next", {"next"});
  t.process(400, 99, "prog", {"prog"});
  t.process_start(100, 1000, 99, 0, "/bin/prog");
  t.exec(100, 2000, "/bin/hidden", "");
  t.process_start(300, 1100, 99, 0, "/bin/prog");
  t.exec(300, 2100, "/bin/next", "");
  t.process_start(300, 2200, 99, 1, "/bin/next");
  t.process_start(400, 1200, 99, 0, "/bin/prog");
  t.exec(400, 2300, "/bin/missing", "");
  t.exec_failed(400, 2400, 2);
  t.process_exit(99, 3000, 100, 0, 0);
  Loaded l = load(t);
  EXPECT_EQ(by_pid(l.model, 100).untraceable_exec, "/bin/hidden: it never reached the recorder");
  EXPECT_EQ(by_pid(l.model, 300).untraceable_exec, "");
  EXPECT_EQ(by_pid(l.model, 400).untraceable_exec, "");
  EXPECT_EQ(by_pid(l.model, 400).exec_failures, (std::vector<std::string>{"/bin/missing: errno 2"}));
}

TEST(Model, AnExecStartsANewImageWithItsOwnModulesAndStacks) {
  SpoorTrace t = family();
  Loaded l = load(t);
  const an::TraceModel& m = l.model;
  const an::ProcessInfo& c = by_pid(m, 200);
  ASSERT_EQ(c.images.size(), 2u);
  const an::Image& first = m.images[c.images[0]];
  const an::Image& second = m.images[c.images[1]];
  EXPECT_EQ(first.exec_count, 0u);
  EXPECT_EQ(second.exec_count, 1u);
  EXPECT_EQ(first.exe, "/bin/prog");
  EXPECT_EQ(second.exe, "/bin/other");
  EXPECT_EQ(first.command_line, (std::vector<std::string>{"prog", "--x"})) << "each image has its PROCESS block's";
  EXPECT_EQ(second.command_line, (std::vector<std::string>{"other", "-v"}));
  EXPECT_EQ(first.end_ns, 4000);
  EXPECT_TRUE(first.modules.empty());
  ASSERT_EQ(second.modules.size(), 1u);
  EXPECT_EQ(second.modules[0].path, "/bin/other");
  EXPECT_EQ(second.module_at(0x500150)->path, "/bin/other");
  EXPECT_EQ(second.module_at(0x600000), nullptr);

  // Stack ID 1 three times: pid 100's, and one per image of pid 200.
  const an::StackKey k100 = an::stack_key(m.process(100)->images[0], 1);
  const an::StackKey k200a = an::stack_key(c.images[0], 1);
  const an::StackKey k200b = an::stack_key(c.images[1], 1);
  EXPECT_NE(k100, k200a);
  EXPECT_NE(k200a, k200b);
  ASSERT_NE(m.stack(k100), nullptr);
  ASSERT_NE(m.stack(k200a), nullptr);
  ASSERT_NE(m.stack(k200b), nullptr);
  EXPECT_EQ(m.stack(k100)->size(), 2u);
  EXPECT_EQ((*m.stack(k100))[1], 0x402000u);
  EXPECT_EQ(m.stack(k200a)->size(), 1u);
  EXPECT_EQ((*m.stack(k200a))[0], 0x401100u);
  EXPECT_EQ(m.stack(k200b)->size(), 3u);
  EXPECT_EQ((*m.stack(k200b))[2], 0x500300u);
}

TEST(Model, ThreadsHaveNamesAndLifetimesAndLiveOnesEndWithTheirProcess) {
  SpoorTrace t = family();
  Loaded l = load(t);
  const an::TraceModel& m = l.model;
  const an::ProcessInfo& p = by_pid(m, 100);
  ASSERT_EQ(p.threads.size(), 2u);
  const an::ThreadInfo& main = m.threads[p.threads[0]];
  const an::ThreadInfo& worker = m.threads[p.threads[1]];
  EXPECT_EQ(main.tid, 100u);
  EXPECT_EQ(main.name(), "main");
  EXPECT_FALSE(main.ended);
  EXPECT_EQ(main.end_ns, 9000) << "alive at exit: ends with its process";
  EXPECT_EQ(worker.tid, 101u);
  EXPECT_EQ(worker.name(), "worker");
  EXPECT_TRUE(worker.started);
  EXPECT_TRUE(worker.ended);
  EXPECT_EQ(worker.parent_tid, 100u);
  EXPECT_EQ(worker.start_ns, 2000);
  EXPECT_EQ(worker.end_ns, 5000);
}

TEST(Model, VisitorsSeeEachEventWithItsProcessImageAndThread) {
  struct Recorder : an::EventVisitor {
    std::vector<std::pair<uint32_t, an::StackKey>> allocs;  // pid, stack key
    bool ended = false;
    void on_event(const spoor::reader::Event& e, const an::EventContext& c) override {
      if (c.known->kind == an::EventKind::heap_alloc)
        allocs.emplace_back(c.model->processes[c.process].pid, c.stack(static_cast<uint32_t>(an::field_u64(e, *c.known, 2))));
    }
    void on_end(const an::TraceModel&) override { ended = true; }
  } r;
  SpoorTrace t = family();
  Loaded l = load(t, {&r});
  EXPECT_TRUE(r.ended);
  ASSERT_EQ(r.allocs.size(), 2u);
  EXPECT_EQ(r.allocs[0].first, 200u);  // time order: 4003 before 6000
  EXPECT_EQ(l.model.stack(r.allocs[0].second)->size(), 3u) << "the second image's stack 1";
  EXPECT_EQ(r.allocs[1].first, 100u);
  EXPECT_EQ(l.model.stack(r.allocs[1].second)->size(), 2u);
  EXPECT_EQ(l.model.events, 17u);
}

TEST(Model, LostEventsAndDamageAreInTheHealth) {
  SpoorTrace t = family();
  t.lost(100, 5);
  Loaded l = load(t);
  EXPECT_EQ(l.model.health.lost_events, 5u);
  EXPECT_TRUE(l.model.health.damage.empty());

  spoor::testing::Bytes bytes = t.bytes();
  bytes.resize(bytes.size() - 40);  // cut into the last STREAM_END block
  auto cut = spoor::reader::Trace::from_bytes(bytes);
  ASSERT_TRUE(cut);
  const an::TraceModel m = an::load_trace(*cut);
  EXPECT_FALSE(m.health.damage.empty());
}

// The vDSO's bytes come in chunks (ModuleImage): the model puts them
// together in the module they name, whatever order they came in.
TEST(Model, ModuleImageChunksAreKeptInTheirModule) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.module_load(100, 2, 0x400000, 0x400000, 0x1000, "/bin/prog");
  t.module_load(100, 3, 0x7fff0000, 0x7fff0000, 0x1522, "linux-vdso.so.1");
  t.module_image(100, 4, 0x7fff0000, "linux-vdso.so.1", 4, {5, 6, 7});
  t.module_image(100, 5, 0x7fff0000, "linux-vdso.so.1", 0, {1, 2, 3, 4});
  t.module_image(100, 6, 0x12345000, "linux-vdso.so.1", 0, {9, 9});  // no such module: dropped
  Loaded l = load(t);
  const an::Image& image = l.model.images[by_pid(l.model, 100).images[0]];
  ASSERT_EQ(image.modules.size(), 2u);
  EXPECT_TRUE(image.modules[0].image.empty()) << "a file's module is read from disk";
  EXPECT_EQ(image.modules[1].image, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(Model, TheSamplingRateIsTheRecordedOneOrUnknown) {
  SpoorTrace t = family();
  EXPECT_EQ(load(t).model.sample_hz, 0u) << "no SamplerStart: the trace does not say";
  t.sampler_start(100, 1004, 500);
  EXPECT_EQ(load(t).model.sample_hz, 500u);
}

}  // namespace
