// spoor record end to end: how the traced processes end (reaped however,
// left running, crashed) and the signals the recorder passes on to them.
#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report_json.h"
#include "record_test_support.h"
#include "run_command.h"

namespace {

namespace reader = spoor::reader;

using spoor::test::Process;
using spoor::test::run;
using namespace spoor::test::record;  // trace_path, stack_frames, count_heap, kSpoor, traced_processes

// The hooks' lock on the program's handlers is taken around fork: a child
// forked while another thread was inside sigaction can still install a
// handler (it would wait forever on the copied lock).
TEST(Record, AChildForkedWhileAnotherThreadSetsAHandlerCanSetItsOwn) {
  const std::string path = trace_path("sigaction-fork");
  const Process r = run(kSpoor + " record --sample-hz 0 -o " + path + " -- " + SPOOR_SIGACTION_FORK);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "children 100, stuck 0\n");
  std::filesystem::remove(path);
}

// How each child ended is in the trace however it was reaped: by a
// SIGCHLD handler that interrupted the shim's hooks (its wait calls were
// dropped as the shim's own), or inside glibc's system() and pclose(), where
// no hook sees the status (the child writes its own exit then, unless a
// signal killed it: system()'s and pclose()'s results say so).
TEST(Record, EveryChildsEndIsRecordedHoweverItWasReaped) {
  const std::string path = trace_path("reaped");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_REAPED);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "reaped 40, system 3, pclose 4, killed by 15 and 1\n");
  const Process j = run(kSpoor + " report --format json " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json report = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << j.out;
  std::map<std::string, int> endings;  // "ended" -> processes
  for (const nlohmann::json& p : report["processes"]) endings[p["ended"].get<std::string>()]++;
  // 20 killed children (only their reaper, the handler, can say so), 20
  // that exited with 1 + i % 7 for even i, sh -c 'exit 3' and 'exit 4',
  // the shells system() and popen() started that killed themselves, and
  // the program.
  const std::map<std::string, int> expected = {{"killed by SIGTERM", 21}, {"killed by SIGHUP", 1},
                                               {"exit 0", 1}, {"exit 1", 3},
                                               {"exit 2", 3},             {"exit 3", 4}, {"exit 4", 4},
                                               {"exit 5", 3},             {"exit 6", 2}, {"exit 7", 3}};
  EXPECT_EQ(endings, expected) << j.out.substr(0, 4000);
  std::filesystem::remove(path);
}

// A program that leaves a process running (a daemon, a background job):
// spoor record waits for it until told to stop (SIGTERM here, Ctrl-C at a
// terminal), and the trace then says it was still running, not that its
// exit went unrecorded.
TEST(Record, AProcessLeftRunningWhenTheWaitIsStoppedIsSaidToBeRunning) {
  const std::string path = trace_path("left-running"), out = spoor::test::temp_path("left-running.out");
  const Process r = run("sh -c '" + kSpoor + " record -o " + path +
                        " -- sh -c \"sleep 30 & echo started \\$!\" > " + out + " 2>&1 & s=$!; " +
                        "n=0; until grep -q \"waiting for the processes\" " + out +
                        " || [ $n -ge 600 ]; do sleep 0.05; n=$((n+1)); done; " +
                        "kill -TERM $s; wait $s; echo status=$?; cat " + out + "'");
  std::filesystem::remove(out);
  unsigned long sleeper = 0;
  const size_t at = r.out.find("started ");
  ASSERT_NE(at, std::string::npos) << r.out << r.err;
  sleeper = std::strtoul(r.out.c_str() + at + 8, nullptr, 10);
  ASSERT_GT(sleeper, 0u) << r.out;
  const bool was_running = kill(static_cast<pid_t>(sleeper), 0) == 0;
  kill(static_cast<pid_t>(sleeper), SIGKILL);
  EXPECT_TRUE(was_running) << "stopping the wait leaves the process running";
  EXPECT_NE(r.out.find("status=0"), std::string::npos) << r.out;
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "", path);
  ASSERT_TRUE(report.failure.empty()) << report.failure;
  std::map<std::string, std::string> ended;  // name -> how it ended
  for (const nlohmann::json& p : report.report["processes"]) {
    ended[p["name"].get<std::string>()] = p["ended"].get<std::string>();
    if (p["pid"] == sleeper) {
      EXPECT_EQ(p["running_at_end"], true);
      EXPECT_TRUE(p["exit"].is_null());
      // Its last event came at its start; it ran until the recording's
      // end, over 2 s later (spoor says it waits after 2 s).
      EXPECT_GE(p["duration_ns"].get<int64_t>(), 1'500'000'000) << p.dump();
    }
  }
  EXPECT_EQ(ended["sh"], "exit 0") << report.report["processes"].dump(1);
  EXPECT_EQ(ended["sleep"], "running at the end") << report.report["processes"].dump(1);
  std::filesystem::remove(path);
}

// A recorder whose parent ignores SIGCHLD (a shell's `trap '' CHLD`, kept
// across exec) still learns when the program ends, where the kernel would
// reap it unseen and the recording wait forever; the program starts with
// SIGCHLD ignored, as it would alone.
TEST(Record, ARecorderStartedWithChildSignalsIgnoredEndsWithItsProgram) {
  const std::string path = trace_path("sigchld-ignored");
  const std::string show = "grep SigIgn /proc/self/status";
  const Process alone = run("bash -c \"trap '' CHLD; exec " + show + "\"");
  ASSERT_EQ(alone.status, 0) << alone.err;
  // SIGCHLD is signal 17: bit 16 of the mask, the fifth hex digit from the end.
  const std::string mask = alone.out.substr(alone.out.find_last_not_of(" \n") - 4, 5);
  ASSERT_EQ(std::strtoul(mask.c_str(), nullptr, 16) & 0x10000, 0x10000u) << alone.out;
  const Process traced =
      run("timeout -s KILL 60 bash -c \"trap '' CHLD; exec " + kSpoor + " record -o " + path + " -- " + show + "\"");
  EXPECT_EQ(traced.status, 0) << "137 is the recording waiting for an end it never saw\n" << traced.err;
  EXPECT_EQ(traced.out, alone.out);
  std::filesystem::remove(path);
}

// While only untraced processes are left running (a static daemon), no
// ring can fill: the recorder sleeps in its poll, woken by the child's end,
// instead of turning 60 times a second.
TEST(Record, WaitingForAnUntracedProcessTheRecorderSleeps) {
  const std::string path = trace_path("untraced-left"), out = spoor::test::temp_path("untraced-left.out");
  const std::string switches = "grep voluntary_ctxt_switches /proc/$s/task/$s/status | grep -v non";
  const Process r = run("sh -c '" + kSpoor + " record -o " + path + " -- sh -c \"" + SPOOR_STATIC_SLEEP +
                        " 4 &\" > " + out + " 2>&1 & s=$!; " +
                        "n=0; until grep -q \"waiting for the processes\" " + out +
                        " || [ $n -ge 600 ]; do sleep 0.05; n=$((n+1)); done; " + switches + "; sleep 1; " +
                        switches + "; wait $s; echo status=$?; cat " + out + "'");
  std::filesystem::remove(out);
  ASSERT_NE(r.out.find("status=0"), std::string::npos) << r.out << r.err;
  std::vector<long> counts;
  for (size_t at = 0; (at = r.out.find("voluntary_ctxt_switches:", at)) != std::string::npos; ++at)
    counts.push_back(std::strtol(r.out.c_str() + at + 24, nullptr, 10));
  ASSERT_EQ(counts.size(), 2u) << r.out;
  // A poll that times out is one switch: 63 in the second at a 16 ms pace.
  EXPECT_LE(counts[1] - counts[0], 8) << r.out;
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "", path);
  ASSERT_TRUE(report.failure.empty()) << report.failure;
  int static_ones = 0;
  for (const nlohmann::json& p : report.report["processes"]) {
    if (!p.contains("untraceable_exec")) continue;
    ++static_ones;
    EXPECT_EQ(p["ended"], "exit 0") << p.dump();
    EXPECT_GE(p["duration_ns"].get<int64_t>(), 3'500'000'000) << p.dump();
  }
  EXPECT_EQ(static_ones, 1) << report.report["processes"].dump(1);
  std::filesystem::remove(path);
}

class RecordCrash : public ::testing::TestWithParam<std::pair<const char*, int>> {};

TEST_P(RecordCrash, EveryCommittedEventReachesTheFile) {
  const auto [how, signal] = GetParam();
  const std::string path = trace_path(std::string("crash-") + how);
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_CRASH + " 5000 " + how);
  EXPECT_EQ(r.status, 128 + signal) << r.err;
  EXPECT_NE(r.err.find("killed by signal " + std::to_string(signal)), std::string::npos) << r.err;
  HeapCounts c = count_heap(path);
  EXPECT_EQ(c.calls["Alloc"], 5000u);
  EXPECT_EQ(c.calls["Free"], 5000u);
  EXPECT_EQ(c.exit_signals, std::vector<uint64_t>{static_cast<uint64_t>(signal)}) << "the trace says how it ended";
}

INSTANTIATE_TEST_SUITE_P(Signals, RecordCrash,
                         ::testing::Values(std::make_pair("segv", 11), std::make_pair("kill", 9),
                                           std::make_pair("abort", 6)));

// SIGTERM or SIGHUP sent to spoor record alone (timeout, kill, a closed
// terminal) goes on to the program; the recorder finishes the file once
// the program has ended, and exits as the program did.
TEST(Record, ATerminationSignalToTheRecorderIsPassedToTheProgram) {
  for (const int sig : {SIGTERM, SIGHUP}) {
    const std::string path = trace_path("terminated-" + std::to_string(sig));
    const Process r = run("sh -c '" + kSpoor + " record -o " + path + " -- sleep 30 & s=$!; sleep 1; kill -" +
                          std::to_string(sig) + " $s; wait $s; echo status=$?'");
    EXPECT_EQ(r.out, "status=" + std::to_string(128 + sig) + "\n") << r.err;
    EXPECT_NE(r.err.find("killed by signal " + std::to_string(sig)), std::string::npos) << r.err;
    const HeapCounts c = count_heap(path);
    EXPECT_EQ(c.exit_signals, std::vector<uint64_t>{static_cast<uint64_t>(sig)}) << "the trace says how it ended";
    const Process info = run(kSpoor + " info " + path);
    EXPECT_EQ(info.out.find("did not finish"), std::string::npos) << info.out;
  }
}

TEST(Record, AnInterruptSentToTheRecorderAloneReachesTheProgramOnce) {
  // kill -INT (and -QUIT) of spoor record alone, as pkill and timeout -s
  // INT send it: the program would never hear of it otherwise, and the
  // recording never end. env --default-signal: a background job of sh
  // starts with SIGINT ignored, and the program would inherit that.
  const std::string path = trace_path("interrupted"), out = spoor::test::temp_path("interrupted.out");
  // The signal goes once the program says its handler is in.
  const Process r = run("sh -c 'env --default-signal=INT " + kSpoor + " record -o " + path + " -- " +
                        SPOOR_INTERRUPTS + " > " + out + " & s=$!; " +
                        "n=0; until grep -q ready " + out + " || [ $n -ge 600 ]; do sleep 0.05; n=$((n+1)); done; " +
                        "kill -INT $s; wait $s; echo status=$?; cat " + out + "'");
  std::filesystem::remove(out);
  EXPECT_NE(r.out.find("sigint 1\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("status=0"), std::string::npos) << r.out << r.err;
  const Process info = run(kSpoor + " info " + path);
  EXPECT_EQ(info.out.find("did not finish"), std::string::npos) << info.out;
}

// Runs `argv` as the session leader of a new terminal, sends Ctrl-C once
// the output holds `ready`, and returns everything written to the
// terminal until every process of it let go.
std::string run_on_terminal_with_ctrl_c(const std::vector<std::string>& argv, const std::string& ready) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return "no terminal";
  const std::string name = ptsname(master);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int terminal = open(name.c_str(), O_RDWR);  // becomes the controlling terminal
    if (terminal < 0) _exit(126);
    dup2(terminal, 0);
    dup2(terminal, 1);
    dup2(terminal, 2);
    signal(SIGINT, SIG_DFL);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  std::string out;
  bool sent = false;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(master, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO: the terminal's last holder closed it
    out.append(buffer, static_cast<size_t>(n));
    if (!sent && out.find(ready) != std::string::npos) {
      const char ctrl_c = 3;  // VINTR: the terminal sends SIGINT to its foreground group
      sent = write(master, &ctrl_c, 1) == 1;
    }
  }
  waitpid(pid, nullptr, 0);
  close(master);
  return out;
}

TEST(Record, CtrlCOnTheTerminalReachesTheProgramOnce) {
  // The terminal sends SIGINT to spoor record and the program alike: the
  // recorder must not pass on a second one.
  const std::string path = trace_path("ctrl-c");
  const std::string out = run_on_terminal_with_ctrl_c({kSpoor, "record", "-o", path, "--", SPOOR_INTERRUPTS}, "ready");
  if (out == "no terminal") GTEST_SKIP() << "no pseudo-terminal here (/dev/ptmx)";
  EXPECT_NE(out.find("sigint 1\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("exited with code 0"), std::string::npos) << out;
}

}  // namespace
