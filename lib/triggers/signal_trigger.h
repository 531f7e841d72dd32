// VRAMTRACE_SIGNAL (default SIGUSR2): a signal that asks for a snapshot of the running process.
// See docs/triggers.md for the choice of default and for what happens to the program's own use of
// the signal. In short:
// - installed with sigaction when the reporter starts (the first intercepted allocation), with
//   SA_RESTART, keeping the previous disposition;
// - a previous handler is called after ours wakes the reporter (chained, with its own flags'
//   meaning: SA_SIGINFO handlers get siginfo and context);
// - previous SIG_DFL: the signal now means "write a snapshot" and no longer ends the process;
// - previous SIG_IGN: nothing is installed (the program chose to ignore it; an exec'd child keeps
//   inheriting the ignore); one line says so when VRAMTRACE_SIGNAL was set explicitly;
// - a handler the program installs later replaces ours: the signal is then the program's alone;
//   the exit report says so once.
#pragma once

namespace vramtrace::triggers {

// Installs the handler once per process image (a fork child keeps the parent's). Not
// async-signal-safe; called by the reporter's start.
void install_dump_signal();

// At exit: says once on stderr when the program replaced our handler.
void check_dump_signal_at_exit();

} // namespace vramtrace::triggers
