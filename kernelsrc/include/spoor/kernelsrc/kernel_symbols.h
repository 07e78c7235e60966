// The names of the kernel functions a recording saw: the kernel frames of
// its CPU samples' callchains and the instructions its page faults hit in
// the kernel, looked up at the end of the recording in /proc/kallsyms (the
// kernel's own symbol table, which only this machine has, now) and written
// into the trace as Spoor.Kernel KernelSymbol events, one per function, so
// a report names `copy_page_to_iter` where it would show 0xffffffff81...
//
// kallsyms gives start addresses only: an address belongs to the text
// symbol with the greatest start at or below it, as perf reads it. Where
// kptr_restrict hides the addresses (every one reads 0), nothing is named.
#ifndef SPOOR_KERNELSRC_KERNEL_SYMBOLS_H
#define SPOOR_KERNELSRC_KERNEL_SYMBOLS_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spoor::kernelsrc {

struct KernelSymbol {
  uint64_t address = 0;  // start
  std::string name;      // "copy_page_to_iter"
  std::string module;    // "" for the kernel image, else the module ("ext4")
};

// The text symbols (types t, T, w, W) of kallsyms-formatted `kallsyms`
// ("ffffffff81000000 T _stext", " [ext4]" after a module's) that hold one
// of `addresses`, each once, by address. Malformed lines are skipped;
// addresses below the first symbol are held by none; nothing when every
// address in the text is 0. The ~120,000 lines are indexed by address
// only, no string made per symbol: ~13 ms here, against ~50 ms to read
// them (a parse into a string per symbol took ~80 ms).
std::vector<KernelSymbol> kernel_symbols_holding(std::string_view kallsyms, std::vector<uint64_t> addresses);

// The text of /proc/kallsyms (or `path`), read in large pieces; "" when it
// cannot be read.
std::string read_kallsyms(const char* path = "/proc/kallsyms");

// The whole text of the file at `path` (a /proc file, which tells no size
// ahead), read in 128 KiB pieces with `expected` bytes reserved; "" when
// it cannot be read.
std::string read_text_file(const char* path, size_t expected = 0);

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KERNEL_SYMBOLS_H
