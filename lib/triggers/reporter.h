// The reporter thread: does all the file writing of the triggers (symbolize + write), so that the
// hooks and the signal handler only record a few words and wake it.
//
// - Started lazily, by the first intercepted allocation (start_triggers), never by the library's
//   constructor: a process that never uses CUDA gets no thread and no signal handler. In the child
//   of fork() it is gone (only the forking thread survives); the child's first allocation starts a
//   new one.
// - Woken through a futex on one 32-bit word of pending bits: wake_reporter() is an atomic OR and a
//   FUTEX_WAKE system call, async-signal-safe, errno preserved.
// - Never keeps the process alive: detached, and when it finds itself the last thread of the
//   process (the main thread called pthread_exit and every other thread ended) it returns, so glibc
//   ends the process with status 0 as it would have without it (within 0.5 s).
// - Every signal is blocked in it except the synchronous fault signals, so the program's signals
//   are never delivered to (and its handlers never run on) the reporter.
// - Dumps serialize with the dump mutex of lib/dump/dumper.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "snapshot/snapshot_model.h"

namespace vramtrace::triggers {

enum WakeBits : uint32_t {
    kWakeSignal = 1u << 0,    // VRAMTRACE_SIGNAL arrived: write a "signal" snapshot
    kWakeQueue = 1u << 1,     // captured work (an OOM snapshot) is queued
    kWakeGraphMemory = 1u << 2, // a graph was instantiated, uploaded or destroyed, or graph memory
                                // trimmed: read the devices' graph memory again
    kWakeTermination = 1u << 3, // a terminating signal arrived: write the exit report now
                                // (lib/triggers/termination_signals.h)
    kWakeThreshold = 1u << 4, // a VRAMTRACE_WARN_BYTES crossing was recorded (lib/triggers/threshold.h)
};

// Async-signal-safe.
void wake_reporter(uint32_t bits);
// Whether this process has a reporter thread that can do woken work (async-signal-safe).
bool reporter_running();

extern std::atomic<bool> g_triggers_started;
// Starts the reporter thread and installs the VRAMTRACE_SIGNAL handler, once per process (again in
// a fork child). Cheap after the first call. Called by the allocation hooks after a success.
void start_triggers_slow();
inline void start_triggers() {
    if (!g_triggers_started.load(std::memory_order_acquire)) start_triggers_slow();
}

// Work handed to the reporter: a snapshot captured in a hook (raw addresses), to be symbolized,
// written to `path`, and `note` printed with the path (an OOM snapshot).
struct PendingWork {
    snapshot::Snapshot snapshot;
    std::string path;
    std::string note;
    PendingWork *next = nullptr;
};
// Takes ownership (allocated with new); wakes the reporter.
void enqueue_work(PendingWork *work);

// Process exit, before the exit snapshot: writes what is still queued or pending (an OOM snapshot
// captured just before exit, a signal that just arrived) in the calling thread, and stops the
// reporter from starting new work.
void triggers_before_exit_dump();
// After the exit snapshot: the Prometheus textfile gets its last reading, with process_up 0 and
// the end time (lib/triggers/prometheus.h).
void triggers_after_exit_dump();

// pthread_atfork child handler (registered by the library's constructor).
void triggers_after_fork_in_child();

} // namespace vramtrace::triggers
