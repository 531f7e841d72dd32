// The JSON object of one snapshot for the interactive report. See page_data.h.
#include "export/html/page_data.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "analysis/call_sites.h"
#include "export/export_common.h"
#include "export/html/exit_classes.h"
#include "report/text_safety.h"
#include "symbolize/frame_rules.h"
#include "report/text_format.h"

namespace vramtrace::exporter::html {

namespace {

// Band flags (viewer_base.js reads the same values).
constexpr unsigned kBeforeHistory = 1; // allocated before the kept history began: start unknown
constexpr unsigned kLiveAtDump = 2;    // still live when the snapshot was taken
constexpr unsigned kTeardown = 4;      // ended by a context teardown, not by a free of the program

// Frame flags (viewer_base.js reads the same values): what the frame rules' groups say a frame is,
// for the flame graph's "hide runtime frames". The groups are the frame rules' (frame_rules.txt),
// not a list of the viewer's own.
constexpr unsigned kFrameInlined = 1, kFramePython = 2;
constexpr unsigned kFrameRuntime = 4; // vramtrace, the CUDA runtime and driver, libc's start-up
constexpr unsigned kFrameCpython = 8; // the interpreter's C code (hidden where Python frames are)

unsigned frame_group_flags(const snapshot::Snapshot &snapshot, int index) {
    if (index < 0 || size_t(index) >= snapshot.frames.size()) return 0;
    const snapshot::Frame &frame = snapshot.frames[size_t(index)];
    if (frame.python) return 0;
    std::string_view module;
    if (frame.module >= 0 && size_t(frame.module) < snapshot.modules.size()) module = snapshot.modules[size_t(frame.module)].path;
    std::string_view group = FrameRules::from_environment().judge(frame, module).group;
    if (group == "vramtrace" || group == "cuda_runtime" || group == "cuda_driver" || group == "system") return kFrameRuntime;
    if (group == "cpython") return kFrameCpython;
    return 0;
}

struct Band {
    uint64_t start = 0, end = 0; // ns from the origin
    uint64_t size = 0;
    uint32_t stack = 0;          // Stack::id
    std::string_view api;
    uint32_t thread = 0;
    uint64_t stream = 0;
    bool stream_known = false;   // the history does not record streams: only live allocations'
    uint64_t address = 0;
    unsigned flags = 0;
    uint32_t range = 0;          // RangeStack::id; 0: no range (or not known for this band)
    size_t order = 0;            // ties of start keep the history's order
};

// Strings, frames and stacks interned into the tables of the object.
class Tables {
public:
    explicit Tables(const snapshot::Snapshot &snapshot) : snapshot_(snapshot) {
        string("");
        // Index 0: allocations without a stack.
        stacks_json_ = "[[" + to_dec(string(kNoStackName)) + "," + to_dec(string("other")) + ",0,[]," +
                       to_dec(string(cli::kNoStackKey)) + ",-1]";
        stack_index_[0] = 0;
    }
    int string(std::string_view raw) {
        std::string text = report::escape_control_characters(raw);
        auto [it, added] = strings_.try_emplace(text, int(strings_.size()));
        if (added) {
            if (strings_.size() > 1) strings_json_ += ',';
            append_json_string(strings_json_, text);
        }
        return it->second;
    }
    // The index of a stack id in the stacks table (0 for none or an unknown id).
    int stack(uint32_t id) {
        if (auto it = stack_index_.find(id); it != stack_index_.end()) return it->second;
        const snapshot::Stack *stack = snapshot_.find_stack(id);
        if (!stack) return stack_index_[id] = 0;
        int index = int(stack_index_.size());
        stack_index_[id] = index;
        std::string frames;
        std::vector<NamedFrame> named = expand_stack(snapshot_, stack);
        // The leaf-most frames are kept (the call site is among them); the marker stands for the
        // outer frames, where the flame graph's root is.
        size_t keep = std::min(named.size(), kMaxStackFrames);
        // Where the call-site frame is among them (its innermost inlined function when it has
        // any, as the call site's text names it), -1 when none is: the flame graph colours that
        // node as the timeline colours the site.
        int site_at = -1;
        if (stack->call_site >= 0 && size_t(stack->call_site) < stack->frames.size())
            for (size_t i = 0; i < keep && site_at < 0; ++i)
                if (named[i].frame == int(stack->frames[size_t(stack->call_site)])) site_at = int(i);
        for (size_t i = 0; i < keep; ++i) {
            if (i) frames += ',';
            frames += to_dec(frame(named[i]));
        }
        if (keep < named.size()) frames += "," + to_dec(frame_marker(named.size() - keep));
        stacks_json_ += ",[" + to_dec(string(call_site_text(snapshot_, id))) + "," +
                        to_dec(string(category_text(snapshot_, id))) + "," + to_dec(string(via_text(snapshot_, id))) +
                        ",[" + frames + "]," + to_dec(string(cli::stack_key(snapshot_, *stack, {}))) + "," +
                        std::to_string(site_at) + "]";
        return index;
    }
    std::string strings_json() const { return "[" + strings_json_ + "]"; }
    std::string frames_json() const { return "[" + frames_json_ + "]"; }
    std::string stacks_json() const { return stacks_json_ + "]"; }

private:
    int frame(const NamedFrame &f) {
        std::string key = f.name + '\n' + f.file + '\n' + to_dec(f.line) + (f.inlined ? "i" : "") +
                          (f.frame >= 0 && size_t(f.frame) < snapshot_.frames.size() && snapshot_.frames[f.frame].python
                               ? "p"
                               : "");
        auto [it, added] = frames_.try_emplace(key, int(frames_.size()));
        if (added) {
            unsigned flags = (f.inlined ? kFrameInlined : 0u) | (key.back() == 'p' ? kFramePython : 0u) |
                             frame_group_flags(snapshot_, f.frame);
            if (frames_.size() > 1) frames_json_ += ',';
            frames_json_ += "[" + to_dec(string(f.name)) + "," + to_dec(string(f.file)) + "," + to_dec(f.line) + "," +
                            to_dec(flags) + "]";
        }
        return it->second;
    }
    int frame_marker(size_t left_out) {
        NamedFrame f;
        f.name = "(" + to_dec(left_out) + " more frames not drawn)";
        return frame(f);
    }

    const snapshot::Snapshot &snapshot_;
    std::unordered_map<std::string, int> strings_, frames_;
    std::map<uint32_t, int> stack_index_;
    std::string strings_json_, frames_json_, stacks_json_;
};

uint64_t since(uint64_t t, uint64_t origin) { return t > origin ? t - origin : 0; }

std::string json_text(std::string_view raw) {
    std::string out;
    append_json_string(out, report::escape_control_characters(raw));
    return out;
}

// The bands of each wanted device, start ascending: allocations paired with their frees in the
// event history, those freed without an allocation in it (made before the history began), those
// still live at the dump; or, with no history, the live allocations alone.
std::map<int, std::vector<Band>> make_bands(const snapshot::Snapshot &snapshot, const Options &options, uint64_t origin,
                                            uint64_t end, bool from_events) {
    std::map<int, std::vector<Band>> bands;
    std::map<std::pair<int, uint64_t>, const snapshot::Allocation *> live;
    for (const snapshot::Allocation &a : snapshot.allocations)
        if (snapshot::counts_as_held(a) && device_wanted(options, a.device)) live[{a.device, a.address}] = &a;
    // Events carry no range: an alloc event takes the range of the live allocation with the same
    // device, address and time (the same record, seen twice); any other band has none.
    std::map<std::tuple<int, uint64_t, uint64_t>, uint32_t> range_of;
    for (const snapshot::Allocation &a : snapshot.allocations)
        if (a.range) range_of[{a.device, a.address, a.time_ns}] = a.range;
    size_t order = 0;
    if (from_events) {
        uint64_t history_start = since(snapshot.events.complete_from_ns, origin);
        std::map<std::pair<int, uint64_t>, size_t> open; // (device, address) -> index in bands[device]
        for (const snapshot::Event &e : snapshot.events.events) {
            if ((e.type != "alloc" && e.type != "free") || !device_wanted(options, e.device) || !held_kind(e.kind))
                continue;
            std::vector<Band> &list = bands[e.device];
            auto key = std::make_pair(e.device, e.address);
            if (e.type == "alloc") {
                if (auto it = open.find(key); it != open.end()) list[it->second].end = since(e.time_ns, origin);
                Band b;
                b.start = b.end = since(e.time_ns, origin);
                b.size = e.size;
                b.stack = e.stack;
                b.api = e.api;
                b.thread = e.thread_id;
                b.address = e.address;
                if (auto r = range_of.find({e.device, e.address, e.time_ns}); r != range_of.end()) b.range = r->second;
                b.order = order++;
                open[key] = list.size();
                list.push_back(b);
            } else if (auto it = open.find(key); it != open.end()) {
                list[it->second].end = since(e.time_ns, origin);
                if (!e.freed_by.empty()) list[it->second].flags |= kTeardown;
                open.erase(it);
            } else {
                Band b;
                b.start = std::min(history_start, since(e.time_ns, origin));
                b.end = since(e.time_ns, origin);
                b.size = e.size;
                b.stack = e.stack;
                b.thread = e.thread_id;
                b.address = e.address;
                b.flags = kBeforeHistory | (e.freed_by.empty() ? 0 : kTeardown);
                b.order = order++;
                list.push_back(b);
            }
        }
        // Never freed in the history: live at the dump (also when the live table could not hold
        // the record, so the stream is known only for those it lists).
        for (auto &[key, index] : open) {
            Band &b = bands[key.first][index];
            b.end = end;
            b.flags |= kLiveAtDump;
            if (auto it = live.find(key); it != live.end()) {
                b.stream = it->second->stream;
                b.stream_known = true;
                live.erase(it);
            }
        }
    }
    // Live allocations the history does not show being made (all of them without a history).
    for (auto &[key, a] : live) {
        Band b;
        b.start = since(a->time_ns, origin);
        b.end = end;
        b.size = a->size;
        b.stack = a->stack;
        b.api = a->api;
        b.thread = a->thread_id;
        b.stream = a->stream;
        b.stream_known = true;
        b.address = a->address;
        b.range = a->range;
        b.flags = kLiveAtDump | (from_events ? kBeforeHistory : 0);
        b.order = order++;
        bands[key.first].push_back(b);
    }
    for (auto &[device, list] : bands)
        std::stable_sort(list.begin(), list.end(), [](const Band &a, const Band &b) {
            return a.start != b.start ? a.start < b.start : a.order < b.order;
        });
    return bands;
}

// The range stacks of the snapshot as a table of labels (range_stack_label, "(no range)" first):
// bands and peaks name a range by its index here.
class RangeIndex {
public:
    RangeIndex(const snapshot::Snapshot &snapshot, Tables &tables) : snapshot_(snapshot), tables_(tables) { index(0); }
    int index(uint32_t id) {
        auto [it, added] = index_.try_emplace(id, int(index_.size()));
        if (added) json_ += (json_.empty() ? "" : ",") + to_dec(tables_.string(report::range_stack_label(snapshot_, id)));
        return it->second;
    }
    std::string json() const { return "[" + json_ + "]"; }

private:
    const snapshot::Snapshot &snapshot_;
    Tables &tables_;
    std::map<uint32_t, int> index_;
    std::string json_;
};

// A band list as columns: start as the difference from the previous start (the list is sorted),
// the rest as they are, so that the data stays small and linear in the events.
std::string bands_json(const std::vector<Band> &list, Tables &tables, RangeIndex *ranges) {
    std::string t0, dur, size, stack, api, thread, stream, flags, address, range;
    uint64_t previous = 0;
    for (size_t i = 0; i < list.size(); ++i) {
        const Band &b = list[i];
        const char *sep = i ? "," : "";
        t0 += sep + to_dec(b.start - previous);
        previous = b.start;
        dur += sep + to_dec(b.end - std::min(b.end, b.start));
        size += sep + to_dec(b.size);
        stack += sep + to_dec(tables.stack(b.stack));
        api += sep + to_dec(tables.string(b.api));
        thread += sep + to_dec(b.thread);
        stream += sep + to_dec(b.stream_known ? tables.string(report::hex_u64(b.stream)) : 0);
        flags += sep + to_dec(b.flags);
        address += std::string(sep) + "\"" + report::hex_u64(b.address) + "\"";
        if (ranges) range += sep + to_dec(ranges->index(b.range));
    }
    return "{\"t0\":[" + t0 + "],\"dur\":[" + dur + "],\"size\":[" + size + "],\"stack\":[" + stack + "],\"api\":[" +
           api + "],\"thread\":[" + thread + "],\"stream\":[" + stream + "],\"flags\":[" + flags + "],\"addr\":[" +
           address + "]" + (ranges ? ",\"range\":[" + range + "]" : std::string()) + "}";
}

} // namespace

std::string page_data_json(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes) {
    const std::vector<snapshot::NvtxInterval> &intervals = snapshot.nvtx_intervals;
    Tables tables(snapshot);
    const snapshot::ProcessInfo &proc = snapshot.process;
    uint64_t origin = time_origin_ns(snapshot);
    uint64_t end = 0;
    for (const snapshot::Event &e : snapshot.events.events) end = std::max(end, since(e.time_ns, origin));
    for (const snapshot::Allocation &a : snapshot.allocations) end = std::max(end, since(a.time_ns, origin));
    for (const snapshot::OomEvent &o : snapshot.ooms) end = std::max(end, since(o.time_ns, origin));
    if (proc.dump_monotonic_ns) end = std::max(end, since(proc.dump_monotonic_ns, origin));
    if (end == 0) end = 1;

    const auto &events = snapshot.events.events;
    bool from_events = std::any_of(events.begin(), events.end(),
                                   [](const snapshot::Event &e) { return e.type == "alloc" || e.type == "free"; });
    std::vector<std::string> page_notes;
    if (!from_events) {
        page_notes.push_back(snapshot.events.capacity == 0 && snapshot.events.recorded == 0
                                 ? "The snapshot has no event history (" + no_history_reason(snapshot) +
                                       "): the timeline shows only the allocations live at the dump, from the "
                                       "times they were made; memory freed before the dump is not shown."
                                 : "The event history holds no allocation or free: the timeline shows only the "
                                   "allocations live at the dump.");
        if (notes) notes->push_back("the snapshot has no event history: the timeline shows only the allocations live at the dump");
    } else if (snapshot.events.wrapped) {
        page_notes.push_back("The event history wrapped (" + to_dec(snapshot.events.recorded) + " events recorded, " +
                             to_dec(snapshot.events.capacity) +
                             " kept): before " + report::format_duration(since(snapshot.events.complete_from_ns, origin)) +
                             " the timeline shows only the allocations freed or live later, from the start of the "
                             "kept history (their start is not known); raise VRAMTRACE_EVENTS to keep more.");
        if (notes) notes->push_back("the event history wrapped: the timeline is complete only from the oldest kept event");
    }
    if (snapshot.dropped_allocations)
        page_notes.push_back(to_dec(snapshot.dropped_allocations) +
                             " allocations were not recorded (the live table was full); the figures leave them out.");

    std::map<int, std::vector<Band>> bands = make_bands(snapshot, options, origin, end, from_events);
    // NVTX range colouring and tables only for a snapshot that names range stacks.
    std::optional<RangeIndex> ranges;
    if (!snapshot.range_stacks.empty()) ranges.emplace(snapshot, tables);
    std::map<int, bool> devices;
    for (auto &[device, list] : bands) devices[device] = true;
    for (const snapshot::DevicePeak &p : snapshot.peaks)
        if (device_wanted(options, p.device) && p.peak_bytes) devices[p.device] = true;

    std::string out = "{\"title\":";
    std::string cmd;
    for (const std::string &a : proc.command_line) cmd += (cmd.empty() ? "" : " ") + a;
    out += json_text(cmd) + ",\"pid\":" + to_dec_signed(proc.pid) + ",\"host\":" + json_text(proc.host) +
           ",\"reason\":" + json_text(proc.reason) + ",\"version\":" + json_text(proc.vramtrace_version) +
           ",\"end\":" + to_dec(end) + ",\"history\":{\"from_events\":" + (from_events ? "true" : "false") +
           ",\"wrapped\":" + (snapshot.events.wrapped ? "true" : "false") +
           ",\"complete_from\":" + to_dec(since(snapshot.events.complete_from_ns, origin)) +
           ",\"capacity\":" + to_dec(snapshot.events.capacity) + ",\"recorded\":" + to_dec(snapshot.events.recorded) +
           "},\"notes\":[";
    for (size_t i = 0; i < page_notes.size(); ++i) out += (i ? "," : "") + json_text(page_notes[i]);
    out += "],\"categories\":" + std::string(has_categories(snapshot) ? "true" : "false") + ",\"devices\":[";
    bool first = true;
    for (auto &[device, unused] : devices) {
        out += first ? "{" : ",{";
        first = false;
        out += "\"device\":" + to_dec_signed(device) + ",\"label\":" + json_text(report::device_label(device));
        for (const snapshot::DeviceTotals &t : snapshot.devices) {
            if (t.device != device) continue;
            out += ",\"current\":" + to_dec(t.current_bytes) + ",\"peak\":" + to_dec(t.peak_bytes);
            if (t.total_memory_bytes) out += ",\"capacity\":" + to_dec(*t.total_memory_bytes);
            if (t.graph_reserved_bytes)
                out += ",\"graph\":[" + to_dec(*t.graph_reserved_bytes) + "," + to_dec(t.graph_used_bytes.value_or(0)) + "]";
        }
        for (const snapshot::DevicePeak &p : snapshot.peaks) {
            if (p.device != device) continue;
            out += ",\"peak_time\":" + to_dec(since(p.time_ns, origin)) + ",\"peak_sites\":[";
            for (size_t i = 0; i < p.sites.size(); ++i)
                out += (i ? ",[" : "[") + to_dec(tables.stack(p.sites[i].stack)) + "," + to_dec(p.sites[i].bytes) + "," +
                       to_dec(p.sites[i].count) + "]";
            out += "]";
            if (ranges && !p.ranges.empty()) {
                out += ",\"peak_ranges\":[";
                for (size_t i = 0; i < p.ranges.size(); ++i)
                    out += (i ? ",[" : "[") + to_dec(ranges->index(p.ranges[i].range)) + "," + to_dec(p.ranges[i].bytes) +
                           "," + to_dec(p.ranges[i].count) + "]";
                out += "]";
            }
        }
        // Virtual memory management on this device: mapped ranges, physical handles.
        uint64_t mapped = 0, physical = 0;
        for (const snapshot::Allocation &a : snapshot.allocations) {
            if (a.device != device) continue;
            if (a.kind == "vmm_mapping") mapped += a.size;
            else if (a.kind == "vmm_physical") physical += a.size;
        }
        if (mapped || physical) out += ",\"vmm\":[" + to_dec(mapped) + "," + to_dec(physical) + "]";
        static const std::vector<Band> kNone;
        auto it = bands.find(device);
        out += ",\"bands\":" + bands_json(it == bands.end() ? kNone : it->second, tables, ranges ? &*ranges : nullptr) + "}";
    }
    // Reserved virtual address space (cuMemAddressReserve) belongs to no device.
    uint64_t va_reserved = 0;
    for (const snapshot::Allocation &a : snapshot.allocations)
        if (a.kind == "va_reservation") va_reserved += a.size;
    out += "],\"va_reserved\":" + to_dec(va_reserved) + ",\"marks\":[";
    first = true;
    for (const snapshot::Event &e : events) {
        if (e.type != "mark") continue;
        out += (first ? "[" : ",[") + to_dec(since(e.time_ns, origin)) + "," + to_dec(tables.string(e.label)) + "]";
        first = false;
    }
    out += "],\"ooms\":[";
    first = true;
    for (const snapshot::OomEvent &o : snapshot.ooms) {
        if (!device_wanted(options, o.device)) continue;
        out += (first ? "[" : ",[") + to_dec(since(o.time_ns, origin)) + "," + to_dec_signed(o.device) + "," +
               to_dec(o.requested_bytes) + "," + to_dec(tables.stack(o.stack)) + "," + to_dec(tables.string(o.api)) +
               "," + to_dec(o.thread_id) + "," + to_dec(o.tracked_bytes) + "]";
        first = false;
    }
    out += "],\"pools\":[";
    first = true;
    for (const snapshot::Pool &p : snapshot.pools) {
        if (!device_wanted(options, p.device)) continue;
        out += (first ? "[" : ",[") + to_dec_signed(p.device) + "," + (p.is_default ? "1" : "0") + "," +
               to_dec(p.reserved_bytes) + "," + to_dec(p.used_bytes) + "," + to_dec(p.reserved_high_bytes) + "," +
               to_dec(p.used_high_bytes) + ",\"" + report::hex_u64(p.handle) + "\"]";
        first = false;
    }
    out += "]";
    if (ranges) out += ",\"ranges\":" + ranges->json();
    // NVTX start/end intervals: [start, end, name, domain, start thread, end thread, open]; an open
    // one ends at the dump (end thread 0).
    if (!intervals.empty()) {
        out += ",\"intervals\":[";
        for (size_t i = 0; i < intervals.size(); ++i) {
            const snapshot::NvtxInterval &n = intervals[i];
            const bool open = n.end_ns == 0; // the model's "still open at the dump"
            uint64_t start = since(n.start_ns, origin), stop = open ? std::max(end, start) : since(n.end_ns, origin);
            out += (i ? ",[" : "[") + to_dec(start) + "," + to_dec(stop) + "," + to_dec(tables.string(n.name)) + "," +
                   to_dec(tables.string(n.domain)) + "," + to_dec(n.start_thread) + "," + to_dec(open ? 0 : n.end_thread) +
                   "," + (open ? "1" : "0") + "]";
        }
        out += "]";
    }
    out += ",\"exit\":" + exit_classes_json(snapshot, options, [&](std::string_view text) { return tables.string(text); });
    out += ",\"strings\":" + tables.strings_json() + ",\"frames\":" + tables.frames_json() +
           ",\"stacks\":" + tables.stacks_json() + "}";
    return out;
}

} // namespace vramtrace::exporter::html
