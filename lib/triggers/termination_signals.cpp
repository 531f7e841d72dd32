// The terminating-signal handlers and the program's view of their dispositions (rules in
// termination_signals.h). The handler uses only what POSIX lists as async-signal-safe (sigaction,
// pthread_sigmask, tgkill, clock_gettime, futex) plus atomics.
#include "triggers/termination_signals.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/tracker.h"
#include "dump/dumper.h"
#include "dump/run_notes.h"
#include "triggers/reporter.h"
#include "triggers/trigger_config.h"

extern "C" int __sigaction(int, const struct sigaction *, struct sigaction *);

namespace vramtrace::triggers {
namespace {

constexpr int kTerminating[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXCPU, SIGXFSZ, SIGALRM, SIGPIPE};
// glibc sets SA_RESTORER on every action it installs, and the kernel reports it back.
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

using SigactionFn = int (*)(int, const struct sigaction *, struct sigaction *);
using SignalFn = sighandler_t (*)(int, sighandler_t);
std::atomic<SigactionFn> g_real_sigaction{nullptr};
std::atomic<SignalFn> g_real_signal{nullptr};

// Per signal: whether our handler is installed, and the SIG_DFL action the program believes is.
struct Slot {
    std::atomic<bool> ours{false};
    struct sigaction shown {};
};
Slot g_slots[NSIG];
std::atomic<bool> g_enabled{false}; // installed: a SIG_DFL the program sets later becomes ours

// The signal whose report was asked for (0: none yet) and its sender, for the reporter.
std::atomic<int> g_requested{0};
std::atomic<int64_t> g_sender_pid{0};
std::atomic<int64_t> g_sender_uid{-1};
// When the first one arrived (CLOCK_MONOTONIC ns) and who sent it (0: the kernel, a terminal).
std::atomic<uint64_t> g_first_at_ns{0};
std::atomic<int64_t> g_first_sender{-1};

// timeout(1) and other supervisors signal the program, then its process group: the same signal from
// the same process twice, microseconds apart. The second is the same request, not a user's second
// Ctrl-C asking to end at once, which comes from a terminal (sender 0) or much later.
constexpr uint64_t kSameRequestNs = 100'000'000;

uint64_t monotonic_now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts); // async-signal-safe
    return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

int64_t sender_of(const siginfo_t *info) {
    return info != nullptr && info->si_code <= 0 ? int64_t(info->si_pid) : 0;
}

bool managed(int signo) {
    for (int s : kTerminating)
        if (s == signo) return true;
    return false;
}

bool is_default(const struct sigaction &a) { return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL; }

void resolve_real() {
    if (g_real_sigaction.load(std::memory_order_acquire) != nullptr) return;
    auto sa = reinterpret_cast<SigactionFn>(dlvsym(RTLD_NEXT, "sigaction", "GLIBC_2.2.5"));
    auto sg = reinterpret_cast<SignalFn>(dlvsym(RTLD_NEXT, "signal", "GLIBC_2.2.5"));
    g_real_signal.store(sg, std::memory_order_release);
    g_real_sigaction.store(sa != nullptr ? sa : &__sigaction, std::memory_order_release);
}

// The state of the slots changes with every signal blocked in this thread (a handler that calls
// sigaction cannot interrupt it) and under a spin lock (threads that set dispositions at once).
std::atomic<bool> g_lock{false};
class SlotLock {
public:
    SlotLock() {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved_);
        while (g_lock.exchange(true, std::memory_order_acquire)) {
        }
    }
    ~SlotLock() {
        g_lock.store(false, std::memory_order_release);
        pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
    }
    SlotLock(const SlotLock &) = delete;
    SlotLock &operator=(const SlotLock &) = delete;

private:
    sigset_t saved_;
};

void on_terminating_signal(int signo, siginfo_t *info, void *context);

bool is_ours(const struct sigaction &a) {
    return (a.sa_flags & SA_SIGINFO) && a.sa_sigaction == &on_terminating_signal;
}

struct sigaction our_action() {
    struct sigaction a {};
    a.sa_sigaction = &on_terminating_signal;
    a.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&a.sa_mask);
    return a;
}

// What the kernel would report for a SIG_DFL action the program sets: glibc adds SA_RESTORER, the
// kernel drops SIGKILL and SIGSTOP from the mask.
struct sigaction as_kernel_keeps(const struct sigaction &set) {
    struct sigaction a = set;
    a.sa_flags |= SA_RESTORER;
    sigdelset(&a.sa_mask, SIGKILL);
    sigdelset(&a.sa_mask, SIGSTOP);
    return a;
}

// Our handler is no longer in place for `signo` (the program replaced it, possibly without us).
bool still_ours(int signo) {
    Slot &s = g_slots[signo];
    if (!s.ours.load(std::memory_order_acquire)) return false;
    struct sigaction now {};
    if (real_sigaction(signo, nullptr, &now) == 0 && is_ours(now)) return true;
    s.ours.store(false, std::memory_order_release);
    return false;
}

// SIG_DFL back in place and the signal sent again to this thread: it is not blocked here (the
// handler runs with SA_NODEFER), so it is delivered, with its default action, before tgkill returns.
void end_by(int signo) {
    {
        SlotLock lock;
        g_slots[signo].ours.store(false, std::memory_order_release);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        real_sigaction(signo, &dfl, nullptr);
    }
    syscall(SYS_tgkill, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), signo);
}

void on_terminating_signal(int signo, siginfo_t *info, void *) {
    const int saved = errno;
    int none = 0;
    const bool first = g_requested.compare_exchange_strong(none, signo, std::memory_order_acq_rel);
    if (first) {
        g_first_sender.store(sender_of(info), std::memory_order_relaxed);
        g_first_at_ns.store(monotonic_now_ns(), std::memory_order_release);
    } else if (none == signo && sender_of(info) != 0 && sender_of(info) == g_first_sender.load(std::memory_order_relaxed) &&
               monotonic_now_ns() - g_first_at_ns.load(std::memory_order_acquire) < kSameRequestNs) {
        errno = saved;
        return; // the first one's report goes on, then it ends the process
    }
    // The report is written by the reporter thread; none when this process has none (a fork child
    // before its first allocation) or when this thread is the one writing the exit report.
    const bool can_wait = first && cuda_seen() && reporter_running() &&
                          exit_report_writer_tid() != static_cast<uint32_t>(syscall(SYS_gettid));
    if (first) note_signal_received(signo);
    if (can_wait) {
        if (info != nullptr && info->si_code <= 0 && info->si_pid != 0) { // sent by a process
            g_sender_pid.store(info->si_pid, std::memory_order_relaxed);
            g_sender_uid.store(info->si_uid, std::memory_order_relaxed);
        }
        wake_reporter(kWakeTermination);
        wait_for_exit_report(trigger_config().signal_report_timeout_ns);
    }
    end_by(signo);
    errno = saved;
}

} // namespace

int real_sigaction(int signo, const struct sigaction *act, struct sigaction *old) {
    SigactionFn fn = g_real_sigaction.load(std::memory_order_acquire);
    if (fn == nullptr) {
        resolve_real();
        fn = g_real_sigaction.load(std::memory_order_acquire);
    }
    return fn(signo, act, old);
}

void install_termination_handlers() {
    resolve_real();
    if (!trigger_config().signal_report || g_enabled.load(std::memory_order_acquire)) return;
    int installed = 0;
    for (int signo : kTerminating) {
        SlotLock lock;
        struct sigaction current {};
        if (real_sigaction(signo, nullptr, &current) != 0 || !is_default(current)) continue;
        struct sigaction ours = our_action();
        if (real_sigaction(signo, &ours, nullptr) != 0) continue;
        g_slots[signo].shown = current;
        g_slots[signo].ours.store(true, std::memory_order_release);
        ++installed;
    }
    g_enabled.store(true, std::memory_order_release);
    log_debug("terminating signals: %d of %zu handlers installed (the others are handled or ignored by the "
              "program)", installed, sizeof kTerminating / sizeof kTerminating[0]);
}

int program_sigaction(int signo, const struct sigaction *act, struct sigaction *old) {
    if (!managed(signo) || !g_enabled.load(std::memory_order_acquire)) return real_sigaction(signo, act, old);
    SlotLock lock;
    Slot &s = g_slots[signo];
    if (still_ours(signo)) {
        const struct sigaction shown = s.shown;
        if (act != nullptr) {
            if (is_default(*act)) {
                s.shown = as_kernel_keeps(*act);
            } else {
                if (int rc = real_sigaction(signo, act, nullptr); rc != 0) return rc;
                s.ours.store(false, std::memory_order_release);
            }
        }
        if (old != nullptr) *old = shown;
        return 0;
    }
    if (act != nullptr && is_default(*act)) {
        struct sigaction ours = our_action();
        int rc = real_sigaction(signo, &ours, old);
        if (rc != 0) return rc;
        s.shown = as_kernel_keeps(*act);
        s.ours.store(true, std::memory_order_release);
        return 0;
    }
    return real_sigaction(signo, act, old);
}

sighandler_t program_signal(int signo, sighandler_t handler) {
    if (!managed(signo) || !g_enabled.load(std::memory_order_acquire)) {
        SignalFn fn = g_real_signal.load(std::memory_order_acquire);
        if (fn == nullptr) {
            resolve_real();
            fn = g_real_signal.load(std::memory_order_acquire);
        }
        if (fn != nullptr) return fn(signo, handler);
    }
    // glibc's signal(): BSD semantics, the signal itself blocked in its handler, SA_RESTART.
    struct sigaction act {}, old {};
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, signo);
    act.sa_flags = SA_RESTART;
    if (program_sigaction(signo, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

ExitSignalRequest termination_request() {
    ExitSignalRequest r;
    r.signo = g_requested.load(std::memory_order_acquire);
    r.sender_pid = g_sender_pid.load(std::memory_order_relaxed);
    r.sender_uid = g_sender_uid.load(std::memory_order_relaxed);
    return r;
}

} // namespace vramtrace::triggers
