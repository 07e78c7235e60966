#!/usr/bin/env python3
"""Counts the instructions each event took, from QEMU's `-singlestep -d
exec,nochain` log of bench/firmware/count_sample.cpp: one log line per
executed instruction, named by its function. An event is everything from
entering `raise_sample` to returning to its caller (the call site, the core,
the platform hooks). Prints the most common count (the fast path), the
average, and the histogram; with an ELF file as second argument, also the
instructions of one fast-path event (objdump's disassembly of each PC)."""
import collections
import re
import subprocess
import sys

CALLER = "reset_handler"
EVENT = "_Z12raise_sample"  # mangled, as QEMU names it

line_re = re.compile(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/[0-9a-f]+/[0-9a-f]+\] (\S+)")
counts = []
functions = collections.Counter()
current = None
per_event_functions = None
with open(sys.argv[1]) as log:
    for line in log:
        m = line_re.match(line)
        if not m:
            continue
        pc, name = int(m.group(1), 16), m.group(2)
        if current is None:
            if name.startswith(EVENT):
                current = 1
                per_event_functions = collections.Counter({name: 1})
                pcs = [pc]
            continue
        if name == CALLER:
            counts.append((current, per_event_functions, pcs))
            current = None
            continue
        current += 1
        per_event_functions[name] += 1
        pcs.append(pc)

if not counts:
    sys.exit("no events found in the log")
histogram = collections.Counter(c for c, _, _ in counts)
fast, seen = histogram.most_common(1)[0]
print(f"events: {len(counts)}")
print(f"instructions per event, fast path (most common, {seen} of {len(counts)} events): {fast}")
print(f"instructions per event, average over all (packet opens and the first registration included): "
      f"{sum(c for c, _, _ in counts) / len(counts):.1f}")
example, example_pcs = next((f, p) for c, f, p in counts if c == fast)
print("fast path by function: " + ", ".join(f"{n} {k}" for k, n in example.most_common()))
print("histogram: " + ", ".join(f"{k}: {v}" for k, v in sorted(histogram.items())))

if len(sys.argv) > 2:
    disassembly = {}
    for line in subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", sys.argv[2]],
                               capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m:
            disassembly[int(m.group(1), 16)] = m.group(2).split("@")[0].strip()
    print("one fast-path event, instruction by instruction:")
    for i, pc in enumerate(example_pcs, 1):
        print(f"  {i:3d} {pc:08x} {disassembly.get(pc, '?')}")
