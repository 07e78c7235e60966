// /proc/kallsyms kept from one recording to the next, and checked against
// what a recording saw.
//
// Reading /proc/kallsyms costs ~42 ms of kernel time here (122,000 lines
// formatted one by one), and a short recording with kernel samples waited
// for it at its end (`--kernel=samples -- true` 0.10 s against 0.03 s
// without). The kernel's own text does not move within a boot, and the
// modules' only with /proc/modules: a copy written in this boot, with the
// same /proc/modules beside it, names their functions as a fresh read
// would. What comes and goes without a trace in /proc/modules (BPF
// programs, ftrace trampolines) lies outside those ranges: an address
// there, or in a module loaded after the read, sends the recording back to
// /proc/kallsyms (kallsyms_cover), cache or not.
#ifndef SPOOR_KERNELSRC_KALLSYMS_CACHE_H
#define SPOOR_KERNELSRC_KALLSYMS_CACHE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spoor::kernelsrc {

struct KallsymsText {
  std::string_view symbols;  // the text of /proc/kallsyms, in `storage` (or static)
  std::string modules;       // the text of /proc/modules read with it ("" where there is none)
  bool from_cache = false;
  // What `symbols` lies in: the text read, or a kept copy's mapping (its
  // 5.4 MB copied into fresh memory cost ~40 ms on the benchmark VM).
  std::shared_ptr<const void> storage;
};

// /proc/kallsyms and /proc/modules, now.
KallsymsText read_kallsyms_text();

// Whether `k` describes where each of `addresses` lies as it stays for the
// boot: in the kernel's text (_stext to _etext) or in a module of
// k.modules (its base to base + size). False for any other address, and
// when the addresses are hidden (kptr_restrict: every one reads 0).
bool kallsyms_cover(const KallsymsText& k, const std::vector<uint64_t>& addresses);

// Whether /proc/kallsyms must be read again to name `addresses`: one lies
// outside what `k` covers, and `k` is a kept copy or the modules changed
// since it was read. A text read during the recording names BPF programs
// and trampolines as a second read would (unless they came since), and
// one whose addresses are hidden would come back the same.
bool kallsyms_stale_for(const KallsymsText& k, const std::vector<uint64_t>& addresses);

// The copy at `path` when it was written in this boot (boot_id) and
// /proc/modules reads as it did then; nothing otherwise (no file, another
// boot, modules loaded or unloaded since, a damaged file).
std::optional<KallsymsText> load_kallsyms_cache(const std::string& path);

// Writes `k` to `path` for the next recording (mode 0600, through a
// temporary file renamed over it; the directory is made if missing).
// Nothing is written when the addresses are hidden. False when it could
// not be written.
bool store_kallsyms_cache(const std::string& path, const KallsymsText& k);

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KALLSYMS_CACHE_H
