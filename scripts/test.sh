#!/usr/bin/env bash
# Installs what is missing, builds every target with warnings as errors, and
# runs every test (CTest: GoogleTest suites, the freestanding-core check, the
# CLI tests, the comparisons with heaptrack and valgrind, the firmware
# example in QEMU). Set SPOOR_TEST_ASAN=1 to also run them under ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
# The peers (heaptrack, valgrind) and the real programs the record tests trace.
scripts/install-test-deps.sh
# The Cortex-M toolchain and QEMU: the firmware example is built and run in
# QEMU by the tests (they skip, saying so, when these are missing).
scripts/install-cross-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci
ctest --preset ci -j2
if [ "${SPOOR_TEST_ASAN:-0}" = 1 ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan
  ctest --preset asan -j2
fi
