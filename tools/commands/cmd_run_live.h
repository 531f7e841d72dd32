// `vramtrace run --live` (docs/live.md): the program on a pseudo-terminal of its own, its output
// copied to a log file, the live view in this terminal until the program ends; then the log is
// printed here. `q` leaves the view early: the log so far is printed and the program's further
// output follows it here.
#pragma once

#include <csignal>
#include <string>

namespace vramtrace::cli {

// Spawns `program` (argv, envp as for posix_spawnp) and runs the view. Returns 0 with
// *wait_status set, or a posix_spawnp error number (the program did not start), or -1 when the
// pseudo-terminal could not be made (said on stderr).
// log_pattern: the log file's path, "%p" replaced by the program's pid. The log is always a new
// file (mode 0600): when that name is taken, by anything, the next free of NAME.1.EXT,
// NAME.2.EXT, ... is made instead and named on stderr; when none can be made, that is said and the
// program runs without a log. *child gets the program's pid as soon as it runs (the caller's
// signal handlers pass signals on to it).
int run_live(const char *program, char **argv, char **envp, const std::string &log_pattern, int *wait_status,
             volatile sig_atomic_t *child);

} // namespace vramtrace::cli
