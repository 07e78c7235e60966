#!/usr/bin/env bash
# Installs what the cross builds and firmware tests need, only the packages
# that are missing: the bare-metal toolchains (Cortex-M with newlib and
# picolibc, riscv64-unknown-elf), the Linux cross compilers for aarch64 and
# riscv64, QEMU for the mps2-an385 board (qemu-system-arm) and for running
# cross-built Linux binaries (qemu-user), and the C++ runtimes those
# binaries link. Usage: scripts/install-cross-deps.sh [extra-package...]
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" \
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib picolibc-arm-none-eabi \
  binutils-arm-none-eabi qemu-system-arm qemu-user \
  g++-aarch64-linux-gnu libc6-dev-arm64-cross \
  g++-riscv64-linux-gnu libc6-dev-riscv64-cross \
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf "$@"
