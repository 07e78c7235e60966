# Cortex-M0+ (ARMv6-M: no exclusive loads, no FPU).
#   cmake -S . -B build/m0plus --toolchain toolchain/arm-none-eabi-cortex-m0plus.cmake && cmake --build build/m0plus
set(SPOOR_ARM_CPU_FLAGS "-mcpu=cortex-m0plus -mthumb -mfloat-abi=soft")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
