// What the summary folds a snapshot's body into while it streams by (SummaryBody::State): the live
// allocations keyed by what the call-site table groups on, and the event history replayed into
// per-device figures by kind and size class. Internal to lib/report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <tuple>
#include <vector>

#include "report/live_classes.h"
#include "report/summary_format.h"
#include "report/call_site_groups.h"

namespace vramtrace::report {
namespace summary {

// ---- figures per device (summary_format.h says where each comes from) ----

constexpr uint64_t kLargeBytes = 1 << 20; // PyTorch's pools: small < 1 MiB, large >= 1 MiB

// A Cur/Peak/Tot Alloc/Tot Freed quadruple; nullopt = not known.
struct Figures {
    std::optional<uint64_t> cur, peak, alloc, freed;
};

// Counters replayed from the event history for one (device, category).
struct Replay {
    uint64_t cur = 0, peak = 0, alloc = 0, freed = 0;
    void on_alloc(uint64_t v) {
        cur += v;
        alloc += v;
        peak = std::max(peak, cur);
    }
    void on_free(uint64_t v) {
        cur = cur >= v ? cur - v : 0;
        freed += v;
    }
};

struct DeviceReplay {
    Replay bytes, count;                      // all held kinds
    std::map<std::string, Replay> kind_bytes; // by Allocation::kind
    Replay small_bytes, large_bytes, small_count, large_count;
};

// One event of the history replayed into the per-device counters.
void replay_event(std::map<int, DeviceReplay> &out, const snapshot::Event &e);

// A live allocation as the summary folds it (SummaryBody): kind and api are indices into the
// body's interned names.
struct LiveKey {
    uint32_t stack = 0;
    int device = 0;
    uint32_t kind = 0, api = 0;
    uint64_t size = 0;
    bool operator==(const LiveKey &) const = default;
};
struct LiveKeyHash {
    size_t operator()(const LiveKey &k) const {
        uint64_t h = k.size * 0x9e3779b97f4a7c15ull;
        h ^= (uint64_t(k.stack) << 32 | uint32_t(k.device)) + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
        h ^= (uint64_t(k.kind) << 32 | k.api) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        return size_t(h);
    }
};

} // namespace summary

struct SummaryBody::State {
    std::unordered_map<summary::LiveKey, uint64_t, summary::LiveKeyHash> live; // -> number of allocations
    // The times the live allocations were made, per (stack, device, size), for the exit-time
    // classes (live_classes.h): 8 bytes per allocation.
    std::map<std::tuple<uint32_t, int, uint64_t>, std::vector<uint64_t>> times;
    // From the event history, for the headline: its marks, and its allocations (time, stack,
    // size, NVTX range, api) per device. Bounded by the history's capacity (VRAMTRACE_EVENTS).
    std::vector<snapshot::Event> marks;
    struct AllocSeen {
        uint64_t time_ns = 0, size = 0;
        uint32_t stack = 0, range = 0, api = 0;
    };
    std::map<int, std::vector<AllocSeen>> allocs;
    std::vector<std::string> names;                          // kinds and apis, interned
    std::unordered_map<std::string, uint32_t> name_index;
    std::map<int, summary::DeviceReplay> replayed;                    // every event so far, per device
    uint64_t events = 0;                                     // events added
    // Virtual memory management, which counts_as_held leaves out or counts once: reserved address
    // space (va_reservation), mapped ranges and physical allocations per device.
    uint64_t reserved_va = 0, reservations = 0;
    std::map<int, uint64_t> vmm_mapped, vmm_physical;
    // IPC imports still open, per device they live on: (bytes, allocations). Another process's
    // memory, so counted nowhere else.
    std::map<int, std::pair<uint64_t, uint64_t>> ipc_imports;
    // Held bytes and allocations live per (device, NVTX range stack id; 0: no range open).
    std::map<std::pair<int, uint32_t>, std::pair<uint64_t, uint64_t>> range_live;

    uint32_t intern(const std::string &name) {
        auto [it, inserted] = name_index.try_emplace(name, uint32_t(names.size()));
        if (inserted) names.push_back(name);
        return it->second;
    }
};

namespace summary {

// The folded live allocations, as the call-site grouping takes them.
std::vector<FoldedLive> folded_live(const SummaryBody::State &b);
// The replayed history when it holds every allocation and free since start, which is checked
// against the device counters (totals and counts must match exactly); otherwise the per-kind and
// per-size peaks and totals stay unknown (an empty map).
std::map<int, DeviceReplay> replay_events(const snapshot::Snapshot &s, const SummaryBody::State &b);

} // namespace summary
} // namespace vramtrace::report
