// Unwind rules kept from one recording to the next. A rule depends only on
// its module's code, named by the module's GNU build ID (../shared_rules.h),
// so the rules a recording built stay right for the next one that runs
// the same code. spoor record puts the file's rules after a new
// recording's store slots before the program starts, where a process
// looks before building a rule, and writes the rules back at the end:
// the first process of each program then finds most of its rules instead
// of loading libdw and building them (bench/RESULTS.md).
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

// Puts the file's rules after the slots of the store `store_fd` (a
// create_rule_store() memfd no process has yet). Returns how many; 0 when
// the file is missing, of another format or damaged (then it is ignored,
// and replaced at the end).
size_t load_rule_cache(int store_fd, const std::string& path);

// Writes the rules this recording published in the store, then the kept
// ones it did not use, to `path` (at most kMaxCachedRules, sorted), making
// its directory (mode 0700) if needed. Returns how many, or -1 when the
// file could not be written.
long save_rule_cache(int store_fd, const std::string& path);

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_RULE_CACHE_FILE_H
