#include "dump/dumper.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
#include <string>
#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#define VRAMTRACE_BUILDING_LIBRARY
#include "vramtrace/vramtrace.h"

#include "core/config.h"
#include "core/log.h"
#include "core/process_identity.h"
#include "core/thread_state.h"
#include "core/tracker.h"
#include "dump/atomic_file.h"
#include "dump/output_path.h"
#include "dump/run_notes.h"
#include "dump/snapshot_builder.h"
#include "snapshot/snapshot_writer.h"
#include "report/summary_format.h"
#include "report/text_safety.h"

namespace vramtrace {
namespace {

// In static storage and never destroyed: must still work while static destructors run. Rebuilt
// in a forked child, where a dump that another parent thread was writing at the moment of fork
// would otherwise leave it locked forever.
// (std::mutex has a constexpr constructor and, in libstdc++, a trivial destructor: constant
// initialization, nothing run at exit.)
std::mutex g_dump_mutex;
static_assert(std::is_trivially_destructible_v<std::mutex>);
// The thread that holds the mutex (0: none), so that a dump started from a signal handler on the
// thread that is already dumping (exit() from a handler, say) gives up instead of deadlocking.
std::atomic<uint32_t> g_dump_owner{0};

// ExitReport as a futex word: a handler waiting for the exit report sleeps on it.
std::atomic<uint32_t> g_exit_state{0};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
std::atomic<uint32_t> g_exit_writer{0};

bool fill_json(int fd, void *ctx, std::string *error) {
    return snapshot::write_snapshot_json(*static_cast<const snapshot::Snapshot *>(ctx), fd, error);
}

} // namespace

namespace {

// Holds the dump mutex for one dump; `acquired` is false when this thread already holds it (a
// dump requested from a signal handler that interrupted a dump), which must give up, not deadlock.
class DumpLock {
public:
    DumpLock() {
        const uint32_t self = current_tid();
        if (g_dump_owner.load(std::memory_order_acquire) == self) {
            log_warning("a snapshot was requested while this thread was already writing one (from a "
                        "signal handler?); not written");
            return;
        }
        g_dump_mutex.lock();
        g_dump_owner.store(self, std::memory_order_release);
        acquired = true;
    }
    ~DumpLock() {
        if (!acquired) return;
        g_dump_owner.store(0, std::memory_order_release);
        g_dump_mutex.unlock();
    }
    DumpLock(const DumpLock &) = delete;
    DumpLock &operator=(const DumpLock &) = delete;
    bool acquired = false;
};

// Writes a symbolized snapshot; the caller holds the dump lock.
int write_locked(const snapshot::Snapshot &snapshot, const std::string &target, bool print_summary) {
    std::string error;
    bool written = write_file_atomically(target, &fill_json, const_cast<snapshot::Snapshot *>(&snapshot), &error);
    if (print_summary) {
        // Escaped as `vramtrace summary` escapes its output (cli::write_stdout), so that no frame
        // or file name reaches the program's terminal with a control or bidi character in it.
        std::string text = report::escape_control_characters(report::format_summary(snapshot), /*keep_newlines=*/true);
        log_raw(text.data(), text.size());
    }
    if (!written) {
        log_warning("snapshot not written: %s", error.c_str());
        return VRAMTRACE_ERROR_IO;
    }
    if (print_summary) log_line("snapshot written to %s", target.c_str());
    return VRAMTRACE_OK;
}

std::string expand_for(const snapshot::ProcessInfo &process) {
    return expand_output_path(config().output, process.pid, process.host.c_str(), launcher_rank());
}

} // namespace

namespace {

int dump_with(const char *path, const char *reason, bool print_summary, bool exit_report,
              const ExitSignal *ended_by) {
    Tracker *t = tracker();
    if (t == nullptr) return VRAMTRACE_ERROR_DISABLED;
    ReentrancyGuard guard; // anything CUDA-related below is the tracker's own work, never recorded
    DumpLock lock;
    if (!lock.acquired) return VRAMTRACE_ERROR_IO;
    snapshot::Snapshot snapshot = build_snapshot(*t, reason);
    if (ended_by != nullptr && ended_by->name != nullptr) {
        snapshot.process.signal = ended_by->name;
        snapshot.process.signal_sender_pid = ended_by->sender_pid;
        snapshot.process.signal_sender_uid = ended_by->sender_uid;
    }
    std::string target = path ? std::string(path) : expand_for(snapshot.process);
    int rc = write_locked(snapshot, target, print_summary);
    if (rc == VRAMTRACE_OK && exit_report) note_exit_report(target, snapshot);
    return rc;
}

void futex_wake_all(std::atomic<uint32_t> *word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

void exit_report(const ExitSignal *ended_by) {
    uint32_t expected = uint32_t(ExitReport::not_started);
    if (!cuda_seen() || !g_exit_state.compare_exchange_strong(expected, uint32_t(ExitReport::writing))) return;
    g_exit_writer.store(current_tid(), std::memory_order_release);
    dump_with(nullptr, "exit", config().summary, true, ended_by);
    g_exit_writer.store(0, std::memory_order_release);
    g_exit_state.store(uint32_t(ExitReport::finished), std::memory_order_release);
    futex_wake_all(&g_exit_state);
}

} // namespace

int dump_snapshot(const char *path, const char *reason, bool print_summary) {
    return dump_with(path, reason, print_summary, false, nullptr);
}

int write_captured_snapshot(snapshot::Snapshot &snapshot, const std::string &path) {
    ReentrancyGuard guard;
    DumpLock lock;
    if (!lock.acquired) return VRAMTRACE_ERROR_IO;
    symbolize_snapshot(snapshot);
    return write_locked(snapshot, path, false);
}

bool symbolize_captured_snapshot(snapshot::Snapshot &snapshot) {
    ReentrancyGuard guard;
    DumpLock lock;
    if (!lock.acquired) return false;
    symbolize_snapshot(snapshot);
    return true;
}

std::string exit_output_path() {
    return expand_output_path(config().output, static_cast<long>(getpid()), host_name(), launcher_rank());
}

std::string trigger_output_path(const char *reason, int seq) {
    // An exit snapshot written in place (/dev/null, a FIFO) takes the trigger snapshots too: no
    // NAME.REASON.json beside a device node.
    std::string exit_path = exit_output_path();
    if (output_written_in_place(exit_path)) return exit_path;
    return trigger_path_for(exit_path, reason, seq);
}

// fork() waits for a dump in progress in another thread to finish: the dump holds locks we do not
// own (the symbolizer's, libdw's) that a child would otherwise inherit locked. A fork from the
// dumping thread itself (a signal handler) does not wait.
static bool g_locked_for_fork = false;

void dumper_before_fork() {
    if (g_dump_owner.load(std::memory_order_acquire) == current_tid()) return;
    g_dump_mutex.lock();
    g_locked_for_fork = true;
}

void dumper_after_fork_in_parent() {
    if (!g_locked_for_fork) return;
    g_locked_for_fork = false;
    g_dump_mutex.unlock();
}

void dumper_after_fork_in_child() {
    g_locked_for_fork = false;
    new (&g_dump_mutex) std::mutex;
    g_dump_owner.store(0, std::memory_order_relaxed);
    g_exit_state.store(uint32_t(ExitReport::not_started), std::memory_order_relaxed);
    g_exit_writer.store(0, std::memory_order_relaxed);
}

void dump_at_exit() { exit_report(nullptr); }

void dump_at_exit_on_signal(const ExitSignal &ended_by) { exit_report(&ended_by); }

ExitReport exit_report_state() { return ExitReport(g_exit_state.load(std::memory_order_acquire)); }

uint32_t exit_report_writer_tid() { return g_exit_writer.load(std::memory_order_acquire); }

bool wait_for_exit_report(uint64_t timeout_ns) {
    timespec now {};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const uint64_t deadline = uint64_t(now.tv_sec) * 1'000'000'000ull + uint64_t(now.tv_nsec) + timeout_ns;
    for (;;) {
        uint32_t state = g_exit_state.load(std::memory_order_acquire);
        if (state == uint32_t(ExitReport::finished)) return true;
        clock_gettime(CLOCK_MONOTONIC, &now);
        const uint64_t t = uint64_t(now.tv_sec) * 1'000'000'000ull + uint64_t(now.tv_nsec);
        if (t >= deadline) return false;
        // Short sleeps: the state may move from not_started to writing without a wake.
        uint64_t left = deadline - t < 50'000'000ull ? deadline - t : 50'000'000ull;
        timespec ts{time_t(left / 1'000'000'000ull), long(left % 1'000'000'000ull)};
        syscall(SYS_futex, reinterpret_cast<uint32_t *>(&g_exit_state), FUTEX_WAIT_PRIVATE, state, &ts, nullptr, 0);
    }
}

} // namespace vramtrace
