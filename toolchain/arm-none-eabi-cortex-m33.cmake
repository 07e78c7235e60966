# Cortex-M33 (ARMv8-M Mainline, no FPU used).
#   cmake -S . -B build/m33 --toolchain toolchain/arm-none-eabi-cortex-m33.cmake && cmake --build build/m33
set(SPOOR_ARM_CPU_FLAGS "-mcpu=cortex-m33 -mthumb -mfloat-abi=soft")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
