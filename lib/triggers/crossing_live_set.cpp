#include "triggers/crossing_live_set.h"

#include <algorithm>
#include <map>

namespace vramtrace::triggers {

bool live_set_at_crossing(const snapshot::Snapshot &now, const Crossing &c, uint64_t events_lost_now,
                          std::vector<snapshot::Allocation> *out) {
    out->clear();
    const snapshot::EventHistory &h = now.events;
    if (h.capacity == 0 || h.complete_from_ns > c.time_ns || events_lost_now != c.events_lost) return false;

    std::map<uint64_t, snapshot::Allocation> live; // by device pointer
    for (const snapshot::Allocation &a : now.allocations)
        if (a.device == c.device) live[a.address] = a;
    // Newest first: an address freed and allocated again after the crossing comes back right.
    for (auto e = h.events.rbegin(); e != h.events.rend() && e->time_ns > c.time_ns; ++e) {
        if (e->device != c.device) continue;
        if (e->type == "alloc") {
            live.erase(e->address);
        } else if (e->type == "free") {
            snapshot::Allocation a;
            a.address = e->address;
            a.size = e->size;
            a.kind = e->kind;
            a.device = e->device;
            a.api = e->api;
            a.stack = e->stack;
            a.range = e->range;
            live[e->address] = a; // its allocation time and thread are not in the free event
        }
    }
    uint64_t counted = 0;
    for (const auto &[address, a] : live)
        if (snapshot::counts_as_held(a)) counted += a.size;
    if (counted != c.live_bytes) return false;
    for (auto &[address, a] : live) out->push_back(std::move(a));
    std::stable_sort(out->begin(), out->end(), [](const snapshot::Allocation &x, const snapshot::Allocation &y) {
        return x.time_ns < y.time_ns;
    });
    return true;
}

} // namespace vramtrace::triggers
