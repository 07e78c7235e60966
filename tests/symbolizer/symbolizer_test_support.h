// What the symbolizer tests share: running a command, an ELF file's symbols
// (nm) and build ID (readelf), its code addresses (objdump), and GNU
// addr2line's answer per address.
#ifndef SPOOR_TEST_SYMBOLIZER_SUPPORT_H
#define SPOOR_TEST_SYMBOLIZER_SUPPORT_H

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "addr2line_format.h"
#include "command_output.h"
#include "spoor/symbolizer/symbolizer.h"
#include "temp_dir.h"

namespace spoor::symbolizer::test {

// The address `nm` gives `name` in `elf`; 0 when it has none.
inline uint64_t symbol_address(const std::string& elf, const std::string& name) {
  const CommandResult r = run("nm '" + elf + "'");
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string address, type, symbol;
    if (words >> address >> type >> symbol && symbol == name) return std::stoull(address, nullptr, 16);
  }
  return 0;
}

// The GNU build ID readelf reads from `elf`; empty when it has none.
inline std::vector<uint8_t> build_id_of(const std::string& elf) {
  const CommandResult r = run("readelf -n '" + elf + "' | awk '/Build ID:/ { print $3 }'");
  std::vector<uint8_t> id;
  for (size_t i = 0; i + 1 < r.out.size() && r.out[i] != '\n'; i += 2)
    id.push_back(static_cast<uint8_t>(std::stoul(r.out.substr(i, 2), nullptr, 16)));
  return id;
}

// A module the trace recorded at a path that no longer holds it (a trace
// from another machine, a program deleted since), with the PIE fixture's
// build ID: `symbolizer` names its main, with file and line, from wherever
// it finds that build, and lists no problem.
inline void expect_the_gone_pie_named(Symbolizer& symbolizer) {
  const uint64_t main_address = symbol_address(SPOOR_SYM_PIE, "main");
  ASSERT_NE(main_address, 0u);
  ModuleInfo info;
  info.path = "/nonexistent/spoor_sym_fixture_pie";
  info.build_id = build_id_of(SPOOR_SYM_PIE);
  info.bias = 0x555555554000;
  const Location& l = symbolizer.symbolize(symbolizer.add_module(info), info.bias + main_address);
  EXPECT_TRUE(l.resolved);
  EXPECT_EQ(l.module, info.path);
  EXPECT_EQ(l.frames.back().function, "main");
  EXPECT_NE(l.frames.back().file.find("inline_heavy.cpp"), std::string::npos) << l.frames.back().file;
  EXPECT_GT(l.frames.back().line, 0u);
  EXPECT_TRUE(symbolizer.problems().empty()) << symbolizer.problems()[0].message;
}

// Every instruction address objdump disassembles in `elf`, every `step`th,
// but those of .init and .fini: crti.o's code there sits under an STT_FILE
// symbol with an empty name, which addr2line prints as ":?" and spoor as
// "??:?" (a Location has no way to say "known, and empty").
inline std::vector<uint64_t> code_addresses(const std::string& elf, size_t step = 1) {
  const CommandResult r = run("objdump -d --no-show-raw-insn '" + elf + "'");
  std::vector<uint64_t> addresses;
  std::istringstream lines(r.out);
  std::string line;
  size_t seen = 0;
  bool skipped_section = false;
  while (std::getline(lines, line)) {
    if (line.rfind("Disassembly of section ", 0) == 0) {
      skipped_section = line.find(" .init:") != std::string::npos || line.find(" .fini:") != std::string::npos;
      continue;
    }
    if (skipped_section) continue;
    // "    1139:\tpush   %rbp"
    const size_t colon = line.find(":\t");
    if (line.size() < 4 || line[0] != ' ' || colon == std::string::npos) continue;
    char* end = nullptr;
    const uint64_t address = std::strtoull(line.c_str(), &end, 16);
    if (end == nullptr || *end != ':') continue;
    if (seen++ % step == 0) addresses.push_back(address);
  }
  return addresses;
}

// Splits `-a` output into one block per address.
inline std::vector<std::string> split_blocks(const std::string& text) {
  std::vector<std::string> blocks;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() == 18 && line.rfind("0x", 0) == 0) blocks.emplace_back();
    if (!blocks.empty()) blocks.back() += line + "\n";
  }
  return blocks;
}

// CTest runs each test as a process of its own, in parallel: the file name
// carries the pid.
inline std::string write_addresses(const std::vector<uint64_t>& addresses, const std::string& name) {
  const std::string path = spoor::test::test_temp_path(name);
  std::ofstream out(path);
  for (uint64_t a : addresses) out << std::hex << "0x" << a << "\n";
  return path;
}

// GNU addr2line -a -f -i -C (or `flags`) on `elf`, one block per address.
inline std::vector<std::string> addr2line_blocks(const std::string& elf, const std::vector<uint64_t>& addresses,
                                                 const std::string& flags = "-a -f -i -C") {
  const std::string list = write_addresses(addresses, "addr2line_input.txt");
  return split_blocks(run("addr2line " + flags + " -e '" + elf + "' < '" + list + "'").out);
}

// The library's answer in addr2line's format (-a -f -i).
inline std::vector<std::string> library_blocks(Symbolizer& symbolizer, const std::string& elf,
                                               const std::vector<uint64_t>& addresses) {
  cli::Addr2lineStyle style;
  style.addresses = style.functions = style.inlines = true;
  std::vector<std::string> blocks;
  for (uint64_t a : addresses) {
    std::string text;
    cli::append_addr2line(text, a, symbolizer.symbolize_file(elf, a), style);
    blocks.push_back(std::move(text));
  }
  return blocks;
}

// The blocks that differ, "expected / actual", at most `limit` of them.
inline std::string differences(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
                               size_t* count, size_t limit = 5) {
  std::string out;
  *count = 0;
  for (size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    if ((*count)++ < limit) out += "addr2line:\n" + expected[i] + "spoor:\n" + actual[i] + "\n";
  }
  return out;
}

inline Options addr2line_options() {
  Options options;
  options.demangle = true;
  options.inline_frames = true;
  options.gnu_addr2line_compatible = true;
  return options;
}

}  // namespace spoor::symbolizer::test

#endif  // SPOOR_TEST_SYMBOLIZER_SUPPORT_H
