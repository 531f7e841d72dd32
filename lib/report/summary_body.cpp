#include "report/summary_body.h"
#include "report/call_site_groups.h"

#include <algorithm>

namespace vramtrace::report {

using snapshot::Allocation;
using snapshot::DeviceTotals;
using snapshot::Event;
using snapshot::EventHistory;
using snapshot::Snapshot;
using snapshot::counts_as_held;

namespace summary {
namespace {

bool kind_is_held(const std::string &kind) {
    Allocation a;
    a.kind = kind;
    return counts_as_held(a);
}

} // namespace

void replay_event(std::map<int, DeviceReplay> &out, const Event &e) {
    bool alloc = e.type == "alloc";
    if ((!alloc && e.type != "free") || !kind_is_held(e.kind)) return;
    DeviceReplay &d = out[e.device];
    bool large = e.size >= kLargeBytes;
    if (alloc) {
        d.bytes.on_alloc(e.size), d.count.on_alloc(1), d.kind_bytes[e.kind].on_alloc(e.size);
        (large ? d.large_bytes : d.small_bytes).on_alloc(e.size);
        (large ? d.large_count : d.small_count).on_alloc(1);
    } else {
        d.bytes.on_free(e.size), d.count.on_free(1), d.kind_bytes[e.kind].on_free(e.size);
        (large ? d.large_bytes : d.small_bytes).on_free(e.size);
        (large ? d.large_count : d.small_count).on_free(1);
    }
}

} // namespace summary

using summary::LiveKey;

SummaryBody::SummaryBody() : state_(std::make_unique<State>()) {}
SummaryBody::~SummaryBody() = default;
SummaryBody::SummaryBody(SummaryBody &&) noexcept = default;
SummaryBody &SummaryBody::operator=(SummaryBody &&) noexcept = default;

void SummaryBody::add_allocation(const Allocation &a) {
    if (a.kind == "va_reservation") state_->reserved_va += a.size, ++state_->reservations;
    if (a.kind == "vmm_mapping") state_->vmm_mapped[a.device] += a.size;
    if (a.kind == "vmm_physical") state_->vmm_physical[a.device] += a.size;
    if (a.kind == "ipc_imported") {
        auto &[bytes, count] = state_->ipc_imports[a.device];
        bytes += a.size;
        ++count;
    }
    if (!counts_as_held(a)) return; // no other part of the summary counts them
    auto &by_range = state_->range_live[{a.device, a.range}];
    by_range.first += a.size, ++by_range.second;
    LiveKey key{a.stack, a.device, state_->intern(a.kind), state_->intern(a.api), a.size};
    ++state_->live[key];
    state_->times[{a.stack, a.device, a.size}].push_back(a.time_ns);
}

size_t SummaryBody::live_entries() const { return state_->live.size(); }

void SummaryBody::add_event(const Event &e) {
    ++state_->events;
    replay_event(state_->replayed, e);
    if (e.type == "mark") state_->marks.push_back(e);
    if (e.type == "alloc")
        state_->allocs[e.device].push_back({e.time_ns, e.size, e.stack, e.range, state_->intern(e.api)});
}

namespace summary {

// The folded live allocations, as the call-site grouping takes them.
std::vector<FoldedLive> folded_live(const SummaryBody::State &b) {
    std::vector<FoldedLive> out;
    out.reserve(b.live.size());
    for (const auto &[k, count] : b.live) out.push_back({k.stack, k.device, b.names[k.api], k.size, count});
    return out;
}

// The replayed history when it holds every allocation and free since start, which is checked
// against the device counters (totals and counts must match exactly); otherwise the per-kind and
// per-size peaks and totals stay unknown (an empty map).
std::map<int, DeviceReplay> replay_events(const Snapshot &s, const SummaryBody::State &b) {
    const EventHistory &h = s.events;
    if (h.capacity == 0 || h.wrapped || h.recorded != b.events) return {};
    std::map<int, DeviceReplay> out = b.replayed;
    for (auto it = out.begin(); it != out.end();) {
        const DeviceTotals *t = nullptr;
        for (const DeviceTotals &d : s.devices)
            if (d.device == it->first) t = &d;
        const DeviceReplay &r = it->second;
        bool agrees = t && r.bytes.alloc == t->total_allocated_bytes && r.bytes.freed == t->total_freed_bytes &&
                      r.count.alloc == t->allocation_count && r.count.freed == t->free_count;
        it = agrees ? std::next(it) : out.erase(it);
    }
    return out;
}

} // namespace summary
} // namespace vramtrace::report
