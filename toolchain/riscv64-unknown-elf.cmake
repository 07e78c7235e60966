# Bare-metal riscv64 (rv64imac, lp64: integer ABI, atomics, compressed; no
# FPU needed) with Debian's gcc-riscv64-unknown-elf and picolibc. Builds
# static libraries only: there is no board to link for here.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# medany: code and data may sit anywhere, e.g. above 2 GiB where RISC-V
# boards (and QEMU's virt machine) put RAM.
set(_spoor_target_flags "-march=rv64imac -mabi=lp64 -mcmodel=medany --specs=picolibc.specs")

# Debian ships no libstdc++ for riscv64-unknown-elf. The core needs only
# three header-only parts of it (<atomic>, <type_traits>, <new>), so it
# borrows the newlib build of those headers from libstdc++-arm-none-eabi-newlib:
# they contain no ARM code (lock-freedom and the atomic instructions come from
# the compiler's own __GCC_ATOMIC_* macros and builtins), and nothing from
# the C++ library is linked.
set(_spoor_target_flags_cxx "")
file(GLOB _spoor_newlib_cxx LIST_DIRECTORIES true /usr/include/newlib/c++/*)
if(_spoor_newlib_cxx)
  list(GET _spoor_newlib_cxx 0 _spoor_newlib_cxx)
  set(_spoor_target_flags_cxx
      " -isystem ${_spoor_newlib_cxx} -isystem ${_spoor_newlib_cxx}/arm-none-eabi")
else()
  message(WARNING "riscv64-unknown-elf: no C++ library headers in /usr/include/newlib/c++ "
                  "(install libstdc++-arm-none-eabi-newlib: scripts/install-cross-deps.sh)")
endif()

set(CMAKE_C_FLAGS_INIT "${_spoor_target_flags}")
set(CMAKE_CXX_FLAGS_INIT "${_spoor_target_flags}${_spoor_target_flags_cxx}")
set(CMAKE_ASM_FLAGS_INIT "${_spoor_target_flags}")

set(CMAKE_FIND_ROOT_PATH /usr/lib/picolibc/riscv64-unknown-elf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
