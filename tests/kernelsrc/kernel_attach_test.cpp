// spoor record --pid: the kernel's sources for processes already running.
// A spinner started by the test is attached to: its samples name spin_here,
// the report knows it by its command line and its exit; what it starts and
// execs after the attach is followed; --duration and a bad pid end as they
// say. Skips (saying why) where perf_event_open is not allowed.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "perf_access.h"
#include "run_command.h"

extern char** environ;

namespace {

using nlohmann::json;
using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;
const std::string kSpin = SPOOR_SPIN;

// A child running `args` with its output to /dev/null, given a moment to
// start; its pid (0 when it could not be started).
pid_t start_quietly(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// `spoor report --format json` of the trace at `path` (null when it fails).
json report(const std::string& path) {
  const Process p = run(kSpoor + " report --format json " + path);
  EXPECT_EQ(p.status, 0) << p.err;
  return p.status == 0 ? json::parse(p.out) : json();
}

const json* process_of(const json& r, pid_t pid) {
  for (const json& p : r["processes"])
    if (p["pid"] == static_cast<uint32_t>(pid)) return &p;
  return nullptr;
}

bool has_function(const json& functions, const std::string& name) {
  for (const json& f : functions)
    if (f["function"] == name) return true;
  return false;
}

// Attached to a spinner that started before the recording: its samples and
// its end are recorded, and the report knows it by its command line.
TEST(KernelAttach, ARunningProcessIsRecordedUntilItEnds) {
  SKIP_WITHOUT_PERF();
  const pid_t pid = start_quietly({kSpin, "700"});
  ASSERT_GT(pid, 0);
  const std::string path = spoor::test::temp_path("attach-spin.spoor");
  const Process rec =
      run(kSpoor + " record --pid " + std::to_string(pid) + " --kernel=samples,syscalls:exit_group -o " + path);
  EXPECT_EQ(wait_for(pid), 0) << "the spinner runs on as it would alone";
  ASSERT_EQ(rec.status, 0) << rec.err;
  if (rec.err.find("samples unavailable") != std::string::npos) GTEST_SKIP() << rec.err;
  EXPECT_NE(rec.err.find("recorded pid " + std::to_string(pid) + " for"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("it ended"), std::string::npos) << rec.err;
  const json r = report(path);
  const json* p = process_of(r, pid);
  ASSERT_NE(p, nullptr) << r.dump(1);
  EXPECT_EQ((*p)["command_line"], kSpin + " 700") << "as /proc showed it at the attach";
  EXPECT_EQ((*p)["ended"], "exit 0") << "exit_group's status";
  EXPECT_EQ((*p)["images"][0]["exe"], kSpin) << "named by its mapped file";
  const json& cpu = r["kernel"]["cpu"];
  EXPECT_GE(cpu["samples"].get<uint64_t>(), 100u) << "~600 ms of CPU left at 1 kHz";
  EXPECT_TRUE(has_function(cpu["functions_by_inclusive"], "spin_here")) << cpu["functions_by_inclusive"].dump(1);
  EXPECT_EQ(cpu["unwound"]["pc_only"], 0u) << "its modules were known from the first sample: " << cpu["stops"];
  std::filesystem::remove(path);
}

// --duration ends the recording; the process runs on, untouched.
TEST(KernelAttach, ADurationEndsTheRecordingAndLeavesTheProcessRunning) {
  SKIP_WITHOUT_PERF();
  const pid_t pid = start_quietly({"/bin/sleep", "5"});
  ASSERT_GT(pid, 0);
  const std::string path = spoor::test::temp_path("attach-sleep.spoor");
  const Process rec = run(kSpoor + " record --pid " + std::to_string(pid) + " --duration 0.3 -o " + path);
  const bool still_running = kill(pid, 0) == 0;
  kill(pid, SIGKILL);
  wait_for(pid);
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_TRUE(still_running);
  EXPECT_NE(rec.err.find("it was still running at the end of --duration"), std::string::npos) << rec.err;
  const json r = report(path);
  const json* p = process_of(r, pid);
  ASSERT_NE(p, nullptr) << r.dump(1);
  EXPECT_EQ((*p)["command_line"], "/bin/sleep 5");
  EXPECT_TRUE((*p)["exit"].is_null()) << "it had not ended";
  EXPECT_EQ((*p)["ended"], "running at the end");
  EXPECT_EQ((*p)["running_at_end"], true);
  EXPECT_GE((*p)["duration_ns"].get<int64_t>(), 250'000'000) << "it ran to the recording's end, 0.3 s after the attach";
  std::filesystem::remove(path);
}

// The children a process had started before the attach are not recorded
// (the events follow what it starts from then on): spoor record says so,
// naming them in the --pid that would record them too.
TEST(KernelAttach, ChildrenStartedBeforeTheAttachAreNamedWithTheirPid) {
  SKIP_WITHOUT_PERF();
  // The shell starts a sleep, then becomes another: its child stays its.
  const pid_t pid = start_quietly({"/bin/sh", "-c", "/bin/sleep 5 & exec /bin/sleep 6"});
  ASSERT_GT(pid, 0);
  std::string children;
  std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"), children);
  const pid_t child = static_cast<pid_t>(std::strtol(children.c_str(), nullptr, 10));
  const std::string path = spoor::test::temp_path("attach-children.spoor");
  const Process rec = run(kSpoor + " record --pid " + std::to_string(pid) + " --duration 0.2 -o " + path);
  kill(pid, SIGKILL);
  if (child > 0) kill(child, SIGKILL);
  wait_for(pid);
  ASSERT_GT(child, 0) << "no child in /proc/" << pid << "/task/" << pid << "/children";
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_NE(rec.err.find("1 process started before the recording by pid " + std::to_string(pid) +
                         " is not recorded"),
            std::string::npos)
      << rec.err;
  EXPECT_NE(rec.err.find("--pid " + std::to_string(pid) + "," + std::to_string(child) + "\n"), std::string::npos)
      << rec.err;
  std::filesystem::remove(path);
}

// What the process attached to does next is followed: a child it forks
// (inheriting the events) and the program it execs, named by its file.
// The shell waits on a FIFO until the recording has begun (its file
// exists: spoor record creates it once the events are open).
TEST(KernelAttach, WhatTheProcessStartsAndExecsAfterTheAttachIsFollowed) {
  SKIP_WITHOUT_PERF();
  const std::string fifo = spoor::test::temp_path("attach-go.fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string script = "read go < " + fifo + "; /bin/true; exec " + kSpin + " 200";
  const pid_t pid = start_quietly({"/bin/sh", "-c", script});
  ASSERT_GT(pid, 0);
  const std::string path = spoor::test::temp_path("attach-exec.spoor");
  std::filesystem::remove(path);
  Process rec;
  std::thread recording([&] {
    rec = run(kSpoor + " record --pid " + std::to_string(pid) + " --kernel=samples,syscalls -o " + path);
  });
  for (int i = 0; i < 1000 && !std::filesystem::exists(path); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::ofstream(fifo) << "go\n";  // whether or not the recording began: the shell must not wait forever
  recording.join();
  EXPECT_EQ(wait_for(pid), 0);
  std::filesystem::remove(fifo);
  ASSERT_EQ(rec.status, 0) << rec.err;
  if (rec.err.find("unavailable") != std::string::npos) GTEST_SKIP() << rec.err;
  const json r = report(path);
  const json* p = process_of(r, pid);
  ASSERT_NE(p, nullptr) << r.dump(1);
  ASSERT_EQ((*p)["images"].size(), 2u) << (*p).dump(1);
  EXPECT_EQ((*p)["images"][1]["exe"], kSpin) << "the exec after the attach";
  EXPECT_EQ((*p)["images"][0]["command_line"], "/bin/sh -c " + script)
      << "the command line /proc showed belongs to the image it was read from";
  bool true_child = false;
  for (const json& c : r["processes"])
    true_child |= c["ppid"] == static_cast<uint32_t>(pid) && c["images"].back()["exe"] == "/usr/bin/true" &&
                  c["ended"] == "exit 0";
  EXPECT_TRUE(true_child) << "the child it forked after the attach: " << r["processes"].dump(1);
  EXPECT_TRUE(has_function(r["kernel"]["cpu"]["functions_by_inclusive"], "spin_here"));
  std::filesystem::remove(path);
}

TEST(KernelAttach, ABadPidIsSaidAndAPidWithACommandIsAUsageError) {
  const Process none = run(kSpoor + " record --pid 2147483647 -o /dev/null");
  EXPECT_EQ(none.status, 127);
  EXPECT_NE(none.err.find("no process 2147483647"), std::string::npos) << none.err;
  for (const char* bad : {"--pid 0", "--pid 12,x", "--pid", "--pid 1 -- true", "--duration 1 -- true",
                                 "--pid 1 --duration -2"}) {
    const Process p = run(kSpoor + " record " + std::string(bad));
    EXPECT_EQ(p.status, 2) << bad << ": " << p.err;
  }
}

}  // namespace
