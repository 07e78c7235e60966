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

// The text symbols (types t, T, w, W) of kallsyms-formatted `text`
// ("ffffffff81000000 T _stext" and " [module]" after a module's), sorted
// by address; empty when every address is 0. Malformed lines are skipped.
std::vector<KernelSymbol> parse_kallsyms(std::string_view text);

// /proc/kallsyms parsed; empty when it cannot be read.
std::vector<KernelSymbol> read_kallsyms(const char* path = "/proc/kallsyms");

// The symbols of `table` (sorted, as parse_kallsyms gives it) that hold
// one of `addresses`, each once, by address. Addresses below the first
// symbol hold none.
std::vector<KernelSymbol> symbols_holding(const std::vector<KernelSymbol>& table, std::vector<uint64_t> addresses);

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KERNEL_SYMBOLS_H
