// The summary formatter shared by the preload library (stderr at exit) and `vramtrace summary`.
// Vocabulary after torch.cuda.memory_summary: current / peak / total allocated / total freed.
#include "summary_format.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace vramtrace::report {

namespace {

__extension__ typedef unsigned __int128 u128; // exact products of two 64-bit values

std::string dec(uint64_t v) { return std::to_string(v); }

std::string plural(uint64_t n, std::string_view word) {
    std::string out = dec(n);
    out += ' ';
    out += word;
    if (n != 1) out += 's';
    return out;
}

// Snapshot text made safe for one line: control characters become C escapes.
std::string one_line(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u != 0x7f) {
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else {
            out += "\\x";
            out += kHex[u >> 4];
            out += kHex[u & 15];
        }
    }
    return out;
}

// A command line as a shell would need it typed: arguments with special characters single-quoted.
std::string shell_words(const std::vector<std::string> &args) {
    std::string out;
    for (const std::string &arg : args) {
        if (!out.empty()) out += ' ';
        bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
        });
        if (plain) {
            out += arg;
            continue;
        }
        out += '\'';
        for (char c : arg) {
            if (c == '\'') out += "'\\''";
            else out += c;
        }
        out += '\'';
    }
    return out;
}

// Share of total in percent with one decimal, rounded half up: "56.0%".
std::string percent(uint64_t part, uint64_t total) {
    if (total == 0) return "-";
    auto permille = uint64_t((static_cast<u128>(part) * 1000 + total / 2) / total);
    return dec(permille / 10) + "." + dec(permille % 10) + "%";
}

std::string driver_text(int version) {
    return dec(uint64_t(version / 1000)) + "." + dec(uint64_t(version % 1000 / 10));
}

template <class T, class Fn> std::string join(const std::vector<T> &items, Fn &&text) {
    std::string out;
    for (const T &item : items) {
        if (!out.empty()) out += ',';
        out += text(item);
    }
    return out;
}

class Lines {
public:
    void add(std::string_view text) {
        out_ += kSummaryLinePrefix;
        out_ += text;
        out_ += '\n';
    }

    // Columns separated by two spaces, padded to the widest cell; right-aligned where asked. The
    // last column is never padded, so no line ends in spaces.
    void table(std::string_view indent, const std::vector<std::vector<std::string>> &rows,
               const std::vector<bool> &right) {
        std::vector<size_t> width(right.size(), 0);
        for (const auto &row : rows)
            for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
        for (const auto &row : rows) {
            std::string text(indent);
            for (size_t c = 0; c < row.size(); ++c) {
                bool last = c + 1 == row.size();
                size_t pad = width[c] - row[c].size();
                if (c) text += "  ";
                if (right[c]) text.append(pad, ' ');
                text += row[c];
                if (!right[c] && !last) text.append(pad, ' ');
            }
            while (!text.empty() && text.back() == ' ') text.pop_back();
            add(text);
        }
    }

    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

void header(Lines &lines, const Snapshot &s) {
    const ProcessInfo &p = s.process;
    std::string title = "==== memory summary: pid " + std::to_string(p.pid);
    if (!p.host.empty()) title += " on " + one_line(p.host);
    lines.add(title + " ====");

    std::string command = !p.command_line.empty() ? shell_words(p.command_line)
                          : !p.executable.empty() ? p.executable
                                                  : "(unknown)";
    lines.add("command: " + one_line(command));

    std::string when;
    if (p.reason == "exit") when = "snapshot taken at exit";
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
}

void devices(Lines &lines, const Snapshot &s) {
    if (s.devices.empty()) {
        lines.add("memory by device: none (no allocation went through an intercepted call)");
        return;
    }
    // GPUs in ascending ordinal, then host-pinned (-1), then unknown (-2) and anything else.
    std::vector<const DeviceTotals *> order;
    for (const DeviceTotals &d : s.devices) order.push_back(&d);
    std::stable_sort(order.begin(), order.end(), [](const DeviceTotals *a, const DeviceTotals *b) {
        auto rank = [](int dev) { return dev >= 0 ? int64_t(dev) : int64_t(1) << 40 | int64_t(-dev); };
        return rank(a->device) < rank(b->device);
    });

    lines.add("memory by device:");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"device", "", "current", "peak", "total allocated", "total freed"});
    for (const DeviceTotals *d : order) {
        uint64_t live = d->allocation_count >= d->free_count ? d->allocation_count - d->free_count : 0;
        rows.push_back({device_label(d->device), "allocated memory", format_bytes(d->current_bytes),
                        format_bytes(d->peak_bytes), format_bytes(d->total_allocated_bytes),
                        format_bytes(d->total_freed_bytes)});
        rows.push_back({"", "  in bytes", dec(d->current_bytes), dec(d->peak_bytes),
                        dec(d->total_allocated_bytes), dec(d->total_freed_bytes)});
        rows.push_back({"", "allocations", dec(live), "-", dec(d->allocation_count), dec(d->free_count)});
    }
    lines.table("  ", rows, {false, false, true, true, true, true});
}

std::string devices_text(const CallSiteGroup &g) {
    return join(g.devices, [](int d) { return device_label(d); });
}

void call_sites(Lines &lines, const std::vector<CallSiteGroup> &groups, size_t shown,
                uint64_t live_bytes, uint64_t live_count) {
    lines.add("top call sites by live bytes, of " + format_bytes_exact(live_bytes) + " live in " +
              plural(live_count, "allocation") + ":");
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"#", "live", "share", "count", "api", "device", "call site"});
    for (size_t i = 0; i < shown; ++i) {
        const CallSiteGroup &g = groups[i];
        rows.push_back({dec(i + 1), format_bytes_exact(g.live_bytes), percent(g.live_bytes, live_bytes),
                        dec(g.live_count), one_line(join(g.apis, [](const std::string &a) { return a; })),
                        devices_text(g), one_line(g.location)});
    }
    lines.table("  ", rows, {true, false, true, true, false, false, false});
}

void rest(Lines &lines, const std::vector<CallSiteGroup> &groups, size_t shown) {
    if (shown >= groups.size()) return;
    uint64_t bytes = 0, count = 0;
    for (size_t i = shown; i < groups.size(); ++i) bytes += groups[i].live_bytes, count += groups[i].live_count;
    lines.add("  ... and " + plural(groups.size() - shown, "more call site") + ": " +
              format_bytes_exact(bytes) + " in " + plural(count, "allocation"));
}

void live(Lines &lines, const Snapshot &s, const std::vector<CallSiteGroup> &groups, size_t shown,
          uint64_t live_bytes, uint64_t live_count, const SummaryOptions &options) {
    bool at_exit = s.process.reason == "exit";
    if (live_count == 0) {
        lines.add(at_exit ? "no leaks: every tracked allocation was freed before exit"
                          : "no tracked allocation is live at the snapshot");
        return;
    }
    lines.add(std::string(at_exit ? "leaked at exit: " : "still live at the snapshot: ") +
              plural(live_count, "allocation") + ", " + format_bytes_exact(live_bytes) + ", from " +
              plural(groups.size(), "call site") + ":");
    for (size_t i = 0; i < shown; ++i) {
        const CallSiteGroup &g = groups[i];
        lines.add("  " + one_line(g.location));
        std::string detail = "    " + format_bytes_exact(g.live_bytes) + " in " +
                             plural(g.live_count, "allocation") + ": ";
        size_t listed = options.max_sizes_per_call_site == 0
                            ? g.sizes.size()
                            : std::min(g.sizes.size(), options.max_sizes_per_call_site);
        for (size_t k = 0; k < listed; ++k) {
            if (k) detail += ", ";
            detail += dec(g.sizes[k].second) + " x " + format_bytes_exact(g.sizes[k].first);
        }
        if (listed < g.sizes.size()) {
            uint64_t more = 0;
            for (size_t k = listed; k < g.sizes.size(); ++k) more += g.sizes[k].second;
            detail += ", and " + plural(g.sizes.size() - listed, "other size") + " in " +
                      plural(more, "allocation");
        }
        lines.add(detail);
    }
    rest(lines, groups, shown);
}

void dropped(Lines &lines, const Snapshot &s) {
    if (s.dropped_allocations != 0)
        lines.add("warning: " + plural(s.dropped_allocations, "allocation") +
                  " could not be recorded (no memory for the live table); the live figures above "
                  "are incomplete");
    if (s.dropped_stacks != 0)
        lines.add("warning: " + plural(s.dropped_stacks, "stack") +
                  " could not be stored (no memory for the stack depot); allocations without a "
                  "stack show as (no stack captured)");
}

std::string build(const Snapshot &s, const SummaryOptions &options) {
    Lines lines;
    header(lines, s);
    devices(lines, s);
    std::vector<CallSiteGroup> groups = group_live_by_call_site(s);
    uint64_t live_bytes = 0, live_count = 0;
    for (const CallSiteGroup &g : groups) live_bytes += g.live_bytes, live_count += g.live_count;
    size_t shown = options.top_n == 0 ? groups.size() : std::min(groups.size(), options.top_n);
    if (live_count != 0) {
        call_sites(lines, groups, shown, live_bytes, live_count);
        rest(lines, groups, shown);
    }
    live(lines, s, groups, shown, live_bytes, live_count, options);
    dropped(lines, s);
    return lines.take();
}

} // namespace

std::string format_summary(const Snapshot &snapshot, const SummaryOptions &options) {
#if defined(__cpp_exceptions)
    try {
        return build(snapshot, options);
    } catch (...) {
        return std::string(); // out of memory: nothing rather than a throw across the library
    }
#else
    return build(snapshot, options);
#endif
}

} // namespace vramtrace::report
