// spoor report's ranking of allocating functions end to end: one function
// (alloc_here) reached through two call paths is one row with both paths'
// figures, while the ranking of whole stacks keeps a row per path.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace {

using nlohmann::json;
using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;
const std::string kProgram = SPOOR_REPORT_HEAP_FUNCTIONS;

class ReportHeapFunctions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(spoor::test::temp_path("report-heap-functions.spoor"));
    const Process rec = run(kSpoor + " record --sample-hz 0 -o " + *path_ + " -- " + kProgram + " >/dev/null");
    ASSERT_EQ(rec.status, 0) << rec.err;
    const Process rep = run(kSpoor + " report --heap --format json --top 50 " + *path_);
    ASSERT_EQ(rep.status, 0) << rep.err;
    report_ = new json(json::parse(rep.out, nullptr, false));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove(*path_);
    delete path_;
    delete report_;
  }

  // The heap of the test program's image.
  static const json& heap() {
    for (const json& h : (*report_)["heap"])
      if (h["command_line"].get<std::string>().find("spoor_test_report_heap_functions") != std::string::npos) return h;
    ADD_FAILURE() << "no heap part for the program: " << report_->dump(1).substr(0, 2000);
    static const json none = json::object();
    return none;
  }

  static std::vector<const json*> named(const json& rows, const std::string& function) {
    std::vector<const json*> out;
    for (const json& r : rows)
      if (r.value("function", "") == function) out.push_back(&r);
    return out;
  }

  static std::string* path_;
  static json* report_;
};
std::string* ReportHeapFunctions::path_ = nullptr;
json* ReportHeapFunctions::report_ = nullptr;

TEST_F(ReportHeapFunctions, OneFunctionCalledFromTwoPathsIsOneRowWithBothPathsFigures) {
  ASSERT_FALSE(report_->is_discarded());
  const json& h = heap();
  ASSERT_TRUE(h.contains("top_functions")) << h.dump(1).substr(0, 2000);
  const std::vector<const json*> rows = named(h["top_functions"], "alloc_here");
  ASSERT_EQ(rows.size(), 1u) << h["top_functions"].dump(1);
  const json& f = *rows[0];
  EXPECT_EQ(f["kind"], "function");
  EXPECT_EQ(f["symbol"], "alloc_here");
  EXPECT_NE(f["module"].get<std::string>().find("spoor_test_report_heap_functions"), std::string::npos) << f.dump(1);
  EXPECT_NE(f["file"].get<std::string>().find("report_heap_functions.c"), std::string::npos) << f.dump(1);
  EXPECT_EQ(f["calls"], 8u);
  EXPECT_EQ(f["allocated_bytes"], 5300u);
  EXPECT_GE(f["stacks"].get<uint64_t>(), 2u);
  EXPECT_EQ(f["leaked_bytes"], 1100u) << "the first block of each path";
  EXPECT_EQ(f["leaked_blocks"], 2u);
  EXPECT_EQ(f["temporary"], 0u);

  // The stack to drill down to: the path that allocated most.
  const json& top = f["top_stack"];
  EXPECT_EQ(top["allocated_bytes"], 5000u);
  EXPECT_EQ(top["calls"], 5u);
  ASSERT_GE(top["frames"].size(), 2u) << top.dump(1);
  EXPECT_EQ(top["frames"][0]["function"], "alloc_here");
  EXPECT_EQ(top["frames"][1]["function"], "from_large_path");
  EXPECT_NE(top["stack_id"].get<uint64_t>(), 0u);
}

TEST_F(ReportHeapFunctions, TheWholeStackRankingKeepsOneRowPerPath) {
  const json& h = heap();
  const std::vector<const json*> sites = named(h["top_by_bytes"], "alloc_here");
  ASSERT_GE(sites.size(), 2u) << h["top_by_bytes"].dump(1);
  uint64_t bytes = 0, calls = 0, peak = 0;
  for (const json* s : sites) {
    bytes += (*s)["allocated_bytes"].get<uint64_t>();
    calls += (*s)["calls"].get<uint64_t>();
    peak += (*s)["peak_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(bytes, 5300u);
  EXPECT_EQ(calls, 8u);
  const json& f = *named(h["top_functions"], "alloc_here").at(0);
  EXPECT_EQ(f["stacks"].get<uint64_t>(), sites.size());
  EXPECT_EQ(f["peak_bytes"].get<uint64_t>(), peak) << "the paths' bytes at the same peak add up";
}

TEST_F(ReportHeapFunctions, OtherFunctionsKeepRowsOfTheirOwnInOrderOfBytes) {
  const json& h = heap();
  const std::vector<const json*> scratch = named(h["top_functions"], "scratch");
  ASSERT_EQ(scratch.size(), 1u) << h["top_functions"].dump(1);
  EXPECT_EQ((*scratch[0])["calls"], 2u);
  EXPECT_EQ((*scratch[0])["allocated_bytes"], 128u);
  EXPECT_EQ((*scratch[0])["temporary"], 2u);
  EXPECT_EQ((*scratch[0])["stacks"], 1u);
  EXPECT_TRUE(named(h["top_functions"], "from_large_path").empty()) << "a caller is not an allocating function";
  uint64_t previous = UINT64_MAX;
  for (const json& f : h["top_functions"]) {
    EXPECT_LE(f["allocated_bytes"].get<uint64_t>(), previous) << h["top_functions"].dump(1);
    previous = f["allocated_bytes"].get<uint64_t>();
  }
  EXPECT_GE(h["functions"].get<uint64_t>(), 2u);
}

// checked_malloc is an allocator wrapper by its name: the allocation is
// the function that called it, in the function ranking and in the site's
// row, which says what it went through.
TEST_F(ReportHeapFunctions, AnAllocatorWrapperIsNamedByItsCaller) {
  const json& h = heap();
  EXPECT_TRUE(named(h["top_functions"], "checked_malloc").empty()) << h["top_functions"].dump(1);
  const std::vector<const json*> rows = named(h["top_functions"], "make_record");
  ASSERT_EQ(rows.size(), 1u) << h["top_functions"].dump(1);
  EXPECT_EQ((*rows[0])["calls"], 4u);
  EXPECT_EQ((*rows[0])["allocated_bytes"], 192u);
  EXPECT_EQ((*rows[0])["leaked_bytes"], 0u);

  const Process p = run(kSpoor + " report --heap --top 50 " + *path_);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("make_record  report_heap_functions.c:"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("(through checked_malloc, 1 frame)"), std::string::npos) << p.out;
}

TEST_F(ReportHeapFunctions, TextHasTheSectionAndTheMergedRow) {
  const Process p = run(kSpoor + " report --heap " + *path_);
  ASSERT_EQ(p.status, 0) << p.err;
  const std::string& t = p.out;
  const size_t section = t.find("top allocating functions");
  ASSERT_NE(section, std::string::npos) << t;
  const size_t sites = t.find("top allocation sites by bytes allocated", section);
  ASSERT_NE(sites, std::string::npos) << "the functions come before the sites:\n" << t;
  // The merged row: 5,300 bytes in 8 calls through 2 stacks, named with its file.
  std::istringstream table(t.substr(section, sites - section));
  std::string line, row;
  while (std::getline(table, line))
    if (line.find("alloc_here  report_heap_functions.c") != std::string::npos) row = line;
  ASSERT_FALSE(row.empty()) << t.substr(section, sites - section);
  EXPECT_NE(row.find("5.18 KiB"), std::string::npos) << row;
  EXPECT_NE(row.find(" 8 "), std::string::npos) << row;
  EXPECT_NE(row.find(" 2  "), std::string::npos) << "STACKS: " << row;
  EXPECT_NE(t.find("most through <- from_large_path  report_heap_functions.c:", section), std::string::npos)
      << t.substr(section, sites - section);
}

// spoor diff: a trace against itself changes nothing; against another
// program's, each function of the first is gone with its whole figures,
// and the totals are each trace's own.
TEST_F(ReportHeapFunctions, DiffComparesTwoTracesFunctionByFunction) {
  const Process same = run(kSpoor + " diff --format json " + *path_ + " " + *path_);
  ASSERT_EQ(same.status, 0) << same.err;
  const json s = json::parse(same.out);
  EXPECT_EQ(s["changed_functions"], 0u);
  EXPECT_TRUE(s["functions"].empty());
  EXPECT_EQ(s["base"]["heap"], s["new"]["heap"]);
  const Process same_text = run(kSpoor + " diff " + *path_ + " " + *path_);
  EXPECT_NE(same_text.out.find("(none: every function allocated the same bytes"), std::string::npos) << same_text.out;

  const std::string other = spoor::test::temp_path("report-heap-functions-diff.spoor");
  ASSERT_EQ(run(kSpoor + " record --sample-hz 0 -o " + other + " -- " + SPOOR_REPORT_HEAP + " >/dev/null").status, 0);
  const Process d = run(kSpoor + " diff --format json --top 100 " + *path_ + " " + other);
  ASSERT_EQ(d.status, 0) << d.err;
  const json j = json::parse(d.out);
  const json* alloc_here = nullptr;
  for (const json& f : j["functions"])
    if (f["function"].get<std::string>().starts_with("alloc_here  (spoor_test_report_heap_functions")) alloc_here = &f;
  ASSERT_NE(alloc_here, nullptr) << j["functions"].dump(1);
  EXPECT_EQ((*alloc_here)["base"]["allocated_bytes"], 5300u);
  EXPECT_EQ((*alloc_here)["base"]["calls"], 8u);
  EXPECT_EQ((*alloc_here)["base"]["leaked_bytes"], 1100u);
  EXPECT_EQ((*alloc_here)["new"]["allocated_bytes"], 0u);
  EXPECT_EQ((*alloc_here)["allocated_bytes_change"], -5300);
  EXPECT_EQ((*alloc_here)["leaked_bytes_change"], -1100);
  // The base's totals are the report's, summed over its images.
  uint64_t allocated = 0, leaked = 0;
  for (const json& h : (*report_)["heap"]) {
    allocated += h["allocated_bytes"].get<uint64_t>();
    leaked += h["leaked_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(j["base"]["heap"]["allocated_bytes"], allocated);
  EXPECT_EQ(j["base"]["heap"]["leaked_bytes"], leaked);
  const Process text = run(kSpoor + " diff " + *path_ + " " + other);
  EXPECT_NE(text.out.find("-5.18 KiB (gone)"), std::string::npos) << text.out;
  std::filesystem::remove(other);

  EXPECT_EQ(run(kSpoor + " diff " + *path_).status, 2);
  EXPECT_EQ(run(kSpoor + " diff " + *path_ + " /nonexistent.spoor").status, 1);
}

}  // namespace
