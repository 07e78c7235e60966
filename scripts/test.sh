#!/usr/bin/env bash
# Installs what is missing, builds every target with warnings as errors, and
# runs every test (CTest: GoogleTest suites, the freestanding-core check, the
# CLI tests, the comparisons with heaptrack and valgrind, the core's tests
# cross-built for aarch64 and riscv64 and run under qemu-user, the firmware
# example in QEMU). Set SPOOR_TEST_ASAN=1 to also run them under ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
# The peers (heaptrack, valgrind) and the real programs the record tests trace.
scripts/install-test-deps.sh
# The cross compilers, qemu-user and qemu-system-arm: the cross_core_* tests
# build and run the core for aarch64, riscv64 Linux and bare metal
# (toolchain/README.md); the firmware tests build the Cortex-M3 example and
# run it in QEMU. They skip, saying so, when these are missing.
scripts/install-cross-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci
ctest --preset ci -j2
if [ "${SPOOR_TEST_ASAN:-0}" = 1 ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan
  ctest --preset asan -j2
fi
