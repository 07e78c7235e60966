// Programs no one here wrote, traced and untraced: the same stdout and exit
// status, a trace that decodes without damage, and every process of the
// tree in it with its parent.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace fs = std::filesystem;
namespace reader = spoor::reader;

struct Outcome {
  int status = -1;
  std::string out;
};

// Runs `command` with sh in `dir`, capturing stdout (stderr goes to a file,
// since tools like git and make print progress there).
Outcome run_in(const fs::path& dir, const std::string& command) {
  Outcome r;
  const std::string line = "cd '" + dir.string() + "' && " + command + " 2>>'" + (dir / "stderr.log").string() + "'";
  FILE* p = popen(line.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

bool have(const std::string& tool) { return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0; }

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

struct Case {
  const char* name;
  const char* tool;      // skipped (with a message) when missing
  const char* setup;     // run in a fresh directory before each run
  const char* command;   // what is compared, traced and untraced
  int min_processes;     // the tree's size, at least
};

// Deterministic commands: fixed dates and names for git, files made by setup.
const Case kCases[] = {
    {"python3", "python3", "",
     "python3 -c 'import subprocess, json, sys; r = subprocess.run([\"echo\", \"child\"], capture_output=True); "
     "print(json.dumps({\"sum\": sum(range(100000)), \"child\": r.stdout.decode()}))'",
     2},
    // Loopback only: a TCP server thread and its client, then a datagram.
    {"python3_sockets", "python3", "",
     "python3 -c 'import socket, threading\n"
     "srv = socket.socket(); srv.bind((\"127.0.0.1\", 0)); srv.listen(1)\n"
     "def serve():\n"
     "    c, _ = srv.accept(); data = b\"\"\n"
     "    while len(data) < 100000: data += c.recv(65536)\n"
     "    c.sendall(data[::-1][:5000]); c.close()\n"
     "t = threading.Thread(target=serve); t.start()\n"
     "cl = socket.create_connection(srv.getsockname()); cl.sendall(b\"x\" * 99999 + b\"y\")\n"
     "got = b\"\"\n"
     "while len(got) < 5000: got += cl.recv(65536)\n"
     "t.join(); print(len(got), got[:3])\n"
     "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((\"127.0.0.1\", 0))\n"
     "v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.sendto(b\"ping\", u.getsockname())\n"
     "print(u.recvfrom(16)[0])'",
     1},
    {"git", "git", "",
     "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b "
     "GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' HOME=$PWD; "
     "rm -rf repo && git init -q repo && cd repo && echo hello > f && git add f && git commit -qm first && "
     "git log --format='%H %s' && git status --short",
     2},
    {"sqlite3", "sqlite3", "",
     "sqlite3 :memory: 'create table t(x); insert into t values (1),(2),(3); "
     "select sum(x), group_concat(x) from t; with recursive c(n) as (select 1 union all select n+1 from c "
     "where n < 10000) select count(*), sum(n) from c;'",
     1},
    {"gcc", "gcc", "printf '#include <stdio.h>\\nint main(void){printf(\"built %d\\\\n\", 6*7);return 0;}\\n' > hello.c",
     "gcc -O2 -o hello hello.c && ./hello", 4},
    {"bash_pipeline", "bash", "seq 1 20000 > numbers",
     "bash -c 'cat numbers | sort -r | grep 7 | tail -n 5 | tr 7 x; echo ${PIPESTATUS[@]}'", 5},
    {"xz_threads", "xz", "seq 1 300000 > data",
     "xz -T2 -6 -c data > data.xz && xz -d -c data.xz | md5sum && md5sum < data", 2},
    {"make_j2", "make",
     "mkdir -p src && for i in 1 2 3 4; do printf 'int f%s(void){return %s;}\\n' $i $i > src/f$i.c; done && "
     "printf 'OBJS=src/f1.o src/f2.o src/f3.o src/f4.o\\nall: $(OBJS)\\n\\t@echo linked $(words $(OBJS))\\n"
     "%%.o: %%.c\\n\\t@gcc -c $< -o $@\\n' > Makefile",
     "make -s -j2 && make -s -j2", 9},
    // A JVM: its own SIGSEGV handler for null checks, many threads, and
    // malloc from native code under Java frames that are in no module.
    {"java", "java", "cp '" SPOOR_JAVA_PROGRAM "' .", "java JitHeap.java", 1},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ProgramMatrix : public testing::TestWithParam<Case> {};

TEST_P(ProgramMatrix, SameOutputTracedAndEveryProcessInTheTrace) {
  const Case& c = GetParam();
  if (!have(c.tool)) GTEST_SKIP() << c.tool << " is not installed (scripts/install-deps.sh installs it)";
  const fs::path base = fs::temp_directory_path() / ("spoor-matrix-" + std::to_string(getpid()) + "-" + c.name);
  fs::remove_all(base);
  const fs::path plain = base / "plain", traced = base / "traced";
  fs::create_directories(plain);
  fs::create_directories(traced);
  if (*c.setup) {
    ASSERT_EQ(run_in(plain, c.setup).status, 0);
    ASSERT_EQ(run_in(traced, c.setup).status, 0);
  }
  write_file(plain / "cmd.sh", c.command);
  write_file(traced / "cmd.sh", c.command);
  const Outcome expected = run_in(plain, "sh cmd.sh");
  const fs::path trace_file = base / "trace.spoor";
  const Outcome got = run_in(traced, std::string(SPOOR_TOOL) + " record -o '" + trace_file.string() + "' -- sh cmd.sh");
  EXPECT_EQ(got.status, expected.status);
  EXPECT_EQ(got.out, expected.out);
  EXPECT_FALSE(expected.out.empty());

  auto trace = reader::Trace::open(trace_file.string());
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage()) << trace->damage()->message;
  // Every process is described, and every child a traced process forked or
  // spawned is itself in the trace, with that parent.
  std::set<uint32_t> pids;
  for (const reader::Process& p : trace->processes()) pids.insert(p.pid);
  std::map<uint32_t, uint32_t> parent_of;  // child -> parent, from Fork events
  std::set<uint32_t> started, untraceable_execs;
  reader::EventReader events(trace.value());
  reader::Event e;
  uint64_t count = 0;
  while (events.next(e)) {
    ++count;
    EXPECT_TRUE(pids.count(e.pid)) << "an event of undescribed pid " << e.pid;
    if (e.descriptor->name == "Fork") parent_of[static_cast<uint32_t>(std::get<uint64_t>(*e.field("child_pid")))] = e.pid;
    if (e.descriptor->name == "ProcessStart") started.insert(e.pid);
    if (e.descriptor->name == "Exec" && !std::get<std::string_view>(*e.field("untraceable")).empty())
      untraceable_execs.insert(e.pid);
  }
  EXPECT_GT(count, 0u);
  EXPECT_GE(static_cast<int>(started.size()), c.min_processes + 1) << "sh and the tree under it";
  for (const auto& [child, parent] : parent_of) {
    if (untraceable_execs.count(child)) continue;
    EXPECT_TRUE(started.count(child)) << "pid " << parent << " started " << child << ", which is not in the trace";
    const reader::Process* p = trace->process(child);
    if (p != nullptr) {
      EXPECT_EQ(p->ppid, parent) << "pid " << child;
    }
  }
  if (!HasFailure()) fs::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(RealPrograms, ProgramMatrix, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

}  // namespace
