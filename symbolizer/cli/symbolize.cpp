// spoor symbolize: addresses to functions, source lines and inline frames,
// as GNU addr2line prints them (-e ELF), or every stack of a trace
// (--trace FILE).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "addr2line_format.h"
#include "command.h"
#include "symbolize_trace.h"
#include "spoor/symbolizer/symbolizer.h"

namespace spoor::cli {
namespace {

constexpr char kName[] = "symbolize";

struct SymbolizeArgs {
  Addr2lineStyle style;
  bool demangle = false;
  std::string elf;
  std::string trace;
  symbolizer::Options options;
  std::vector<std::string> addresses;
};

int usage(const std::string& message) {
  std::fprintf(stderr, "spoor %s: %s; run 'spoor help %s'\n", kName, message.c_str(), kName);
  return kExitUsage;
}

// addr2line's flags: single letters may be grouped (-fiC), -e takes the
// next word or the rest of its own (-eprog), long forms take "=VALUE" or
// the next word.
std::optional<SymbolizeArgs> parse(const std::vector<std::string>& words, std::string& error) {
  SymbolizeArgs a;
  bool options_done = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (options_done || w.size() < 2 || w[0] != '-') {
      a.addresses.push_back(w);
      continue;
    }
    if (w == "--") {
      options_done = true;
      continue;
    }
    auto value_of = [&](const std::string& name, std::string& out) {
      const std::string prefix = name + "=";
      if (w.rfind(prefix, 0) == 0) {
        out = w.substr(prefix.size());
        return true;
      }
      if (w != name) return false;
      if (i + 1 >= words.size()) {
        error = name + " needs a value";
        return true;
      }
      out = words[++i];
      return true;
    };
    std::string value;
    if (w[1] == '-') {
      if (w == "--addresses") a.style.addresses = true;
      else if (w == "--functions") a.style.functions = true;
      else if (w == "--inlines") a.style.inlines = true;
      else if (w == "--demangle" || w.rfind("--demangle=", 0) == 0) a.demangle = true;
      else if (w == "--no-demangle") a.demangle = false;
      else if (w == "--pretty-print") a.style.pretty = true;
      else if (w == "--basenames") a.style.basenames = true;
      else if (value_of("--exe", a.elf)) {}
      else if (value_of("--trace", a.trace)) {}
      else if (value_of("--sysroot", a.options.sysroot)) {}
      else if (value_of("--debug-dir", value)) a.options.debug_dirs.push_back(value);
      else error = "unknown option '" + w + "'";
      if (!error.empty()) return std::nullopt;
      continue;
    }
    for (size_t j = 1; j < w.size(); ++j) {
      switch (w[j]) {
        case 'a': a.style.addresses = true; break;
        case 'f': a.style.functions = true; break;
        case 'i': a.style.inlines = true; break;
        case 'C': a.demangle = true; break;
        case 'p': a.style.pretty = true; break;
        case 's': a.style.basenames = true; break;
        case 'e':
          if (j + 1 < w.size()) {
            a.elf = w.substr(j + 1);
          } else if (i + 1 < words.size()) {
            a.elf = words[++i];
          } else {
            error = "-e needs an ELF file";
            return std::nullopt;
          }
          j = w.size();
          break;
        default:
          error = std::string("unknown option '-") + w[j] + "'";
          return std::nullopt;
      }
    }
  }
  if (!error.empty()) return std::nullopt;
  a.options.demangle = a.demangle;
  a.options.inline_frames = a.style.inlines;
  a.options.gnu_addr2line_compatible = true;
  return a;
}

// Hex with or without 0x, as addr2line reads it; nullopt for anything else.
std::optional<uint64_t> parse_address(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return std::nullopt;
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

// "" when `path` can be read as an ELF file, else what is wrong with it.
std::string check_elf(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::strerror(errno);
  unsigned char magic[4] = {};
  const size_t n = std::fread(magic, 1, sizeof magic, f);
  std::fclose(f);
  if (n != 4 || std::memcmp(magic, "\x7f" "ELF", 4) != 0) return "not an ELF file";
  return {};
}

int run_addresses(const SymbolizeArgs& a) {
  if (a.elf.empty()) return usage("give the ELF file with -e ELF (or a trace with --trace FILE)");
  const std::string wrong = check_elf(a.options.sysroot + a.elf);
  if (!wrong.empty()) {
    std::fprintf(stderr, "spoor %s: cannot read '%s': %s\n", kName, a.elf.c_str(), wrong.c_str());
    return kExitTrace;
  }
  symbolizer::Symbolizer symbolizer(a.options);
  size_t problems_shown = 0;
  // Problems are printed as they are met (the file opens on first lookup);
  // one the file cannot be opened with ends the run.
  auto report_problems = [&]() {
    const auto& problems = symbolizer.problems();
    for (; problems_shown < problems.size(); ++problems_shown) {
      const symbolizer::ModuleProblem& p = problems[problems_shown];
      const bool fatal = p.message.rfind("cannot read", 0) == 0;
      std::fprintf(stderr, "spoor %s: %s%s: %s\n", kName, fatal ? "" : "warning: ", p.path.c_str(),
                   p.message.c_str());
      if (fatal) return false;
    }
    return true;
  };
  std::string out;
  symbolizer::Location location;
  auto one = [&](const std::string& text) {
    const std::optional<uint64_t> address = parse_address(text);
    if (!address) {
      std::fprintf(stderr, "spoor %s: bad address '%s': expected a hex number such as 0x401136\n", kName,
                   text.c_str());
      return false;
    }
    // Input addresses rarely repeat: no memo (addr2line keeps none either).
    symbolizer.symbolize_file_unmemoized(a.elf, *address, location);
    if (!report_problems()) return false;
    out.clear();
    append_addr2line(out, *address, location, a.style);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return true;
  };
  if (!a.addresses.empty()) {
    for (const std::string& text : a.addresses)
      if (!one(text)) return kExitTrace;
    return kExitOk;
  }
  // Like addr2line, answer each line as it comes when the addresses come
  // down a pipe or terminal (a program may be waiting for the answer before
  // it writes the next); from a file, let stdio buffer.
  struct stat st;
  const bool answer_each = fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode);
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n;
  int status = kExitOk;
  while ((n = getline(&buf, &cap, stdin)) > 0) {
    std::string line(buf, static_cast<size_t>(n));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!one(line)) {
      status = kExitTrace;
      break;
    }
    if (answer_each) std::fflush(stdout);
  }
  std::free(buf);
  return status;
}

int run_symbolize(const std::vector<std::string>& words) {
  std::string error;
  const std::optional<SymbolizeArgs> a = parse(words, error);
  if (!a) return usage(error);
  if (!a->trace.empty()) {
    if (!a->elf.empty() || !a->addresses.empty()) return usage("--trace takes no -e or addresses");
    return symbolize_trace(a->trace, a->options, a->style);
  }
  return run_addresses(*a);
}

}  // namespace

const Command kSymbolizeCommand = {
    kName,
    "Turn addresses into functions, source lines and inline frames",
    "usage: spoor symbolize [-a] [-f] [-i] [-C] [-p] [-s] -e ELF [ADDR...]\n"
    "       spoor symbolize --trace FILE [--debug-dir DIR] [--sysroot DIR]\n"
    "\n"
    "With -e, prints what GNU addr2line prints for each address (file\n"
    "addresses, hex, with or without 0x), from the arguments or else from\n"
    "standard input, one per line; output is line for line that of\n"
    "'addr2line' with the same flags.\n"
    "\n"
    "With --trace, symbolizes every stack of a recorded trace (the modules\n"
    "of each process from its Spoor.Process ModuleLoad events) and prints\n"
    "each stack id with its frames, innermost first, inline frames as\n"
    "'(inlined by)' lines; a frame without a symbol shows as module+0xoffset.\n"
    "\n"
    "options:\n"
    "  -e, --exe ELF         the ELF file the addresses belong to\n"
    "  -a, --addresses       print each address before its frames\n"
    "  -f, --functions       print function names\n"
    "  -i, --inlines         print the frames an address was inlined into\n"
    "  -C, --demangle        demangle C++ names\n"
    "  -p, --pretty-print    one line per address\n"
    "  -s, --basenames       file names without directories\n"
    "  --debug-dir DIR       look for debug files in DIR first (DIR/.build-id/xx/rest.debug,\n"
    "                        or by .gnu_debuglink); may be repeated\n"
    "  --sysroot DIR         prefix DIR to module paths (and to /usr/lib/debug)\n"
    "                        (with DEBUGINFOD_URLS set, debug info missing here, and a\n"
    "                        trace's modules gone since, come from those debuginfod servers)\n"
    "  --trace FILE          symbolize the stacks of a trace\n"
    "\n"
    "Exits 1 when the ELF file or trace cannot be read or an address is not\n"
    "hex, 2 on a usage error.\n",
    run_symbolize,
};

}  // namespace spoor::cli
