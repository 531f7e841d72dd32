// Writing reports from the running process: on request (vramtrace_dump) and at exit. Dumps are
// serialized with a mutex, which is never held while a CUDA function runs (a dump makes no CUDA
// call at all: the driver version was cached earlier).
#pragma once

#include <cstdint>
#include <string>

#include "snapshot/snapshot_model.h"

namespace vramtrace {

// Writes a snapshot to path (nullptr: the configured VRAMTRACE_OUTPUT). Returns a VRAMTRACE_* code.
int dump_snapshot(const char *path, const char *reason, bool print_summary);

// Symbolizes a snapshot captured earlier (capture_snapshot, e.g. inside a failing allocation) and
// writes it to path, under the same mutex as every other dump. Returns a VRAMTRACE_* code; a write
// failure is said once per call on stderr.
int write_captured_snapshot(snapshot::Snapshot &snapshot, const std::string &path);

// Symbolizes a captured snapshot under the dump mutex (the symbolizer is not shared between
// threads), for a text report made from it. False when this thread is already dumping.
bool symbolize_captured_snapshot(snapshot::Snapshot &snapshot);

// The exit report: nothing when the process never touched CUDA. Written at most once per process;
// allocations and frees that arrive later (other threads, late exit handlers) are still tracked
// but not reported. _exit() and SIGKILL write nothing; a terminating signal's report is
// dump_at_exit_on_signal (lib/triggers/termination_signals.h).
void dump_at_exit();

// What ended the process, for an exit report written because of a terminating signal.
struct ExitSignal {
    const char *name = nullptr; // "SIGTERM"
    int64_t sender_pid = 0;     // siginfo si_pid; 0: sent by the kernel or not known
    int64_t sender_uid = -1;    // siginfo si_uid; -1: not known
};
// The exit report with process.signal and its sender; the same once-per-process rule as dump_at_exit.
void dump_at_exit_on_signal(const ExitSignal &ended_by);

// Where the exit report stands, for a signal handler waiting for it (async-signal-safe reads).
enum class ExitReport : uint32_t { not_started = 0, writing = 1, finished = 2 };
ExitReport exit_report_state();
uint32_t exit_report_writer_tid(); // the thread writing it; 0 when none
// Waits until the exit report is finished or `timeout_ns` has passed (futex; async-signal-safe).
// True when it finished.
bool wait_for_exit_report(uint64_t timeout_ns);

// fork() handlers (registered by the library constructor with pthread_atfork): a fork waits until a dump in
// progress in another thread has finished, so the child never inherits a dump's locks taken; the
// child starts with no dump done and writes its own exit report.
void dumper_before_fork();
void dumper_after_fork_in_parent();
void dumper_after_fork_in_child();

} // namespace vramtrace
