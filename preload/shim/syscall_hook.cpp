// Interposed syscall(): the io_uring system calls of rings a program drives
// itself go to uring_raw.cpp; every other number is the system call
// itself, made here exactly as glibc's syscall() makes it.
//
// Written in assembly, without a frame, for two reasons. Programs call
// syscall() for clone with a stack of their own, where the child returns
// from it on that stack: only a function that keeps nothing on the stack
// behaves there as glibc's does. And the shim makes system calls through
// syscall() itself, in signal handlers among other places: a lookup of
// glibc's definition (dlsym) is not safe there, and none is needed.
//
// Cost per call that is not io_uring's: a subtraction, a compare and a
// branch before the system call.
#include <sys/syscall.h>

#include "uring_raw.h"

#if defined(__x86_64__)

extern "C" __attribute__((visibility("hidden"), used)) long spoor_ring_system_call(long number, long a1, long a2,
                                                                                 long a3, long a4, long a5,
                                                                                 long a6) {
  return spoor::preload::ring_system_call(number, a1, a2, a3, a4, a5, a6);
}

static_assert(SYS_io_uring_setup == 425 && SYS_io_uring_enter == 426 && SYS_io_uring_register == 427,
              "the assembly below picks the io_uring numbers as 425-427");

// long syscall(long number, ...): number in %rdi, its six arguments in
// %rsi, %rdx, %rcx, %r8, %r9 and the stack, as glibc reads them.
// spoor_ring_system_call takes the same registers and stack slot as
// seven longs, so a jump hands the call over unchanged.
__asm__(R"(
    .text
    .globl syscall
    .type syscall, @function
    .p2align 4
syscall:
    .cfi_startproc
    endbr64
    leaq -425(%rdi), %rax
    cmpq $2, %rax
    jbe 2f
    movq %rdi, %rax
    movq %rsi, %rdi
    movq %rdx, %rsi
    movq %rcx, %rdx
    movq %r8, %r10
    movq %r9, %r8
    movq 8(%rsp), %r9
    syscall
    cmpq $-4095, %rax
    jae 3f
    ret
2:
    jmp spoor_ring_system_call
3:
    negq %rax
    pushq %rax
    .cfi_adjust_cfa_offset 8
    call __errno_location@PLT
    popq %rcx
    .cfi_adjust_cfa_offset -8
    movl %ecx, (%rax)
    movq $-1, %rax
    ret
    .cfi_endproc
    .size syscall, .-syscall
)");

#endif  // __x86_64__
