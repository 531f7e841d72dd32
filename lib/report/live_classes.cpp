// Live allocations by exit-time class (held since start, grew, the rest). The rule: live_classes.h.
#include "report/live_classes.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace vramtrace::report {

namespace {

// CLOCK_MONOTONIC at the library's start, when the snapshot places its run on that clock.
bool run_span(const ProcessInfo &p, uint64_t *start, uint64_t *end) {
    if (p.dump_monotonic_ns == 0 || p.start_time_ns == 0 || p.dump_time_ns < p.start_time_ns) return false;
    uint64_t run = p.dump_time_ns - p.start_time_ns;
    if (run > p.dump_monotonic_ns || run == 0) return false;
    *start = p.dump_monotonic_ns - run;
    *end = p.dump_monotonic_ns;
    return true;
}

} // namespace

size_t LiveIntervals::interval_of(uint64_t time_ns) const {
    return size_t(std::upper_bound(starts.begin(), starts.end(), time_ns) - starts.begin());
}

LiveIntervals live_intervals(const Snapshot &s) {
    LiveIntervals out;
    uint64_t start = 0, end = 0;
    bool span = run_span(s.process, &start, &end);
    // Marks in time order; marks at one time start one interval, named by the last of them.
    std::map<uint64_t, std::string> marks;
    for (const Event &e : s.events.events) {
        if (e.type != "mark") continue;
        if (span && (e.time_ns < start || e.time_ns > end)) continue;
        marks[e.time_ns] = e.label;
    }
    if (!marks.empty()) {
        out.basis = LiveIntervals::Basis::marks;
        for (auto &[t, label] : marks) out.starts.push_back(t), out.labels.push_back(std::move(label));
        return out;
    }
    if (!span) return out;
    out.basis = LiveIntervals::Basis::run_tenths;
    uint64_t run = end - start;
    for (uint64_t k = 1; k < 10; ++k) out.starts.push_back(start + uint64_t((unsigned __int128)run * k / 10));
    return out;
}

const char *live_class_name(LiveClass c) {
    switch (c) {
    case LiveClass::held_since_start: return "held since start";
    case LiveClass::grew: return "grew";
    case LiveClass::rest: return "the rest";
    }
    return "the rest";
}

LiveClasses classify_live(const Snapshot &s, const std::vector<LiveRecord> &live) {
    LiveClasses out;
    out.intervals = live_intervals(s);
    const LiveIntervals &iv = out.intervals;
    bool have = iv.basis != LiveIntervals::Basis::none;

    // Call sites, keyed and named as every other table of the report names them.
    std::vector<StackWeight> weights;
    weights.reserve(live.size());
    for (const LiveRecord &r : live) weights.push_back({r.stack, r.size * r.count, r.count});
    std::vector<size_t> group_of;
    std::vector<CallSiteGroup> groups = group_by_call_site(s, weights, &group_of);

    // The intervals after interval 0 each call site's allocations fell into.
    std::vector<std::set<size_t>> hit(groups.size());
    std::vector<size_t> interval(live.size(), 0);
    for (size_t i = 0; i < live.size(); ++i) {
        interval[i] = have ? iv.interval_of(live[i].time_ns) : 1;
        if (have && interval[i] != 0) hit[group_of[i]].insert(interval[i]);
    }
    auto grew = [&](size_t g) { return have && hit[g].size() >= iv.grew_threshold(); };

    // Per class and call site: bytes, allocations, devices and sizes.
    struct Acc {
        uint64_t bytes = 0, count = 0;
        std::set<int> devices;
        std::map<uint64_t, uint64_t> sizes;
    };
    std::map<size_t, Acc> acc[3];
    for (size_t i = 0; i < live.size(); ++i) {
        const LiveRecord &r = live[i];
        size_t g = group_of[i];
        LiveClass c = have && interval[i] == 0 ? LiveClass::held_since_start
                      : grew(g)                ? LiveClass::grew
                                               : LiveClass::rest;
        Acc &a = acc[int(c)][g];
        a.bytes += r.size * r.count, a.count += r.count;
        a.devices.insert(r.device);
        a.sizes[r.size] += r.count;
    }
    std::vector<ClassSite> *lists[3] = {&out.held_since_start, &out.grew, &out.rest};
    for (int c = 0; c < 3; ++c) {
        for (auto &[g, a] : acc[c]) {
            ClassSite cs;
            cs.site = groups[g];
            cs.site.live_bytes = a.bytes, cs.site.live_count = a.count;
            cs.site.devices.assign(a.devices.begin(), a.devices.end());
            cs.site.sizes.assign(a.sizes.begin(), a.sizes.end());
            std::stable_sort(cs.site.sizes.begin(), cs.site.sizes.end(), [](const auto &x, const auto &y) {
                auto bx = (unsigned __int128)x.first * x.second, by = (unsigned __int128)y.first * y.second;
                return bx != by ? bx > by : x.first > y.first;
            });
            if (c == int(LiveClass::grew)) cs.intervals = hit[g].size();
            out.bytes[c] += a.bytes, out.count[c] += a.count;
            lists[c]->push_back(std::move(cs));
        }
        std::sort(lists[c]->begin(), lists[c]->end(), [](const ClassSite &x, const ClassSite &y) {
            if (x.site.live_bytes != y.site.live_bytes) return x.site.live_bytes > y.site.live_bytes;
            if (x.site.live_count != y.site.live_count) return x.site.live_count > y.site.live_count;
            return x.site.key < y.site.key;
        });
    }
    return out;
}

LiveClasses classify_live(const Snapshot &s) {
    std::vector<LiveRecord> live;
    for (const Allocation &a : s.allocations)
        if (counts_as_held(a)) live.push_back({a.stack, a.device, a.size, a.time_ns, 1});
    return classify_live(s, live);
}

} // namespace vramtrace::report
