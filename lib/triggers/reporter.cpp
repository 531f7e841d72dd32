#include "triggers/reporter.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/futex.h>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/hot_flags.h"
#include "core/log.h"
#include "core/thread_state.h"
#include "core/tsc_clock.h"
#include "core/tracker.h"
#include "device/device_info.h"
#include "dump/dumper.h"
#include "dump/output_path.h"
#include "dump/oom_log.h"
#include "dump/run_notes.h"
#include "serve/live_server.h"
#include "triggers/oom_trigger.h"
#include "triggers/prometheus.h"
#include "triggers/signal_trigger.h"
#include "triggers/termination_signals.h"
#include "triggers/trigger_parse.h"
#include "triggers/threshold.h"
#include "triggers/trigger_config.h"

namespace vramtrace::triggers {

std::atomic<bool> g_triggers_started{false};

namespace {

// The futex word: pending WakeBits. 32 bits, as the futex system call wants.
std::atomic<uint32_t> g_pending{0};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

std::atomic<bool> g_start_claimed{false}; // one thread starts the reporter
std::atomic<bool> g_exiting{false};       // the exit report has begun: no new trigger work
std::atomic<bool> g_reporter_alive{false}; // the reporter thread was started in this process
// Each reporter gets a generation: a fork child's reporter is a new one, and the parent's thread
// does not exist there.
std::atomic<uint64_t> g_generation{0};

// Queue of captured snapshots, oldest first. std::mutex: constant-initialized, trivially
// destructible (libstdc++), rebuilt in a fork child.
std::mutex g_queue_mutex;
PendingWork *g_queue_head = nullptr;
PendingWork *g_queue_tail = nullptr;

uint32_t g_signal_seq = 0; // touched only by whoever holds g_work_mutex
// Serializes the trigger work between the reporter and the exiting thread (which drains what is
// left), so that every queued snapshot and pending signal is written exactly once.
std::mutex g_work_mutex;

bool exit_has_begun() { return g_exiting.load(std::memory_order_acquire); }

constexpr uint64_t kLivenessCheckNs = 500'000'000ull;

void futex_wait_pending(uint64_t timeout_ns) {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000ull);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000ull);
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&g_pending), FUTEX_WAIT_PRIVATE, 0u, &ts, nullptr, 0);
}

PendingWork *pop_queue() {
    std::lock_guard<std::mutex> lock(g_queue_mutex);
    PendingWork *d = g_queue_head;
    if (d != nullptr) {
        g_queue_head = d->next;
        if (g_queue_head == nullptr) g_queue_tail = nullptr;
    }
    return d;
}

void do_work(PendingWork *w) {
    if (write_captured_snapshot(w->snapshot, w->path) == 0 && !w->note.empty()) {
        log_line("%s; snapshot written to %s", w->note.c_str(), w->path.c_str());
    }
    delete w;
}

void write_signal_snapshot() {
    std::string path = trigger_output_path("signal", static_cast<int>(++g_signal_seq));
    if (dump_snapshot(path.c_str(), "signal", false) == 0) log_line("snapshot on signal written to %s", path.c_str());
}

// The work the pending bits ask for; the caller holds g_work_mutex.
void do_pending_work(uint32_t bits) {
    if (bits & kWakeGraphMemory) sample_graph_memory();
    if (bits & kWakeSignal) write_signal_snapshot();
    if (bits & kWakeQueue)
        while (PendingWork *w = pop_queue()) do_work(w);
    if (bits & kWakeThreshold) print_threshold_warnings();
}

// The exit report for a terminating signal, written here while the signalled thread waits.
void write_termination_report() {
    ExitSignalRequest r = termination_request();
    if (r.signo == 0) return;
    char name[32];
    signal_name(r.signo, name, sizeof name);
    ExitSignal ended_by;
    ended_by.name = name;
    ended_by.sender_pid = r.sender_pid;
    ended_by.sender_uid = r.sender_uid;
    triggers_before_exit_dump();
    dump_at_exit_on_signal(ended_by);
    triggers_after_exit_dump();
}

// Whether this thread is the only one left in the process (/proc/self/stat, field 20).
bool last_thread_left() {
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[1024];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); // the command name may hold spaces and parentheses
    if (p == nullptr) return false;
    int field = 2;
    for (; *p && field < 20; ++p)
        if (*p == ' ') ++field;
    return field == 20 && strtol(p, nullptr, 10) == 1;
}

void *reporter_main(void *arg) {
    const uint64_t generation = reinterpret_cast<uintptr_t>(arg);
    ReentrancyGuard guard; // whatever CUDA work happens here is ours, never recorded
    serve::start_live_server();
    const TriggerConfig &cfg = trigger_config();
    uint64_t now = monotonic_ns();
    uint64_t next_periodic = cfg.period_ns ? now + cfg.period_ns : UINT64_MAX;
    uint64_t next_prometheus = cfg.prometheus_textfile ? now : UINT64_MAX; // first one at once
    uint64_t next_liveness = now + kLivenessCheckNs;
    tsc::calibrate();
    uint64_t next_calibration = now + tsc::kFirstPeriodNs;
    for (;;) {
        if (g_generation.load(std::memory_order_acquire) != generation) return nullptr;
        uint32_t bits = g_pending.exchange(0, std::memory_order_acq_rel);
        if (bits & kWakeTermination) write_termination_report();
        if (!g_exiting.load(std::memory_order_acquire)) {
            std::lock_guard<std::mutex> work(g_work_mutex);
            if (bits != 0) do_pending_work(bits);
            now = monotonic_ns();
            if (now >= next_periodic) {
                std::string path = trigger_output_path("periodic", -1);
                dump_snapshot(path.c_str(), "periodic", false);
                next_periodic = monotonic_ns() + cfg.period_ns;
            }
            if (now >= next_prometheus) {
                write_prometheus_textfile();
                next_prometheus = monotonic_ns() + cfg.prometheus_period_ns;
            }
        }
        // Outside g_work_mutex: the exit waits on that lock, never on another user's files.
        sweep_prometheus_textfiles(&exit_has_begun);
        now = monotonic_ns();
        if (now >= next_liveness) {
            // The main thread called pthread_exit and every other thread has ended: returning makes
            // glibc end the process with status 0, as it would have done without us.
            if (last_thread_left()) {
                g_reporter_alive.store(false, std::memory_order_release);
                return nullptr;
            }
            next_liveness = now + kLivenessCheckNs;
        }
        if (now >= next_calibration) {
            tsc::calibrate();
            next_calibration = monotonic_ns() + tsc::kCalibrationPeriodNs;
        }
        uint64_t wake_at = next_liveness < next_calibration ? next_liveness : next_calibration;
        if (!g_exiting.load(std::memory_order_relaxed)) {
            if (next_periodic < wake_at) wake_at = next_periodic;
            if (next_prometheus < wake_at) wake_at = next_prometheus;
        }
        now = monotonic_ns();
        // With the live server on, the wait is its poll() (socket, viewers and the wake descriptor).
        if (wake_at > now && g_pending.load(std::memory_order_acquire) == 0 && !serve::serve_until(wake_at - now))
            futex_wait_pending(wake_at - now);
    }
}

bool start_reporter_thread() {
    // Every signal blocked in the new thread but the synchronous faults (a fault there must still
    // reach the crash handler and kill the process as usual).
    sigset_t all, old;
    sigfillset(&all);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&all, s);
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    const uint64_t generation = g_generation.fetch_add(1, std::memory_order_acq_rel) + 1;
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, &reporter_main, reinterpret_cast<void *>(static_cast<uintptr_t>(generation)));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        log_warning("cannot start the reporter thread (%s): OOM, signal, periodic and Prometheus "
                    "reports are written at exit only", strerror(rc));
        return false;
    }
    return true;
}

} // namespace

void wake_reporter(uint32_t bits) {
    int saved = errno;
    g_pending.fetch_or(bits, std::memory_order_acq_rel);
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&g_pending), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    serve::wake_live_server();
    errno = saved;
}

bool reporter_running() { return g_reporter_alive.load(std::memory_order_acquire); }

void start_triggers_slow() {
    if (g_exiting.load(std::memory_order_acquire)) return;
    if (g_start_claimed.exchange(true, std::memory_order_acq_rel)) return; // another thread does it
    int saved = errno;
    // A signal that arrived before the first allocation has nothing to report.
    g_pending.fetch_and(~static_cast<uint32_t>(kWakeSignal), std::memory_order_acq_rel);
    g_reporter_alive.store(start_reporter_thread(), std::memory_order_release);
    install_dump_signal();
    install_termination_handlers();
    note_first_allocation(trigger_config().period_ns != 0);
    g_triggers_started.store(true, std::memory_order_release);
    hot::set(hot::kTriggersStarted);
    errno = saved;
}

void enqueue_work(PendingWork *w) {
    {
        std::lock_guard<std::mutex> lock(g_queue_mutex);
        if (g_queue_tail != nullptr) g_queue_tail->next = w;
        else g_queue_head = w;
        g_queue_tail = w;
    }
    wake_reporter(kWakeQueue);
}

void triggers_before_exit_dump() {
    if (!g_triggers_started.load(std::memory_order_acquire) || g_exiting.exchange(true)) return;
    ReentrancyGuard guard;
    // Waits for the reporter's current work, then does what is left here: an OOM snapshot captured
    // just before exit, a threshold crossing just recorded, a signal that just arrived.
    std::lock_guard<std::mutex> work(g_work_mutex);
    wait_for_prometheus_sweep_file();
    uint32_t bits = g_pending.exchange(0, std::memory_order_acq_rel) | kWakeQueue | kWakeThreshold;
    do_pending_work(bits);
    check_dump_signal_at_exit();
}

void triggers_after_exit_dump() {
    if (g_triggers_started.load(std::memory_order_acquire)) finish_prometheus_textfile();
    serve::stop_live_server();
}

void triggers_after_fork_in_child() {
    // Only the forking thread exists here: the parent's reporter is gone, and the locks another
    // parent thread held are rebuilt. Queued parent snapshots are dropped (not the child's).
    new (&g_queue_mutex) std::mutex;
    new (&g_work_mutex) std::mutex;
    g_queue_head = g_queue_tail = nullptr;
    g_pending.store(0, std::memory_order_relaxed);
    g_signal_seq = 0;
    g_exiting.store(false, std::memory_order_relaxed);
    g_start_claimed.store(false, std::memory_order_relaxed);
    g_triggers_started.store(false, std::memory_order_relaxed);
    hot::clear(hot::kTriggersStarted);
    g_reporter_alive.store(false, std::memory_order_relaxed);
    g_generation.fetch_add(1, std::memory_order_relaxed);
    reset_oom_log();
    reset_prometheus_sweep_after_fork();
    reset_oom_rate_limit();
    reset_threshold();
    serve::live_server_after_fork_in_child();
}

} // namespace vramtrace::triggers
