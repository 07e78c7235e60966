// spoor report end to end: spoor record on programs whose allocations, file
// traffic, threads and CPU use are known, then the report's JSON checked
// figure by figure and its text read for what a stranger needs; a
// hand-built trace for activity durations; bad input.
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <sys/auxv.h>

#include <filesystem>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perf_access.h"
#include "run_command.h"
#include "spoor_trace.h"

namespace {

using nlohmann::json;
using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;

std::string record(const std::string& name, const std::string& command, const std::string& options = "") {
  const std::string path = spoor::test::temp_path("report-" + name + ".spoor");
  const Process p = run(kSpoor + " record " + options + " -o " + path + " -- " + command + " >/dev/null");
  EXPECT_EQ(p.status, 0) << p.err;
  return path;
}

json report_json(const std::string& path, const std::string& options = "") {
  const Process p = run(kSpoor + " report --format json " + options + " " + path);
  EXPECT_EQ(p.status, 0) << p.err;
  json j = json::parse(p.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << p.out.substr(0, 400);
  return j;
}

const json* process_heap(const json& r, const std::string& command_part) {
  for (const json& h : r["heap"])
    if (h["command_line"].get<std::string>().find(command_part) != std::string::npos) return &h;
  return nullptr;
}

const json* site_named(const json& sites, const std::string& function) {
  for (const json& s : sites)
    if (s["function"] == function) return &s;
  return nullptr;
}

class ReportHeap : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(record("heap", SPOOR_REPORT_HEAP, "--sample-hz 0"));
    report_ = new json(report_json(*path_, "--top 20"));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove(*path_);
    delete path_;
    delete report_;
  }
  static std::string* path_;
  static json* report_;
};
std::string* ReportHeap::path_ = nullptr;
json* ReportHeap::report_ = nullptr;

TEST_F(ReportHeap, PeakTotalsAndTopSitesAreTheProgramsOwn) {
  const json* h = process_heap(*report_, "spoor_test_report_heap");
  ASSERT_NE(h, nullptr) << report_->dump(1).substr(0, 2000);
  // The 100 blocks of hold_blocks were live together: the peak holds them
  // (and whatever the runtime keeps, a few KiB at most).
  EXPECT_GE((*h)["peak_bytes"].get<uint64_t>(), 1000000u);
  EXPECT_LT((*h)["peak_bytes"].get<uint64_t>(), 1000000u + 64 * 1024);
  EXPECT_GE((*h)["allocated_bytes"].get<uint64_t>(), 1000000u + 50000 + 900);
  EXPECT_GE((*h)["calls"]["alloc"].get<uint64_t>(), 153u);
  EXPECT_GE((*h)["calls"]["free"].get<uint64_t>(), 150u);

  const json& top = (*h)["top_by_bytes"][0];
  EXPECT_EQ(top["function"], "hold_blocks");
  EXPECT_EQ(top["allocated_bytes"], 1000000u);
  EXPECT_EQ(top["calls"], 100u);
  EXPECT_EQ(top["peak_bytes"], 1000000u) << "all 100 were live at the peak";
  EXPECT_NE(top["location"].get<std::string>().find("report_heap.c:"), std::string::npos) << top.dump();
  ASSERT_GE(top["frames"].size(), 2u);
  EXPECT_EQ(top["frames"][1]["function"], "main") << "the caller comes next";

  EXPECT_EQ((*h)["top_by_peak"][0]["function"], "hold_blocks");
  EXPECT_EQ((*h)["top_by_calls"][0]["function"], "hold_blocks");
}

TEST_F(ReportHeap, TemporaryAllocationsAndLeaksHaveTheirFunctions) {
  const json* h = process_heap(*report_, "spoor_test_report_heap");
  ASSERT_NE(h, nullptr);
  const json* churn = site_named((*h)["top_by_temporary"], "churn");
  ASSERT_NE(churn, nullptr) << (*h)["top_by_temporary"].dump(1);
  EXPECT_EQ((*churn)["temporary"], 50u);
  EXPECT_EQ((*churn)["calls"], 50u);
  EXPECT_EQ((*churn)["allocated_bytes"], 50000u);
  EXPECT_GE((*h)["temporary"].get<uint64_t>(), 50u);

  const json* leak = site_named((*h)["leaks"], "leak_some");
  ASSERT_NE(leak, nullptr) << (*h)["leaks"].dump(1);
  EXPECT_EQ((*leak)["leaked_blocks"], 3u);
  EXPECT_EQ((*leak)["leaked_bytes"], 900u);
  EXPECT_GE((*h)["leaked_bytes"].get<uint64_t>(), 900u);
  EXPECT_EQ(site_named((*h)["leaks"], "hold_blocks"), nullptr) << "release_blocks freed them all";
}

TEST_F(ReportHeap, SizeHistogramCountsEachAllocationInItsPowerOfTwoBucket) {
  const json* h = process_heap(*report_, "spoor_test_report_heap");
  ASSERT_NE(h, nullptr);
  auto count_in = [&](uint64_t size) -> uint64_t {
    for (const json& b : (*h)["size_histogram"])
      if (b["min_bytes"].get<uint64_t>() <= size && size <= b["max_bytes"].get<uint64_t>()) return b["count"];
    return 0;
  };
  EXPECT_GE(count_in(10000), 100u);  // [8192, 16383]
  EXPECT_GE(count_in(1000), 50u);    // [512, 1023]
  EXPECT_GE(count_in(300), 3u);      // [256, 511]
}

TEST_F(ReportHeap, TextNamesUnitsFunctionsAndLines) {
  const Process p = run(kSpoor + " report --heap " + *path_);
  EXPECT_EQ(p.status, 0) << p.err;
  const std::string& t = p.out;
  EXPECT_NE(t.find("peak heap"), std::string::npos) << t;
  EXPECT_NE(t.find("KiB"), std::string::npos);
  EXPECT_NE(t.find("hold_blocks  report_heap.c:"), std::string::npos) << t;
  EXPECT_NE(t.find("<- main  report_heap.c:"), std::string::npos) << "callers under the site";
  EXPECT_NE(t.find("leak_some"), std::string::npos);
  EXPECT_NE(t.find("977 KiB"), std::string::npos) << "1,000,000 bytes in binary units";
  EXPECT_NE(t.find("Trace health"), std::string::npos) << "always there";
  EXPECT_EQ(t.find("File I/O"), std::string::npos) << "only the section asked for";
}

// report_fork_exec.c forks a child that frees some of the blocks it
// inherited, posix_spawns itself, then execs itself: one heap part per
// image, figures from the program's own account (its header comment).
TEST(ReportHeapForkExec, EachImageHasItsOwnHeapAndForkChildrenInheritTheirParents) {
  const std::string path = record("fork-exec", SPOOR_REPORT_FORK_EXEC, "--sample-hz 0");
  const json r = report_json(path, "--heap --top 50");
  ASSERT_TRUE(r.contains("heap")) << r.dump(1).substr(0, 2000);
  const json* parent = nullptr;
  const json* child = nullptr;
  const json* spawned = nullptr;
  const json* execd = nullptr;
  for (const json& h : r["heap"]) {
    const std::string cmd = h["command_line"];
    if (cmd.find("execd") != std::string::npos) execd = &h;
    else if (cmd.find("spawned") != std::string::npos) spawned = &h;
    else if (h["inherited"]["blocks"].get<uint64_t>() > 0) child = &h;
    else if (h["images_in_process"] == 2u && h["exec_count"] == 0u) parent = &h;
  }
  ASSERT_NE(parent, nullptr) << r["heap"].dump(1).substr(0, 4000);
  ASSERT_NE(child, nullptr) << r["heap"].dump(1).substr(0, 4000);
  ASSERT_NE(spawned, nullptr) << r["heap"].dump(1).substr(0, 4000);
  ASSERT_NE(execd, nullptr) << r["heap"].dump(1).substr(0, 4000);
  EXPECT_EQ((*execd)["pid"], (*parent)["pid"]) << "the exec'd image is the parent process's";

  // The parent's first image ended in an exec: nothing leaked, its live
  // blocks (the 4 of live_at_exec, the 10 of hold_for_child) released.
  EXPECT_EQ((*parent)["ended_by"], "exec");
  EXPECT_EQ((*parent)["leaked_bytes"], 0u);
  EXPECT_TRUE((*parent)["leaks"].empty());
  EXPECT_GE((*parent)["released_by_exec_bytes"].get<uint64_t>(), 4u * 3000 + 10 * 2000);
  EXPECT_NE(site_named((*parent)["top_by_bytes"], "live_at_exec"), nullptr);
  EXPECT_EQ(site_named((*parent)["top_by_bytes"], "own_leak"), nullptr) << "the exec'd image's site is not here";

  // The fork child: its frees of its parent's blocks are known; the 4 it
  // kept are not its leaks; its own 2 blocks are.
  const json& inh = (*child)["inherited"];
  EXPECT_EQ((*child)["unknown_frees"], 0u) << child->dump(1).substr(0, 2000);
  EXPECT_GE(inh["blocks"].get<uint64_t>(), 10u);
  EXPECT_EQ(inh["freed_blocks"], 6u);
  EXPECT_EQ(inh["freed_bytes"], 6u * 2000);
  EXPECT_EQ(inh["kept_blocks"].get<uint64_t>(), inh["blocks"].get<uint64_t>() - 6);
  EXPECT_EQ((*child)["ended_by"], "exit");
  const json* own = site_named((*child)["leaks"], "child_leak");
  ASSERT_NE(own, nullptr) << (*child)["leaks"].dump(1);
  EXPECT_EQ((*own)["leaked_blocks"], 2u);
  EXPECT_EQ((*own)["leaked_bytes"], 1400u);
  EXPECT_EQ((*child)["leaked_bytes"], 1400u) << "nothing inherited counts as the child's leak";
  EXPECT_EQ((*child)["allocated_bytes"], 1400u) << "nor as its allocations";

  // posix_spawn's child begins a new image: nothing inherited.
  EXPECT_EQ((*spawned)["inherited"]["blocks"], 0u);
  EXPECT_EQ((*spawned)["unknown_frees"], 0u);
  const json* churn = site_named((*spawned)["top_by_bytes"], "spawned_churn");
  ASSERT_NE(churn, nullptr) << (*spawned)["top_by_bytes"].dump(1);
  EXPECT_EQ((*churn)["calls"], 5u);

  // The exec'd image starts empty: its own leak only.
  EXPECT_EQ((*execd)["exec_count"], 1u);
  EXPECT_EQ((*execd)["inherited"]["blocks"], 0u);
  EXPECT_EQ((*execd)["unknown_frees"], 0u);
  const json* leak = site_named((*execd)["leaks"], "own_leak");
  ASSERT_NE(leak, nullptr) << (*execd)["leaks"].dump(1);
  EXPECT_EQ((*leak)["leaked_bytes"], 500u);
  EXPECT_EQ(site_named((*execd)["leaks"], "live_at_exec"), nullptr);
  EXPECT_EQ(site_named((*execd)["leaks"], "hold_for_child"), nullptr);

  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("released by exec"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("inherited from the parent and not freed"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(", first image ("), std::string::npos) << "the parent, which exec'd: " << text.out;
  EXPECT_EQ(text.out.find("unknown frees"), std::string::npos) << text.out;

  // The process table names the parent by what it was started as; its exec
  // note names what it ran next.
  const Process tree = run(kSpoor + " report --threads " + path);
  EXPECT_EQ(tree.status, 0) << tree.err;
  const std::string pid = std::to_string((*parent)["pid"].get<uint64_t>());
  std::istringstream lines(tree.out);
  std::string row, note;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("  " + pid + "  ") != std::string::npos && line.find("exit") != std::string::npos) row = line;
    else if (!row.empty() && note.empty() && line.find("exec #1 at") != std::string::npos) note = line;
  }
  EXPECT_NE(row.find("report_fork_exec"), std::string::npos) << tree.out;
  EXPECT_EQ(row.find("execd"), std::string::npos) << "the row is the first image's: " << tree.out;
  EXPECT_NE(note.find("execd"), std::string::npos) << tree.out;
  // An exec keeps the thread: one thread, though each image's main thread
  // is listed (and the table's THREADS column says 1).
  const json procs = report_json(path, "--threads");
  uint64_t threads = 0;
  for (const json& p : procs["processes"]) {
    threads += p["thread_count"].get<uint64_t>();
    if (p["pid"] != (*parent)["pid"]) continue;
    EXPECT_EQ(p["threads"].size(), 2u) << p.dump(1);
    EXPECT_EQ(p["thread_count"], 1u) << p.dump(1);
  }
  EXPECT_EQ(procs["trace"]["threads"], threads);
  EXPECT_EQ(threads, 3u) << "parent, fork child, spawned child: one thread each";
  std::filesystem::remove(path);
}

// Without lines (no debug information), two calls in one function are told
// apart by the address's offset into the function's symbol.
TEST(ReportHeapNoLines, CallsInAFunctionDifferByTheirOffset) {
  const std::string path = record("no-lines", SPOOR_REPORT_NO_LINES, "--sample-hz 0");
  const json r = report_json(path, "--heap --top 50");
  ASSERT_TRUE(r.contains("heap")) << r.dump(1).substr(0, 2000);
  std::map<uint64_t, std::string> offset_by_size;  // block size -> the site's offset
  std::set<uint64_t> function_starts;              // address - offset
  for (const json& site : r["heap"][0]["top_by_bytes"]) {
    const json& top = site["frames"][0];
    if (top["function"] != "make_pair_of_blocks") continue;
    ASSERT_TRUE(top.contains("symbol_offset")) << top.dump();
    ASSERT_EQ(site["calls"], 10u) << site.dump(1);
    const uint64_t size = site["allocated_bytes"].get<uint64_t>() / 10;
    offset_by_size[size] = top["symbol_offset"];
    function_starts.insert(std::stoull(top["address"].get<std::string>(), nullptr, 16) -
                           std::stoull(top["symbol_offset"].get<std::string>(), nullptr, 16));
  }
  ASSERT_EQ(offset_by_size.size(), 2u) << r["heap"][0]["top_by_bytes"].dump(1).substr(0, 4000);
  EXPECT_NE(offset_by_size[4001], offset_by_size[4002]);
  EXPECT_EQ(function_starts.size(), 1u) << "both offsets count from the function's start";
  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_NE(text.out.find("make_pair_of_blocks+" + offset_by_size[4001]), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("make_pair_of_blocks+" + offset_by_size[4002]), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

// Without any symbol (the same program stripped), the two calls are still
// one function's: the ranking of allocating functions and the folded
// export merge them under where the call frame information says that
// function starts, which is where the unstripped file's symbol says it does.
TEST(ReportHeapNoLines, WithoutSymbolsCallsInAFunctionAreOneRowNamedByItsStart) {
  const Process nm = run("nm '" SPOOR_REPORT_NO_LINES "' | awk '$3 == \"make_pair_of_blocks\" { print $1 }'");
  ASSERT_FALSE(nm.out.empty());
  const uint64_t start = std::stoull(nm.out, nullptr, 16);
  char name[96];
  std::snprintf(name, sizeof name, "function at spoor_test_report_stripped+0x%llx",
                static_cast<unsigned long long>(start));
  const std::string path = record("stripped", SPOOR_REPORT_STRIPPED, "--sample-hz 0");
  const json r = report_json(path, "--heap --top 50");
  ASSERT_TRUE(r.contains("heap")) << r.dump(1).substr(0, 2000);
  std::vector<json> rows;
  for (const json& f : r["heap"][0]["top_functions"])
    if (f["function"] == name) rows.push_back(f);
  ASSERT_EQ(rows.size(), 1u) << name << " in " << r["heap"][0]["top_functions"].dump(1).substr(0, 4000);
  EXPECT_EQ(rows[0]["calls"], 20u);
  EXPECT_EQ(rows[0]["allocated_bytes"], 10u * (4001 + 4002));
  // The sites stay apart, each at its own address.
  std::set<std::string> sites;
  for (const json& site : r["heap"][0]["top_by_bytes"])
    if (site["calls"] == 10u && site["frames"][0].value("module", "").find("stripped") != std::string::npos)
      sites.insert(site["frames"][0]["address"].get<std::string>());
  EXPECT_EQ(sites.size(), 2u) << r["heap"][0]["top_by_bytes"].dump(1).substr(0, 4000);
  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_NE(text.out.find(name), std::string::npos) << text.out;
  // A flame graph's folded stacks: one frame for the function, its two
  // call sites' allocations on one line.
  const Process folded = run(kSpoor + " export " + path + " --format folded --weight alloc-calls");
  ASSERT_EQ(folded.status, 0) << folded.err;
  EXPECT_NE(folded.out.find(std::string(name) + " 20\n"), std::string::npos) << folded.out;
  std::filesystem::remove(path);
}

// --pid: the sections count the chosen process's events only; the spawned
// process's heap is there in full, the others' images are not.
TEST(ReportHeapForkExec, PidCountsOnlyThatProcessesEvents) {
  const std::string path = record("fork-exec-pid", SPOOR_REPORT_FORK_EXEC, "--sample-hz 0");
  const json all = report_json(path, "--heap --top 50");
  uint64_t spawned_pid = 0;
  json spawned_whole;
  for (const json& h : all["heap"])
    if (h["command_line"].get<std::string>().find("spawned") != std::string::npos) {
      spawned_pid = h["pid"];
      spawned_whole = h;
    }
  ASSERT_NE(spawned_pid, 0u) << all["heap"].dump(1).substr(0, 2000);

  const json one = report_json(path, "--heap --threads --top 50 --pid " + std::to_string(spawned_pid));
  EXPECT_EQ(one["trace"]["only_pids"], json::array({spawned_pid}));
  ASSERT_EQ(one["heap"].size(), 1u) << one["heap"].dump(1).substr(0, 2000);
  EXPECT_EQ(one["heap"][0]["pid"], spawned_pid);
  EXPECT_EQ(one["heap"][0]["calls"], spawned_whole["calls"]);
  EXPECT_EQ(one["heap"][0]["allocated_bytes"], spawned_whole["allocated_bytes"]);
  EXPECT_GE(one["processes"].size(), 1u) << "the process table stays whole";

  const Process text = run(kSpoor + " report --heap --pid " + std::to_string(spawned_pid) + " " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("only the events of pid " + std::to_string(spawned_pid) + " (--pid)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("execd"), std::string::npos) << "the parent's exec'd image is not counted: " << text.out;

  // Its events alone in the dump.
  const Process dumped = run(kSpoor + " dump --format jsonl --pid " + std::to_string(spawned_pid) + " " + path);
  ASSERT_EQ(dumped.status, 0) << dumped.err;
  std::istringstream lines(dumped.out);
  size_t dumped_events = 0;
  for (std::string line; std::getline(lines, line); ++dumped_events)
    EXPECT_EQ(json::parse(line).at("pid"), spawned_pid) << line;
  EXPECT_GT(dumped_events, 10u);

  // The export of one process: its tracks and counter only.
  const std::string out = spoor::test::temp_path("report-fork-exec-pid.json");
  const Process exported =
      run(kSpoor + " export " + path + " --format chrome --pid " + std::to_string(spawned_pid) + " -o " + out);
  ASSERT_EQ(exported.status, 0) << exported.err;
  std::ifstream in(out);
  const json doc = json::parse(in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  std::set<int64_t> pids;
  size_t counters = 0;
  for (const json& e : doc.at("traceEvents")) {
    if (e.contains("pid")) pids.insert(e.at("pid").get<int64_t>());
    counters += e.at("ph") == "C";
  }
  EXPECT_EQ(pids, std::set<int64_t>{static_cast<int64_t>(spawned_pid)});
  EXPECT_GT(counters, 0u) << "its heap counter";
  std::filesystem::remove(out);
  EXPECT_EQ(run(kSpoor + " export " + path + " --format chrome --pid 999999999").status, 2);

  const Process missing = run(kSpoor + " report --pid 999999999 " + path);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("no such process"), std::string::npos) << missing.err;
  const Process bad = run(kSpoor + " report --pid 12,x " + path);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--pid takes process IDs"), std::string::npos) << bad.err;
  std::filesystem::remove(path);
}

// The export's heap-size counter counts as the report does: per image. Its
// last value for a process is what its last image left live, so the
// parent's 4 x 3000 + 10 x 2000 bytes live at its exec do not follow it into
// the exec'd image, nor its 10 x 2000 into the fork child.
TEST(ReportHeapForkExec, TheExportsHeapCounterStartsAgainAtAnExecAndAFork) {
  const std::string path = record("fork-exec-export", SPOOR_REPORT_FORK_EXEC, "--sample-hz 0");
  const json r = report_json(path, "--heap --top 50");
  ASSERT_TRUE(r.contains("heap")) << r.dump(1).substr(0, 2000);
  const std::string out = spoor::test::temp_path("report-fork-exec.json");
  const Process p = run(kSpoor + " export " + path + " --format chrome -o " + out);
  ASSERT_EQ(p.status, 0) << p.err;
  std::ifstream in(out);
  const json doc = json::parse(in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  std::map<int64_t, std::vector<int64_t>> values;  // by pid, in time order
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == "C" && e.at("name") == "heap size") values[e.at("pid")].push_back(e.at("args").at("bytes"));
  size_t checked = 0;
  for (const json& h : r["heap"]) {
    const bool last_image = h["images_in_process"] == h["exec_count"].get<uint64_t>() + 1;
    if (!last_image) continue;
    const auto it = values.find(h["pid"].get<int64_t>());
    ASSERT_NE(it, values.end()) << "no heap counter for pid " << h["pid"];
    EXPECT_EQ(it->second.back(), h["leaked_bytes"].get<int64_t>()) << h["command_line"];
    if (h["exec_count"] == 1u) {
      EXPECT_GE(*std::max_element(it->second.begin(), it->second.end()), 4 * 3000 + 10 * 2000)
          << "the first image's peak is on the counter before the exec";
    }
    ++checked;
  }
  EXPECT_EQ(checked, 3u) << "the exec'd parent, the fork child and the spawned child";
  std::filesystem::remove(out);
  std::filesystem::remove(path);
}

TEST(ReportIo, BytesPerFileFollowDescriptorsThroughDupAndStdio) {
  const std::string dir = spoor::test::temp_path("report-io-dir");
  std::filesystem::create_directories(dir);
  const std::string path = record("io", std::string(SPOOR_IO_FILES) + " " + dir);
  const json r = report_json(path, "--io --top 100");
  ASSERT_TRUE(r.contains("io")) << r.dump(1).substr(0, 1000);
  auto file = [&](const std::string& name) -> json {
    for (const json& f : r["io"]["files"])
      if (f["path"] == dir + "/" + name) return f;
    ADD_FAILURE() << "no file " << name << " in " << r["io"]["files"].dump(1);
    return json::object();
  };
  // io_files.c's own account of each file (see its header comment), and
  // the sizes the files have on disk.
  EXPECT_EQ(file("a.bin")["bytes_written"], 2100u);
  EXPECT_EQ(file("a.bin")["bytes_read"], 2100u);
  EXPECT_EQ(file("a.bin")["opens"], 2u);
  EXPECT_EQ(file("b.bin")["bytes_written"], 765u) << "written only through dup'd descriptors";
  EXPECT_EQ(file("b.bin")["bytes_read"], 765u);
  EXPECT_EQ(file("v.bin")["bytes_written"], 500u);
  EXPECT_EQ(file("c.txt")["bytes_written"], 3004u) << "stdio layer";
  EXPECT_EQ(file("c.txt")["bytes_read"], 3004u);
  EXPECT_EQ(file("missing")["errors"], 2u);
  for (const char* name : {"a.bin", "b.bin", "c.txt", "v.bin", "d.txt"})
    EXPECT_EQ(file(name)["bytes_written"].get<uint64_t>(), std::filesystem::file_size(dir + "/" + name)) << name;
  EXPECT_FALSE(r["io"]["slowest"].empty());
  EXPECT_FALSE(r["io"]["threads"].empty());
  std::filesystem::remove_all(dir);
  std::filesystem::remove(path);
}

// libc opens the mkstemp family's files and tmpfile's with its own internal
// open: the shim names them itself, so the bytes written through the
// descriptor mkstemp returned and those read after a reopen by name are one
// row (report_temp_files.c's header comment has the figures).
// A descriptor handed down from outside the traced tree and never used
// is no row of the I/O report; the file the program read is.
TEST(ReportIo, AnInheritedDescriptorNeverUsedIsNoRow) {
  const std::string unused = spoor::test::temp_path("inherited-unused.txt");
  const std::string data = spoor::test::temp_path("inherited-read.txt");
  std::ofstream(unused) << "never read";
  std::ofstream(data) << std::string(500, 'r');
  const std::string path = spoor::test::temp_path("report-inherited.spoor");
  const Process p = run(kSpoor + " record --sample-hz 0 -o " + path + " -- /bin/cat " + data + " 9<" + unused +
                        " >/dev/null");
  ASSERT_EQ(p.status, 0) << p.err;
  const json r = report_json(path, "--io --top 50");
  bool read = false;
  for (const json& f : r["io"]["files"]) {
    const std::string name = f["path"];
    EXPECT_EQ(name.find("inherited-unused"), std::string::npos) << r["io"]["files"].dump(1);
    if (name == data) read = f["bytes_read"] == 500u;
  }
  EXPECT_TRUE(read) << r["io"]["files"].dump(1);
  std::filesystem::remove(unused);
  std::filesystem::remove(data);
  std::filesystem::remove(path);
}

TEST(ReportIo, TemporaryFilesAreNamedFromTheirCreation) {
  const std::string dir = spoor::test::temp_path("report-temp-dir");
  std::filesystem::create_directories(dir);
  const std::string path = record("temp", std::string(SPOOR_REPORT_TEMP_FILES) + " " + dir);
  const json r = report_json(path, "--io --top 100");
  ASSERT_TRUE(r.contains("io")) << r.dump(1).substr(0, 1000);
  const json* spill = nullptr;
  const json* suffixed = nullptr;
  const json* anonymous = nullptr;
  size_t spill_rows = 0;
  for (const json& f : r["io"]["files"]) {
    const std::string name = f["path"];
    if (name.rfind(dir + "/spill", 0) == 0) spill = &f, ++spill_rows;
    if (name.rfind(dir + "/s", 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".txt") suffixed = &f;
    if (name.find("(deleted)") != std::string::npos && f["bytes_written"] == 300u) anonymous = &f;
  }
  ASSERT_NE(spill, nullptr) << r["io"]["files"].dump(1);
  EXPECT_EQ(spill_rows, 1u) << "mkstemp's descriptor and the reopen are one file";
  EXPECT_EQ((*spill)["opens"], 3u) << "mkstemp, fdopen (the stdio layer's open of it) and the reopen";
  EXPECT_EQ((*spill)["bytes_written"], 1234u) << "by write and through the fdopen'd stream";
  EXPECT_EQ((*spill)["bytes_read"], 1234u);
  EXPECT_EQ((*spill)["path"].get<std::string>().size(), (dir + "/spillXXXXXX").size()) << "the name chosen";
  EXPECT_EQ((*spill)["path"].get<std::string>().find("XXXXXX"), std::string::npos);
  ASSERT_NE(suffixed, nullptr) << r["io"]["files"].dump(1);
  EXPECT_EQ((*suffixed)["bytes_written"], 50u);
  EXPECT_NE(anonymous, nullptr) << "tmpfile's file, by its descriptor's link: " << r["io"]["files"].dump(1);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(path);
}

// A shell that reads a file, then execs cat to read it again: one pid,
// one tid, two images; the I/O rows of its two threads say which image.
TEST(ReportThreads, ThreadRowsOfAProcessThatExecsNameTheirImage) {
  const std::string data = spoor::test::temp_path("exec-rows.txt");
  std::ofstream(data) << std::string(3000, 'x');
  const std::string path = record("exec-rows", "/bin/sh -c 'read -r line < " + data + "; exec cat " + data + "'",
                                  "--sample-hz 0");
  const json r = report_json(path, "--io");
  ASSERT_TRUE(r.contains("io")) << r.dump(1).substr(0, 2000);
  const json* shell = nullptr;
  const json* cat = nullptr;
  for (const json& t : r["io"]["threads"]) {
    if (!t.contains("exec_count")) continue;
    if (t["exec_count"] == 0u && t["bytes_read"].get<uint64_t>() > 0) shell = &t;
    if (t["exec_count"] == 1u) cat = &t;
  }
  ASSERT_NE(shell, nullptr) << r["io"]["threads"].dump(1);
  ASSERT_NE(cat, nullptr) << r["io"]["threads"].dump(1);
  EXPECT_EQ((*shell)["tid"], (*cat)["tid"]);
  EXPECT_EQ((*cat)["bytes_read"], 3000u);
  const Process text = run(kSpoor + " report --io " + path);
  EXPECT_NE(text.out.find("cat (exec #1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" (first image)"), std::string::npos) << text.out;
  std::filesystem::remove(data);
  std::filesystem::remove(path);
}

// The text dump is for reading: a stack's frames are addresses, and a
// module's image (the vDSO's) is its first bytes and its size, not pages
// of hex; the jsonl dump keeps every byte.
TEST(DumpText, StacksAreAddressesAndLongBlobsAreClipped) {
  const std::string path = record("dump-text", SPOOR_REPORT_FORK_EXEC, "--sample-hz 0");
  const Process text = run(kSpoor + " dump " + path);
  ASSERT_EQ(text.status, 0) << text.err;
  std::istringstream lines(text.out);
  bool stack = false, image = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Spoor.Stack") != std::string::npos) {
      stack = true;
      EXPECT_NE(line.find("frames=[0x"), std::string::npos) << line;
    }
    if (line.find("ModuleImage") != std::string::npos) {
      image = true;
      EXPECT_NE(line.find(" bytes)"), std::string::npos) << line.substr(0, 400);
      EXPECT_LT(line.size(), 600u);
    }
  }
  EXPECT_TRUE(stack);
  EXPECT_TRUE(image) << "the vDSO's image";
  const Process jsonl = run(kSpoor + " dump --format jsonl " + path);
  ASSERT_EQ(jsonl.status, 0) << jsonl.err;
  size_t longest = 0;
  std::istringstream records(jsonl.out);
  for (std::string line; std::getline(records, line);)
    if (line.find("\"ModuleImage\"") != std::string::npos) longest = std::max(longest, line.size());
  EXPECT_GT(longest, 4000u) << "the vDSO's image, whole";
  std::filesystem::remove(path);
}

TEST(ReportThreads, ProcessTreeExitCodesAndThreadNames) {
  const std::string path = record("children", SPOOR_CHILDREN);
  const json r = report_json(path, "--threads");
  ASSERT_TRUE(r.contains("processes"));
  std::map<std::string, int> codes;  // by the last word of the command line
  for (const json& p : r["processes"]) {
    const std::string cmd = p["command_line"];
    ASSERT_FALSE(p["exit"].is_null()) << cmd;
    codes[cmd.substr(cmd.rfind(' ') + 1)] = p["exit"]["exit_code"];
  }
  EXPECT_EQ(codes["spawned"], 4);
  EXPECT_EQ(codes["execd"], 5);
  EXPECT_EQ(r["processes"].size(), 4u) << "the recorder itself is not a process of the program";
  std::filesystem::remove(path);

  const std::string threads = record("threads", SPOOR_THREADS, "--sample-hz 1000");
  const json t = report_json(threads, "--threads --cpu");
  std::set<std::string> names;
  for (const json& th : t["processes"][0]["threads"]) names.insert(th["name"]);
  for (const char* n : {"returner", "exiter", "cancelled", "spinner"}) EXPECT_TRUE(names.count(n)) << n;
  // The spinner spends 300 ms of CPU in spin_cpu: the top function.
  ASSERT_TRUE(t.contains("cpu"));
  EXPECT_GT(t["cpu"]["periods"].get<uint64_t>(), 100u);
  EXPECT_EQ(t["cpu"]["functions"][0]["function"], "spin_cpu") << t["cpu"]["functions"].dump(1);
  EXPECT_EQ(t["cpu"]["threads"][0]["name"], "spinner");
  std::filesystem::remove(threads);
}

struct VdsoFunction {
  uint64_t start, end;  // offsets in the image
  std::string name;
};

// The functions this kernel's vDSO exports, read from this test's own vDSO
// (the kernel maps the same image into every process).
std::vector<VdsoFunction> vdso_functions() {
  std::vector<VdsoFunction> ranges;
  auto* image = reinterpret_cast<char*>(getauxval(AT_SYSINFO_EHDR));
  if (image == nullptr || elf_version(EV_CURRENT) == EV_NONE) return ranges;
  // The image's size: its section headers are the last thing in it.
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(image);
  Elf* elf = elf_memory(image, header->e_shoff + size_t{header->e_shnum} * header->e_shentsize);
  for (Elf_Scn* section = nullptr; elf != nullptr && (section = elf_nextscn(elf, section)) != nullptr;) {
    GElf_Shdr sh;
    if (gelf_getshdr(section, &sh) == nullptr || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    for (size_t i = 0; data != nullptr && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) != nullptr && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
        const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
        ranges.push_back({sym.st_value, sym.st_value + sym.st_size, name != nullptr ? name : ""});
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  return ranges;
}

// The program spins on clock_gettime: its samples land in the vDSO, which
// has no file; the trace carries its image, so the functions have names
// (without it they read "linux-vdso.so.1+0x..."). Code the vDSO exports no
// symbol for (some kernels outline a helper) keeps the module+offset form.
TEST(ReportCpu, VdsoFunctionsAreNamedFromTheRecordedImage) {
  const auto exported = vdso_functions();
  ASSERT_FALSE(exported.empty()) << "this test's own vDSO lists its functions";
  const std::string path = record("clock", SPOOR_REPORT_CLOCK, "--sample-hz 1000");
  const json r = report_json(path, "--cpu --top 10");
  ASSERT_TRUE(r.contains("cpu")) << r.dump(1).substr(0, 2000);
  const json& functions = r["cpu"]["functions"];
  uint64_t clock_self = 0;
  for (const json& f : functions) {
    const std::string name = f["function"];
    if (name.starts_with("linux-vdso.so.1+0x")) {
      const uint64_t offset = std::stoull(name.substr(sizeof "linux-vdso.so.1+0x" - 1), nullptr, 16);
      for (const VdsoFunction& v : exported)
        EXPECT_FALSE(offset >= v.start && offset < v.end)
            << "an unnamed frame inside an exported vDSO function: " << functions.dump(1);
    }
    if (name.find("clock_gettime") != std::string::npos) clock_self += f["self"].get<uint64_t>();
  }
  EXPECT_GT(clock_self, 0u) << functions.dump(1);
  std::filesystem::remove(path);
}

// Without the preload, the kernel's samples in the vDSO are unwound and
// named from the image the recording keeps of it (VdsoImage): the time is
// under the vDSO's clock_gettime, and no unwinding stops for want of it.
TEST(ReportCpu, KernelSamplesInTheVdsoAreNamedFromTheRecordedImage) {
  SKIP_WITHOUT_PERF();
  const auto exported = vdso_functions();
  ASSERT_FALSE(exported.empty()) << "this test's own vDSO lists its functions";
  const std::string path = record("kernel-clock", SPOOR_REPORT_CLOCK, "--no-preload --kernel=samples --sample-hz 1000");
  const json r = report_json(path, "--kernel --top 20");
  ASSERT_TRUE(r.contains("kernel")) << r.dump(1).substr(0, 2000);
  const json& cpu = r["kernel"]["cpu"];
  ASSERT_GT(cpu["samples"].get<uint64_t>(), 100u) << cpu.dump(1);
  uint64_t in_vdso = 0;
  for (const json& f : cpu["functions"])
    for (const VdsoFunction& v : exported)
      if (f["function"] == v.name) in_vdso += f["self"].get<uint64_t>();
  EXPECT_GT(in_vdso, 0u) << "the spinner's time in the vDSO, by name: " << cpu["functions"].dump(1);
  for (const json& stop : cpu["stops"])
    EXPECT_EQ(stop["reason"].get<std::string>().find("[vdso]"), std::string::npos) << stop.dump();
  std::filesystem::remove(path);
}

// Time spent in the real operator new and delete, which the shim's hooks
// call under their reentry guard, is the program's: its samples name the
// allocator's code, not the tracer (they used to wait for the guard's
// release and land on the hook). The heap provider is off: the hooks
// record nothing, so nearly all the time is the allocator's.
TEST(ReportCpu, TimeInTheRealOperatorNewIsTheAllocatorsNotTheTracers) {
  const std::string path = record("slow-new", SPOOR_SLOW_NEW_USER, "-p samples --sample-hz 1000");
  const json r = report_json(path, "--cpu --top 50");
  ASSERT_TRUE(r.contains("cpu")) << r.dump(1).substr(0, 2000);
  uint64_t burn = 0, tracer = 0, all = 0;
  for (const json& f : r["cpu"]["functions"]) {
    const std::string name = f["function"];
    const uint64_t self = f["self"].get<uint64_t>();
    all += self;
    if (name == "burn_in_allocator") burn += self;
    if (name == "[spoor: recording the event]") tracer += self;
  }
  ASSERT_GT(all, 50u) << r["cpu"].dump(1);
  EXPECT_GT(burn * 2, all) << "most of the time is the allocator's: " << r["cpu"]["functions"].dump(1);
  EXPECT_LT(tracer * 5, all) << r["cpu"]["functions"].dump(1);
  std::filesystem::remove(path);
}

// spoor record's --sample-hz is in the trace: the report's periods are
// CPU time at that rate, not at the default.
TEST(ReportCpu, TheRecordedSamplingRateSetsThePeriod) {
  const std::string path = record("rate", SPOOR_REPORT_CLOCK, "--sample-hz 500");
  const json r = report_json(path, "--cpu");
  ASSERT_TRUE(r.contains("cpu")) << r.dump(1).substr(0, 2000);
  const json& cpu = r["cpu"];
  EXPECT_EQ(cpu["sample_hz"], 500u);
  EXPECT_EQ(cpu["sample_hz_recorded"], true);
  EXPECT_EQ(cpu["period_ns"], 2000000u);
  EXPECT_GT(cpu["periods"].get<uint64_t>(), 0u);
  EXPECT_DOUBLE_EQ(cpu["cpu_ms"].get<double>(), 2.0 * cpu["periods"].get<double>());
  const Process text = run(kSpoor + " report --cpu " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("a period is 2 ms of CPU time at --sample-hz 500)"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

// Samples that each stand for several periods (the timer, checked at the
// kernel's tick) are said to, with the clock that takes one every period;
// samples at about the rate asked are not. Which one a run gets depends on
// the kernel's tick, so the text is checked against the JSON's counts.
TEST(ReportCpu, SamplesStandingForSeveralPeriodsAreSaidToAndWhy) {
  for (const std::string clock : {"timer", "task"}) {
    const std::string path = record("coarse-" + clock, SPOOR_REPORT_CLOCK, "--sample-hz 1000 --sample-clock " + clock);
    const json r = report_json(path, "--cpu");
    ASSERT_TRUE(r.contains("cpu")) << r.dump(1).substr(0, 2000);
    const uint64_t periods = r["cpu"]["periods"].get<uint64_t>(), samples = r["cpu"]["samples"].get<uint64_t>();
    ASSERT_GE(samples, 20u) << clock << ": enough samples to say";
    const Process text = run(kSpoor + " report --cpu " + path);
    EXPECT_EQ(text.status, 0) << text.err;
    const bool said = text.out.find("periods on average: the kernel checks CPU-time timers only at its tick") !=
                      std::string::npos;
    EXPECT_EQ(said, periods >= 2 * samples) << clock << ": " << periods << " periods in " << samples
                                            << " samples:\n" << text.out;
    if (said) {
      EXPECT_NE(text.out.find("--sample-clock task"), std::string::npos) << text.out;
    }
    std::filesystem::remove(path);
  }
}

TEST(ReportEvents, ActivityDurationsOfAKnownProvider) {
  spoor::testing::SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  uint64_t now = 1000;
  for (uint8_t j = 1; j <= 100; ++j) {  // jobs of 1, 2, ... 100 us
    t.job_start(100, 100, now, j);
    t.job_stop(100, 100, now + j * 1000ull, j);
    now += 200000;
  }
  t.tick(100, 100, now);
  const std::string path = spoor::test::temp_path("report-events.spoor");
  t.save(path);
  const json r = report_json(path);
  ASSERT_TRUE(r.contains("events")) << "chosen by default: the trace has program events";
  const json& a = r["events"]["activities"][0];
  EXPECT_EQ(a["provider"], "My.App");
  EXPECT_EQ(a["kind"], "Job");
  EXPECT_EQ(a["count"], 100u);
  EXPECT_EQ(a["min_ns"], 1000);
  EXPECT_EQ(a["median_ns"], 50000);
  EXPECT_EQ(a["p99_ns"], 99000);
  EXPECT_EQ(a["max_ns"], 100000);
  const Process text = run(kSpoor + " report " + path);
  EXPECT_NE(text.out.find("99.000 us"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Tick"), std::string::npos);
  std::filesystem::remove(path);
}

// The text report keeps only the frames it can show of each stack; the
// JSON keeps them all. Both count the same stack.
TEST(ReportHeapDeepStack, TheTextCountsTheFramesItDoesNotShowAndTheJsonHasThemAll) {
  spoor::testing::SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x100000, "/nonexistent/prog");
  std::vector<uint64_t> frames;
  for (uint64_t i = 0; i < 60; ++i) frames.push_back(0x401000 + 0x100 * i);
  t.stack(100, 1, 1, frames);
  t.alloc(100, 10, 0x1000, 4096, 1);
  const std::string path = spoor::test::temp_path("report-deep-stack.spoor");
  t.save(path);
  const json r = report_json(path, "--heap");
  const json& site = r["heap"][0]["top_by_bytes"][0];
  ASSERT_EQ(site["frames"].size(), 60u) << site.dump();
  EXPECT_FALSE(site.contains("frames_total")) << "the JSON output's stacks are whole";
  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  // The site is its first frame; 4 callers follow, then the other 55
  // (a leak shows 8, then 51).
  EXPECT_NE(text.out.find("<- prog+0x1400"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(55 more frames)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("<- prog+0x1800"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(51 more frames)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("prog+0x1900"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

// The heap's bytes live over time: in the JSON as columns of equal time,
// in the text as a bar chart as high as the peak. Here 1 KiB from 16 ms to
// 32 ms, then 3 KiB to the exit at 64 ms (2^20 ns columns: 62 of them).
TEST(ReportHeapOverTime, TheJsonHasTheColumnsAndTheTextDrawsThem) {
  constexpr uint64_t kMs = 1'000'000;
  spoor::testing::SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 0, 0x400000, 0x400000, 0x100000, "/nonexistent/prog");
  t.stack(100, 0, 1, {0x401000});
  t.process_start(100, 0, 1, 0, "/nonexistent/prog");
  t.alloc(100, 16 * kMs + 1, 0x1000, 1024, 1);
  t.free(100, 32 * kMs + 1, 0x1000);
  t.alloc(100, 32 * kMs + 2, 0x2000, 3072, 1);
  t.process_exit(100, 64 * kMs, 100, 0, 0);
  const std::string path = spoor::test::temp_path("report-heap-over-time.spoor");
  t.save(path);
  const json r = report_json(path, "--heap");
  const json& over = r["heap"][0]["live_over_time"];
  EXPECT_EQ(over["start_ns"], 0);
  EXPECT_EQ(over["column_ns"], 1 << 20);
  const std::vector<uint64_t> most = over["most_live_bytes"].get<std::vector<uint64_t>>();
  ASSERT_EQ(most.size(), 62u);
  EXPECT_EQ(most[15], 1024u) << "15.7-16.8 ms";
  EXPECT_EQ(most[14], 0u);
  EXPECT_EQ(most[30], 3072u) << "31.5-32.5 ms: the free and the next allocation";
  EXPECT_EQ(most[29], 1024u);
  EXPECT_EQ(most.back(), 3072u) << "live to the exit";

  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  const std::string& o = text.out;
  const size_t title = o.find("bytes live over time (each column 1.049 ms");
  ASSERT_NE(title, std::string::npos) << o;
  // Six rows: 3 KiB fills them all; 1 KiB is a third of the peak, two rows.
  std::vector<std::string> rows;
  for (size_t at = o.find('\n', title) + 1, i = 0; i < 8; ++i) {
    const size_t end = o.find('\n', at);
    rows.push_back(o.substr(at, end - at));
    at = end + 1;
  }
  // Columns 0-14 empty, 15-29 1 KiB, 30-61 3 KiB.
  const std::string zero(15, ' '), one_kib(15, '#'), three_kib(32, '#');
  EXPECT_EQ(rows[0], "    3.00 KiB |" + zero + std::string(15, ' ') + three_kib) << o;
  EXPECT_EQ(rows[4], "             |" + zero + one_kib + three_kib) << o;
  EXPECT_EQ(rows[5], "             |" + zero + one_kib + three_kib) << o;
  EXPECT_EQ(rows[3], "             |" + zero + std::string(15, ' ') + three_kib) << o;
  EXPECT_EQ(rows[6], "         0 B +" + std::string(62, '-')) << o;
  EXPECT_NE(rows[7].find("0.000 ms"), std::string::npos) << o;
  EXPECT_NE(rows[7].find("64.000 ms"), std::string::npos) << "the image's end" << o;
  std::filesystem::remove(path);
}

// The bytes read and written over time: in the JSON as columns of equal
// time from the first call that moved a byte (the read at 1 ms) to the
// last (the write at 63 ms), in the text as a chart each. 62 ms in 2^20
// ns columns: 60 of them.
TEST(ReportIoOverTime, TheJsonHasTheColumnsAndTheTextDrawsThem) {
  constexpr uint64_t kMs = 1'000'000;
  spoor::testing::SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.open(100, 100, kMs / 2, 100, "/data/in", 3);
  t.read(100, 100, 1 * kMs, 50, 3, 1024);
  t.read(100, 100, 33 * kMs, 50, 3, 4096);
  t.read(100, 100, 34 * kMs, 50, 3, 0);  // end of file: no bytes
  t.write(100, 100, 63 * kMs, 40, 1, 2048);
  const std::string path = spoor::test::temp_path("report-io-over-time.spoor");
  t.save(path);
  const json r = report_json(path, "--io");
  const json& over = r["io"]["over_time"];
  EXPECT_EQ(over["start_ns"], kMs / 2) << "times from the first event (the open at 0.5 ms)";
  EXPECT_EQ(over["column_ns"], 1 << 20);
  const std::vector<uint64_t> read = over["read_bytes"].get<std::vector<uint64_t>>();
  const std::vector<uint64_t> written = over["written_bytes"].get<std::vector<uint64_t>>();
  ASSERT_EQ(read.size(), 60u);
  ASSERT_EQ(written.size(), 60u);
  std::vector<uint64_t> want_read(60, 0), want_written(60, 0);
  want_read[0] = 1024;
  want_read[30] = 4096;       // 32 ms after the start
  want_written[59] = 2048;    // 62 ms after
  EXPECT_EQ(read, want_read);
  EXPECT_EQ(written, want_written);

  const Process text = run(kSpoor + " report --io " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  const std::string& o = text.out;
  auto rows_after = [&o](const std::string& title) {
    std::vector<std::string> rows;
    const size_t at_title = o.find(title);
    if (at_title == std::string::npos) return rows;
    for (size_t at = o.find('\n', at_title) + 1, i = 0; i < 6; ++i) {
      const size_t end = o.find('\n', at);
      rows.push_back(o.substr(at, end - at));
      at = end + 1;
    }
    return rows;
  };
  // Four rows: 4 KiB fills them, 1 KiB one (rounded up).
  const std::vector<std::string> r_rows = rows_after("bytes read over time (each column 1.049 ms");
  ASSERT_EQ(r_rows.size(), 6u) << o;
  EXPECT_EQ(r_rows[0], "    4.00 KiB |" + std::string(30, ' ') + "#") << o;
  EXPECT_EQ(r_rows[2], "             |" + std::string(30, ' ') + "#") << o;
  EXPECT_EQ(r_rows[3], "             |#" + std::string(29, ' ') + "#") << o;
  EXPECT_EQ(r_rows[4], "         0 B +" + std::string(60, '-')) << o;
  EXPECT_NE(r_rows[5].find("0.500 ms"), std::string::npos) << o;
  const std::vector<std::string> w_rows = rows_after("bytes written over time (each column 1.049 ms");
  ASSERT_EQ(w_rows.size(), 6u) << o;
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(w_rows[i], std::string(i == 0 ? "    2.00 KiB |" : "             |") + std::string(59, ' ') + "#") << o;
  std::filesystem::remove(path);
}

// Bytes that all moved at one moment (one call) have one column: the JSON
// has it, the text draws no chart of one bar.
TEST(ReportIoOverTime, OneMomentsBytesDrawNoChart) {
  spoor::testing::SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.open(100, 100, 1000, 100, "/data/in", 3);
  t.read(100, 100, 2000, 50, 3, 1024);
  const std::string path = spoor::test::temp_path("report-io-one-moment.spoor");
  t.save(path);
  const json r = report_json(path, "--io");
  EXPECT_EQ(r["io"]["over_time"]["read_bytes"], json::array({1024})) << r["io"].dump();
  const Process text = run(kSpoor + " report --io " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("1 reads (1.00 KiB)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("over time"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

// One frame left out is "1 more frame", not "1 more frames".
TEST(ReportHeapDeepStack, OneFrameLeftOutIsCountedInTheSingular) {
  spoor::testing::SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x100000, "/nonexistent/prog");
  t.stack(100, 1, 1, {0x401000, 0x401100, 0x401200, 0x401300, 0x401400, 0x401500});
  t.alloc(100, 10, 0x1000, 4096, 1);
  const std::string path = spoor::test::temp_path("report-one-more-frame.spoor");
  t.save(path);
  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("<- prog+0x1400"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(1 more frame)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("more frames"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

TEST(ReportBadInput, MissingFileSaysSoAndExitsOne) {
  const Process p = run(kSpoor + " report /nonexistent/trace.spoor");
  EXPECT_EQ(p.status, 1);
  EXPECT_NE(p.err.find("cannot read trace '/nonexistent/trace.spoor'"), std::string::npos) << p.err;
  EXPECT_EQ(run(kSpoor + " report").status, 2);
  EXPECT_EQ(run(kSpoor + " report x.spoor --top zero").status, 2);
}

TEST(ReportBadInput, TruncatedOrGarbageTracesNeverCrashTheReport) {
  const std::string whole = record("cut", SPOOR_REPORT_HEAP, "--sample-hz 0 --compress none");
  const auto size = std::filesystem::file_size(whole);
  const std::string cut = spoor::test::temp_path("report-truncated.spoor");
  for (uint64_t keep : {size / 2, size - 7, uint64_t{40}, uint64_t{10}}) {
    std::filesystem::remove(cut);
    std::filesystem::copy_file(whole, cut);
    std::filesystem::resize_file(cut, keep);
    const Process p = run(kSpoor + " report " + cut);
    EXPECT_EQ(p.status, 1) << "kept " << keep << " bytes: " << p.err;
    EXPECT_TRUE(p.err.find("damaged") != std::string::npos || p.err.find("cannot read") != std::string::npos)
        << p.err;
    if (p.err.find("damaged") != std::string::npos) {
      EXPECT_NE(p.out.find("Trace health"), std::string::npos) << "the report up to the damage comes first";
    }
    const Process j = run(kSpoor + " report --format json " + cut);
    EXPECT_EQ(j.status, 1);
    if (!j.out.empty()) {
      EXPECT_FALSE(json::parse(j.out, nullptr, false).is_discarded());
    }
  }
  {
    std::ofstream(cut, std::ios::binary) << std::string(4096, 'x');
  }
  const Process g = run(kSpoor + " report " + cut);
  EXPECT_EQ(g.status, 1);
  EXPECT_NE(g.err.find("not a Spoor trace"), std::string::npos) << g.err;
  std::filesystem::remove(cut);
  std::filesystem::remove(whole);
}

}  // namespace

// A command line with a newline (sh -c 'a<newline>b') stays on its row.
TEST(ReportText, CommandLinesWithNewlinesStayOnOneLine) {
  const std::string path = record("newline", "/bin/sh -c 'true\ntrue'", "--sample-hz 0");
  const Process p = run(kSpoor + " report --threads " + path);
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("-c true\\ntrue"), std::string::npos) << p.out;
  EXPECT_EQ(p.out.find("\ntrue"), std::string::npos) << p.out;
  std::filesystem::remove(path);
}

// The bundled demo (C++): its allocation sites are named after its own
// functions, not after the std::allocator and basic_string frames inside
// them; names are short; its deliberate leak (one ClientSession in a
// hundred, from open_session) is found with its caller.
TEST(ReportText, CppSitesAreNamedAfterTheProgramsOwnFrames) {
  const std::string dir = spoor::test::temp_path("report-demo-dir");
  std::filesystem::create_directories(dir);
  const std::string path = record("demo", std::string(SPOOR_DEMO) + " " + dir + "/demo.spoor 1000", "--sample-hz 0");
  const Process p = run(kSpoor + " report --heap " + path);
  EXPECT_EQ(p.status, 0) << p.err;
  const std::string& t = p.out;
  EXPECT_NE(t.find("render_page  demo.cpp:"), std::string::npos) << t;
  EXPECT_NE(t.find(" library frames)"), std::string::npos) << t;
  EXPECT_EQ(t.find("std::allocator_traits<std::allocator<char> >"), std::string::npos) << "template arguments elided";
  const size_t leaks = t.find("leaks (blocks not freed");
  ASSERT_NE(leaks, std::string::npos) << t;
  const size_t session = t.find("open_session  demo.cpp:", leaks);
  EXPECT_NE(session, std::string::npos) << t.substr(leaks);
  EXPECT_NE(t.find("<- worker  demo.cpp:", session), std::string::npos) << t.substr(leaks);

  // The allocating functions are the program's too: std::string's and
  // std::vector's allocations count for the functions that use them.
  const json r = report_json(path, "--heap --top 50");
  bool render_page = false;
  for (const json& h : r["heap"])
    for (const json& f : h["top_functions"]) {
      const std::string name = f["function"];
      EXPECT_FALSE(name.starts_with("std::") || name.starts_with("operator new")) << name;
      if (name == "render_page") render_page = f["stacks"].get<uint64_t>() > 1;
    }
  EXPECT_TRUE(render_page) << "render_page's sites through std::string, merged: " << r["heap"].dump(1).substr(0, 3000);
  // The shim's hooks are not in the stacks: the demo's fopen() reaches
  // libc's through the shim's hook, and libc's code allocates.
  size_t fopen_sites = 0;
  for (const json& h : r["heap"])
    for (const char* ranking : {"top_by_bytes", "top_by_calls", "leaks"})
      for (const json& site : h[ranking]) {
        for (const json& f : site["frames"])
          EXPECT_EQ(f.value("module", "").find("libspoor-preload"), std::string::npos) << site.dump(1);
        fopen_sites += site["frames"].size() > 0 && site["frames"][0].value("function", "").find("fopen") != std::string::npos;
      }
  EXPECT_GT(fopen_sites, 0u) << "a site inside fopen: " << r["heap"].dump(1).substr(0, 3000);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(path);
}

// What the preloaded library's start took in each traced process
// (ShimStarted): summed, with the median and the longest, in Trace health.
// Processes 100, 101, ... whose preloaded library took `took` ns each to start.
spoor::testing::SpoorTrace library_starts(const std::vector<uint64_t>& took) {
  spoor::testing::SpoorTrace t;
  for (uint32_t i = 0; i < took.size(); ++i) {
    const uint32_t pid = 100 + i;
    t.process(pid, 1, "prog", {"prog"});
    t.process_start(pid, 1000 + took[i], 1, 0, "/nonexistent/prog");
    t.shim_started(pid, pid, 2000 + took[i], took[i]);
    t.tick(pid, pid, 5000000);
  }
  return t;
}

TEST(Report, TheLibrarysStartInEachProcessIsSummedInTraceHealth) {
  spoor::testing::SpoorTrace t = library_starts({100000, 300000, 200000});
  const std::string path = spoor::test::temp_path("report-shim-start.spoor");
  t.save(path);
  const json r = report_json(path);
  const json& start = r["health"]["preload_start"];
  EXPECT_EQ(start["images"], 3u) << r["health"].dump();
  EXPECT_EQ(start["total_ns"], 600000);
  EXPECT_EQ(start["median_ns"], 200000);
  EXPECT_EQ(start["max_ns"], 300000);
  const Process text = run(kSpoor + " report " + path);
  EXPECT_NE(text.out.find("  Spoor's start-up in the program: 600.000 us over 3 set-ups of the preloaded library "
                          "(one per process, exec and fork child), 200.000 us each (median), 300.000 us the longest\n"),
            std::string::npos)
      << text.out;
  std::filesystem::remove(path);
  // An even count: the lower of the two middle values, as the activity
  // tables' medians (spoor info, --events) take it.
  library_starts({100000, 400000, 300000, 200000}).save(path);
  EXPECT_EQ(report_json(path)["health"]["preload_start"]["median_ns"], 200000);
  std::filesystem::remove(path);
  // A trace without ShimStarted (one written before it existed) says nothing.
  spoor::testing::SpoorTrace old;
  old.process(100, 1, "prog", {"prog"});
  old.tick(100, 100, 5000);
  old.save(path);
  EXPECT_FALSE(report_json(path)["health"].contains("preload_start"));
  std::filesystem::remove(path);
}
