#include "dump/oom_log.h"

#include <atomic>

#include "device/driver_api.h"

namespace vramtrace {
namespace {

// Static, trivially destructible: usable from exit handlers after static destructors.
OomRecord g_ring[kOomsKept];
uint64_t g_count = 0;            // guarded by g_lock
uint64_t g_device_count[kOomDevices]; // guarded by g_lock: failures per ordinal
std::atomic<bool> g_lock{false}; // held for a copy of one record; never around a call

struct SpinLock {
    SpinLock() {
        while (g_lock.exchange(true, std::memory_order_acquire)) {
        }
    }
    ~SpinLock() { g_lock.store(false, std::memory_order_release); }
};

} // namespace

uint64_t record_oom(const OomRecord &record) {
    SpinLock lock;
    g_ring[g_count % kOomsKept] = record;
    if (record.device >= 0 && record.device < int(kOomDevices)) ++g_device_count[record.device];
    return ++g_count;
}

uint64_t oom_count() {
    SpinLock lock;
    return g_count;
}

uint64_t oom_count_on_device(int device) {
    if (device < 0 || device >= int(kOomDevices)) return 0;
    SpinLock lock;
    return g_device_count[device];
}

void fill_oom_events(snapshot::Snapshot &snapshot) {
    OomRecord copy[kOomsKept];
    uint64_t count;
    {
        SpinLock lock;
        count = g_count;
        for (unsigned i = 0; i < kOomsKept; ++i) copy[i] = g_ring[i];
    }
    snapshot.oom_count = count;
    uint64_t first = count > kOomsKept ? count - kOomsKept : 0;
    snapshot.ooms.clear();
    for (uint64_t n = first; n < count; ++n) {
        const OomRecord &r = copy[n % kOomsKept];
        snapshot::OomEvent e;
        e.time_ns = r.time_ns;
        e.device = r.device;
        e.requested_bytes = r.requested_bytes;
        e.api = api_name(r.api);
        e.stream = r.stream;
        e.stack = r.stack;
        e.thread_id = r.thread_id;
        e.result = r.result;
        if (r.has_memory_info) {
            e.device_free_bytes = r.free_bytes;
            e.device_total_bytes = r.total_bytes;
        }
        e.tracked_bytes = r.tracked_bytes;
        snapshot.ooms.push_back(std::move(e));
    }
}

void reset_oom_log() {
    g_lock.store(false, std::memory_order_relaxed);
    g_count = 0;
    for (uint64_t &n : g_device_count) n = 0;
}

} // namespace vramtrace
