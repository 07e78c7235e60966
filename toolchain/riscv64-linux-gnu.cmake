# riscv64 Linux (rv64gc, lp64d) with Debian's cross compiler (g++-riscv64-linux-gnu).
#   cmake -S . -B build/riscv64-linux-gnu --toolchain toolchain/riscv64-linux-gnu.cmake -DSPOOR_HOSTED=OFF
set(SPOOR_LINUX_TRIPLE riscv64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
