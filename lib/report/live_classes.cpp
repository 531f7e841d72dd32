// Live allocations by exit-time class (held since start, grew, the rest). The rule: live_classes.h.
#include "report/live_classes.h"
#include "report/call_site_groups.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace vramtrace::report {

using snapshot::Allocation;
using snapshot::Event;
using snapshot::ProcessInfo;
using snapshot::Snapshot;
using snapshot::counts_as_held;

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

LiveIntervals live_intervals(const ProcessInfo &process, const std::vector<Event> &events) {
    LiveIntervals out;
    // A merged snapshot holds several processes, whose marks and times are not of one run.
    if (process.reason == "merge") return out;
    uint64_t start = 0, end = 0;
    bool span = run_span(process, &start, &end);
    // Marks in time order; marks at one time start one interval, named by the last of them.
    std::map<uint64_t, std::string> marks;
    for (const Event &e : events) {
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

LiveClasses classify_live(const Snapshot &s, const std::vector<LiveSeries> &live, const std::vector<Event> &events) {
    LiveClasses out;
    out.intervals = live_intervals(s.process, events);
    const LiveIntervals &iv = out.intervals;
    bool have = iv.basis != LiveIntervals::Basis::none;

    // Call sites, keyed and named as every other table of the report names them.
    std::vector<StackWeight> weights;
    weights.reserve(live.size());
    for (const LiveSeries &r : live) weights.push_back({r.stack, r.size * r.times->size(), r.times->size()});
    std::vector<size_t> group_of;
    std::vector<CallSiteGroup> groups = group_by_call_site(s, weights, &group_of);

    // Per series, its allocations in interval 0; per call site, the intervals after interval 0
    // its allocations fell into.
    std::vector<uint64_t> first(live.size(), 0);
    std::vector<std::set<size_t>> hit(groups.size());
    for (size_t i = 0; i < live.size(); ++i)
        for (uint64_t t : *live[i].times) {
            size_t k = have ? iv.interval_of(t) : 1;
            if (k == 0) ++first[i];
            else if (have) hit[group_of[i]].insert(k);
        }
    auto grew = [&](size_t g) { return have && hit[g].size() >= iv.grew_threshold(); };

    // Per class and call site: bytes, allocations, devices and sizes.
    struct Acc {
        uint64_t bytes = 0, count = 0;
        std::set<int> devices;
        std::map<uint64_t, uint64_t> sizes;
    };
    std::map<size_t, Acc> acc[3];
    auto add = [&](LiveClass c, size_t i, uint64_t n) {
        if (n == 0) return;
        Acc &a = acc[int(c)][group_of[i]];
        a.bytes += live[i].size * n, a.count += n;
        a.devices.insert(live[i].device);
        a.sizes[live[i].size] += n;
    };
    for (size_t i = 0; i < live.size(); ++i) {
        add(LiveClass::held_since_start, i, first[i]);
        add(grew(group_of[i]) ? LiveClass::grew : LiveClass::rest, i, live[i].times->size() - first[i]);
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

LiveClasses classify_live(const Snapshot &s, const std::vector<LiveRecord> &live, const std::vector<Event> &events) {
    // Series of equal (stack, device, size).
    std::map<std::tuple<uint32_t, int, uint64_t>, std::vector<uint64_t>> by_key;
    for (const LiveRecord &r : live) {
        std::vector<uint64_t> &times = by_key[{r.stack, r.device, r.size}];
        times.insert(times.end(), r.count, r.time_ns);
    }
    std::vector<LiveSeries> series;
    series.reserve(by_key.size());
    for (const auto &[key, times] : by_key)
        series.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), &times});
    return classify_live(s, series, events);
}

LiveClasses classify_live(const Snapshot &s) {
    std::vector<LiveRecord> live;
    for (const Allocation &a : s.allocations)
        if (counts_as_held(a)) live.push_back({a.stack, a.device, a.size, a.time_ns, 1});
    return classify_live(s, live, s.events.events);
}

} // namespace vramtrace::report
