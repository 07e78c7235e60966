// The Spoor.Process provider: what a symbolizer and a report need to know
// about each traced process. The preloaded library writes most of these in
// the process itself; spoor record writes ProcessExit for the processes it
// reaps (the traced program, and orphans that re-parent to it), so a
// process's end is in the trace however it ended, and ProcessRunning for
// those still running when the recording ended.
#ifndef SPOOR_PRELOAD_PROCESS_EVENTS_H
#define SPOOR_PRELOAD_PROCESS_EVENTS_H

#include <cstdint>

#include "spoor/event.h"

namespace spoor::preload {

inline constexpr uint64_t kKeywordModules = 0x2;
inline constexpr uint64_t kKeywordLifetime = 0x4;

SPOOR_DECLARE_PROVIDER(g_process);

// A module (executable, shared object, vDSO) mapped into the process:
// addresses in stacks minus `bias` are addresses in the ELF file.
SPOOR_EVENT(kModuleLoad, g_process,
            (EventInfo{.name = "ModuleLoad", .id = 1, .level = Level::always, .keywords = kKeywordModules}),
            Field<Ptr>{"bias"}, Field<Ptr>{"start"}, Field<uint64_t>{"size"}, Field<Str>{"path"},
            Field<Blob>{"build_id"});
SPOOR_EVENT(kModuleUnload, g_process,
            (EventInfo{.name = "ModuleUnload", .id = 2, .level = Level::always, .keywords = kKeywordModules}),
            Field<Ptr>{"bias"}, Field<Str>{"path"});

// The process's image started: at the first image, and again after each
// exec (exec_count 1, 2...: the modules described before it no longer
// apply). The command line is in the PROCESS block.
SPOOR_EVENT(kProcessStart, g_process,
            (EventInfo{.name = "ProcessStart", .id = 3, .level = Level::always, .keywords = kKeywordLifetime}),
            Field<uint32_t>{"ppid"}, Field<uint32_t>{"exec_count"}, Field<Str>{"exe"}, Field<Str>{"cwd"});

// fork() or posix_spawn() returned in the parent. spawn: the child began
// a new image at once (posix_spawn); false: it goes on in a copy of the
// parent's memory, heap included (fork). A trace older than the field
// does not say (a reader sees no `spawn` field).
SPOOR_EVENT(kProcessFork, g_process,
            (EventInfo{.name = "Fork", .id = 4, .level = Level::always, .keywords = kKeywordLifetime}),
            Field<uint32_t>{"child_pid"}, Field<bool>{"spawn"});

// The process is about to replace its image. untraceable says why the new
// image cannot be traced ("" when it can: a static binary or a setuid
// program ignores LD_PRELOAD). cpu_ns: the calling thread's own CPU clock
// (preload/shim/thread_cpu_time.h), which runs on into the new image: its
// end in this image, as ThreadEnd's cpu_ns would say (the image writes no
// ThreadEnd for it). Added after untraceable.
SPOOR_EVENT(kProcessExec, g_process,
            (EventInfo{.name = "Exec", .id = 5, .level = Level::always, .keywords = kKeywordLifetime}),
            Field<Str>{"path"}, Field<Str>{"untraceable"}, Field<uint64_t>{"cpu_ns"});

// exec failed and the old image goes on.
SPOOR_EVENT(kProcessExecFailed, g_process,
            (EventInfo{.name = "ExecFailed", .id = 6, .level = Level::always, .keywords = kKeywordLifetime}),
            Field<int32_t>{"errno"});

// A process ended: written by the process itself as it exits (exit or
// _exit; pid is its own), and when it is reaped, by a traced parent (in the
// parent's stream) or by spoor record. Only a reaper sees a signal; a
// reaper's word wins over the process's own. exit_code is valid when
// signal is 0.
SPOOR_EVENT(kProcessExit, g_process,
            (EventInfo{.name = "ProcessExit", .id = 7, .level = Level::always, .keywords = kKeywordLifetime}),
            Field<uint32_t>{"pid"}, Field<int32_t>{"exit_code"}, Field<uint8_t>{"signal"},
            Field<bool>{"core_dumped"});

// Written by spoor record as the recording ends, in its own stream, for
// each process it recorded that was still running then (the user stopped
// waiting for the processes a program left running; --pid's --duration
// ran out, or Ctrl-C): a report says "running at the end" where it would
// say "no exit recorded".
SPOOR_EVENT(kProcessRunning, g_process,
            (EventInfo{.name = "ProcessRunning", .id = 11, .level = Level::always, .keywords = kKeywordLifetime}),
            Field<uint32_t>{"pid"});

// system() or popen() ran a shell command. glibc's own waitpid reaps that
// shell, where no wait hook sees its status: CommandEnd carries it
// (system()'s result, or pclose()'s), and a reader gives it to the one
// child of this process that started between the two and has no reaper's
// word yet (a shell killed by a signal cannot write its own end). `call`
// pairs the two within the process; a popen() that failed has no end.
inline constexpr uint16_t kTaskCommand = 1;
SPOOR_EVENT(kCommandStart, g_process,
            (EventInfo{.name = "CommandStart", .id = 9, .level = Level::always, .keywords = kKeywordLifetime,
                       .opcode = Opcode::start, .task = kTaskCommand}),
            Field<uint32_t>{"call"}, Field<Str>{"command"});
SPOOR_EVENT(kCommandEnd, g_process,
            (EventInfo{.name = "CommandEnd", .id = 10, .level = Level::always, .keywords = kKeywordLifetime,
                       .opcode = Opcode::stop, .task = kTaskCommand}),
            Field<uint32_t>{"call"}, Field<int32_t>{"exit_code"}, Field<uint8_t>{"signal"},
            Field<bool>{"core_dumped"});

// The preloaded library's own start on the thread that writes it: its
// constructor, a fork child's joining the recording, or a new thread's
// set-up took `duration_ns` (CLOCK_MONOTONIC) up to this event. The system
// calls made meanwhile are the library's (its connection to the recorder,
// /proc reads, the modules' build IDs, the sampler's timer), not the
// program's: a report of the kernel's system calls leaves them out. The
// first in an image is its start's.
SPOOR_EVENT(kShimStarted, g_process,
            (EventInfo{.name = "ShimStarted", .id = 12, .level = Level::always, .keywords = kKeywordLifetime}),
            Field<uint64_t>{"duration_ns"});

// The bytes of a module that has no file to read afterwards: the vDSO
// (ModuleLoad's path "linux-vdso.so.1"), written once per image after its
// ModuleLoad, so a symbolizer resolves its functions (clock_gettime...)
// from the trace. The image is the ELF file as mapped from ModuleLoad's
// `start`, through its section headers (past ModuleLoad's `size`); an
// event holds bytes [offset, offset + size of image) of it. A value is at
// most kMaxValueBytes (16383) long, so the image goes in chunks of
// kModuleImageChunk bytes, one event each, in order (the x86-64 vDSO is
// under 8 KiB: one event).
inline constexpr uint32_t kModuleImageChunk = 8192;
SPOOR_EVENT(kModuleImage, g_process,
            (EventInfo{.name = "ModuleImage", .id = 8, .level = Level::always, .keywords = kKeywordModules}),
            Field<Ptr>{"bias"}, Field<Str>{"path"}, Field<uint64_t>{"offset"}, Field<Blob>{"image"});

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_PROCESS_EVENTS_H
