// The exported vramtrace_* C API (include/vramtrace/vramtrace.h).
#define VRAMTRACE_BUILDING_LIBRARY
#include "vramtrace/vramtrace.h"

#include "core/tracker.h"
#include "dump/dumper.h"
#include "snapshot/snapshot_model.h"
#include "tracking/event_ring.h"

static_assert(VRAMTRACE_MARK_LABEL_MAX == vramtrace::EventRecord::kLabelMax, "documented label bound");

#define VT_EXPORT __attribute__((visibility("default")))

using namespace vramtrace;

namespace {

// Calls fill(tracker, device, slot) for each device seen while slots are left and returns how many
// devices there are, as both per-device calls of the API do (capacity 0 asks for the count alone).
template <typename Row, typename Fill>
int fill_per_device(Row *out, int capacity, Fill fill) {
    if (capacity < 0 || (capacity > 0 && out == nullptr)) return VRAMTRACE_ERROR_INVALID;
    Tracker *t = tracker();
    if (t == nullptr) return VRAMTRACE_ERROR_DISABLED;
    int count = 0;
    t->counters.for_each_seen([&](const DeviceTotalsView &d) {
        if (count < capacity) fill(*t, d, out[count]);
        ++count;
    });
    return count;
}

} // namespace

extern "C" {

VT_EXPORT int vramtrace_dump(const char *path) {
    if (path != nullptr && *path == 0) return VRAMTRACE_ERROR_INVALID;
    return dump_snapshot(path, "api", false);
}

VT_EXPORT int vramtrace_stats(vramtrace_device_stats *out, int capacity) {
    return fill_per_device(out, capacity, [](Tracker &, const DeviceTotalsView &d, vramtrace_device_stats &s) {
        snapshot::copy_device_counters(d, s);
        s.reserved_ = 0;
    });
}

VT_EXPORT int vramtrace_mark(const char *label) {
    if (label == nullptr) return VRAMTRACE_ERROR_INVALID;
    return record_mark(label);
}

VT_EXPORT int vramtrace_scope_reset(void) {
    Tracker *t = tracker();
    if (t == nullptr) return VRAMTRACE_ERROR_DISABLED;
    t->counters.reset_scope();
    return VRAMTRACE_OK;
}

VT_EXPORT int vramtrace_scope_stats(vramtrace_scope_peak *out, int capacity) {
    return fill_per_device(out, capacity, [](Tracker &t, const DeviceTotalsView &d, vramtrace_scope_peak &s) {
        // current_bytes was read before the scoped peak, so only an allocation still in flight
        // can leave it above; the figure given is then at least what is live.
        uint64_t peak = t.counters.scope_peak(d.device);
        s = vramtrace_scope_peak{d.device, 0, d.current_bytes, peak < d.current_bytes ? d.current_bytes : peak};
    });
}

} // extern "C"
