// Shared exporter helpers. See export_common.h.
#include "export/export_common.h"
#include "report/text_format.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace vramtrace::exporter {

using snapshot::Frame;
using snapshot::Snapshot;
using snapshot::Stack;

std::string micros_text(uint64_t ns) {
    std::string frac = to_dec(ns % 1000);
    return to_dec(ns / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}

std::string frame_name(const Snapshot &snapshot, const Frame &frame) {
    if (!frame.function.empty()) return frame.function;
    if (const snapshot::Module *module = snapshot.find_module(frame))
        return std::string(snapshot::path_basename(module->path)) + "+" + report::hex_u64(frame.module_offset);
    return report::hex_u64(frame.address);
}

std::vector<NamedFrame> expand_stack(const Snapshot &snapshot, const Stack *stack) {
    std::vector<NamedFrame> out;
    if (!stack) return out;
    for (uint32_t index : stack->frames) {
        if (index >= snapshot.frames.size()) continue;
        const Frame &frame = snapshot.frames[index];
        for (const Frame::Inlined &in : frame.inlined)
            out.push_back({in.function.empty() ? "??" : in.function, in.file, in.line, true, int(index)});
        out.push_back({frame_name(snapshot, frame), frame.file, frame.line, false, int(index)});
    }
    return out;
}

std::string call_site_text(const Snapshot &snapshot, uint32_t stack_id) {
    const Stack *stack = snapshot.find_stack(stack_id);
    if (!stack) return std::string(kNoStackName);
    const Frame *frame = snapshot.call_site_frame(*stack);
    if (!frame) return "(no call site: every frame is in vramtrace, the CUDA runtime or the driver)";
    return stack->site_label.empty() ? report::describe_frame(snapshot, *frame) : stack->site_label;
}

std::string_view category_text(const Snapshot &snapshot, uint32_t stack_id) {
    const Stack *stack = snapshot.find_stack(stack_id);
    return stack && !stack->category.empty() ? std::string_view(stack->category) : std::string_view("other");
}

std::string_view via_text(const Snapshot &snapshot, uint32_t stack_id) {
    const Stack *stack = snapshot.find_stack(stack_id);
    return stack ? std::string_view(stack->via_label) : std::string_view();
}

bool has_categories(const Snapshot &snapshot) {
    return std::any_of(snapshot.stacks.begin(), snapshot.stacks.end(),
                       [](const Stack &s) { return !s.category.empty() && s.category != "other"; });
}

bool held_kind(std::string_view kind) {
    snapshot::Allocation a;
    a.kind = std::string(kind);
    return snapshot::counts_as_held(a);
}

bool device_wanted(const Options &options, int device) { return !options.device || *options.device == device; }

std::string no_history_reason(const snapshot::Snapshot &snapshot) {
    return snapshot.process.reason == "merge" ? "a merged snapshot: merge leaves out the processes' histories"
                                              : "VRAMTRACE_EVENTS=0, or an older vramtrace";
}

void append_json_string(std::string &out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u == 0x7f) {
            out += "\\u00";
            out += kHex[u >> 4];
            out += kHex[u & 15];
        } else if (c == '<') {
            // Keeps "</script>" out of JSON embedded in HTML; still plain JSON.
            out += "\\u003c";
        } else {
            out += c;
        }
    }
    out += '"';
}

uint64_t time_origin_ns(const Snapshot &snapshot) {
    uint64_t earliest = UINT64_MAX;
    for (const snapshot::Event &e : snapshot.events.events) earliest = std::min(earliest, e.time_ns);
    for (const snapshot::Allocation &a : snapshot.allocations) earliest = std::min(earliest, a.time_ns);
    for (const snapshot::DevicePeak &p : snapshot.peaks) earliest = std::min(earliest, p.time_ns);
    for (const snapshot::NvtxInterval &v : snapshot.nvtx_intervals) earliest = std::min(earliest, v.start_ns);
    const snapshot::ProcessInfo &p = snapshot.process;
    if (p.dump_monotonic_ns != 0 && p.dump_time_ns >= p.start_time_ns &&
        p.dump_monotonic_ns >= p.dump_time_ns - p.start_time_ns) {
        uint64_t start = p.dump_monotonic_ns - (p.dump_time_ns - p.start_time_ns);
        return std::min(start, earliest);
    }
    return earliest == UINT64_MAX ? 0 : earliest;
}

std::vector<const snapshot::Event *> wanted_events(const Snapshot &snapshot, const Options &options) {
    std::vector<const snapshot::Event *> out;
    for (const snapshot::Event &e : snapshot.events.events) {
        if (e.type == "mark" || device_wanted(options, e.device)) out.push_back(&e);
    }
    return out;
}

Timeline build_timeline(const Snapshot &snapshot, const Options &options) {
    Timeline timeline;
    std::map<int, DeviceSeries> series;
    const auto &events = snapshot.events.events;
    bool any_memory_event = std::any_of(events.begin(), events.end(),
                                        [](const snapshot::Event &e) { return e.type == "alloc" || e.type == "free"; });
    if (any_memory_event) {
        timeline.from_events = true;
        // Net change per device over the history, to find what was live before its first event.
        std::map<int, int64_t> net;
        for (const snapshot::Event &e : events) {
            if (!device_wanted(options, e.device) || !held_kind(e.kind)) continue;
            if (e.type == "alloc") net[e.device] += int64_t(e.size);
            else if (e.type == "free") net[e.device] -= int64_t(e.size);
        }
        std::map<int, int64_t> level;
        for (auto &[device, change] : net) {
            int64_t current = 0;
            for (const snapshot::DeviceTotals &d : snapshot.devices)
                if (d.device == device) current = int64_t(d.current_bytes);
            level[device] = std::max<int64_t>(0, current - change);
            DeviceSeries &s = series[device];
            s.device = device;
            s.points.push_back({events.front().time_ns, uint64_t(level[device])});
            s.max_bytes = uint64_t(level[device]);
        }
        for (const snapshot::Event &e : events) {
            if (!device_wanted(options, e.device) || !held_kind(e.kind)) continue;
            if (e.type != "alloc" && e.type != "free") continue;
            int64_t &v = level[e.device];
            v = e.type == "alloc" ? v + int64_t(e.size) : std::max<int64_t>(0, v - int64_t(e.size));
            DeviceSeries &s = series[e.device];
            s.points.push_back({e.time_ns, uint64_t(v)});
            s.max_bytes = std::max(s.max_bytes, uint64_t(v));
        }
    } else {
        std::vector<const snapshot::Allocation *> live;
        for (const snapshot::Allocation &a : snapshot.allocations)
            if (snapshot::counts_as_held(a) && device_wanted(options, a.device)) live.push_back(&a);
        std::stable_sort(live.begin(), live.end(), [](auto *a, auto *b) {
            return a->time_ns != b->time_ns ? a->time_ns < b->time_ns : a->address < b->address;
        });
        for (const snapshot::Allocation *a : live) {
            DeviceSeries &s = series[a->device];
            if (s.points.empty()) {
                s.device = a->device;
                s.points.push_back({a->time_ns, 0});
            }
            uint64_t v = s.points.back().bytes + a->size;
            s.points.push_back({a->time_ns, v});
            s.max_bytes = std::max(s.max_bytes, v);
        }
    }
    for (auto &[device, s] : series) timeline.devices.push_back(std::move(s));
    return timeline;
}

std::vector<WeightedStack> weighted_stacks(const Snapshot &snapshot, const Options &options, At at) {
    std::map<std::pair<int, uint32_t>, WeightedStack> by_key;
    if (at == At::Peak) {
        for (const snapshot::DevicePeak &peak : snapshot.peaks) {
            if (!device_wanted(options, peak.device)) continue;
            for (const snapshot::PeakSite &site : peak.sites) {
                WeightedStack &w = by_key[{peak.device, site.stack}];
                w.device = peak.device;
                w.stack = site.stack;
                w.bytes += site.bytes;
                w.count += site.count;
            }
        }
    } else {
        for (const snapshot::Allocation &a : snapshot.allocations) {
            if (!snapshot::counts_as_held(a) || !device_wanted(options, a.device)) continue;
            uint32_t stack = snapshot.find_stack(a.stack) ? a.stack : 0;
            WeightedStack &w = by_key[{a.device, stack}];
            w.device = a.device;
            w.stack = stack;
            w.bytes += a.size;
            w.count += 1;
        }
    }
    std::vector<WeightedStack> out;
    for (auto &[key, w] : by_key)
        if (w.bytes != 0 || w.count != 0) out.push_back(w);
    return out;
}

} // namespace vramtrace::exporter
