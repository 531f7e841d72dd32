// The summary formatter shared by the preload library (stderr at exit) and `vramtrace summary`.
// Vocabulary after torch.cuda.memory_summary: current / peak / total allocated / total freed.
#include "report/summary_format.h"

#include "report/live_classes.h"
#include "report/summary_body.h"
#include "report/summary_headline.h"
#include "report/summary_lines.h"
#include "report/summary_nvtx.h"
#include "report/text_safety.h"
#include "snapshot/snapshot_fields.h"
#include "report/text_format.h"
#include "report/call_site_groups.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vramtrace::report {

using snapshot::Allocation;
using snapshot::DevicePeak;
using snapshot::DeviceTotals;
using snapshot::Event;
using snapshot::Frame;
using snapshot::OomEvent;
using snapshot::PeakSite;
using snapshot::Pool;
using snapshot::ProcessInfo;
using snapshot::Snapshot;
using snapshot::Stack;
using snapshot::Teardown;

using namespace summary;

namespace {

void header(Lines &lines, const Snapshot &s) {
    const ProcessInfo &p = s.process;
    std::string title = "==== memory summary: pid " + std::to_string(p.pid);
    if (!p.host.empty()) title += " on " + one_line(p.host);
    if (!p.rank.empty()) title += ", rank " + one_line(p.rank);
    lines.add(title + " ====");
}

void about(Lines &lines, const Snapshot &s) {
    const ProcessInfo &p = s.process;
    std::string command = !p.command_line.empty() ? shell_words(p.command_line)
                          : !p.executable.empty() ? p.executable
                                                  : "(unknown)";
    lines.add("command: " + one_line(command));

    std::string when;
    if (p.reason == "exit" && !p.signal.empty()) {
        when = "snapshot taken at exit, ended by " + one_line(p.signal);
        if (p.signal_sender_pid != 0)
            when += " from pid " + std::to_string(p.signal_sender_pid) +
                    (p.signal_sender_uid >= 0 ? " (uid " + std::to_string(p.signal_sender_uid) + ")" : "");
    } else if (p.reason == "exit") when = "snapshot taken at exit";
    else if (p.reason == "api") when = "snapshot taken on request (vramtrace_dump)";
    else if (p.reason.empty()) when = "snapshot taken (reason unknown)";
    else when = "snapshot taken (reason: " + one_line(p.reason) + ")";
    if (p.start_time_ns != 0 && p.dump_time_ns >= p.start_time_ns)
        when += ", " + format_duration(p.dump_time_ns - p.start_time_ns) + " after start";
    else
        when += ", running time unknown";
    std::string about;
    if (!p.vramtrace_version.empty()) about = "vramtrace " + one_line(p.vramtrace_version);
    if (p.driver_version > 0) {
        if (!about.empty()) about += ", ";
        about += "CUDA driver " + driver_text(p.driver_version);
    }
    if (!about.empty()) when += " (" + about + ")";
    lines.add(when);
    if (!p.python.empty())
        lines.add("Python " + one_line(p.python) + ": call sites are Python lines; [no Python frames]: allocated by a "
                  "thread without the GIL");
}

std::string cell(const std::optional<uint64_t> &v, bool bytes) {
    if (!v) return "-";
    return bytes ? format_bytes(*v) : to_dec(*v);
}

std::vector<std::string> figures_row(std::string label, const Figures &f, bool bytes) {
    return {std::move(label), cell(f.cur, bytes), cell(f.peak, bytes), cell(f.alloc, bytes), cell(f.freed, bytes)};
}

Figures from_replay(uint64_t cur, const DeviceReplay *r, const Replay DeviceReplay::*which) {
    Figures f;
    f.cur = cur;
    if (r) f.peak = (r->*which).peak, f.alloc = (r->*which).alloc, f.freed = (r->*which).freed;
    return f;
}

std::string kind_label(const std::string &kind) {
    if (kind == "device") return "device memory";
    if (kind == "managed") return "managed memory";
    if (kind == "host_pinned") return "host pinned";
    if (kind == "host_registered") return "host registered";
    if (kind == "vmm_physical") return "VMM physical";
    if (kind == "graph_pool") return "graph pool";
    if (kind == "array") return "CUDA arrays";
    return one_line(kind);
}

void devices(Lines &lines, const Snapshot &s, const SummaryBody::State &body) {
    if (s.devices.empty()) {
        lines.add("memory by device: none (no allocation went through an intercepted call)");
        return;
    }
    // GPUs in ascending ordinal, then host-pinned (-1), then unknown (-2) and anything else.
    std::vector<const DeviceTotals *> order;
    for (const DeviceTotals &d : s.devices) order.push_back(&d);
    std::stable_sort(order.begin(), order.end(), [](const DeviceTotals *a, const DeviceTotals *b) {
        return device_order_rank(a->device) < device_order_rank(b->device);
    });
    std::map<int, DeviceReplay> replayed = replay_events(s, body);

    lines.add("memory by device (Cur: at the snapshot, Peak: highest, Tot: since start; - not known):");
    bool unknown_shown = false;
    for (const DeviceTotals *d : order) {
        // Live figures from the allocations themselves (those that count as held).
        std::map<std::string, uint64_t> kind_cur;
        uint64_t small_cur = 0, large_cur = 0, small_n = 0, large_n = 0;
        for (const auto &[a, n] : body.live) { // every one counts as held
            if (a.device != d->device) continue;
            kind_cur[body.names[a.kind]] += a.size * n;
            (a.size >= kLargeBytes ? large_cur : small_cur) += a.size * n;
            (a.size >= kLargeBytes ? large_n : small_n) += n;
        }
        auto found = replayed.find(d->device);
        const DeviceReplay *r = found == replayed.end() ? nullptr : &found->second;
        if (r)
            for (const auto &k : r->kind_bytes) kind_cur.try_emplace(k.first, 0);

        std::vector<std::vector<std::string>> rows;
        rows.push_back({device_label(d->device), "Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"});
        rows.push_back(figures_row("tracked memory", {d->current_bytes, d->peak_bytes, d->total_allocated_bytes,
                                                      d->total_freed_bytes}, true));
        rows.push_back({"  in bytes", to_dec(d->current_bytes), to_dec(d->peak_bytes), to_dec(d->total_allocated_bytes),
                        to_dec(d->total_freed_bytes)});
        for (const auto &k : kind_cur) {
            Figures f;
            f.cur = k.second;
            if (r) {
                auto kr = r->kind_bytes.find(k.first);
                Replay zero;
                const Replay &x = kr == r->kind_bytes.end() ? zero : kr->second;
                f.peak = x.peak, f.alloc = x.alloc, f.freed = x.freed;
            }
            rows.push_back(figures_row("  " + kind_label(k.first), f, true));
        }
        rows.push_back(figures_row("  small (< 1 MiB)", from_replay(small_cur, r, &DeviceReplay::small_bytes), true));
        rows.push_back(figures_row("  large (>= 1 MiB)", from_replay(large_cur, r, &DeviceReplay::large_bytes), true));
        uint64_t live = d->allocation_count >= d->free_count ? d->allocation_count - d->free_count : 0;
        Figures count{live, std::nullopt, d->allocation_count, d->free_count};
        if (r) count.peak = r->count.peak;
        rows.push_back(figures_row("allocations", count, false));
        rows.push_back(figures_row("  small (< 1 MiB)", from_replay(small_n, r, &DeviceReplay::small_count), false));
        rows.push_back(figures_row("  large (>= 1 MiB)", from_replay(large_n, r, &DeviceReplay::large_count), false));
        unknown_shown = unknown_shown || (!r && d->allocation_count != 0);
        lines.table("  ", rows, {false, true, true, true, true});

        std::string identity;
        if (!d->uuid.empty()) identity = one_line(d->uuid);
        if (!d->pci_bus_id.empty()) identity += (identity.empty() ? "" : ", ") + ("PCI " + one_line(d->pci_bus_id));
        if (d->total_memory_bytes)
            identity += (identity.empty() ? "" : ", ") + format_bytes(*d->total_memory_bytes) + " total";
        if (!identity.empty()) lines.add("    " + identity);
        if (d->graph_reserved_bytes)
            lines.add("    graph memory (the driver's graph pool, not in tracked memory): " +
                      format_bytes(*d->graph_reserved_bytes) + " reserved, " +
                      format_bytes(d->graph_used_bytes.value_or(0)) + " used, peak reserved " +
                      format_bytes(d->graph_reserved_high_bytes.value_or(0)));
        if (d->process_used_bytes) {
            uint64_t used = *d->process_used_bytes, tracked = d->current_bytes;
            uint64_t graph = d->graph_reserved_bytes.value_or(0);
            std::string parts = format_bytes(tracked) + " tracked + " +
                                (graph != 0 ? format_bytes(graph) + " graph memory + " : std::string());
            if (used >= tracked + graph)
                lines.add("    nvidia-smi: " + format_bytes(used) + " = " + parts + format_bytes(used - tracked - graph) +
                          " untracked (context, modules)");
            else
                lines.add("    nvidia-smi: " + format_bytes(used) + ", " + format_bytes(tracked + graph - used) +
                          " below the " + format_bytes(tracked + graph) + " tracked" +
                          (graph != 0 ? " with graph memory" : "") + " (managed memory not resident)");
        }
    }
    if (unknown_shown)
        lines.add("  (peaks and totals by kind and size need a complete event history: VRAMTRACE_EVENTS)");
}

std::string devices_text(const CallSiteGroup &g) {
    return join(g.devices, [](int d) { return device_label(d); });
}

// A call-site table: one row of figures per call site, its location on the next line.
void site_table(Lines &lines, std::vector<std::string> header, const std::vector<bool> &right,
                const std::vector<CallSiteGroup> &groups, size_t shown,
                const std::function<std::vector<std::string>(size_t, const CallSiteGroup &)> &row) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back(std::move(header));
    for (size_t i = 0; i < shown; ++i) rows.push_back(row(i, groups[i]));
    std::vector<std::string> text = lines.render("  ", rows, right);
    size_t indent = rows[0][0].size();
    for (size_t i = 1; i < rows.size(); ++i) indent = std::max(indent, rows[i][0].size());
    lines.add(text[0]);
    for (size_t i = 0; i < shown; ++i) {
        lines.add(text[i + 1]);
        lines.add(std::string(2 + indent + 2, ' ') + one_line(groups[i].location));
    }
}

void call_sites(Lines &lines, const std::vector<CallSiteGroup> &groups, size_t shown,
                uint64_t live_bytes, uint64_t live_count) {
    lines.add("top call sites by live bytes, of " + format_bytes_exact(live_bytes) + " live in " +
              plural(live_count, "allocation") + ":");
    site_table(lines, {"#", "live", "share", "count", "api", "device"}, {true, true, true, true, false, false},
               groups, shown, [&](size_t i, const CallSiteGroup &g) -> std::vector<std::string> {
                   return {to_dec(i + 1), format_bytes(g.live_bytes), percent(g.live_bytes, live_bytes),
                           to_dec(g.live_count), one_line(join(g.apis, [](const std::string &a) { return a; })),
                           devices_text(g)};
               });
}

void rest(Lines &lines, const std::vector<CallSiteGroup> &groups, size_t shown) {
    if (shown >= groups.size()) return;
    uint64_t bytes = 0, count = 0;
    for (size_t i = shown; i < groups.size(); ++i) bytes += groups[i].live_bytes, count += groups[i].live_count;
    lines.add("  ... and " + plural(groups.size() - shown, "more call site") + ": " +
              format_bytes_exact(bytes) + " in " + plural(count, "allocation"));
}

size_t shown_of(const std::vector<CallSiteGroup> &groups, const SummaryOptions &options) {
    return options.top_n == 0 ? groups.size() : std::min(groups.size(), options.top_n);
}

// What each device held at its peak (Snapshot::peaks), by call site.
void peaks(Lines &lines, const Snapshot &s, const SummaryOptions &options) {
    std::vector<const DevicePeak *> order;
    for (const DevicePeak &p : s.peaks)
        if (p.peak_bytes != 0 && !p.sites.empty()) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const DevicePeak *a, const DevicePeak *b) {
        return device_order_rank(a->device) < device_order_rank(b->device);
    });
    for (const DevicePeak *p : order) {
        std::vector<StackWeight> weights;
        uint64_t count = 0;
        for (const PeakSite &site : p->sites) weights.push_back({site.stack, site.bytes, site.count}), count += site.count;
        std::vector<CallSiteGroup> groups = group_by_call_site(s, weights);
        std::string when = when_text(s.process, p->time_ns);
        lines.add("peak of " + device_label(p->device) + ": " + format_bytes_exact(p->peak_bytes) + " in " +
                  plural(count, "allocation") + (when.empty() ? "" : ", " + when) + ", from:");
        size_t shown = shown_of(groups, options);
        site_table(lines, {"#", "bytes", "share", "count"}, {true, true, true, true}, groups, shown,
                   [&](size_t i, const CallSiteGroup &g) -> std::vector<std::string> {
                       return {to_dec(i + 1), format_bytes(g.live_bytes), percent(g.live_bytes, p->peak_bytes),
                               to_dec(g.live_count)};
                   });
        rest(lines, groups, shown);
    }
}

// The memory categories of the frame rules (docs/attribution.md), in the order a report lists them.
constexpr const char *kCategories[] = {"parameter",         "optimizer_state", "activation", "backward",
                                       "library_workspace", "communication",   "other"};

// Live bytes (at the snapshot) and bytes at the peak, per device and category of their stacks.
// Printed only when some bytes are in a category other than "other": a program no rule knows has
// nothing to say here.
void categories(Lines &lines, const Snapshot &s, const SummaryBody::State &body) {
    std::unordered_map<uint32_t, std::string_view> category_of; // stack id -> category
    bool caching_segments = false;
    auto known = [](std::string_view c) {
        return std::find(std::begin(kCategories), std::end(kCategories), c) != std::end(kCategories);
    };
    for (const Stack &st : s.stacks) {
        // A name this report does not know (a foreign file) is counted as other, so rows add up.
        category_of.emplace(st.id, known(st.category) ? std::string_view(st.category) : std::string_view("other"));
        for (uint32_t f : st.frames)
            if (!caching_segments && f < s.frames.size() &&
                s.frames[f].function.find("CUDACachingAllocator::Native::DeviceCachingAllocator::") != std::string::npos)
                caching_segments = true;
    }
    auto category = [&](uint32_t stack) {
        auto it = category_of.find(stack);
        return it == category_of.end() ? std::string_view("other") : it->second;
    };
    std::map<int, std::map<std::string_view, std::pair<uint64_t, uint64_t>>> by_device; // (live, peak)
    bool informative = false;
    for (const auto &[a, n] : body.live) {
        std::string_view c = category(a.stack);
        by_device[a.device][c].first += a.size * n;
        informative |= c != "other";
    }
    for (const DevicePeak &p : s.peaks)
        for (const PeakSite &site : p.sites) {
            std::string_view c = category(site.stack);
            by_device[p.device][c].second += site.bytes;
            informative |= c != "other";
        }
    if (!informative) return;
    lines.add("memory by category (stacks read by the frame rules, docs/attribution.md):");
    // GPUs in ascending ordinal, then host-pinned (-1), then unknown (-2), as the device table.
    std::vector<int> order;
    for (const auto &entry : by_device) order.push_back(entry.first);
    std::stable_sort(order.begin(), order.end(), [](int a, int b) {
        return device_order_rank(a) < device_order_rank(b);
    });
    for (int device : order) {
        const auto &rows = by_device[device];
        std::vector<std::vector<std::string>> table{{device_label(device), "live", "at peak"}};
        for (const char *c : kCategories) {
            auto it = rows.find(c);
            if (it == rows.end()) continue;
            table.push_back({std::string("  ") + c, format_bytes(it->second.first), format_bytes(it->second.second)});
        }
        lines.table("  ", table, {false, true, true});
    }
    if (caching_segments)
        lines.add("  (PyTorch's caching allocator: a segment has the category of the request that created it)");
}

// Live bytes and bytes at the peak per device and NVTX range stack (the push/pop ranges open on the
// allocating thread). Printed only when the snapshot names a range stack.
std::string stack_location(const Snapshot &s, uint32_t id) {
    const Stack *stack = s.find_stack(id);
    if (!stack) return "(no stack captured)";
    const Frame *frame = s.call_site_frame(*stack);
    if (!frame) return "(no call site: every frame is in vramtrace, the CUDA runtime or the driver)";
    // One line per call site: no control character of a name, not even a line feed, raw.
    return escape_control_characters(describe_frame(s, *frame));
}

std::string error_text(const OomEvent &o) {
    std::string name = cuda_error_name(o.api, o.result);
    return name.empty() ? "error " + std::to_string(o.result) : name + " (error " + std::to_string(o.result) + ")";
}

void ooms(Lines &lines, const Snapshot &s, const SummaryBody::State &body, const SummaryOptions &options) {
    uint64_t total = std::max<uint64_t>(s.oom_count, s.ooms.size());
    if (total == 0) return;
    std::string title = "out-of-memory failures: " + to_dec(total) + " since start";
    if (s.ooms.size() < total) title += s.ooms.empty() ? " (none kept)" : ", the last " + to_dec(s.ooms.size());
    lines.add(title + ":");
    for (const OomEvent &o : s.ooms) {
        std::string when = when_text(s.process, o.time_ns);
        lines.add("  " + (when.empty() ? std::string() : when + ": ") + one_line(o.api) + " of " +
                  format_bytes_exact(o.requested_bytes) + " on " + device_label(o.device) + " failed with");
        lines.add("    " + error_text(o));
        std::string state;
        if (o.device_free_bytes && o.device_total_bytes)
            state = format_bytes(*o.device_free_bytes) + " free of " + format_bytes(*o.device_total_bytes);
        else if (o.device_free_bytes)
            state = format_bytes(*o.device_free_bytes) + " free";
        else
            state = "free memory not known";
        lines.add("    " + state + ", " + format_bytes(o.tracked_bytes) + " tracked on the device; called from");
        lines.add("    " + one_line(stack_location(s, o.stack)));
    }
    // A snapshot taken inside the failing call: its live allocations are what held the device.
    if (s.process.reason != "oom" || s.ooms.empty()) return;
    int device = s.ooms.back().device;
    std::vector<StackWeight> weights;
    uint64_t bytes = 0, count = 0;
    for (const auto &[a, n] : body.live) // every one counts as held
        if (a.device == device) weights.push_back({a.stack, a.size * n, n}), bytes += a.size * n, count += n;
    if (weights.empty()) return;
    std::vector<CallSiteGroup> groups = group_by_call_site(s, weights);
    lines.add("  held on " + device_label(device) + " at the last failure (this snapshot): " +
              format_bytes_exact(bytes) + " in " + plural(count, "allocation") + ", from:");
    size_t shown = shown_of(groups, options);
    site_table(lines, {"#", "bytes", "share", "count"}, {true, true, true, true}, groups, shown,
               [&](size_t i, const CallSiteGroup &g) -> std::vector<std::string> {
                   return {to_dec(i + 1), format_bytes(g.live_bytes), percent(g.live_bytes, bytes), to_dec(g.live_count)};
               });
    rest(lines, groups, shown);
}

void pools(Lines &lines, const Snapshot &s) {
    if (s.pools.empty()) return;
    std::vector<const Pool *> order;
    for (const Pool &p : s.pools) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const Pool *a, const Pool *b) {
        if (a->device != b->device) return a->device < b->device;
        if (a->is_default != b->is_default) return a->is_default;
        return a->handle < b->handle;
    });
    lines.add("memory pools (stream-ordered allocator), reserved from the device vs used by allocations:");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"device", "pool", "reserved", "used", "unused", "peak reserved", "peak used"});
    for (const Pool *p : order)
        rows.push_back({device_label(p->device), p->is_default ? "default" : hex_u64(p->handle),
                        format_bytes(p->reserved_bytes), format_bytes(p->used_bytes),
                        format_bytes(p->reserved_bytes >= p->used_bytes ? p->reserved_bytes - p->used_bytes : 0),
                        format_bytes(p->reserved_high_bytes), format_bytes(p->used_high_bytes)});
    lines.table("  ", rows, {false, false, true, true, true, true, true});
}

// Virtual memory management, per process: reserved address space has no device and holds no
// memory, so it stands beside the device figures, never inside them.
void virtual_memory(Lines &lines, const SummaryBody::State &b) {
    if (b.reservations == 0 && b.vmm_mapped.empty() && b.vmm_physical.empty()) return;
    auto per_device = [](const std::map<int, uint64_t> &m) {
        uint64_t total = 0;
        std::string parts;
        for (const auto &[dev, bytes] : m) {
            total += bytes;
            parts += (parts.empty() ? "" : ", ") + device_label(dev) + " " + format_bytes(bytes);
        }
        return format_bytes(total) + (parts.empty() ? "" : " (" + parts + ")");
    };
    lines.add("virtual memory (VMM): reserved VA " + format_bytes(b.reserved_va) + " in " +
              plural(b.reservations, "reservation") + " / mapped " + per_device(b.vmm_mapped) + " / physical " +
              per_device(b.vmm_physical));
}

// IPC imports still open: another process's memory, which this process's figures never count;
// named by the device it lives on (and that device's UUID, which is what identifies it across
// processes that number devices differently).
void ipc_imports(Lines &lines, const Snapshot &s, const SummaryBody::State &b) {
    for (const auto &[device, figures] : b.ipc_imports) {
        std::string uuid;
        for (const DeviceTotals &d : s.devices)
            if (d.device == device && !d.uuid.empty()) uuid = " (" + one_line(d.uuid) + ")";
        lines.add("IPC imports still open on " + device_label(device) + uuid + ": " + plural(figures.second, "allocation") +
                  ", " + format_bytes_exact(figures.first) + " of another process's memory, not counted here");
    }
}

// Context teardowns and what each ended: the allocations still live in the context then.
void teardowns(Lines &lines, const Snapshot &s, const SummaryOptions &options) {
    uint64_t total = std::max<uint64_t>(s.teardown_count, s.teardowns.size());
    if (total == 0) return;
    std::string title = "context teardowns: " + to_dec(total);
    if (s.teardowns.size() < total) title += ", the first " + to_dec(s.teardowns.size());
    lines.add(title + " (what each ended, still live in the context then):");
    for (const Teardown &td : s.teardowns) {
        std::string when = when_text(s.process, td.time_ns);
        lines.add("  " + (when.empty() ? std::string() : when + ": ") + one_line(td.api) + " (" + one_line(td.cause) +
                  ") on " + device_label(td.device) + " ended " + plural(td.ended_count, "allocation") + ", " +
                  format_bytes_exact(td.ended_bytes) +
                  (td.ended_host_bytes != 0 ? " and " + format_bytes_exact(td.ended_host_bytes) + " of host memory"
                                            : std::string()));
        std::vector<StackWeight> weights;
        for (const PeakSite &site : td.sites) weights.push_back({site.stack, site.bytes, site.count});
        std::vector<CallSiteGroup> groups = group_by_call_site(s, weights);
        size_t shown = shown_of(groups, options);
        for (size_t i = 0; i < shown; ++i)
            lines.add("    " + format_bytes(groups[i].live_bytes) + " in " + plural(groups[i].live_count, "allocation") +
                      ": " + one_line(groups[i].location));
        if (shown < groups.size() || td.other_count != 0) {
            uint64_t bytes = td.other_bytes, count = td.other_count;
            for (size_t i = shown; i < groups.size(); ++i) bytes += groups[i].live_bytes, count += groups[i].live_count;
            lines.add("    " + format_bytes(bytes) + " in " + plural(count, "allocation") + " from other call sites");
        }
    }
}

void dropped(Lines &lines, const Snapshot &s, const SummaryBody::State &body) {
    if (s.dropped_allocations != 0)
        lines.add("warning: " + plural(s.dropped_allocations, "allocation") +
                  " could not be recorded (no memory for the live table);");
    if (s.dropped_allocations != 0) lines.add("  the live figures above are incomplete");
    if (s.dropped_stacks != 0)
        lines.add("warning: " + plural(s.dropped_stacks, "stack") +
                  " could not be stored (no memory for the stack depot);");
    if (s.dropped_stacks != 0) lines.add("  allocations without a stack show as (no stack captured)");
    if (s.dropped_peak_sites != 0)
        lines.add("warning: " + plural(s.dropped_peak_sites, "allocation") +
                  " got no peak counter for their call site (no memory);");
    if (s.dropped_peak_sites != 0) lines.add("  their bytes are in the peaks under (no stack captured)");
    // The ring is a bound, not a failure: said once, so that a short history is never silent.
    if (s.events.wrapped)
        lines.add("note: the event history kept the newest " + plural(body.events, "event") + " of " +
                  to_dec(s.events.recorded) + " (VRAMTRACE_EVENTS=" + to_dec(s.events.capacity) + ")");
}

std::string build(const Snapshot &s, const SummaryBody::State &body, const SummaryOptions &options) {
    Lines lines;
    std::vector<LiveSeries> series;
    for (const auto &[key, times] : body.times)
        series.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), &times});
    LiveClasses classes = classify_live(s, series, body.marks);
    header(lines, s);
    headline(lines, s, body, classes);
    lines.add("---- details ----");
    about(lines, s);
    devices(lines, s, body);
    bool at_exit = s.process.reason == "exit";
    // At exit the live allocations are listed once, by class, at the end; another snapshot lists
    // them here, by live bytes.
    if (!at_exit) {
        std::vector<CallSiteGroup> groups = group_folded_by_call_site(s, folded_live(body));
        uint64_t live_bytes = 0, live_count = 0;
        for (const CallSiteGroup &g : groups) live_bytes += g.live_bytes, live_count += g.live_count;
        size_t shown = shown_of(groups, options);
        if (live_count != 0) {
            call_sites(lines, groups, shown, live_bytes, live_count);
            rest(lines, groups, shown);
        }
    }
    peaks(lines, s, options);
    categories(lines, s, body);
    nvtx_ranges(lines, s, body);
    nvtx_pools(lines, s);
    ooms(lines, s, body, options);
    pools(lines, s);
    virtual_memory(lines, body);
    teardowns(lines, s, options);
    live_by_class(lines, s, classes, options.top_n, options.max_sizes_per_call_site);
    ipc_imports(lines, s, body);
    dropped(lines, s, body);
    return lines.take();
}

} // namespace

namespace {
std::string build_whole(const Snapshot &snapshot, const SummaryOptions &options) {
    SummaryBody body;
    for (const Allocation &a : snapshot.allocations) body.add_allocation(a);
    for (const Event &e : snapshot.events.events) body.add_event(e);
    return build(snapshot, body.state(), options);
}
} // namespace

std::string format_summary(const Snapshot &snapshot, const SummaryOptions &options) {
#if defined(__cpp_exceptions)
    try {
        return build_whole(snapshot, options);
    } catch (...) {
        return std::string(); // out of memory: nothing rather than a throw across the library
    }
#else
    return build_whole(snapshot, options);
#endif
}

std::string format_summary(const Snapshot &head, const SummaryBody &body, const SummaryOptions &options) {
#if defined(__cpp_exceptions)
    try {
        return build(head, body.state(), options);
    } catch (...) {
        return std::string();
    }
#else
    return build(head, body.state(), options);
#endif
}

} // namespace vramtrace::report
