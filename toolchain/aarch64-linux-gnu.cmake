# aarch64 Linux with Debian's cross compiler (g++-aarch64-linux-gnu).
#   cmake -S . -B build/aarch64-linux-gnu --toolchain toolchain/aarch64-linux-gnu.cmake -DSPOOR_HOSTED=OFF
set(SPOOR_LINUX_TRIPLE aarch64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
