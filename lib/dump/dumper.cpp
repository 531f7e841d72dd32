#include "dump/dumper.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
#include <string>
#include <unistd.h>

#define VRAMTRACE_BUILDING_LIBRARY
#include "vramtrace/vramtrace.h"

#include "core/config.h"
#include "core/log.h"
#include "core/thread_state.h"
#include "core/tracker.h"
#include "dump/atomic_file.h"
#include "dump/output_path.h"
#include "dump/snapshot_builder.h"
#include "snapshot/snapshot_writer.h"
#include "report/summary_format.h"

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

std::atomic<bool> g_exit_dump_done{false};

bool fill_json(int fd, void *ctx, std::string *error) {
    return report::write_snapshot_json(*static_cast<const report::Snapshot *>(ctx), fd, error);
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
int write_locked(const report::Snapshot &snapshot, const std::string &target, bool print_summary) {
    std::string error;
    bool written = write_file_atomically(target, &fill_json, const_cast<report::Snapshot *>(&snapshot), &error);
    if (print_summary) {
        std::string text = report::format_summary(snapshot);
        log_raw(text.data(), text.size());
    }
    if (!written) {
        log_warning("snapshot not written: %s", error.c_str());
        return VRAMTRACE_ERROR_IO;
    }
    if (print_summary) log_line("snapshot written to %s", target.c_str());
    return VRAMTRACE_OK;
}

std::string expand_for(const report::ProcessInfo &process) {
    return expand_output_path(config().output, process.pid, process.host.c_str(), rank_from_environment().c_str());
}

} // namespace

int dump_snapshot(const char *path, const char *reason, bool print_summary) {
    Tracker *t = tracker();
    if (t == nullptr) return VRAMTRACE_ERROR_DISABLED;
    ReentrancyGuard guard; // anything CUDA-related below is the tracker's own work, never recorded
    DumpLock lock;
    if (!lock.acquired) return VRAMTRACE_ERROR_IO;
    report::Snapshot snapshot = build_snapshot(*t, reason);
    std::string target = path ? std::string(path) : expand_for(snapshot.process);
    return write_locked(snapshot, target, print_summary);
}

int write_captured_snapshot(report::Snapshot &snapshot, const std::string &path) {
    ReentrancyGuard guard;
    DumpLock lock;
    if (!lock.acquired) return VRAMTRACE_ERROR_IO;
    symbolize_snapshot(snapshot);
    return write_locked(snapshot, path, false);
}

bool symbolize_captured_snapshot(report::Snapshot &snapshot) {
    ReentrancyGuard guard;
    DumpLock lock;
    if (!lock.acquired) return false;
    symbolize_snapshot(snapshot);
    return true;
}

std::string exit_output_path() {
    char host[256];
    if (gethostname(host, sizeof host) != 0) host[0] = 0;
    host[sizeof host - 1] = 0;
    return expand_output_path(config().output, static_cast<long>(getpid()), host,
                              rank_from_environment().c_str());
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
    g_exit_dump_done.store(false, std::memory_order_relaxed);
}

void dump_at_exit() {
    if (!cuda_seen() || g_exit_dump_done.exchange(true)) return;
    dump_snapshot(nullptr, "exit", config().summary);
}

} // namespace vramtrace
