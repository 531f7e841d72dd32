// The summary's headline and its live-by-class section (summary_headline.h).
#include "report/summary_headline.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "report/text_safety.h"
#include "report/text_format.h"
#include "report/call_site_groups.h"

namespace vramtrace::report::summary {

using snapshot::DevicePeak;
using snapshot::Event;
using snapshot::OomEvent;
using snapshot::PeakSite;
using snapshot::Snapshot;
using snapshot::Stack;
using snapshot::path_basename;

namespace {

constexpr size_t kHeadlineSites = 3; // call sites named per headline line

// The parts joined by spaces, a new line (after `indent`) where the next part would pass 100
// columns.
void add_fitting(Lines &lines, const std::vector<std::string> &parts, const std::string &indent) {
    std::string text;
    for (const std::string &part : parts) {
        bool fresh = text.empty() || text == indent;
        if (!fresh && kSummaryLinePrefix.size() + text.size() + 1 + part.size() > 100) {
            lines.add(text);
            text = indent;
            fresh = true;
        }
        text += (fresh ? "" : " ") + part;
    }
    if (!text.empty()) lines.add(text);
}

// One frame's text in a few words: "leaky_pipeline.cpp:119 allocate_activations" for
// "allocate_activations(CUstream_st*, int, int) at ../examples/leaky_pipeline.cpp:119 (leaky_pipeline)"
// (the file without its directory, the function without its parameters); other text unchanged.
std::string short_frame(std::string_view text) {
    size_t at = text.find(" at ");
    size_t module = at == std::string_view::npos ? at : text.find(" (", at);
    if (module == std::string_view::npos || text.back() != ')') return std::string(text);
    std::string_view where = text.substr(at + 4, module - at - 4);
    if (where.find(':') == std::string_view::npos) return std::string(text);
    std::string_view function = text.substr(0, at);
    function = function.substr(0, function.find('('));
    return std::string(path_basename(where)) + " " + std::string(function);
}

// A call site in a few words: each frame (summary --frames N names callers after " <- ") as
// short_frame gives it, the framework entry after " via " kept whole.
std::string short_location(const Snapshot &, const CallSiteGroup &g) {
    if (g.kind != CallSiteGroup::Kind::Frame) return one_line(g.location);
    std::string_view text = g.location, via;
    if (size_t v = text.find(" via "); v != std::string_view::npos) via = text.substr(v), text = text.substr(0, v);
    std::string out;
    for (size_t start = 0;;) {
        size_t arrow = text.find(" <- ", start);
        out += short_frame(text.substr(start, arrow == std::string_view::npos ? std::string_view::npos : arrow - start));
        if (arrow == std::string_view::npos) break;
        out += " <- ";
        start = arrow + 4;
    }
    return one_line(out + std::string(via));
}

std::string location_of_stack(const Snapshot &s, uint32_t id) {
    std::vector<CallSiteGroup> g = group_by_call_site(s, {{id, 1, 1}});
    return g.empty() ? std::string("(no stack captured)") : short_location(s, g[0]);
}

// The device's last allocation in the history at or before `time_ns` (the one that reached the
// peak when the times are equal), or nullptr.
const SummaryBody::State::AllocSeen *allocation_at(const SummaryBody::State &b, int device, uint64_t time_ns) {
    auto it = b.allocs.find(device);
    if (it == b.allocs.end()) return nullptr;
    const SummaryBody::State::AllocSeen *found = nullptr;
    for (const auto &a : it->second)
        if (a.time_ns <= time_ns && (!found || a.time_ns >= found->time_ns)) found = &a;
    return found;
}

// The last mark at or before `time_ns`, or nullptr.
const Event *mark_before(const SummaryBody::State &b, uint64_t time_ns) {
    const Event *found = nullptr;
    for (const Event &e : b.marks)
        if (e.time_ns <= time_ns && (!found || e.time_ns >= found->time_ns)) found = &e;
    return found;
}

// "9.00 MiB load_weights() at model.cpp:17 (train)" for the first sites, then how many more.
std::vector<std::string> site_items(const Snapshot &s, const std::vector<CallSiteGroup> &groups) {
    std::vector<std::string> items;
    uint64_t more_bytes = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
        if (i < kHeadlineSites) items.push_back(format_bytes(groups[i].live_bytes) + " " + short_location(s, groups[i]));
        else more_bytes += groups[i].live_bytes;
    }
    if (groups.size() > kHeadlineSites)
        items.push_back(format_bytes(more_bytes) + " in " + plural(groups.size() - kHeadlineSites, "more call site"));
    return items;
}

void peak_lines(Lines &lines, const Snapshot &s, const SummaryBody::State &b) {
    // Host memory's peak only when no GPU has one: the GPUs' peaks are what runs out.
    std::vector<const DevicePeak *> order;
    bool gpu = false;
    for (const DevicePeak &p : s.peaks) gpu |= p.peak_bytes != 0 && p.device >= 0;
    for (const DevicePeak &p : s.peaks)
        if (p.peak_bytes != 0 && (p.device >= 0 || !gpu)) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const DevicePeak *a, const DevicePeak *b) {
        return device_order_rank(a->device) < device_order_rank(b->device);
    });
    for (const DevicePeak *p : order) {
        std::vector<std::string> items;
        std::string when = when_text(s.process, p->time_ns);
        if (!when.empty()) items.push_back(when);
        if (const Event *m = mark_before(b, p->time_ns))
            items.push_back(m->label.empty() ? "after a mark without a label" : "during mark '" + one_line(m->label) + "'");
        const SummaryBody::State::AllocSeen *a = allocation_at(b, p->device, p->time_ns);
        uint32_t range = a ? a->range : 0;
        if (!a && !p->ranges.empty()) range = p->ranges.front().range;
        if (range != 0) items.push_back("in NVTX range '" + one_line(range_stack_label(s, range)) + "'");
        std::string first = "peak " + device_label(p->device) + ": " + format_bytes(p->peak_bytes);
        if (items.empty()) lines.add(first);
        else lines.wrap(first + ", ", "  ", items);
        if (a)
            add_fitting(lines, {"  reached by " + one_line(b.names[a->api]) + " of " + format_bytes(a->size),
                                "at " + location_of_stack(s, a->stack)}, "    ");
        std::vector<StackWeight> weights;
        for (const PeakSite &site : p->sites) weights.push_back({site.stack, site.bytes, site.count});
        std::vector<CallSiteGroup> groups = group_by_call_site(s, weights);
        if (!groups.empty()) lines.wrap("  held at the peak: ", "    ", site_items(s, groups));
    }
}

void live_lines(Lines &lines, const Snapshot &s, const LiveClasses &c) {
    uint64_t bytes = c.bytes[0] + c.bytes[1] + c.bytes[2], count = c.count[0] + c.count[1] + c.count[2];
    bool at_exit = s.process.reason == "exit";
    if (count == 0) {
        lines.add(at_exit ? "live at exit: nothing (every tracked allocation was freed)"
                          : "live at the snapshot: nothing");
        return;
    }
    std::string text = std::string(at_exit ? "live at exit: " : "live at the snapshot: ") + format_bytes(bytes) +
                       " in " + plural(count, "allocation");
    if (c.intervals.basis == LiveIntervals::Basis::none) {
        lines.add(text + (s.process.reason == "merge" ? " (several processes: not split by class)"
                                                      : " (no marks and no running time: not split by class)"));
        return;
    }
    lines.wrap(text + ": ", "  ", {"held since start " + format_bytes(c.bytes[0]), "grew " + format_bytes(c.bytes[1]),
                                   "the rest " + format_bytes(c.bytes[2])});
    if (!c.grew.empty()) {
        const ClassSite &g = c.grew.front();
        std::vector<std::string> items{format_bytes(g.site.live_bytes) + " " + short_location(s, g.site) + " (live from " +
                                       to_dec(g.intervals) + " of " + to_dec(c.intervals.after_first()) +
                                       (c.intervals.basis == LiveIntervals::Basis::marks
                                            ? " intervals after the first mark)"
                                            : " tenths of the run after the first)")};
        if (c.grew.size() > 1) items.push_back("and " + plural(c.grew.size() - 1, "more call site"));
        lines.wrap("  grew: ", "    ", items);
    }
    if (c.grew.empty() && c.held_since_start.empty() && !c.rest.empty()) {
        std::vector<CallSiteGroup> groups;
        for (const ClassSite &r : c.rest) groups.push_back(r.site);
        lines.wrap("  largest: ", "    ", site_items(s, groups));
    }
    if (!c.held_since_start.empty()) {
        const ClassSite &h = c.held_since_start.front();
        std::vector<std::string> items{format_bytes(h.site.live_bytes) + " " + short_location(s, h.site)};
        if (c.held_since_start.size() > 1) items.push_back("and " + plural(c.held_since_start.size() - 1, "more call site"));
        lines.wrap("  held since start: ", "    ", items);
    }
}

void oom_line(Lines &lines, const Snapshot &s) {
    uint64_t total = std::max<uint64_t>(s.oom_count, s.ooms.size());
    if (total == 0) return;
    std::string text = "out of memory: " + plural(total, "failure");
    if (s.ooms.empty()) {
        lines.add(text);
        return;
    }
    const OomEvent &o = s.ooms.back();
    std::string name = cuda_error_name(o.api, o.result);
    text += (total > 1 ? "; the last: " : ": ") + one_line(o.api) + " of " + format_bytes(o.requested_bytes) + " on " +
            device_label(o.device);
    add_fitting(lines, {text, "failed with " + (name.empty() ? "error " + std::to_string(o.result) : name) + ",",
                        "from " + location_of_stack(s, o.stack)}, "  ");
}

} // namespace

std::string cuda_error_name(const std::string &api, int result) {
    bool runtime = api.rfind("cuda", 0) == 0;
    switch (result) {
    case 1: return runtime ? "cudaErrorInvalidValue" : "CUDA_ERROR_INVALID_VALUE";
    case 2: return runtime ? "cudaErrorMemoryAllocation" : "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return runtime ? "cudaErrorInitializationError" : "CUDA_ERROR_NOT_INITIALIZED";
    default: return std::string();
    }
}

bool torch_caching_segments(const Snapshot &s) {
    for (const Stack &st : s.stacks)
        for (uint32_t f : st.frames)
            if (f < s.frames.size() &&
                s.frames[f].function.find("CUDACachingAllocator::Native::DeviceCachingAllocator::") != std::string::npos)
                return true;
    return false;
}

void headline(Lines &lines, const Snapshot &s, const SummaryBody::State &body, const LiveClasses &classes) {
    peak_lines(lines, s, body);
    live_lines(lines, s, classes);
    oom_line(lines, s);
    if (torch_caching_segments(s)) {
        lines.add("PyTorch's caching allocator: call sites are its segments, not tensors; one record per tensor:");
        lines.add("  PYTORCH_NO_CUDA_MEMORY_CACHING=1 or PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync");
    }
}

void live_by_class(Lines &lines, const Snapshot &s, const LiveClasses &c, size_t top_n, size_t sizes_per_site) {
    bool at_exit = s.process.reason == "exit";
    uint64_t bytes = c.bytes[0] + c.bytes[1] + c.bytes[2], count = c.count[0] + c.count[1] + c.count[2];
    if (count == 0) {
        lines.add(at_exit ? "no leaks: every tracked allocation was freed before exit"
                          : "no tracked allocation is live at the snapshot");
        return;
    }
    std::vector<std::string> keys;
    for (LiveClass cls : {LiveClass::held_since_start, LiveClass::grew, LiveClass::rest})
        for (const ClassSite &cs : c.sites(cls)) keys.push_back(cs.site.key);
    std::sort(keys.begin(), keys.end());
    size_t sites = size_t(std::unique(keys.begin(), keys.end()) - keys.begin());
    std::string title = std::string(at_exit ? "leaked at exit: " : "still live at the snapshot: ") +
                        plural(count, "allocation") + ", " + format_bytes_exact(bytes) + ", from " +
                        plural(sites, "call site");
    // Another snapshot lists its live call sites once, in the table by live bytes.
    if (!at_exit) {
        lines.add(title + " (the table by live bytes above)");
        return;
    }
    lines.add(title + ":");
    for (LiveClass cls : {LiveClass::grew, LiveClass::held_since_start, LiveClass::rest}) {
        const std::vector<ClassSite> &list = c.sites(cls);
        if (list.empty()) continue;
        lines.add(std::string("  ") + live_class_name(cls) + ": " + format_bytes_exact(c.bytes[int(cls)]) + " in " +
                  plural(c.count[int(cls)], "allocation") + " from " + plural(list.size(), "call site"));
        size_t shown = top_n == 0 ? list.size() : std::min(list.size(), top_n);
        for (size_t i = 0; i < shown; ++i) {
            const CallSiteGroup &g = list[i].site;
            lines.add("    " + one_line(g.location));
            std::vector<std::string> items;
            size_t listed = sizes_per_site == 0 ? g.sizes.size() : std::min(g.sizes.size(), sizes_per_site);
            for (size_t k = 0; k < listed; ++k)
                items.push_back(to_dec(g.sizes[k].second) + " x " + format_bytes_exact(g.sizes[k].first));
            if (listed < g.sizes.size()) {
                uint64_t more = 0;
                for (size_t k = listed; k < g.sizes.size(); ++k) more += g.sizes[k].second;
                items.push_back("and " + plural(g.sizes.size() - listed, "other size") + " in " + plural(more, "allocation"));
            }
            std::string first = "      " + format_bytes_exact(g.live_bytes) + " in " + plural(g.live_count, "allocation");
            if (cls == LiveClass::grew)
                first += " (live from " + to_dec(list[i].intervals) + " of " + to_dec(c.intervals.after_first()) + " intervals)";
            lines.wrap(first + ": ", "        ", items);
        }
        if (shown < list.size()) {
            uint64_t more_bytes = 0, more_count = 0;
            for (size_t i = shown; i < list.size(); ++i) more_bytes += list[i].site.live_bytes, more_count += list[i].site.live_count;
            lines.add("    ... and " + plural(list.size() - shown, "more call site") + ": " +
                      format_bytes_exact(more_bytes) + " in " + plural(more_count, "allocation"));
        }
    }
}

} // namespace vramtrace::report::summary
