#!/usr/bin/env python3
# bench/page_fault_split.py: where a traced run's page faults happen, per
# process name, by the innermost frame of each fault's call chain that
# names a place (the shim's stack table, rule cache, libunwind, libdw, the
# dynamic loader...). Input: perf script output of a page-fault recording:
#
#   perf record -e page-faults -c 1 --call-graph dwarf,8192 -m 64M -o f.data -- \
#       build/release/symbolizer/spoor record -o t.spoor -- CMD
#   perf script -i f.data -F comm,pid,ip,sym,dso > f.txt
#   bench/page_fault_split.py f.txt
#
# A chain perf could not unwind lands in "program, libc, kernel" or in the
# class of the frames it did get (libunwind's own frames often end there).
import sys, collections
def frame_cat(f, text):
    if "libunwind.so" in f:
        return "libunwind trace cache (sampler prime)" if "start_thread_sampling" in text else "libunwind (other)"
    if any(k in f for k in ("libdw", "libelf", "libz.so", "liblzma", "describe_unwind_rule")): return "rule building (libdw)"
    if any(k in f for k in ("insert_rule", "find_rule", "rule_beyond_newest", "build_rule", "cached_rule")): return "rule cache"
    if any(k in f for k in ("stack_id_of", "id_beyond_newest", "id_in_older_levels")): return "stack table"
    if any(k in f for k in ("map_thread_walks", "keep_walk", "fast_backtrace", "look_up_thread_stack")): return "fast unwinder"
    if "ld-linux" in f: return "dynamic loader"
    if "libspoor-preload" in f: return "shim (other)"
    return None
procs = collections.Counter(); by = collections.Counter()
comm = None; chain = []
def flush():
    global chain
    if comm is None: return
    text = " ".join(chain)
    cat = "program, libc, kernel"
    for f in chain:
        c = frame_cat(f, text)
        if c: cat = c; break
    by[(comm, cat)] += 1; procs[comm] += 1; chain = []
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        flush(); comm = None; continue
    if not line.startswith((" ", "\t")):
        flush(); comm = line.split()[0]; chain = []
    else:
        chain.append(line.strip())
flush()
for c, n in procs.most_common(6):
    print(f"{c}: {n} faults")
    for (cc, cat), k in sorted(by.items(), key=lambda x: -x[1]):
        if cc == c: print(f"   {k:7d} {100.0*k/n:5.1f}%  {cat}")
