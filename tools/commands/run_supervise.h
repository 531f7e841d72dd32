// `vramtrace run` waiting for its program, as `timeout` and `tini` do: the signals that end jobs,
// sent to run, reach the program, and run returns when the program has ended.
#pragma once

#include <csignal>
#include <string>
#include <sys/types.h>

namespace vramtrace::cli {

// The signals run passes on. The caller blocks them (and SIGCHLD) before starting the program,
// which starts with the caller's previous mask.
sigset_t supervised_signals();

// Waits for `pid` to end and fills its wait status; false (errno set) when waitpid fails.
// - SIGINT and SIGQUIT from the terminal (si_code SI_KERNEL) are not passed on: the terminal sent
//   them to the program too, as it is in the same foreground process group.
// - Any other of the supervised signals is passed on 100 ms later, unless the program said in the
//   meantime (notes_dir's signal.PID) that a terminating signal already reached it: a signal sent
//   to the whole process group (timeout(1), a job scheduler signalling every process) arrives
//   once, not twice, which the library would take for a second Ctrl-C.
bool supervise(pid_t pid, const std::string &notes_dir, int *status);

} // namespace vramtrace::cli
