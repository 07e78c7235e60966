// spoor record end to end: where the trace goes and what becomes of it when
// writing fails, the events a full ring drops or waits for, and the
// tracer's own time in the program's profile.
#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "../../preload/record/cgroup_memory.h"
#include "../../preload/record/packing_budget.h"
#include "../../preload/record/ring_budget.h"
#include "record_test_support.h"
#include "test_cgroup.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;

using spoor::test::Process;
using spoor::test::run;
using namespace spoor::test::record;  // trace_path, stack_frames, count_heap, kSpoor, traced_processes

// spoor dump --follow: a consumer of a recording still being written
// prints its events while the program runs. The program waits (up to 10 s)
// for a file the test makes only once the follower has printed the
// program's first open: it ends at once, and with status 0, only if the
// follower was live. Then the follower ends with the recording, having
// printed each event once: the same lines as a dump of the finished trace.
struct Followed {
  std::vector<std::string> lines;
  bool recording_ran_when_seen = false;
  int follower_status = -1;
  std::string recording_status;
};

// `command(program, ended)` runs the recording of `program` (writing its
// exit status to the file `ended`) and the follower, whose standard output
// is read here.
template <typename Command>
Followed follow_a_waiting_program(const std::string& name, Command command) {
  const std::string go = spoor::test::temp_path(name + "-go");
  const std::string ended = spoor::test::temp_path(name + "-recording-status");
  std::filesystem::remove(go);
  std::filesystem::remove(ended);
  const std::string program = "sh -c 'cat /etc/hostname > /dev/null; i=0; while [ ! -e " + go +
                              " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; [ -e " + go + " ]'";
  Followed f;
  FILE* follower = popen(command(program, ended).c_str(), "r");
  if (follower == nullptr) return f;
  char* line = nullptr;
  size_t capacity = 0;
  ssize_t n;
  while ((n = getline(&line, &capacity, follower)) > 0) {
    f.lines.emplace_back(line, static_cast<size_t>(n));
    if (f.lines.back().find("\"/etc/hostname\"") != std::string::npos && !std::filesystem::exists(go)) {
      f.recording_ran_when_seen = !std::filesystem::exists(ended);
      std::ofstream(go) << "go\n";
    }
  }
  std::free(line);
  const int status = pclose(follower);
  f.follower_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  for (int i = 0; i < 300 && !std::filesystem::exists(ended); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::ifstream(ended) >> f.recording_status;
  return f;
}

// The follower's lines are the finished trace's dump, each once. Their
// nanoseconds may differ by microseconds: a follower converts ticks with
// the clock calibration the trace had so far, the finished one has the
// recording's whole.
void expect_the_dump_of(const std::string& trace, std::vector<std::string> followed) {
  const Process whole = run(kSpoor + " dump " + trace + " --format jsonl");
  ASSERT_EQ(whole.status, 0) << whole.err;
  auto without_ns = [](std::string l) {
    const size_t ticks = l.find(",\"ticks\":");
    return ticks == std::string::npos ? l : l.substr(ticks);
  };
  std::vector<std::string> dumped;
  std::istringstream lines(whole.out);
  for (std::string l; std::getline(lines, l);) dumped.push_back(without_ns(l + "\n"));
  for (std::string& l : followed) l = without_ns(l);
  std::sort(followed.begin(), followed.end());
  std::sort(dumped.begin(), dumped.end());
  EXPECT_GT(dumped.size(), 10u);
  ASSERT_EQ(followed.size(), dumped.size());
  const auto differ = std::mismatch(followed.begin(), followed.end(), dumped.begin());
  EXPECT_TRUE(differ.first == followed.end()) << "followed:\n" << differ.first->substr(0, 400) << "\ndumped:\n"
                                              << differ.second->substr(0, 400);
}

// The follower printed the program's open while the program waited for
// it, ended with the recording, and printed each event once.
void expect_followed_live(const Followed& f, const std::string& trace) {
  EXPECT_EQ(f.follower_status, 0);
  EXPECT_TRUE(f.recording_ran_when_seen) << "the program's open was printed only after the recording ended";
  EXPECT_EQ(f.recording_status, "0") << "the program waited its 10 s: the follower printed nothing while it ran";
  expect_the_dump_of(trace, f.lines);
}

TEST(Record, DumpFollowPrintsARecordingsEventsWhileTheProgramRuns) {
  const std::string trace = trace_path("followed");
  const Followed f = follow_a_waiting_program("follow-file", [&](const std::string& program, const std::string& ended) {
    return "(" + kSpoor + " record -o " + trace + " -p io -- " + program + " >/dev/null 2>&1; echo $? > " + ended +
           ".part && mv " + ended + ".part " + ended + ") & " + kSpoor + " dump --follow " + trace +
           " --format jsonl";
  });
  expect_followed_live(f, trace);
}

// The same through a pipe: spoor record -o - | spoor dump --follow -.
TEST(Record, DumpFollowReadsARecordingFromAPipeAsItComes) {
  const std::string trace = trace_path("followed-pipe");
  const Followed f = follow_a_waiting_program("follow-pipe", [&](const std::string& program, const std::string& ended) {
    return "(" + kSpoor + " record -o - -p io -- " + program + " 2>/dev/null; echo $? > " + ended + ".part && mv " +
           ended + ".part " + ended + ") | tee " + trace + " | " + kSpoor + " dump --follow - --format jsonl";
  });
  expect_followed_live(f, trace);
}

// A followed trace whose first bytes describe no provider yet: the text
// header waits for the first event, so its columns are as wide as the
// lines' and as a dump's of the whole file.
TEST(Record, DumpFollowsTextHeaderIsSizedForItsLines) {
  const std::string trace = trace_path("follow-text");
  ASSERT_EQ(run(kSpoor + " record -o " + trace + " --compress none -p io -- cat /etc/hostname").status, 0);
  const Process whole = run(kSpoor + " dump " + trace);
  const Process followed = run("(head -c 64 " + trace + "; sleep 0.6; tail -c +65 " + trace + ") | " + kSpoor +
                               " dump --follow -");
  ASSERT_EQ(whole.status, 0) << whole.err;
  EXPECT_EQ(followed.status, 0) << followed.err;
  EXPECT_NE(whole.out.find("Spoor.Process  "), std::string::npos) << whole.out.substr(0, 500);
  auto lines_of = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  };
  std::vector<std::string> a = lines_of(followed.out), b = lines_of(whole.out);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(a.front(), b.front()) << "the header";
  // The same lines (a pass may have read part of the rest first: the
  // order across streams can differ).
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_TRUE(a == b);
}

// A recorder killed mid-recording never finishes its file: the follower
// prints what it wrote, says the recording did not finish, and ends
// (rather than waiting for ever, as for a recording that goes on).
TEST(Record, DumpFollowEndsWhenTheRecorderIsKilled) {
  const std::string trace = trace_path("followed-killed");
  const std::string pid_file = spoor::test::temp_path("followed-killed.pid");
  ASSERT_EQ(std::system((kSpoor + " record -o " + trace + " -p io -- sh -c 'cat /etc/hostname > /dev/null; sleep 4' " +
                         ">/dev/null 2>&1 & echo $! > " + pid_file)
                            .c_str()),
            0);
  pid_t recorder = 0;
  std::ifstream(pid_file) >> recorder;
  ASSERT_GT(recorder, 0);
  // Killed once its file holds the program's first events.
  for (int i = 0; i < 200 && !(std::filesystem::exists(trace) && std::filesystem::file_size(trace) > 4096); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::thread killer([recorder] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(recorder, SIGKILL);
  });
  const Process followed = run("timeout 30 " + kSpoor + " dump --follow " + trace + " --format jsonl");
  killer.join();
  waitpid(recorder, nullptr, WNOHANG);
  EXPECT_EQ(followed.status, 1) << "124: the follower waited for a recorder that was gone\n" << followed.err;
  EXPECT_NE(followed.err.find("(pid " + std::to_string(recorder) + ") is gone: the recording did not finish"),
            std::string::npos)
      << followed.err;
  EXPECT_NE(followed.out.find("\"/etc/hostname\""), std::string::npos) << followed.out.substr(0, 2000);
}

// A file no recording makes ends the wait with the reason; a trace that
// ends unfinished on a pipe is printed, then reported as a dump would.
TEST(Record, DumpFollowOfNothingOrOfAnUnfinishedTraceSaysSo) {
  const Process missing = run(kSpoor + " dump --follow /nonexistent/never.spoor");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot follow '/nonexistent/never.spoor': No such file or directory (waited 5 s"),
            std::string::npos)
      << missing.err;
  const std::string trace = trace_path("to-cut");
  // Blocks as they are (no COMPRESSED run holding them all): the cut
  // damages the last, and the events before it are read.
  ASSERT_EQ(run(kSpoor + " record -o " + trace + " --compress none -p io -- cat /etc/hostname").status, 0);
  const Process cut = run("head -c " + std::to_string(std::filesystem::file_size(trace) - 5) + " " + trace + " | " +
                          kSpoor + " dump --follow - --format jsonl");
  const Process whole_cut = run("head -c " + std::to_string(std::filesystem::file_size(trace) - 5) + " " + trace +
                                " | " + kSpoor + " dump - --format jsonl");
  EXPECT_EQ(cut.status, 1);
  EXPECT_EQ(cut.status, whole_cut.status);
  // The same events (a pass may have read part of the pipe first: the
  // order across streams can differ).
  auto sorted_lines = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  EXPECT_FALSE(whole_cut.out.empty());
  EXPECT_TRUE(sorted_lines(cut.out) == sorted_lines(whole_cut.out));
  EXPECT_NE(cut.err.find("is damaged at byte"), std::string::npos) << cut.err;
}

// spoor report and spoor info of a trace still being written say that the
// recording goes on (the streams' ends are still to come), name its
// recorder, and give no process a start before the trace's; once the
// recording has ended, neither says so any more.
TEST(Record, AReportOfARecordingStillGoingOnSaysSo) {
  const std::string trace = trace_path("going-on");
  const std::string go = spoor::test::temp_path("going-on-go");
  const std::string ended = spoor::test::temp_path("going-on-status");
  std::filesystem::remove(go);
  std::filesystem::remove(ended);
  const std::string program = "sh -c 'cat /etc/hostname > /dev/null; sh -c \"sleep 0.2\" & i=0; while [ ! -e " +
                              go + " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; wait'";
  ASSERT_EQ(std::system(("(" + kSpoor + " record -o " + trace + " -- " + program + " >/dev/null 2>&1; echo $? > " +
                         ended + ".part && mv " + ended + ".part " + ended + ") &")
                            .c_str()),
            0);
  for (int i = 0; i < 400 && !(std::filesystem::exists(trace) && std::filesystem::file_size(trace) > 4096); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a flush or two of the recorder's
  const Process live = run(kSpoor + " report --format json " + trace);
  const Process live_text = run(kSpoor + " report " + trace);
  const Process live_info = run(kSpoor + " info " + trace);
  const nlohmann::json r = nlohmann::json::parse(live.out, nullptr, false);
  const uint64_t recorder = r.is_object() ? r["trace"].value("recorder_running", uint64_t{0}) : 0;
  std::string comm;
  std::ifstream("/proc/" + std::to_string(recorder) + "/comm") >> comm;
  const bool still_running = !std::filesystem::exists(ended);
  std::ofstream(go) << "go\n";
  ASSERT_TRUE(still_running) << "the program ended before the reports were read";
  ASSERT_EQ(live.status, 0) << live.err;
  ASSERT_NE(recorder, 0u) << live.out.substr(0, 2000);
  EXPECT_EQ(comm, "spoor");
  for (const nlohmann::json& p : r["processes"]) {
    EXPECT_GE(p["start_ns"].get<int64_t>(), 0) << p.dump().substr(0, 300);
    EXPECT_GE(p["duration_ns"].get<int64_t>(), 0) << p.dump().substr(0, 300);
  }
  const std::string says = "still being recorded: spoor record (pid " + std::to_string(recorder) + ") is writing";
  EXPECT_NE(live_text.out.find(says), std::string::npos) << live_text.out;
  EXPECT_NE(live_text.out.find("no STREAM_END yet (the recording goes on)"), std::string::npos) << live_text.out;
  EXPECT_EQ(live_text.out.find("did not finish"), std::string::npos) << live_text.out;
  EXPECT_NE(live_info.out.find(says), std::string::npos) << live_info.out;
  EXPECT_EQ(live_info.out.find("did not finish"), std::string::npos) << live_info.out;

  for (int i = 0; i < 600 && !std::filesystem::exists(ended); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::string status;
  std::ifstream(ended) >> status;
  ASSERT_EQ(status, "0");
  const Process done = run(kSpoor + " report " + trace);
  const Process done_info = run(kSpoor + " info " + trace);
  EXPECT_EQ(done.out.find("still being recorded"), std::string::npos) << done.out;
  EXPECT_EQ(done.out.find("STREAM_END"), std::string::npos) << done.out;
  EXPECT_EQ(done_info.out.find("still being recorded"), std::string::npos) << done_info.out;
}

// -o -: the trace goes to standard output, for a reader on a pipe; the
// program's own standard output goes to standard error, unchanged.
TEST(Record, DashWritesTheTraceToStandardOutputAndTheProgramsOutputToStandardError) {
  const std::string file = trace_path("to-file");
  const std::string piped = trace_path("to-stdout");
  const Process to_file = run(kSpoor + " record -o " + file + " -- " + SPOOR_HEAP_COUNTS + " 1000 'hello, world'");
  const Process to_stdout = run(kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS + " 1000 'hello, world' > " + piped);
  EXPECT_EQ(to_stdout.status, 7) << to_stdout.err;
  EXPECT_NE(to_stdout.err.find("hello, world\n"), std::string::npos) << to_stdout.err;
  EXPECT_NE(to_stdout.err.find("written to standard output"), std::string::npos) << to_stdout.err;
  EXPECT_EQ(to_stdout.err.find("next: spoor report"), std::string::npos) << to_stdout.err;
  EXPECT_FALSE(std::filesystem::exists("-")) << "no file named '-'";
  HeapCounts a = count_heap(file);
  HeapCounts b = count_heap(piped);
  EXPECT_EQ(b.calls["Alloc"], 1002u);
  EXPECT_EQ(b.calls["Alloc"], a.calls["Alloc"]);
  EXPECT_EQ(b.alloc_bytes, a.alloc_bytes);

  // Read from the pipe as it is written.
  const Process info = run(kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS + " 1000 | " + kSpoor + " info -");
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("Alloc"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("trace      (standard input)"), std::string::npos) << info.out;
  const Process report = run(kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS + " 1000 | " + kSpoor + " report --heap -");
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("spoor report: (standard input)"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("1,002 alloc"), std::string::npos) << report.out;
  std::filesystem::remove(file);
  std::filesystem::remove(piped);
}

// A reader that goes away early (true exits at once; the program first
// sleeps a second, so the first write comes after) fails the trace's writes (EPIPE), which
// spoor says and exits 127 for, after the program ran to its end; the
// recorder is not killed by SIGPIPE, and the program does not inherit an
// ignored SIGPIPE.
TEST(Record, AReaderThatGoesAwayIsAWriteErrorAndTheProgramRunsToItsEnd) {
  const Process r = run("bash -c '" + kSpoor +
                        " record -o - -- sh -c \"sleep 1; grep SigIgn /proc/self/status; echo ran-to-the-end\" | true;"
                        " echo status=${PIPESTATUS[0]}'");
  EXPECT_NE(r.out.find("status=127"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("writing the trace to standard output failed: Broken pipe"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ran-to-the-end"), std::string::npos) << r.err;
  const size_t ignored = r.err.find("SigIgn:");
  ASSERT_NE(ignored, std::string::npos) << r.err;
  const uint64_t mask = std::stoull(r.err.substr(ignored + 7), nullptr, 16);
  EXPECT_EQ(mask & (uint64_t{1} << (SIGPIPE - 1)), 0u) << r.err;
}

// A trace that outgrows the file size limit (as a full disk would: the
// write fails, here with EFBIG) is said while the program runs, which runs
// on to its end with its output; the summary still tells how it ended, and
// the file keeps what was written before, readable up to the cut. spoor
// exits 127, and is not killed by SIGXFSZ. The program's processes stop
// tracing: nothing more could be written.
TEST(Record, AFailedWriteIsSaidAtOnceAndTheFileKeepsWhatCameBefore) {
  const std::string path = trace_path("file-size-limit");
  const Process r = run("bash -c 'ulimit -f 32768; " + kSpoor + " record --buffer-size 256K --wait-when-full --compress none -o " +
                        path + " -- sh -c \"" + SPOOR_HEAP_COUNTS +
                        " 2000000; sleep 1; echo ran-to-the-end >&2\" 2>&1; echo status=$?'");
  EXPECT_NE(r.out.find("status=127"), std::string::npos) << r.out << r.err;
  const size_t failed =
      r.out.find("writing '" + path + "' failed: File too large; the program runs on, untraced from now on");
  const size_t ran = r.out.find("ran-to-the-end");
  ASSERT_NE(failed, std::string::npos) << r.out;
  ASSERT_NE(ran, std::string::npos) << r.out;
  EXPECT_LT(failed, ran) << "said while the program ran: " << r.out;
  EXPECT_NE(r.out.find("'sh' (pid "), std::string::npos) << r.out;
  // Tracing stops with the file: the program's 2,000,000 allocations and
  // frees after the cut (of 4,000,000 events in all) are not recorded for
  // nothing, and the `sleep` sh starts afterwards is not traced.
  const size_t taken_at = r.out.find(" events taken from the rings, ");
  ASSERT_NE(taken_at, std::string::npos) << r.out;
  const size_t processes_at = r.out.rfind("processes, ", taken_at);
  ASSERT_NE(processes_at, std::string::npos) << r.out;
  const uint64_t taken = std::stoull(r.out.substr(processes_at + 11, taken_at - processes_at - 11));
  EXPECT_LT(taken, 3'000'000u) << r.out;
  EXPECT_NE(r.out.find("spoor record: 2 processes, "), std::string::npos) << "sh and the program: " << r.out;
  EXPECT_NE(r.out.find(", only 32.0 MiB written to " + path), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the trace ends after 33554432 bytes"), std::string::npos) << r.out;
  EXPECT_EQ(std::filesystem::file_size(path), 32u << 20);
  const Process info = run(kSpoor + " info " + path);
  EXPECT_NE(info.status, 0) << "a cut trace is damaged: " << info.out;
  EXPECT_NE(info.err.find("events recovered"), std::string::npos) << info.err;
  EXPECT_NE(info.out.find("Alloc"), std::string::npos) << info.out;
  std::filesystem::remove(path);
}

// A process that loads the shim but never takes the rings it is given (a
// shim of another Spoor build, whose region format differs; here, rings
// that the address-space limit keeps a subshell from mapping beside its
// parent's) ran untraced, and the summary counted it as traced with no
// word. It is named now, and not counted. The limit leaves the parent
// room for its own rings and half as much again, so that it runs on; with
// the rule cache off its walks need libdw, which is not used so near a
// limit (glibc aborted the process when libelf's thread-local data could
// not be allocated).
TEST(Record, AProcessThatNeverTookItsRingsIsNamed) {
  const std::string path = trace_path("never-attached");
  const long rings_kib = 64 * 1024 * sysconf(_SC_NPROCESSORS_CONF);
  const std::string limit = std::to_string(rings_kib * 3 / 2 + 24 * 1024);
  const Process r = run("SPOOR_RULE_CACHE=off " + kSpoor + " record --buffer-size 64M -o " + path +
                        " -- sh -c 'ulimit -v " + limit + "; (echo child-ran); echo status=$?'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "child-ran\nstatus=0\n") << r.err;
  const size_t said = r.err.find("spoor record: not traced, no events from it (pid ");
  ASSERT_NE(said, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("never took the rings spoor gave it", said), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spoor record: 1 process, "), std::string::npos) << "sh alone: " << r.err;
  std::filesystem::remove(path);
}

// Packed runs are counted as packed, not written: after a failed write the
// zstd line said it packed more than the file could hold, with no word.
TEST(Record, AfterAFailedWriteThePackedFigureSaysTheFileHoldsLess) {
  // A reader of -o - that takes 1,000 bytes and goes: the trace packs to
  // far more than the pipe held when the write failed.
  const Process r = run("bash -c '" + kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS +
                        " 200000 ran | head -c 1000 >/dev/null'");
  EXPECT_NE(r.err.find("writing the trace to standard output failed: Broken pipe"), std::string::npos) << r.err;
  const size_t packed = r.err.find("spoor record: zstd packed ");
  ASSERT_NE(packed, std::string::npos) << r.err;
  const std::string line = r.err.substr(packed, r.err.find('\n', packed) - packed);
  EXPECT_NE(line.find("(the file holds only what came before the cut)"), std::string::npos) << r.err;
}

// A limit below the rings' size: the program runs untraced, and the
// summary says why, not that it ignored LD_PRELOAD.
TEST(Record, RingsTheFileSizeLimitForbidsAreSaidSo) {
  const std::string path = trace_path("rings-limit");
  const Process r = run("bash -c 'ulimit -f 1024; " + kSpoor + " record --buffer-size 4M -o " + path + " -- " +
                        SPOOR_HEAP_COUNTS + " 10 ran; echo status=$?'");
  EXPECT_NE(r.out.find("ran\nstatus=7"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("the program was not traced, no events from it: cannot create a shared region: File too "
                       "large (the file size limit, ulimit -f, is below the rings'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("static or setuid"), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

// A limit set before spoor record starts holds the recorder and every
// process: the default rings shrink to fit it (ring_budget.h), so the
// whole tree is traced, and the summary says what they were. With 32 MiB
// per CPU under `ulimit -v 100000` a python3 started from a pyenv shim
// ran with 40 of its 41 processes untraced.
TEST(Record, UnderAnAddressSpaceLimitTheDefaultRingsAreMadeToFit) {
  const std::string path = trace_path("address-limit-fit");
  const uint64_t limit_kib = 100000;
  const auto cpus = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF));
  const size_t ring = spoor::record::ring_bytes_within_limit(limit_kib * 1024, cpus, 32u << 20, 256u << 10);
  ASSERT_LT(ring, 32u << 20);
  const Process r = run("bash -c 'ulimit -v " + std::to_string(limit_kib) + "; SPOOR_RULE_CACHE=off " + kSpoor +
                        " record -o " + path + " -- sh -c \"(echo child); sh -c true; echo parent\"; echo status=$?'");
  EXPECT_EQ(r.out, "child\nparent\nstatus=0\n") << r.err;
  const std::string size = ring >= (1u << 20) ? std::to_string(ring >> 20) + ".0 MiB" : std::to_string(ring >> 10) + ".0 KiB";
  EXPECT_NE(r.err.find("spoor record: rings of " + size + " per CPU instead of 32.0 MiB: each process and spoor "
                       "itself map them, within the address space limit (ulimit -v, 97.7 MiB)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("not traced"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spoor record: 3 processes, "), std::string::npos) << "sh, its subshell, sh -c: " << r.err;
  // Without the limit the default stands and nothing is said.
  const Process free = run(kSpoor + " record -o " + path + " -- sh -c true");
  EXPECT_EQ(free.err.find("rings of "), std::string::npos) << free.err;
  // A size given is kept, and the limit's cost is the user's to judge.
  const Process given = run("bash -c 'ulimit -v " + std::to_string(limit_kib) + "; SPOOR_RULE_CACHE=off " + kSpoor +
                            " record --buffer-size 512K -o " + path + " -- true'");
  EXPECT_EQ(given.err.find("rings of "), std::string::npos) << given.err;
  EXPECT_NE(given.err.find("spoor record: 1 process, "), std::string::npos) << given.err;
  std::filesystem::remove(path);
}

// Rings the recorder cannot map: every process refused them is named at
// the end with the reason and the limit, not only the first one while the
// program ran. The limit holds one region beside the recorder's own
// ~100-150 MiB, not two: the program's is mapped, its children's are not.
TEST(Record, ProcessesTheRecorderCouldNotGiveRingsAreListed) {
  const std::string path = trace_path("address-limit-refused");
  const uint64_t limit_kib = 1000000;  // 976 MiB
  const auto cpus = static_cast<uint64_t>(sysconf(_SC_NPROCESSORS_CONF));
  uint64_t per_cpu_mib = 512;
  while (cpus * per_cpu_mib > 768) per_cpu_mib /= 2;
  if (cpus * per_cpu_mib < 480) GTEST_SKIP() << "no power of two per CPU makes one region fit and two not";
  const Process r = run("bash -c 'ulimit -v " + std::to_string(limit_kib) + "; SPOOR_RULE_CACHE=off " + kSpoor +
                        " record --buffer-size " + std::to_string(per_cpu_mib) + "M -o " + path +
                        " -- sh -c \"sh -c true; sh -c true; echo parent\"; echo status=$?'");
  EXPECT_EQ(r.out, "parent\nstatus=0\n") << r.err;
  const size_t listed = r.err.find("spoor record: not traced, no events from 2 processes of the program's tree (pids ");
  ASSERT_NE(listed, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot map a shared region: Cannot allocate memory (the address space limit, ulimit -v, is "
                       "976 MiB, and the recorder maps every live process's ",
                       listed),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("record with a smaller --buffer-size", listed), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spoor record: 1 process, "), std::string::npos) << "the program alone: " << r.err;
  EXPECT_EQ(r.err.find("rings of "), std::string::npos) << "a size given is kept: " << r.err;
  std::filesystem::remove(path);
}

// In a cgroup with a memory limit, which the program shares, the packing
// is sized for it (packing_budget.h): under 100 MiB the recorder of a
// 2-thread heap workload peaked at ~165 MiB with the defaults, and the OOM
// killer ended it. Every event still reaches the file.
TEST(Record, InACgroupWithAMemoryLimitThePackingKeepsWithinIt) {
  const spoor::test::TestCgroup cgroup("memory", "memory.limit_in_bytes", "memory.max", 100u << 20);
  if (cgroup.dir().empty()) GTEST_SKIP() << "no memory cgroup can be made here (it takes root and a cgroup file system)";
  const std::string path = trace_path("memory-cgroup");
  const int n = 300000;
  const Process r = run("bash -c '" + cgroup.enter() + "exec " + kSpoor + " record -o " + path + " -- " +
                        SPOOR_HEAP_COUNTS + " " + std::to_string(n) + " ran'");
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_EQ(r.out, "ran\n") << r.err;
  // The threads depend on the CPUs (one here on two; on one CPU it is the
  // default anyway); the runs and the backlog on the limit alone.
  const size_t said = r.err.find("spoor record: packing kept within the memory limit of spoor's cgroup (100.0 MiB): "
                                 "runs of 2.0 MiB, ");
  ASSERT_NE(said, std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", 16.7 MiB waiting at most before runs are written uncompressed", said), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(", 0 lost, "), std::string::npos) << r.err;
  // The rings too, which fill while the file is slow (ring_budget.h).
  const auto cpus = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF));
  const size_t ring =
      spoor::record::default_rings(UINT64_MAX, uint64_t{100} << 20, cpus, 32u << 20, 256u << 10).bytes_per_cpu;
  ASSERT_LT(ring, 32u << 20);
  const std::string size = ring >= (1u << 20) ? std::to_string(ring >> 20) + ".0 MiB" : std::to_string(ring >> 10) + ".0 KiB";
  EXPECT_NE(r.err.find("spoor record: rings of " + size + " per CPU instead of 32.0 MiB: they fill while the file is "
                       "slow, within the memory limit of spoor's cgroup (100.0 MiB), which the program shares"),
            std::string::npos)
      << r.err;
  HeapCounts c = count_heap(path);
  EXPECT_EQ(c.calls["Alloc"], uint64_t{n} + 2) << "the blocks, the array, the calloc";
  EXPECT_EQ(c.calls["Free"], uint64_t{n} + 2);
  // Outside it nothing is said, unless the machine's own cgroup is tight.
  const uint64_t own_limit = spoor::record::cgroup_memory_limit();
  if (!spoor::record::packing_within_memory(own_limit, cpus).fitted &&
      spoor::record::default_rings(UINT64_MAX, own_limit, cpus, 32u << 20, 256u << 10).limited_by ==
          spoor::record::RingLimit::none) {
    const Process free = run(kSpoor + " record -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 1000");
    EXPECT_EQ(free.err.find("packing kept within"), std::string::npos) << free.err;
    EXPECT_EQ(free.err.find("rings of "), std::string::npos) << free.err;
  }
  std::filesystem::remove(path);
}

// Under a limit on the number of processes (a container's pids.max) the
// recorder's packing threads may not all start: it packs on those that
// did, or writes the trace uncompressed, and says so. It aborted on the
// first thread it could not start, after the program had started.
TEST(Record, PackingThreadsThatCannotStartAreSaidAndTheTraceIsWhole) {
  // The recorder (bash execs it) and the program: no room for a thread.
  const spoor::test::TestCgroup cgroup("pids", "pids.max", "pids.max", 2);
  if (cgroup.dir().empty()) GTEST_SKIP() << "no pids cgroup can be made here (it takes root and a cgroup file system)";
  const std::string path = trace_path("pids-limit");
  const auto record = [&] {
    return run("bash -c '" + cgroup.enter() + "exec " + kSpoor + " record -o " + path + " -- " + SPOOR_HEAP_COUNTS +
               " 1000 ran'");
  };
  const Process none = record();
  EXPECT_EQ(none.status, 7) << none.err;
  EXPECT_EQ(none.out, "ran\n") << none.err;
  EXPECT_NE(none.err.find(" packing threads started (Resource temporarily unavailable): the trace is written "
                          "uncompressed"),
            std::string::npos)
      << none.err;
  EXPECT_NE(none.err.find("spoor record: 0 of "), std::string::npos) << none.err;
  EXPECT_EQ(none.err.find("zstd packed"), std::string::npos) << none.err;
  HeapCounts c = count_heap(path);
  EXPECT_EQ(c.calls["Alloc"], 1000u + 2);
  // Room for one: it packs alone.
  ASSERT_TRUE(cgroup.set(3));
  const Process one = record();
  EXPECT_EQ(one.status, 7) << one.err;
  EXPECT_NE(one.err.find("zstd packed"), std::string::npos) << one.err;
  if (std::thread::hardware_concurrency() > 1) {
    EXPECT_NE(one.err.find("spoor record: 1 of "), std::string::npos) << one.err;
  }
  c = count_heap(path);
  EXPECT_EQ(c.calls["Alloc"], 1000u + 2);
  std::filesystem::remove(path);
}

// Reading too: the reader expands the next packed block on a thread of
// its own, and where none can start (pids.max) it expands each itself.
// It aborted there, as the recorder did.
TEST(Record, AReportWithNoThreadToSpareSaysTheSame) {
  const std::string path = trace_path("pids-report");
  const Process recorded = run(kSpoor + " record -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 300000");
  ASSERT_EQ(recorded.status, 7) << recorded.err;
  ASSERT_NE(run(kSpoor + " info " + path).out.find("compressed 2 COMPRESSED blocks"), std::string::npos)
      << "blocks enough for the reader to expand one ahead";
  const Process alone = run(kSpoor + " report " + path);
  ASSERT_EQ(alone.status, 0) << alone.err;
  const spoor::test::TestCgroup cgroup("pids", "pids.max", "pids.max", 1);
  if (cgroup.dir().empty()) GTEST_SKIP() << "no pids cgroup can be made here (it takes root and a cgroup file system)";
  const Process limited = run("bash -c '" + cgroup.enter() + "exec " + kSpoor + " report " + path + "'");
  EXPECT_EQ(limited.status, 0) << limited.err;
  EXPECT_EQ(limited.out, alone.out);
  std::filesystem::remove(path);
}

// The recorder holds two descriptors for each live process; under a low
// soft limit it ran out and the processes past the first few went
// untraced. It raises its own soft limit to the hard one, and the program
// still gets the limit it was given.
TEST(Record, TheRecordersDescriptorsComeOutsideTheProgramsLimit) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < 256) GTEST_SKIP() << "the hard limit leaves no room: " << limit.rlim_max;
  const std::string path = trace_path("descriptor-limit");
  const Process r = run("bash -c 'ulimit -Sn 16; " + kSpoor + " record -o " + path +
                        " -- sh -c \"for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 0.3 & done; ulimit -n; wait\"'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "16\n") << "the program's own limit: " << r.err;
  EXPECT_EQ(r.err.find("not traced"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spoor record: 13 processes, "), std::string::npos) << "sh and its 12 sleeps: " << r.err;
  std::filesystem::remove(path);
}

// The default trace name goes to the current directory: where that cannot
// be written (here /proc), the error says how to choose another place.
TEST(Record, AnUnwritableCurrentDirectoryPointsToDashO) {
  const Process r = run("cd /proc && " + kSpoor + " record -- true");
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_NE(r.err.find("spoor record: cannot create 'spoor-true-"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(the trace goes to the current directory unless -o FILE says where)"), std::string::npos)
      << r.err;
  const Process named = run(kSpoor + " record -o /proc/spoor-test.spoor -- true");
  EXPECT_EQ(named.status, 127) << named.err;
  EXPECT_EQ(named.err.find("unless -o FILE"), std::string::npos) << "the user chose the name: " << named.err;
}

// The summary's last line suggests the report only for a file that holds
// a trace: not for -o /dev/null, nor for one whose first write failed.
TEST(Record, TheNextCommandIsSuggestedOnlyForATraceFile) {
  const std::string path = trace_path("next-command");
  const Process file = run(kSpoor + " record -o " + path + " -- true");
  EXPECT_NE(file.err.find("spoor record: next: spoor report " + path + "\n"), std::string::npos) << file.err;
  const Process null = run(kSpoor + " record -o /dev/null -- true");
  EXPECT_EQ(null.status, 0) << null.err;
  EXPECT_EQ(null.err.find("next:"), std::string::npos) << null.err;
  const Process full = run(kSpoor + " record -o /dev/full -- true");
  EXPECT_EQ(full.status, 127) << full.err;
  EXPECT_EQ(full.err.find("next:"), std::string::npos) << full.err;
  std::filesystem::remove(path);
}

TEST(Record, DashToATerminalIsAUsageError) {
  const Process r = run("script -qec '" + kSpoor + " record -o - -- true' /dev/null");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("which is a terminal"), std::string::npos) << r.out;
}

// A program that does little but allocate spends much of its CPU time in
// the shim: its samples there are one row of the CPU profile, named, and
// the report says what that row is.
TEST(Record, TheTracersOwnTimeIsOneNamedRowOfTheProfile) {
  const std::string path = trace_path("tracer-time");
  const Process r = run(kSpoor + " record --sample-hz 1000 -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 1000000");
  ASSERT_EQ(r.status, 7) << r.err;
  const Process j = run(kSpoor + " report --cpu --format json " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json report = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << j.out;
  uint64_t tracer = 0;
  for (const nlohmann::json& f : report["cpu"]["functions"])
    if (f["function"] == "[spoor: recording the event]") tracer = f["self"].get<uint64_t>();
  EXPECT_GT(tracer, 0u) << report["cpu"]["functions"].dump(1);
  const Process text = run(kSpoor + " report --cpu " + path);
  EXPECT_NE(text.out.find("is the time the program's threads spent in Spoor's hooks recording events"), std::string::npos)
      << text.out;
  std::filesystem::remove(path);
}

// A signal handler's calls while the program's thread was inside the
// shim's hooks (most of them, in an allocation loop): each allocation,
// mapping and write is recorded all the same (an allocation or a mapping
// with the handler's call site as its stack), and each fflush, which cannot be recorded
// there (the stdio layer keeps per-thread state), is counted as lost.
// Before, all of them were dropped unseen. sigaction, signal and the rest
// still report the program's own handlers, whichever of glibc's functions
// installed them.
void expect_handler_calls_recorded_or_counted(const std::string& installer) {
  SCOPED_TRACE(installer);
  const std::string path = trace_path("handler-calls-" + installer);
  const Process r =
      run(kSpoor + " record --sample-hz 0 -o " + path + " -- " + SPOOR_HANDLER_CALLS + " 2000 " + installer);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const char* check : {"sigaction reports the handler", "signal reports the handler", "signal reports SIG_DFL",
                            "sysv_signal reports the handler", "sigset holds and releases",
                            "bsd_signal reports the handler", "a vfork child's handler stays its own"})
    EXPECT_NE(r.out.find(std::string("ok ") + check + "\n"), std::string::npos) << check << "\n" << r.out;
  const size_t at = r.out.find("handled ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const uint64_t handled = std::stoull(r.out.substr(at + 8));
  ASSERT_GE(handled, 2000u);

  uint64_t mallocs = 0, aligned = 0, maps = 0, unmaps = 0, writes = 0, flushes = 0, one_frame = 0;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  reader::EventReader events(trace.value());
  reader::Event e;
  std::map<uint64_t, size_t> stack_depths;
  std::vector<uint64_t> handler_stacks;
  while (events.next(e)) {
    const std::string& name = e.descriptor->name;
    if (name == "Stack") {
      stack_depths[std::get<uint64_t>(*e.field("id"))] = std::get<reader::Blob>(*e.field("frames")).bytes.size() / 8;
    } else if (name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size == 4000) ++mallocs;
      if (size == 3000) ++aligned;
      if (size == 4000 || size == 3000) handler_stacks.push_back(std::get<uint64_t>(*e.field("stack")));
    } else if (name == "Write" && std::get<int64_t>(*e.field("result")) == 1) {
      ++writes;
    } else if (name == "FFlush") {
      ++flushes;
    } else if (name == "Mmap" && std::get<uint64_t>(*e.field("size")) == 12288) {
      ++maps;
      handler_stacks.push_back(std::get<uint64_t>(*e.field("stack")));
    } else if (name == "Munmap" && std::get<uint64_t>(*e.field("size")) == 12288) {
      ++unmaps;
    }
  }
  EXPECT_EQ(mallocs, handled);
  EXPECT_EQ(aligned, handled);
  EXPECT_EQ(maps, handled);
  EXPECT_EQ(unmaps, handled);
  for (const uint64_t id : handler_stacks) {
    EXPECT_NE(id, 0u);
    if (stack_depths[id] == 1) ++one_frame;
  }
  EXPECT_GT(one_frame, 0u) << "some calls interrupted the shim";
  EXPECT_EQ(writes, handled);
  // The flushes not recorded are the run's only lost events.
  const size_t lost_at = r.err.find(" lost");
  ASSERT_NE(lost_at, std::string::npos) << r.err;
  const size_t lost_from = r.err.rfind(' ', lost_at - 1) + 1;
  const uint64_t lost = std::stoull(r.err.substr(lost_from, lost_at - lost_from));
  EXPECT_EQ(flushes + lost, handled) << r.err;
  EXPECT_NE(r.err.find(" lost (stdio calls a signal handler made while its thread was inside Spoor's hooks"),
            std::string::npos)
      << "the summary names the cause, which the shim counts apart from full rings: " << r.err;
  EXPECT_GT(lost, 0u) << "some flushes interrupted the shim";
  std::filesystem::remove(path);
}

TEST(Record, CallsOfASignalHandlerThatInterruptedTheShimAreRecordedOrCounted) {
  expect_handler_calls_recorded_or_counted("sigaction");
  expect_handler_calls_recorded_or_counted("sigset");
  expect_handler_calls_recorded_or_counted("bsd_signal");
}

// A ring too small for the program's rate drops events: the summary
// counts them and names the cause and the cure (no signal handler here).
TEST(Record, EventsAFullRingDroppedAreCountedWithTheirCause) {
  const std::string path = trace_path("full-ring");
  const Process r = run(kSpoor + " record --sample-hz 0 --buffer-size 256K -o " + path + " -- " + SPOOR_HEAP_COUNTS +
                        " 3000000");
  ASSERT_EQ(r.status, 7) << r.err;
  const size_t lost_at = r.err.find(" lost (a ring was full: try --wait-when-full or a larger --buffer-size)");
  ASSERT_NE(lost_at, std::string::npos) << r.err;
  const size_t lost_from = r.err.rfind(' ', lost_at - 1) + 1;
  EXPECT_GT(std::stoull(r.err.substr(lost_from, lost_at - lost_from)), 0u) << r.err;
  std::filesystem::remove(path);
}

// The same ring with --wait-when-full: a writer that finds it full waits
// for the drain, so nothing is lost and every call of the program is there.
TEST(Record, WaitWhenFullLosesNothingFromAFullRing) {
  const std::string path = trace_path("wait-full");
  const Process r = run(kSpoor + " record --sample-hz 0 --buffer-size 256K --wait-when-full -o " + path + " -- " +
                        SPOOR_HEAP_COUNTS + " 3000000");
  ASSERT_EQ(r.status, 7) << r.err;
  EXPECT_NE(r.err.find(" 0 lost, "), std::string::npos) << r.err;
  const HeapCounts c = count_heap(path);
  EXPECT_EQ(c.calls.at("Alloc"), 3000000u + 2);  // the blocks, the array, the calloc
  EXPECT_EQ(c.calls.at("Free"), 3000000u + 2);
  std::filesystem::remove(path);
}

// The drain runs ahead of the program where it may (nice -5): the
// recorder's main thread, not the program, nor the packing threads. The
// program waits until the recorder has set it (it starts the program
// first), then prints the nice value of each: its own, then each of the
// recorder's threads, main thread first.
TEST(Record, TheDrainIsServedBeforeTheProgramAndThePackers) {
  if (geteuid() != 0) GTEST_SKIP() << "raising a priority takes root (or RLIMIT_NICE)";
  // What the program and the packers inherit: this test's own nice value.
  const std::string inherited = std::to_string(getpriority(PRIO_PROCESS, 0));
  const std::string script = spoor::test::temp_path("rec-drain-nice.sh");
  std::ofstream(script) << "for i in $(seq 200); do\n"
                           "  [ \"$(cut -d' ' -f19 /proc/$PPID/stat)\" = -5 ] && break; sleep 0.01\n"
                           "done\n"
                           "cut -d' ' -f19 /proc/$$/stat\n"
                           "cut -d' ' -f19 /proc/$PPID/task/$PPID/stat\n"
                           "for t in /proc/$PPID/task/*; do\n"
                           "  [ \"${t##*/}\" = $PPID ] || cut -d' ' -f19 $t/stat\n"
                           "done\n";
  const std::string path = trace_path("drain-nice");
  const Process r = run(kSpoor + " record -o " + path + " -- sh " + script);
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream out(r.out);
  std::string program, drain, other;
  out >> program >> drain;
  EXPECT_EQ(program, inherited) << r.out;
  EXPECT_EQ(drain, "-5") << r.out;
  int others = 0;
  while (out >> other) {
    EXPECT_EQ(other, inherited) << "a packing thread: " << r.out;
    ++others;
  }
  EXPECT_GT(others, 0) << r.out;
  std::filesystem::remove(path);
  std::filesystem::remove(script);
}

}  // namespace
