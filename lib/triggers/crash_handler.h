// Crash snapshots: on SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL, a process that used CUDA writes
// one snapshot of its live allocations (reason "crash", frames not yet symbolized) to
// VRAMTRACE_OUTPUT with ".crash.json" in place of ".json" (lib/dump/output_path.h), then the
// signal takes the course it would have taken without vramtrace. docs/crash-dumps.md says what is
// written, the bounds, and how the handler chains.
//
// Disposition rules (per signal, decided at install):
// - installed with sigaction (SA_SIGINFO | SA_ONSTACK | SA_RESTART), the previous action kept;
// - previous SIG_IGN: nothing installed (an ignored fault still ends the process, by the kernel's
//   rule, but the program, and the programs it execs, keep seeing the ignore it inherited);
// - after the snapshot: previous SIG_DFL -> SIG_DFL is reinstalled; a fault the kernel raised is
//   raised again by returning (the instruction runs again), a signal sent by a process (kill,
//   raise, abort) is sent again to the same thread; the process then ends by that signal, with a
//   core dump where there would have been one. Previous handler -> called as the kernel would call
//   it (its SA_SIGINFO signature, its sa_mask and SA_NODEFER, SA_RESETHAND honoured);
// - a second fault inside the writer abandons the snapshot (siglongjmp back into the first
//   handler) and the first signal takes its course; other threads that crash while the snapshot is
//   written wait for it (at most 10 s), then take their own course; one snapshot per process.
// - a handler the program installs later replaces ours (Python's faulthandler, PyTorch, the JVM);
//   ours then runs only if that handler chains to the previous one (faulthandler does).
#pragma once

namespace vramtrace::crash {

// At library start, after the tracker is ready; does nothing with VRAMTRACE_CRASH_DUMP=0 or when
// tracking is off. Not async-signal-safe (it prepares, with malloc, everything the handler needs).
void install_crash_handlers();

} // namespace vramtrace::crash
