// Interposed syscall(). Handed to the recorders: the io_uring system calls
// of rings a program drives itself (uring_raw.cpp); openat2, which has no
// glibc wrapper (io_hooks.cpp); fork, and a clone or clone3 that makes a
// process on a copy of the caller's stack, no CLONE_VM and no stack given
// (process_hooks.cpp); io_submit, io_getevents, io_pgetevents and
// io_destroy (linux_aio_hooks.cpp); getdents64, whose listing of this
// process's descriptor table leaves the shim's out (fd_listing_hooks.cpp);
// write, which libunwind makes through syscall() on its address-check
// pipe (unwind_pipe.h). Every other number is the system call
// itself, made here exactly as glibc's syscall() makes it.
//
// Written in assembly, without a frame, for two reasons. Programs call
// syscall() for clone with a stack of their own (a thread, a process
// sharing the caller's memory, vfork), where the child returns from it on
// that stack or on the parent's: only a function that keeps nothing on the
// stack behaves there as glibc's does. And the shim makes system calls
// through syscall() itself, in signal handlers among other places: a
// lookup of glibc's definition (dlsym) is not safe there, and none is
// needed.
//
// Cost per call handed to none of them: nine compares and branches (and a
// subtraction for each of the two ranges) before the system call.
#include <sched.h>
#include <sys/syscall.h>

#include "io_interpose.h"
#include "uring_raw.h"

#if defined(__x86_64__)

static_assert(SYS_io_uring_setup == 425 && SYS_io_uring_enter == 426 && SYS_io_uring_register == 427 &&
                  SYS_openat2 == 437 && SYS_clone == 56 && SYS_clone3 == 435 && SYS_fork == 57 &&
                  CLONE_VM == 0x100 &&
                  SYS_io_destroy == 207 && SYS_io_getevents == 208 && SYS_io_submit == 209 &&
                  SYS_io_pgetevents == 333 && SYS_getdents64 == 217 && SYS_write == 1,
              "the assembly below picks its numbers as 425-427, 437, 56, 57, 435, 207-209, 333, 217 and 1");

// long syscall(long number, ...): number in %rdi, its six arguments in
// %rsi, %rdx, %rcx, %r8, %r9 and the stack, as glibc reads them. The
// recording functions take the same registers and stack slot as seven
// longs, so a jump hands the call over unchanged (and they are the frame
// right below the program's: their stacks start in the program).
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
    cmpq $437, %rdi
    je 4f
    leaq -207(%rdi), %rax
    cmpq $2, %rax
    jbe 6f
    cmpq $333, %rdi
    je 6f
    cmpq $57, %rdi
    je 5f
    cmpq $435, %rdi
    je 7f
    cmpq $217, %rdi
    je 8f
    cmpq $1, %rdi
    je 9f
    cmpq $56, %rdi
    jne 1f
    testq $0x100, %rsi
    jnz 1f
    testq %rdx, %rdx
    jz 5f
1:
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
4:
    jmp spoor_openat2_system_call
5:
    jmp spoor_fork_system_call
6:
    jmp spoor_linux_aio_system_call
8:
    jmp spoor_getdents64_system_call
9:
    jmp spoor_write_system_call
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
7:
    # clone3: its flags and stack are in memory, read by a C function
    # (which cannot fault); the registers are kept around the call.
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rdx
    .cfi_adjust_cfa_offset 8
    pushq %rcx
    .cfi_adjust_cfa_offset 8
    pushq %r8
    .cfi_adjust_cfa_offset 8
    pushq %r9
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    movq %rsi, %rdi
    movq %rdx, %rsi
    call spoor_clone3_copies_the_caller
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %r9
    .cfi_adjust_cfa_offset -8
    popq %r8
    .cfi_adjust_cfa_offset -8
    popq %rcx
    .cfi_adjust_cfa_offset -8
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testl %eax, %eax
    jnz 5b
    jmp 1b
    .cfi_endproc
    .size syscall, .-syscall
)");

#endif  // __x86_64__
