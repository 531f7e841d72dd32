// Chrome Trace Event JSON (the "JSON object" form), read by chrome://tracing and ui.perfetto.dev.
// Layout and field mapping: docs/exports.md. One trace event per line, in a fixed order (metadata,
// counters per device, then events oldest first), so the output is byte-stable for a snapshot.
#include <algorithm>
#include <set>

#include "export/export.h"
#include "export/export_common.h"
#include "report/text_format.h"

namespace vramtrace::exporter {

namespace {

struct Writer {
    std::string out;
    bool first = true;
    void begin_event() {
        out += first ? "\n" : ",\n";
        first = false;
    }
};

std::string process_title(const snapshot::Snapshot &snapshot) {
    std::string title = "vramtrace:";
    for (const std::string &arg : snapshot.process.command_line) title += " " + arg;
    if (snapshot.process.command_line.empty()) title += " pid " + to_dec_signed(snapshot.process.pid);
    return title;
}

} // namespace

std::string export_chrome(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes) {
    const std::string pid = to_dec_signed(snapshot.process.pid);
    const uint64_t origin = time_origin_ns(snapshot);
    auto ts = [&](uint64_t t) { return micros_text(t > origin ? t - origin : 0); };
    Writer w;
    w.out = "{\"traceEvents\": [";

    std::vector<const snapshot::Event *> events = wanted_events(snapshot, options);
    bool has_history = !snapshot.events.events.empty();
    if (!has_history && notes)
        notes->push_back("the snapshot has no event history (" + no_history_reason(snapshot) +
                         "): the trace shows only the allocations live at the dump, at the times they were made");

    // Metadata: the process and every thread that appears.
    w.begin_event();
    w.out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + pid + ", \"tid\": 0, \"args\": {\"name\": ";
    append_json_string(w.out, process_title(snapshot));
    w.out += "}}";
    std::set<uint32_t> threads;
    if (has_history) {
        for (const snapshot::Event *e : events) threads.insert(e->thread_id);
    } else {
        for (const snapshot::Allocation &a : snapshot.allocations)
            if (device_wanted(options, a.device)) threads.insert(a.thread_id);
        for (const snapshot::OomEvent &o : snapshot.ooms)
            if (device_wanted(options, o.device)) threads.insert(o.thread_id);
    }
    for (const snapshot::NvtxInterval &v : snapshot.nvtx_intervals) threads.insert(v.start_thread);
    for (uint32_t tid : threads) {
        w.begin_event();
        w.out += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " + pid + ", \"tid\": " + to_dec(tid) +
                 ", \"args\": {\"name\": \"thread " + to_dec(tid) + "\"}}";
    }

    // Counter tracks: tracked bytes per device.
    Timeline timeline = build_timeline(snapshot, options);
    for (const DeviceSeries &s : timeline.devices) {
        std::string name = "tracked bytes " + report::device_label(s.device);
        for (const SeriesPoint &p : s.points) {
            w.begin_event();
            w.out += "{\"name\": \"" + name + "\", \"ph\": \"C\", \"ts\": " + ts(p.time_ns) + ", \"pid\": " + pid +
                     ", \"args\": {\"bytes\": " + to_dec(p.bytes) + "}}";
        }
    }

    // NVTX start/end ranges: one complete slice each on the track of the thread that started it,
    // by start time; one still open at the dump runs to the dump.
    for (const snapshot::NvtxInterval &v : snapshot.nvtx_intervals) {
        bool open = v.end_ns == 0;
        uint64_t end = open ? std::max(v.start_ns, snapshot.process.dump_monotonic_ns) : std::max(v.start_ns, v.end_ns);
        w.begin_event();
        w.out += "{\"name\": ";
        append_json_string(w.out, v.domain.empty() ? v.name : v.domain + ":" + v.name);
        w.out += ", \"cat\": \"nvtx\", \"ph\": \"X\", \"ts\": " + ts(v.start_ns) + ", \"dur\": " +
                 micros_text(end - v.start_ns) + ", \"pid\": " + pid + ", \"tid\": " + to_dec(v.start_thread) +
                 ", \"args\": {\"domain\": ";
        append_json_string(w.out, v.domain);
        if (!v.category.empty()) {
            w.out += ", \"category\": ";
            append_json_string(w.out, v.category);
        }
        w.out += ", \"start_thread\": " + to_dec(v.start_thread);
        w.out += open ? std::string(", \"open\": true") : ", \"end_thread\": " + to_dec(v.end_thread);
        w.out += "}}";
    }

    // The frame rules' category of the stack, and its via when it has one.
    auto attribution = [&](uint32_t stack) {
        w.out += ", \"category\": ";
        append_json_string(w.out, category_text(snapshot, stack));
        if (std::string_view via = via_text(snapshot, stack); !via.empty()) {
            w.out += ", \"via\": ";
            append_json_string(w.out, via);
        }
    };
    auto memory_event = [&](const char *what, uint64_t time_ns, uint32_t tid, int device, uint64_t address,
                            uint64_t size, const std::string &kind, const std::string &api, uint32_t stack,
                            uint32_t range) {
        w.begin_event();
        w.out += "{\"name\": \"" + std::string(what) + " " + report::format_bytes(size) + "\", \"cat\": \"" + what +
                 "\", \"ph\": \"i\", \"s\": \"t\", \"ts\": " + ts(time_ns) + ", \"pid\": " + pid +
                 ", \"tid\": " + to_dec(tid) + ", \"args\": {\"device\": \"" + report::device_label(device) +
                 "\", \"size\": " + to_dec(size) + ", \"address\": \"" + report::hex_u64(address) + "\", \"kind\": ";
        append_json_string(w.out, kind);
        w.out += ", \"api\": ";
        append_json_string(w.out, api);
        w.out += ", \"call_site\": ";
        append_json_string(w.out, call_site_text(snapshot, stack));
        attribution(stack);
        if (range != 0) {
            w.out += ", \"nvtx_range\": ";
            append_json_string(w.out, report::range_stack_label(snapshot, range));
        }
        w.out += "}}";
    };
    auto oom_event = [&](uint64_t time_ns, uint32_t tid, int device, uint64_t requested, const std::string &api,
                         uint32_t stack) {
        w.begin_event();
        w.out += "{\"name\": \"out of memory " + report::format_bytes(requested) +
                 "\", \"cat\": \"oom\", \"ph\": \"i\", \"s\": \"p\", \"ts\": " + ts(time_ns) + ", \"pid\": " + pid +
                 ", \"tid\": " + to_dec(tid) + ", \"args\": {\"device\": \"" + report::device_label(device) +
                 "\", \"requested\": " + to_dec(requested) + ", \"api\": ";
        append_json_string(w.out, api);
        w.out += ", \"call_site\": ";
        append_json_string(w.out, call_site_text(snapshot, stack));
        attribution(stack);
        w.out += "}}";
    };

    if (has_history) {
        for (const snapshot::Event *e : events) {
            if (e->type == "alloc" || e->type == "free") {
                memory_event(e->type.c_str(), e->time_ns, e->thread_id, e->device, e->address, e->size, e->kind,
                             e->api, e->stack, e->range);
            } else if (e->type == "oom") {
                oom_event(e->time_ns, e->thread_id, e->device, e->size, e->api, e->stack);
            } else if (e->type == "mark") {
                w.begin_event();
                w.out += "{\"name\": ";
                append_json_string(w.out, e->label);
                w.out += ", \"cat\": \"mark\", \"ph\": \"i\", \"s\": \"g\", \"ts\": " + ts(e->time_ns) +
                         ", \"pid\": " + pid + ", \"tid\": " + to_dec(e->thread_id) + "}";
            }
        }
    } else {
        std::vector<const snapshot::Allocation *> live;
        for (const snapshot::Allocation &a : snapshot.allocations)
            if (device_wanted(options, a.device)) live.push_back(&a);
        std::stable_sort(live.begin(), live.end(), [](auto *a, auto *b) { return a->time_ns < b->time_ns; });
        for (const snapshot::Allocation *a : live)
            memory_event("alloc", a->time_ns, a->thread_id, a->device, a->address, a->size, a->kind, a->api, a->stack,
                         a->range);
        for (const snapshot::OomEvent &o : snapshot.ooms)
            if (device_wanted(options, o.device))
                oom_event(o.time_ns, o.thread_id, o.device, o.requested_bytes, o.api, o.stack);
    }
    // Each device's peak, where the snapshot knows when it was.
    for (const snapshot::DevicePeak &p : snapshot.peaks) {
        if (!device_wanted(options, p.device) || p.time_ns == 0) continue;
        w.begin_event();
        w.out += "{\"name\": \"peak " + report::device_label(p.device) + " " + report::format_bytes(p.peak_bytes) +
                 "\", \"cat\": \"peak\", \"ph\": \"i\", \"s\": \"p\", \"ts\": " + ts(p.time_ns) + ", \"pid\": " +
                 pid + ", \"tid\": 0, \"args\": {\"device\": \"" + report::device_label(p.device) +
                 "\", \"peak_bytes\": " + to_dec(p.peak_bytes) + "}}";
    }

    w.out += "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"source\": ";
    append_json_string(w.out, "vramtrace " + snapshot.process.vramtrace_version);
    w.out += ", \"reason\": ";
    append_json_string(w.out, snapshot.process.reason);
    w.out += ", \"host\": ";
    append_json_string(w.out, snapshot.process.host);
    w.out += ", \"history\": ";
    std::string history = !has_history                   ? "none: only allocations live at the dump"
                          : snapshot.events.wrapped ? "wrapped: events before " + ts(snapshot.events.complete_from_ns) +
                                                          " us were dropped"
                                                    : "complete";
    append_json_string(w.out, history);
    w.out += "}}\n";
    return w.out;
}

} // namespace vramtrace::exporter
