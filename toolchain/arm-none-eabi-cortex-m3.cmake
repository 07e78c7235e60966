# Cortex-M3 (ARMv7-M, no FPU).
#   cmake -S . -B build/m3 --toolchain toolchain/arm-none-eabi-cortex-m3.cmake && cmake --build build/m3
set(SPOOR_ARM_CPU_FLAGS "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
