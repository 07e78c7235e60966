# Cortex-M4F (ARMv7E-M, single-precision FPU, hard-float calling convention).
#   cmake -S . -B build/m4f --toolchain toolchain/arm-none-eabi-cortex-m4f.cmake && cmake --build build/m4f
set(SPOOR_ARM_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
