// Terminating signals write the exit report: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXCPU, SIGXFSZ,
// SIGALRM and SIGPIPE, when they would end the process by their default action (docs/triggers.md,
// "How a run ends").
//
// - Installed at the process's first CUDA allocation (with the reporter thread), over each of these
//   signals whose disposition is SIG_DFL then; a signal the program handles or ignores is left
//   alone. Off with VRAMTRACE_SIGNAL_REPORT=0.
// - The program never sees our handler: sigaction() and signal() are intercepted
//   (lib/interception/signal_hooks.cpp) and answer with the SIG_DFL action the program set or
//   inherited; a handler or SIG_IGN the program installs replaces ours for real; SIG_DFL set by the
//   program later (Python's KeyboardInterrupt exit restores it, then re-sends SIGINT to itself)
//   puts ours back, so that signal writes the report too.
// - The handler writes nothing itself: it wakes the reporter thread, which writes the exit snapshot
//   and summary (process.signal and its sender), and waits for that at most
//   VRAMTRACE_SIGNAL_REPORT_TIMEOUT seconds (5). Then SIG_DFL is put back and the signal sent again
//   to the same thread: the process ends by that signal, the status its parent sees is the one it
//   would have seen, and a core is dumped where the default dumps one.
// - A second terminating signal while the report is written (Ctrl-C twice) ends the process at once
//   (the handler runs with SA_NODEFER so the second one reaches it on the same thread).
#pragma once

#include <csignal>

namespace vramtrace::triggers {

// Once per process, at the first allocation (start_triggers_slow), after the reporter has started.
void install_termination_handlers();

// The program's sigaction() and signal(), with our handlers hidden (rules above). Same results,
// out-parameters and errno as the libc functions.
int program_sigaction(int signo, const struct sigaction *act, struct sigaction *old);
sighandler_t program_signal(int signo, sighandler_t handler);

// The terminating signal whose report the reporter is asked to write (signo 0: none), with its
// sender as siginfo gave it (pid 0: the kernel; uid -1: not known).
struct ExitSignalRequest {
    int signo = 0;
    long long sender_pid = 0;
    long long sender_uid = -1;
};
ExitSignalRequest termination_request();

// libc's own sigaction, bypassing the interception, for the library's internal use.
int real_sigaction(int signo, const struct sigaction *act, struct sigaction *old);

} // namespace vramtrace::triggers
