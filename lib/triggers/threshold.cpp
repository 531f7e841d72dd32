#include "triggers/threshold.h"

#include <atomic>
#include <new>
#include <string>

#include "core/clock.h"
#include "core/log.h"
#include "dump/dumper.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"
#include "report/call_site_groups.h"
#include "dump/snapshot_builder.h"
#include "report/text_safety.h"
#include "device/driver_queries.h"
#include "triggers/reporter.h"
#include "triggers/trigger_config.h"

namespace vramtrace::triggers {
namespace {

constexpr int kMaxDevices = 128;     // ordinals 0..127, as DeviceCounters
constexpr size_t kTopSites = 5;
constexpr uint64_t kUnknown = 0;     // threshold not computed yet
constexpr uint64_t kNone = UINT64_MAX; // no threshold for this device (total memory unknown)

struct alignas(64) DeviceState {
    std::atomic<uint64_t> threshold{kUnknown};
    std::atomic<uint64_t> last_warning_ns{0}; // CLOCK_MONOTONIC of the last warning's crossing
};
DeviceState g_devices[kMaxDevices];

uint64_t threshold_for(int device) {
    DeviceState &d = g_devices[device];
    uint64_t t = d.threshold.load(std::memory_order_relaxed);
    if (t != kUnknown) return t;
    const TriggerConfig &cfg = trigger_config();
    if (cfg.warn_bytes != 0) {
        t = cfg.warn_bytes;
    } else {
        // A fraction of the device's capacity: asked once per device, from the hook after the real
        // call returned (no lock held).
        uint64_t total = 0;
        t = device_total_memory(device, &total) ? static_cast<uint64_t>(cfg.warn_fraction * double(total)) : kNone;
        if (t == 0) t = 1;
    }
    d.threshold.store(t, std::memory_order_relaxed);
    return t;
}

// Whether a warning may be given now (VRAMTRACE_WARN_INTERVAL since the device's last one).
bool claim_warning(DeviceState &d, uint64_t now_ns) {
    uint64_t last = d.last_warning_ns.load(std::memory_order_relaxed);
    const uint64_t interval = trigger_config().warn_interval_ns;
    if (last != 0 && now_ns - last < interval) return false;
    return d.last_warning_ns.compare_exchange_strong(last, now_ns, std::memory_order_relaxed);
}

} // namespace

void threshold_on_alloc(Tracker &t, int device, uint64_t before, uint64_t after) {
    if (device < 0 || device >= kMaxDevices) return;
    DeviceState &d = g_devices[device];
    uint64_t limit = threshold_for(device);
    if (limit == kNone || before >= limit || after < limit) return; // not an upward crossing
    if (!claim_warning(d, monotonic_ns())) return;
    auto *work = new (std::nothrow) PendingWork;
    if (work == nullptr) return;
    work->snapshot = capture_snapshot(t, "threshold");
    work->device = device;
    work->live_bytes = after;
    work->threshold = limit;
    enqueue_work(work);
}

// vramtrace: warning: cuda:0 crossed VRAMTRACE_WARN_BYTES=8.00 MiB (8388608 B) with 9.00 MiB (9437184 B) live; top call sites:
// vramtrace:   6.00 MiB (6291456 B) in 1 allocation at hold_a() at /src/prog.cpp:40 (prog)
void print_threshold_warning(PendingWork &w) {
    if (!symbolize_captured_snapshot(w.snapshot)) return;
    snapshot::Snapshot on_device = w.snapshot;
    on_device.allocations.clear();
    for (const snapshot::Allocation &a : w.snapshot.allocations)
        if (a.device == w.device) on_device.allocations.push_back(a);
    std::vector<report::CallSiteGroup> groups = report::group_live_by_call_site(on_device);
    std::string text = "vramtrace: warning: " + report::device_label(w.device) + " crossed VRAMTRACE_WARN_BYTES=" +
                       report::format_bytes_exact(w.threshold) + " with " + report::format_bytes_exact(w.live_bytes) +
                       " live; top call sites:\n";
    for (size_t i = 0; i < groups.size() && i < kTopSites; ++i) {
        const report::CallSiteGroup &g = groups[i];
        text += "vramtrace:   " + report::format_bytes_exact(g.live_bytes) + " in " + std::to_string(g.live_count) +
                (g.live_count == 1 ? " allocation at " : " allocations at ") + g.location + "\n";
    }
    if (groups.size() > kTopSites)
        text += "vramtrace:   ... and " + std::to_string(groups.size() - kTopSites) + " more call sites\n";
    // Call-site names come from the program's binaries: escaped as the exit summary is.
    text = report::escape_control_characters(text, /*keep_newlines=*/true);
    log_raw(text.data(), text.size());
}

void reset_threshold() {
    for (DeviceState &d : g_devices) d.last_warning_ns.store(0, std::memory_order_relaxed);
}

} // namespace vramtrace::triggers
