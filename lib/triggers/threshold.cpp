#include "triggers/threshold.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/log.h"
#include "dump/dumper.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"
#include "report/call_site_groups.h"
#include "dump/snapshot_builder.h"
#include "report/text_safety.h"
#include "device/driver_queries.h"
#include "triggers/crossing_live_set.h"
#include "triggers/reporter.h"
#include "triggers/trigger_config.h"

namespace vramtrace::triggers {
namespace {

constexpr int kMaxDevices = 128;     // ordinals 0..127, as DeviceCounters
constexpr size_t kTopSites = 5;
constexpr int kRebuildAttempts = 4;
constexpr uint64_t kUnknown = 0;     // threshold not computed yet
constexpr uint64_t kNone = UINT64_MAX; // no threshold for this device (total memory unknown)

struct alignas(64) DeviceState {
    std::atomic<uint64_t> threshold{kUnknown};
    std::atomic<uint64_t> last_warning_ns{0}; // CLOCK_MONOTONIC of the last warning's crossing
};
DeviceState g_devices[kMaxDevices];

// Crossings waiting for the reporter, in fixed slots: a hook takes a free slot (compare-and-swap
// kFree -> kWriting), writes it and marks it kReady; the reporter copies the ready ones and frees
// them. No slot is ever waited for: the VRAMTRACE_WARN_INTERVAL bound keeps far fewer than
// kCrossingSlots outstanding but with an interval of 0, and a crossing that finds no free slot is
// counted and said by the reporter.
constexpr size_t kCrossingSlots = 64;
enum SlotState : uint32_t { kFree = 0, kWriting = 1, kReady = 2 };
struct alignas(64) CrossingSlot {
    std::atomic<uint32_t> state{kFree};
    std::atomic<int> device{-2};
    std::atomic<uint64_t> live_bytes{0}, threshold{0}, time_ns{0}, events_lost{0};
};
CrossingSlot g_crossings[kCrossingSlots];
std::atomic<uint64_t> g_crossings_dropped{0};

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
    const uint64_t now = monotonic_ns();
    if (!claim_warning(d, now)) return;
    // A few words into a fixed slot and a wake: no snapshot, no malloc, no lock in the host's thread.
    CrossingSlot *slot = nullptr;
    for (CrossingSlot &c : g_crossings) {
        uint32_t expected = kFree;
        if (c.state.load(std::memory_order_relaxed) == kFree &&
            c.state.compare_exchange_strong(expected, kWriting, std::memory_order_acquire, std::memory_order_relaxed)) {
            slot = &c;
            break;
        }
    }
    if (slot == nullptr) {
        g_crossings_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    slot->device.store(device, std::memory_order_relaxed);
    slot->live_bytes.store(after, std::memory_order_relaxed);
    slot->threshold.store(limit, std::memory_order_relaxed);
    slot->time_ns.store(now, std::memory_order_relaxed);
    slot->events_lost.store(t.events.lost(), std::memory_order_relaxed);
    slot->state.store(kReady, std::memory_order_release);
    wake_reporter(kWakeThreshold);
}

namespace {

// One warning's text from the crossing's figures and the allocations its sites are summed from.
std::string warning_text(const snapshot::Snapshot &symbolized, const Crossing &c,
                         const std::vector<snapshot::Allocation> &allocations, const std::string &sites_intro) {
    snapshot::Snapshot on_device = symbolized;
    on_device.allocations = allocations;
    std::vector<report::CallSiteGroup> groups = report::group_live_by_call_site(on_device);
    std::string text = "vramtrace: warning: " + report::device_label(c.device) + " crossed VRAMTRACE_WARN_BYTES=" +
                       report::format_bytes_exact(c.threshold) + " with " + report::format_bytes_exact(c.live_bytes) +
                       " live; " + sites_intro + ":\n";
    for (size_t i = 0; i < groups.size() && i < kTopSites; ++i) {
        const report::CallSiteGroup &g = groups[i];
        text += "vramtrace:   " + report::format_bytes_exact(g.live_bytes) + " in " + std::to_string(g.live_count) +
                (g.live_count == 1 ? " allocation at " : " allocations at ") + g.location + "\n";
    }
    if (groups.size() > kTopSites)
        text += "vramtrace:   ... and " + std::to_string(groups.size() - kTopSites) + " more call sites\n";
    return text;
}

// The crossings the hooks have finished writing, oldest first; their slots are free again.
std::vector<Crossing> take_crossings() {
    std::vector<Crossing> out;
    for (CrossingSlot &slot : g_crossings) {
        if (slot.state.load(std::memory_order_acquire) != kReady) continue;
        Crossing c;
        c.device = slot.device.load(std::memory_order_relaxed);
        c.live_bytes = slot.live_bytes.load(std::memory_order_relaxed);
        c.threshold = slot.threshold.load(std::memory_order_relaxed);
        c.time_ns = slot.time_ns.load(std::memory_order_relaxed);
        c.events_lost = slot.events_lost.load(std::memory_order_relaxed);
        slot.state.store(kFree, std::memory_order_release); // the copy is done before a hook reuses it
        out.push_back(c);
    }
    std::sort(out.begin(), out.end(), [](const Crossing &x, const Crossing &y) { return x.time_ns < y.time_ns; });
    return out;
}

} // namespace

// vramtrace: warning: cuda:0 crossed VRAMTRACE_WARN_BYTES=8.00 MiB (8388608 B) with 9.00 MiB (9437184 B) live; top call sites:
// vramtrace:   6.00 MiB (6291456 B) in 1 allocation at hold_a() at /src/prog.cpp:40 (prog)
void print_threshold_warnings() {
    std::vector<Crossing> crossings = take_crossings();
    const uint64_t dropped = g_crossings_dropped.exchange(0, std::memory_order_relaxed);
    if (dropped != 0)
        log_warning("%llu VRAMTRACE_WARN_BYTES crossings came faster than they could be reported and are "
                    "not warned of", static_cast<unsigned long long>(dropped));
    Tracker *t = tracker();
    if (crossings.empty() || t == nullptr) return;
    // One snapshot for every crossing read here, taken after all of them. Its history is walked
    // again until every rebuild checks out (a few tries, 1 ms apart): an allocation or free that
    // was in flight while the snapshot was copied has pushed its event by then.
    snapshot::Snapshot now = capture_snapshot(*t, "threshold");
    std::vector<std::vector<snapshot::Allocation>> at_crossing(crossings.size());
    std::vector<bool> exact(crossings.size(), false);
    for (int attempt = 0; attempt < kRebuildAttempts; ++attempt) {
        if (attempt != 0) {
            timespec pause{0, 1'000'000};
            nanosleep(&pause, nullptr);
        }
        recapture_events(*t, now);
        const uint64_t lost = t->events.lost();
        bool all = true;
        for (size_t i = 0; i < crossings.size(); ++i) {
            if (!exact[i]) exact[i] = live_set_at_crossing(now, crossings[i], lost, &at_crossing[i]);
            all = all && exact[i];
        }
        if (all || now.events.capacity == 0) break; // no history: no try can check a rebuild
    }
    if (!symbolize_captured_snapshot(now)) return;
    for (size_t i = 0; i < crossings.size(); ++i) {
        const Crossing &c = crossings[i];
        std::string text;
        if (exact[i]) {
            text = warning_text(now, c, at_crossing[i], "top call sites");
        } else {
            std::vector<snapshot::Allocation> later;
            uint64_t later_bytes = 0;
            for (const snapshot::Allocation &a : now.allocations) {
                if (a.device != c.device) continue;
                later.push_back(a);
                if (snapshot::counts_as_held(a)) later_bytes += a.size;
            }
            const uint64_t ms = now.process.dump_monotonic_ns > c.time_ns
                                    ? (now.process.dump_monotonic_ns - c.time_ns) / 1'000'000
                                    : 0;
            text = warning_text(now, c, later,
                                "the live set moved on before it could be read, so these are the top call sites " +
                                    std::to_string(ms) + " ms after the crossing, with " +
                                    report::format_bytes_exact(later_bytes) + " live");
        }
        // Call-site names come from the program's binaries: escaped as the exit summary is.
        text = report::escape_control_characters(text, /*keep_newlines=*/true);
        log_raw(text.data(), text.size());
    }
}

void reset_threshold() {
    for (DeviceState &d : g_devices) d.last_warning_ns.store(0, std::memory_order_relaxed);
    // The parent's crossings are not the child's, and a slot a parent thread was writing would
    // stay taken: only the forking thread exists here, so every slot is free.
    for (CrossingSlot &slot : g_crossings) slot.state.store(kFree, std::memory_order_relaxed);
    g_crossings_dropped.store(0, std::memory_order_relaxed);
}

} // namespace vramtrace::triggers
