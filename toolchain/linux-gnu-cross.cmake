# The part every cross-Linux toolchain file shares: Debian's cross compiler
# for SPOOR_LINUX_TRIPLE (aarch64-linux-gnu, riscv64-linux-gnu), the
# target's root in /usr/TRIPLE, and qemu-user to run what is built, so CTest
# can run the tests. The per-target files set SPOOR_LINUX_TRIPLE and include
# this one.
string(REGEX MATCH "^[^-]+" _spoor_arch "${SPOOR_LINUX_TRIPLE}")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${_spoor_arch})
set(CMAKE_C_COMPILER ${SPOOR_LINUX_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${SPOOR_LINUX_TRIPLE}-g++)

# Libraries, headers and CMake packages come from the target's root only, so
# the build machine's x86-64 ones (libgtest-dev, zstd) are never picked up.
set(CMAKE_FIND_ROOT_PATH /usr/${SPOOR_LINUX_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -L: where qemu finds the target's dynamic loader and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${_spoor_arch} -L /usr/${SPOOR_LINUX_TRIPLE})
