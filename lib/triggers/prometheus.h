// VRAMTRACE_PROMETHEUS_TEXTFILE: the reporter writes the process's memory in the Prometheus text
// format (lib/triggers/prometheus_text.h; names and labels: docs/monitoring.md) every
// VRAMTRACE_PROMETHEUS_PERIOD seconds, atomically (temporary file + rename) with mode 0644
// (node_exporter usually runs as another user). The path takes the placeholders of VRAMTRACE_OUTPUT.
//
// Lifecycle: while the process runs, vramtrace_process_up is 1. At normal exit, and on a fatal
// signal (from the crash handler, async-signal-safe), the last reading is written again with
// vramtrace_process_up 0 and vramtrace_process_end_time_seconds, so that an alert on it (or on the
// OOM counter) still sees the process's last figures. A process killed without running code
// (SIGKILL, the OOM killer) is marked so by the next traced process's sweep of the directory
// (lib/triggers/prometheus_sweep.h), which also removes files of processes that ended
// VRAMTRACE_PROMETHEUS_KEEP seconds ago.
#pragma once

namespace vramtrace::triggers {

void write_prometheus_textfile();  // reporter thread, under the trigger work lock: a reading
// Reporter thread, after write_prometheus_textfile and outside any lock the exit waits on: the
// sweep of the directory the reading went to, for at most kSweepMaxNs, ended early when
// should_stop() turns true (the exit report has begun).
void sweep_prometheus_textfiles(bool (*should_stop)());
// The exit, once should_stop() is true: waits for the file the sweep may be rewriting (at most one).
void wait_for_prometheus_sweep_file();
// A fork child: the lock rebuilt (the parent's reporter may have held it), no sweep pending.
void reset_prometheus_sweep_after_fork();
void finish_prometheus_textfile(); // after the exit report: the last reading, process_up 0
// The fatal-signal path: the last reading with process_up 0, written with system calls only from
// buffers the reporter prepared (no allocation, no lock). The crash handler calls it once; should
// the program's own handler recover, the next reading says process_up 1 again.
void write_prometheus_textfile_from_signal();

} // namespace vramtrace::triggers
