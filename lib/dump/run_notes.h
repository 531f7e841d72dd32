// Notes for `vramtrace run`'s verdict line (tools/commands/run_verdict.cpp). When the program runs
// under `vramtrace run`, VRAMTRACE_RUN_NOTES names a private directory (mode 0700, the user's own)
// that run made; each traced process leaves in it, as small text files:
//   loaded.PID   at library start: the process's command name ("comm")
//   cuda.PID     at its first CUDA allocation: "periodic PATH" (with VRAMTRACE_PERIOD) and
//                "crash PATH" (crash snapshots on), where those snapshots would go
//   signal.PID   when a terminating signal reached it with the default action (written from the
//                signal handler): run then does not send the same signal again
//   report.PID   after its exit report was written: "written PATH", "peak BYTES", "on N"
//                (the device with the highest peak; -1 host), "signal NAME" when a signal ended it
// Every note is best effort: a directory that is not there, not a directory, not ours or not
// private gets nothing, silently (run then says less). Without VRAMTRACE_RUN_NOTES, nothing.
#pragma once

#include <cstdint>
#include <string>

#include "snapshot/snapshot_model.h"

namespace vramtrace {

void note_library_loaded();
// `periodic`: VRAMTRACE_PERIOD is on (the note then names the periodic snapshot).
void note_first_allocation(bool periodic);
void note_exit_report(const std::string &path, const snapshot::Snapshot &snapshot);
// Async-signal-safe: open, write and close of a name prepared by note_library_loaded.
void note_signal_received(int signo);

} // namespace vramtrace
