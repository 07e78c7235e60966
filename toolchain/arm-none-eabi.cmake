# The part every Cortex-M toolchain file shares: Debian's gcc-arm-none-eabi,
# no operating system. The per-CPU files set SPOOR_ARM_CPU_FLAGS and include
# this one; they choose compilers and target flags only.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

# No OS to link test programs against: probe the compilers with a static library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "${SPOOR_ARM_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${SPOOR_ARM_CPU_FLAGS}")
set(CMAKE_ASM_FLAGS_INIT "${SPOOR_ARM_CPU_FLAGS}")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
