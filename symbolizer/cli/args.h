// Argument parsing for subcommands: positional words and --options (either
// "--name value" or "--name=value"), with "--" ending the options.
#ifndef SPOOR_CLI_ARGS_H
#define SPOOR_CLI_ARGS_H

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spoor::cli {

struct OptionSpec {
  std::string_view name;  // "--format"
  bool takes_value;
};

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> options;  // flags map to ""

  const std::string* option(std::string_view name) const {
    auto it = options.find(name);
    return it == options.end() ? nullptr : &it->second;
  }
};

// Parses `words` for `spoor <command>`. On an unknown option or a missing
// value, prints "spoor <command>: ..." to stderr and returns nullopt (the
// caller exits with kExitUsage).
std::optional<Args> parse_args(std::string_view command, const std::vector<std::string>& words,
                               std::span<const OptionSpec> specs);

// "--pid 12,34": the process IDs of a comma-separated list, each from 1 to
// 2^32-1; empty when the option is absent; nullopt (with a usage error
// printed) when its value is not such a list.
std::optional<std::vector<uint32_t>> parse_pids(std::string_view command, const Args& args);

// The usage error for a --pid the trace does not have; returns kExitUsage.
int unknown_pid_error(std::string_view command, uint32_t pid);

// "--format F": one of `formats`, the first when the option is absent;
// nullopt (with a usage error printed: "--format must be text or json, not
// 'x'") when it is none of them.
std::optional<std::string> parse_format(std::string_view command, const Args& args,
                                        std::initializer_list<std::string_view> formats);

// "--top N": rows per ranking, 1 to 100000; `fallback` when the option is
// absent; nullopt (with a usage error printed) when its value is not one.
std::optional<size_t> parse_top(std::string_view command, const Args& args, size_t fallback = 10);

// Prints "spoor <command>: <message>; run 'spoor help <command>'" to stderr
// and returns kExitUsage.
int usage_error(std::string_view command, const std::string& message);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_ARGS_H
