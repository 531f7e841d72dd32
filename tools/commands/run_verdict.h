// The last line of `vramtrace run`: what the traced processes wrote, or why nothing was written.
// Read from the notes the library leaves in run's private directory (lib/dump/run_notes.h).
#pragma once

#include <string>
#include <sys/types.h>

namespace vramtrace::cli {

// A private directory for the notes (mkdtemp under $TMPDIR or /tmp, mode 0700); "" when none could
// be made (run then goes on without a verdict's details).
std::string make_notes_dir();
// Removes the directory and the notes in it.
void remove_notes_dir(const std::string &dir);

// Whether `pid` said it received a terminating signal (signal.PID), and forgets that note so a
// later signal is judged afresh.
bool take_signal_note(const std::string &dir, pid_t pid);

// The verdict, without the "vramtrace: " prefix, for the program `program` (its argv[0]) of pid
// `pid` that ended with wait status `status`:
//   wrote PATH (peak 6.00 MiB on cuda:0; 2 processes traced)
//   no CUDA allocation was seen in NAME and its 3 child processes: nothing to report (HINT)
//   NAME was killed by SIGKILL before it could write; last periodic snapshot: PATH
std::string run_verdict(const std::string &dir, pid_t pid, const char *program, int status);

} // namespace vramtrace::cli
