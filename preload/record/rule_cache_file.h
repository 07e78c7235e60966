// Unwind rules kept from one recording to the next. A rule depends only on
// its module's code, named by the module's GNU build ID (../shared_rules.h),
// so the rules a recording built stay right for the next one that runs
// the same code. spoor record fills a new recording's store from the file
// before the program starts and writes the store back to it at the end:
// the first process of each program then finds most of its rules instead
// of loading libdw and building them (node -e 0: 378 ms traced against
// ~265 ms with its rules at hand, gcc -c: 117 against 74 ms).
//
// The file: a 32-byte header {"SPRC", version, kUnwindRuleFormat, count,
// FNV-1a of the entries}, then `count` entries {module key, offset, rule},
// 8 bytes each, little-endian as the host. Written to a temporary file
// and renamed, so concurrent recordings never see half of one.
#ifndef SPOOR_PRELOAD_RECORD_RULE_CACHE_FILE_H
#define SPOOR_PRELOAD_RECORD_RULE_CACHE_FILE_H

#include <cstddef>
#include <string>

namespace spoor::record {

// At most this many rules are kept (a quarter of the store's slots, so a
// recording has room for its own): the newest recording's first.
inline constexpr size_t kMaxCachedRules = 32768;

// $SPOOR_RULE_CACHE when set ("off" or empty: none), else
// $XDG_CACHE_HOME/spoor/unwind-rules, else ~/.cache/spoor/unwind-rules;
// "" when there is no home to put it in.
std::string default_rule_cache_path();

// Puts the file's rules into the empty store `store_fd` (a
// create_rule_store() memfd). Returns how many; 0 when the file is
// missing, of another format or damaged (then it is ignored, and
// replaced at the end).
size_t load_rule_cache(int store_fd, const std::string& path);

// Writes the store's rules to `path` (this recording's new ones first, at
// most kMaxCachedRules), making its directory (mode 0700) if needed.
// Returns how many, or -1 when the file could not be written.
long save_rule_cache(int store_fd, const std::string& path);

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_RULE_CACHE_FILE_H
