#!/usr/bin/env bash
# Installs what is missing and builds Spoor (release); then the main job:
# records the bundled demo program, unmodified, with spoor record (heap,
# file I/O, threads, CPU samples, processes) and prints spoor report on it.
# Last, it shows the demo's own provider events, written through a tracing
# session, with spoor info.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target spoor spoor-demo spoor-preload
spoor=build/release/symbolizer/spoor
demo=build/release/examples/demo/spoor-demo
recorded=${SPOOR_DEMO_RECORD_OUT:-build/release/spoor-demo-recorded.spoor}
session_trace=${SPOOR_DEMO_OUT:-build/release/spoor-demo.spoor}

echo "== spoor record -- spoor-demo (the program is not changed)"
"$spoor" record -o "$recorded" -- "$demo" "$session_trace" 4000
echo
echo "== spoor report $recorded"
"$spoor" report --top 5 "$recorded"

echo
echo "== The demo's own provider (Spoor.Demo), through its tracing session: spoor info"
"$demo" "$session_trace" 2000
"$spoor" info "$session_trace" | sed -n '/^events per provider/,$p'
echo
echo "Next: spoor export $recorded --format perfetto -o demo.pftrace   (open in ui.perfetto.dev)"
