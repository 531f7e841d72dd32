// The crash snapshot: the live allocations at the moment of a fatal signal, written from inside the
// signal handler. Same JSON schema as every snapshot (docs/snapshot-format.md, schema 1) with
// process.reason "crash", process.signal naming the signal and process.symbolized false: frames
// carry their address, module and module_offset only; the CLI names them later from the module
// files on disk (docs/crash-dumps.md).
//
// Async-signal-safe by construction: no malloc (working memory is one anonymous mmap made here and
// given back with munmap), no lock, no stdio, no dl_iterate_phdr/dladdr. It reads the tracker's
// lock-free structures, which stay consistent when the handler interrupted a hook on the same
// thread: a record being written or erased is skipped (the live table's per-record sequence), a
// stack being interned has no id yet, and the device counters are plain atomics.
//
// Bounds (the work is proportional to these, whatever the program did):
//   kMaxAllocations live allocations (the oldest first; the rest are added to dropped.allocations),
//   kMaxStacks stacks and kMaxFrames unique frames (an allocation whose stack does not fit is
//   written with stack 0, and the stack is added to dropped.stacks), kMaxModules modules.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tracker.h"

namespace vramtrace::crash {

inline constexpr uint32_t kMaxAllocations = 100000;
inline constexpr uint32_t kMaxStacks = 16384;
inline constexpr uint32_t kMaxFrames = 262144;
inline constexpr uint32_t kMaxModules = 4096;

// What the handler knows about the process without calling anything unsafe: prepared at install.
struct CrashProcess {
    const char *host = "";          // core/process_identity.h: read at start
    const char *rank = "";          // the same ("" none)
    uint64_t page_size = 4096;
    uint32_t stack_depth = 0;       // VRAMTRACE_STACK_DEPTH
};

struct CrashWriteResult {
    bool written = false;     // the whole document reached fd
    int error_number = 0;     // errno of the failing write, or ENOMEM when no working memory
    uint64_t allocations = 0; // allocations written
};

// Writes the snapshot to fd (not closed). signal_name: "SIGSEGV", ...
CrashWriteResult write_crash_snapshot(const Tracker &tracker, const CrashProcess &process,
                                      const char *signal_name, int fd);

} // namespace vramtrace::crash
