#include "reporting/dumper.h"

#include <atomic>
#include <mutex>
#include <string>
#include <unistd.h>

#define VRAMTRACE_BUILDING_LIBRARY
#include "vramtrace/vramtrace.h"

#include "core/config.h"
#include "core/log.h"
#include "core/thread_state.h"
#include "core/tracker.h"
#include "reporting/atomic_file.h"
#include "reporting/output_path.h"
#include "reporting/snapshot_builder.h"
#include "reporting/snapshot_writer.h"
#include "reporting/summary_format.h"

namespace vramtrace {
namespace {

// Leaked on purpose: must still work while static destructors run.
std::mutex &dump_mutex() {
    static std::mutex *m = new std::mutex;
    return *m;
}

std::atomic<bool> g_exit_dump_done{false};

bool fill_json(int fd, void *ctx, std::string *error) {
    return report::write_snapshot_json(*static_cast<const report::Snapshot *>(ctx), fd, error);
}

} // namespace

int dump_snapshot(const char *path, const char *reason, bool print_summary) {
    Tracker *t = tracker();
    if (t == nullptr) return VRAMTRACE_ERROR_DISABLED;
    ReentrancyGuard guard; // anything CUDA-related below is the tracker's own work, never recorded
    std::lock_guard<std::mutex> lock(dump_mutex());
    report::Snapshot snapshot = build_snapshot(*t, reason);
    std::string target = path ? std::string(path)
                              : expand_output_path(config().output, snapshot.process.pid,
                                                   snapshot.process.host.c_str());
    std::string error;
    bool written = write_file_atomically(target, &fill_json, &snapshot, &error);
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

void dump_at_exit() {
    if (!cuda_seen() || g_exit_dump_done.exchange(true)) return;
    dump_snapshot(nullptr, "exit", config().summary);
}

} // namespace vramtrace
