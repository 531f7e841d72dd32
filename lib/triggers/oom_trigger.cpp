#include "triggers/oom_trigger.h"

#include <mutex>
#include <new>
#include <string>

#include "core/clock.h"
#include "core/thread_state.h"
#include "device/driver_api.h"
#include "device/real_functions.h"
#include "dump/output_path.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"
#include "dump/snapshot_builder.h"
#include "device/driver_queries.h"
#include "dump/oom_log.h"
#include "triggers/reporter.h"
#include "triggers/trigger_config.h"

namespace vramtrace::triggers {
namespace {

std::mutex g_rate_mutex;        // constant-initialized, trivially destructible; rebuilt in a child
uint32_t g_snapshots_taken = 0; // guarded by g_rate_mutex
uint64_t g_last_snapshot_ns = 0;

// The sequence number of the OOM snapshot to take now, 0 when the rate limit says no.
uint32_t claim_snapshot(uint64_t now_ns) {
    const TriggerConfig &cfg = trigger_config();
    std::lock_guard<std::mutex> lock(g_rate_mutex);
    if (g_snapshots_taken >= cfg.oom_snapshots) return 0;
    if (g_snapshots_taken > 0 && now_ns - g_last_snapshot_ns < cfg.oom_interval_ns) return 0;
    g_last_snapshot_ns = now_ns;
    return ++g_snapshots_taken;
}

uint64_t tracked_bytes_on(const Tracker &t, int device) {
    uint64_t bytes = 0;
    t.counters.for_each_seen([&](const DeviceTotalsView &d) {
        if (d.device == device) bytes = d.current_bytes;
    });
    return bytes;
}

std::string describe(const OomRequest &request, const OomRecord &r) {
    std::string text = "out of memory: " + std::string(api_name(request.api)) + " of " +
                       report::format_bytes_exact(request.requested_bytes) + " on " +
                       report::device_label(request.device) + " failed";
    if (r.has_memory_info)
        text += " (driver: " + report::format_bytes_exact(r.free_bytes) + " free of " +
                report::format_bytes_exact(r.total_bytes) + ")";
    return text;
}

} // namespace

void on_allocation_oom(Tracker &t, const OomRequest &request) {
    start_triggers();
    OomRecord r;
    r.time_ns = monotonic_ns();
    r.requested_bytes = request.requested_bytes;
    r.stream = request.stream;
    r.stack = request.stack;
    r.thread_id = current_tid();
    r.result = request.result;
    r.device = static_cast<int16_t>(request.device);
    r.api = request.api;
    // cuMemGetInfo answers for the current context's device only.
    if (request.device >= 0 && request.device == current_device_ordinal())
        r.has_memory_info = current_device_memory_info(&r.free_bytes, &r.total_bytes);
    r.tracked_bytes = tracked_bytes_on(t, request.device);
    record_oom_event(t, request.device, request.requested_bytes, request.api, request.stack);
    record_oom(r);
    uint32_t seq = claim_snapshot(r.time_ns);
    if (seq == 0) return;
    // The state at the failure, with raw addresses; the reporter symbolizes and writes it.
    auto *work = new (std::nothrow) PendingWork;
    if (work == nullptr) return;
    work->snapshot = capture_snapshot(t, "oom");
    work->path = trigger_output_path("oom", static_cast<int>(seq));
    work->note = describe(request, r);
    enqueue_work(work);
}

void reset_oom_rate_limit() {
    new (&g_rate_mutex) std::mutex;
    g_snapshots_taken = 0;
    g_last_snapshot_ns = 0;
}

} // namespace vramtrace::triggers
