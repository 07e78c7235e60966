#!/usr/bin/env bash
# Installs what is missing, builds Spoor (release), runs the bundled demo
# program under a tracing session, and shows the trace with spoor info/dump;
# then records the same program, unmodified, with spoor record (heap, I/O,
# threads, CPU samples, processes) and shows what that trace holds.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target spoor spoor-demo spoor-preload
out=${SPOOR_DEMO_OUT:-build/release/spoor-demo.spoor}
build/release/examples/demo/spoor-demo "$out" 2000
echo
build/release/symbolizer/spoor info "$out"
echo
echo "First events (spoor dump $out | head):"
# head closes the pipe early; spoor's SIGPIPE is expected, not a failure.
build/release/symbolizer/spoor dump "$out" | head -n 12 || true

echo
recorded=${SPOOR_DEMO_RECORD_OUT:-build/release/spoor-demo-recorded.spoor}
echo "The same program under spoor record (no changes to it):"
build/release/symbolizer/spoor record -o "$recorded" -- build/release/examples/demo/spoor-demo "$out" 2000
echo
# Only the "events per provider" part of spoor info: what spoor record saw.
build/release/symbolizer/spoor info "$recorded" | sed -n '/^events per provider/,/^$/p'
