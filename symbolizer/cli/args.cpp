#include "args.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "command.h"

namespace spoor::cli {

int usage_error(std::string_view command, const std::string& message) {
  std::fprintf(stderr, "spoor %.*s: %s; run 'spoor help %.*s'\n", static_cast<int>(command.size()),
               command.data(), message.c_str(), static_cast<int>(command.size()), command.data());
  return kExitUsage;
}

std::optional<Args> parse_args(std::string_view command, const std::vector<std::string>& words,
                               std::span<const OptionSpec> specs) {
  Args args;
  bool options_done = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    // "-" alone is a positional: the commands read it as standard input.
    if (options_done || w.size() < 2 || w[0] != '-') {
      args.positional.push_back(w);
      continue;
    }
    if (w == "--") {
      options_done = true;
      continue;
    }
    const size_t eq = w.find('=');
    const std::string name = w.substr(0, eq);
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      if (s.name == name) spec = &s;
    if (spec == nullptr) {
      usage_error(command, "unknown option '" + name + "'");
      return std::nullopt;
    }
    std::string value;
    if (spec->takes_value) {
      if (eq != std::string::npos) {
        value = w.substr(eq + 1);
      } else if (i + 1 < words.size()) {
        value = words[++i];
      } else {
        usage_error(command, "option '" + name + "' needs a value");
        return std::nullopt;
      }
    } else if (eq != std::string::npos) {
      usage_error(command, "option '" + name + "' takes no value");
      return std::nullopt;
    }
    args.options[name] = value;
  }
  return args;
}

std::optional<std::vector<uint32_t>> parse_pids(std::string_view command, const Args& args) {
  std::vector<uint32_t> pids;
  const std::string* option = args.option("--pid");
  if (option == nullptr) return pids;
  const std::string& list = *option;
  size_t begin = 0;
  for (;;) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string word = list.substr(begin, end - begin);
    char* stop = nullptr;
    const unsigned long long n = word.empty() ? 0 : std::strtoull(word.c_str(), &stop, 10);
    if (word.empty() || *stop != '\0' || word[0] == '-' || n == 0 || n > UINT32_MAX) {
      usage_error(command, "--pid takes process IDs separated by commas (12,34), not '" + list + "'");
      return std::nullopt;
    }
    pids.push_back(static_cast<uint32_t>(n));
    if (end == list.size()) return pids;
    begin = end + 1;
  }
}

int unknown_pid_error(std::string_view command, uint32_t pid) {
  return usage_error(command, "--pid " + std::to_string(pid) +
                                  ": no such process in the trace (spoor report --threads lists them)");
}

std::optional<std::string> parse_format(std::string_view command, const Args& args,
                                        std::initializer_list<std::string_view> formats) {
  const std::string* f = args.option("--format");
  if (f == nullptr) return std::string(*formats.begin());
  std::string choices;
  size_t i = 0;
  for (std::string_view name : formats) {
    if (name == *f) return *f;
    choices += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + std::string(name);
    ++i;
  }
  usage_error(command, "--format must be " + choices + ", not '" + *f + "'");
  return std::nullopt;
}

std::optional<size_t> parse_top(std::string_view command, const Args& args, size_t fallback) {
  const std::string* t = args.option("--top");
  if (t == nullptr) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(t->c_str(), &end, 10);
  if (t->empty() || *end != '\0' || (*t)[0] == '-' || n == 0 || n > 100000) {
    usage_error(command, "--top must be a number from 1 to 100000, not '" + *t + "'");
    return std::nullopt;
  }
  return static_cast<size_t>(n);
}

}  // namespace spoor::cli
