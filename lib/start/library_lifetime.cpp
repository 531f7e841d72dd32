// The library's constructor and destructor: start tracking as soon as we are loaded, and write the
// exit report as late as possible. Preloaded libraries are finalized after the program's own
// destructors and atexit handlers, so memory those free is not reported as leaked.
//
// The triggers (lib/triggers/) start later, at the first intercepted allocation: a process that
// never uses CUDA gets no reporter thread and no signal handler. At exit, what the triggers still
// have pending (an OOM snapshot captured just before exit) is written before the exit report.
#include <pthread.h>

#include "core/config.h"
#include "core/log.h"
#include "core/tracker.h"
#include "core/tsc_clock.h"
#include "cupti/backend.h"
#include "interception/self_test.h"
#include "dump/dumper.h"
#include "dump/run_notes.h"
#include "python/python_stack_memo.h"
#include "child_environment.h"
#include "tracking/recent_walks.h"
#include "tracking/stack_capture.h"
#include "tracking/startup_code.h"
#include "triggers/crash_handler.h"
#include "triggers/reporter.h"
#include "triggers/termination_signals.h"
#include "triggers/trigger_config.h"

namespace {

__attribute__((constructor(101))) void vramtrace_library_start() {
    // Loaded with the process (our dlsym is the process's): the objects loaded now stay for good,
    // and a replayed stack walk need not check their code (tracking/startup_code.h).
    if (vramtrace::cupti::preload_interposed()) vramtrace::startup_code::note_loaded_objects();
    vramtrace::initialize();
    // Before the program runs: the programs it starts inherit the environment as it is then.
    if (!vramtrace::config().follow) vramtrace::stop_following_children();
    vramtrace::triggers::load_trigger_config(); // VRAMTRACE_SIGNAL, _WARN_BYTES, _PERIOD, _PROMETHEUS_*, _OOM_*
    vramtrace::cupti::select_backend_at_start();
    // Loaded by the driver through CUDA_INJECTION64_PATH only: no preload layer is expected to work.
    if (!vramtrace::cupti::loaded_by_injection_only()) vramtrace::self_test_at_start();
    // Fatal signals (docs/crash-dumps.md): installed at start, so that a crash before the first
    // allocation's triggers still finds them; the handler writes only when CUDA was used.
    vramtrace::crash::install_crash_handlers();
    // libc's sigaction found now, outside any signal handler (the interception needs it from the
    // program's first sigaction call on).
    vramtrace::triggers::real_sigaction(SIGINT, nullptr, nullptr);
    vramtrace::note_library_loaded(); // for `vramtrace run`'s verdict (dump/run_notes.h)
    // Registered after the tracker's own handlers (initialize), so a child's tracker is rebuilt first:
    // a fork waits for a dump in progress; the child gets an unlocked dumper, then fresh triggers.
    pthread_atfork(&vramtrace::dumper_before_fork, &vramtrace::dumper_after_fork_in_parent,
                   &vramtrace::dumper_after_fork_in_child);
    pthread_atfork(nullptr, nullptr, &vramtrace::triggers::triggers_after_fork_in_child);
}

__attribute__((destructor(101))) void vramtrace_library_end() {
    vramtrace::triggers::triggers_before_exit_dump();
    vramtrace::dump_at_exit();
    vramtrace::triggers::triggers_after_exit_dump();
    // How often stack capture left the cached walk for libunwind's (about 10 us each instead of
    // 0.1): the first thing to look at when tracing costs more than docs/performance.md says.
    if (vramtrace::cuda_seen()) {
        vramtrace::StackCaptureStats st = vramtrace::stack_capture_stats();
        vramtrace::walks::ReplayStats rs = vramtrace::walks::replay_stats();
        vramtrace::log_debug("stack capture: %llu unwind rules derived, %llu captures fell back to libunwind's walk; "
                             "%llu walks stored, %llu captures replayed a stored walk (%llu with its stack id)",
                             static_cast<unsigned long long>(st.rules_derived),
                             static_cast<unsigned long long>(st.fallbacks),
                             static_cast<unsigned long long>(rs.stored),
                             static_cast<unsigned long long>(rs.replayed),
                             static_cast<unsigned long long>(rs.with_id));
        vramtrace::python::MemoStats ms = vramtrace::python::memo_stats();
        vramtrace::log_debug("python stacks: %llu remembered, %llu captures found theirs remembered",
                             static_cast<unsigned long long>(ms.stored), static_cast<unsigned long long>(ms.found));
        vramtrace::log_debug("clock: %s", vramtrace::tsc::describe());
    }
}

} // namespace
