// The comparison behind `vramtrace diff`. See diff_core.h.
#include "analysis/diff_core.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "common/text_table.h"
#include "report/text_format.h"

namespace vramtrace::cli {

namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

i128 delta(const Compared &c) { return i128(c.now) - i128(c.base); }

int64_t clamp64(i128 v) {
    if (v > i128(INT64_MAX)) return INT64_MAX;
    if (v < i128(INT64_MIN)) return INT64_MIN;
    return int64_t(v);
}

template <class T> void merge_sorted_unique(std::vector<T> &into, const std::vector<T> &from) {
    for (const T &v : from) {
        auto it = std::lower_bound(into.begin(), into.end(), v);
        if (it == into.end() || *it != v) into.insert(it, v);
    }
}

using report::to_dec;

// "+12.34%" of the base; "" when the base is 0.
std::string percent_change(const Compared &c) {
    if (c.base == 0) return "";
    i128 d = delta(c);
    bool negative = d < 0;
    u128 magnitude = u128(negative ? -d : d);
    // Hundredths of a percent, rounded half up.
    u128 hundredths = (magnitude * 10000 + c.base / 2) / c.base;
    std::string digits = std::to_string(uint64_t(hundredths / 100));
    uint64_t frac = uint64_t(hundredths % 100);
    std::string out = (negative ? "-" : "+") + digits + "." + char('0' + frac / 10) + char('0' + frac % 10) + "%";
    return out;
}

std::string describe_run(const SnapshotSites &s) {
    std::string out = s.name + ": ";
    if (s.merged_processes > 0 || s.process.reason == "merge") {
        out += "merged snapshot of " + std::to_string(s.merged_processes) + " process" +
               (s.merged_processes == 1 ? "" : "es");
        return one_line(out);
    }
    out += "pid " + std::to_string(s.process.pid);
    if (!s.process.host.empty()) out += " on " + s.process.host;
    if (!s.process.reason.empty()) out += ", " + s.process.reason;
    if (!s.process.command_line.empty()) {
        std::string cmd;
        for (const std::string &arg : s.process.command_line) {
            if (!cmd.empty()) cmd += ' ';
            cmd += arg;
        }
        if (cmd.size() > 100) cmd = cmd.substr(0, 97) + "...";
        out += ", " + cmd;
    }
    return one_line(out);
}

std::string match_description(const SiteKeyOptions &o) {
    std::string out = "call sites matched on " + std::to_string(o.frames) + (o.frames == 1 ? " frame" : " frames");
    out += o.lines ? " (function, file:line and module; module+offset without file:line)"
                   : " (function, file and module, without lines and offsets)";
    return out;
}

nlohmann::ordered_json compared_json(const Compared &c) {
    nlohmann::ordered_json j;
    j["base"] = c.base;
    j["new"] = c.now;
    j["change"] = clamp64(delta(c));
    return j;
}

nlohmann::ordered_json run_json(const SnapshotSites &s) {
    nlohmann::ordered_json j;
    j["file"] = s.name;
    j["schema_version"] = s.schema_version;
    j["pid"] = s.process.pid;
    j["host"] = s.process.host;
    j["command_line"] = s.process.command_line;
    j["reason"] = s.process.reason;
    j["merged_processes"] = s.merged_processes;
    j["dropped_allocations"] = s.dropped_allocations;
    j["dropped_stacks"] = s.dropped_stacks;
    return j;
}

bool parse_digits(std::string_view text, uint64_t &out) {
    if (text.empty()) return false;
    auto res = std::from_chars(text.data(), text.data() + text.size(), out);
    return res.ec == std::errc() && res.ptr == text.data() + text.size();
}

bool equals_ci(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

} // namespace

const char *status_name(SiteDiff::Status status) {
    switch (status) {
    case SiteDiff::Status::Grew: return "grew";
    case SiteDiff::Status::Shrank: return "shrank";
    case SiteDiff::Status::New: return "new";
    case SiteDiff::Status::Gone: return "gone";
    case SiteDiff::Status::Same: return "same";
    }
    return "?";
}

Compared SiteDiff::at_peak_sum() const {
    Compared sum;
    if (at_peak)
        for (const auto &[device, c] : *at_peak) sum.base += c.base, sum.now += c.now;
    return sum;
}

DiffResult compute_diff(const SnapshotSites &base, const SnapshotSites &now, const SiteKeyOptions &options) {
    DiffResult r;
    r.options = options;
    r.has_peak_composition = base.has_peak_composition && now.has_peak_composition;
    // Both site lists are in ascending key order: walk them together.
    size_t i = 0, j = 0;
    while (i < base.sites.size() || j < now.sites.size()) {
        const SiteTotals *b = nullptr, *n = nullptr;
        if (j >= now.sites.size() || (i < base.sites.size() && base.sites[i].key < now.sites[j].key)) b = &base.sites[i++];
        else if (i >= base.sites.size() || now.sites[j].key < base.sites[i].key) n = &now.sites[j++];
        else b = &base.sites[i++], n = &now.sites[j++];
        SiteDiff d;
        d.key = b ? b->key : n->key;
        d.live_bytes = {b ? b->live_bytes : 0, n ? n->live_bytes : 0};
        d.live_count = {b ? b->live_count : 0, n ? n->live_count : 0};
        if (b) merge_sorted_unique(d.devices, b->devices), merge_sorted_unique(d.apis, b->apis);
        if (n) merge_sorted_unique(d.devices, n->devices), merge_sorted_unique(d.apis, n->apis);
        if (r.has_peak_composition) {
            std::map<int, Compared> at_peak;
            if (b) for (auto [device, bytes] : b->at_peak) at_peak[device].base = bytes;
            if (n) for (auto [device, bytes] : n->at_peak) at_peak[device].now = bytes;
            d.at_peak.emplace(at_peak.begin(), at_peak.end());
        }
        bool in_base = b && b->live_count > 0, in_new = n && n->live_count > 0;
        if (!in_base && in_new) d.status = SiteDiff::Status::New;
        else if (in_base && !in_new) d.status = SiteDiff::Status::Gone;
        else if (d.live_bytes.grew() || (!d.live_bytes.changed() && d.live_count.grew())) d.status = SiteDiff::Status::Grew;
        else if (d.live_bytes.changed() || d.live_count.changed()) d.status = SiteDiff::Status::Shrank;
        // As much live at the dump, but not at the peaks.
        else if (d.at_peak_sum().grew()) d.status = SiteDiff::Status::Grew;
        else if (d.at_peak_sum().changed()) d.status = SiteDiff::Status::Shrank;
        else d.status = SiteDiff::Status::Same;
        r.sites.push_back(std::move(d));
    }
    std::sort(r.sites.begin(), r.sites.end(), [](const SiteDiff &a, const SiteDiff &b) {
        bool same_a = a.status == SiteDiff::Status::Same, same_b = b.status == SiteDiff::Status::Same;
        if (same_a != same_b) return same_b;
        i128 da = delta(a.live_bytes), db = delta(b.live_bytes);
        if (da != db) return da > db;
        i128 ca = delta(a.live_count), cb = delta(b.live_count);
        if (ca != cb) return ca > cb;
        i128 pa = delta(a.at_peak_sum()), pb = delta(b.at_peak_sum());
        if (pa != pb) return pa > pb;
        return a.key < b.key;
    });
    r.changed = size_t(std::count_if(r.sites.begin(), r.sites.end(),
                                     [](const SiteDiff &d) { return d.status != SiteDiff::Status::Same; }));
    if (base.oom_count && now.oom_count) r.oom_count = Compared{*base.oom_count, *now.oom_count};
    r.live_bytes = {base.live_bytes, now.live_bytes};
    r.live_count = {base.live_count, now.live_count};
    std::map<int, DeviceDiff> devices;
    // One snapshot's devices into their side (Compared::base or ::now) of each ordinal's row.
    auto add_side = [&](const SnapshotSites &snapshot, uint64_t Compared::*side, bool DeviceDiff::*seen) {
        for (const auto &d : snapshot.devices) {
            DeviceDiff &x = devices[d.device];
            x.device = d.device;
            x.*seen = true;
            x.current_bytes.*side += d.current_bytes;
            x.peak_bytes.*side += d.peak_bytes;
            x.allocation_count.*side += d.allocation_count;
            x.free_count.*side += d.free_count;
            r.peak_bytes.*side += d.peak_bytes;
        }
    };
    add_side(base, &Compared::base, &DeviceDiff::in_base);
    add_side(now, &Compared::now, &DeviceDiff::in_new);
    // CUDA devices in ascending order, then host-pinned (-1) and unknown (-2), as the summary lists them.
    for (auto &[ordinal, d] : devices)
        if (ordinal >= 0) r.devices.push_back(d);
    for (auto it = devices.rbegin(); it != devices.rend(); ++it)
        if (it->first < 0) r.devices.push_back(it->second);
    r.categories = compare_categories(base, now);
    r.ranges = compare_ranges(base, now);
    return r;
}

bool parse_growth_limit(std::string_view text, GrowthLimit *out, std::string *why) {
    const std::string expected = "expected a byte count such as 1048576 or 10MiB, or a percentage such as 5%";
    *out = GrowthLimit{};
    out->text = std::string(text);
    size_t digits_end = 0;
    while (digits_end < text.size() && text[digits_end] >= '0' && text[digits_end] <= '9') ++digits_end;
    std::string_view whole = text.substr(0, digits_end), fraction;
    size_t rest_at = digits_end;
    if (rest_at < text.size() && text[rest_at] == '.') {
        size_t f = rest_at + 1;
        while (f < text.size() && text[f] >= '0' && text[f] <= '9') ++f;
        fraction = text.substr(rest_at + 1, f - rest_at - 1);
        if (fraction.empty()) return *why = expected, false;
        rest_at = f;
    }
    std::string_view unit = text.substr(rest_at);
    uint64_t whole_value = 0;
    if (whole.empty() || !parse_digits(whole, whole_value)) return *why = expected, false;
    if (fraction.size() > 9) return *why = "too many decimals in '" + std::string(text) + "'", false;
    uint64_t frac_value = 0, frac_scale = 1;
    if (!fraction.empty() && !parse_digits(fraction, frac_value)) return *why = expected, false;
    for (size_t k = 0; k < fraction.size(); ++k) frac_scale *= 10;

    if (unit == "%") {
        // Millionths of a percent.
        if (fraction.size() > 6) return *why = "at most 6 decimals in a percentage", false;
        u128 micro = u128(whole_value) * 1000000 + u128(frac_value) * (1000000 / frac_scale);
        if (micro > u128(INT64_MAX)) return *why = "percentage too large: " + std::string(text), false;
        out->percent = true;
        out->micro_percent = uint64_t(micro);
        return true;
    }
    struct Unit {
        const char *name;
        uint64_t factor;
    };
    static constexpr Unit kUnits[] = {
        {"", 1}, {"b", 1},
        {"kib", 1ull << 10}, {"mib", 1ull << 20}, {"gib", 1ull << 30}, {"tib", 1ull << 40}, {"pib", 1ull << 50},
        {"kb", 1000ull}, {"mb", 1000000ull}, {"gb", 1000000000ull}, {"tb", 1000000000000ull},
        {"pb", 1000000000000000ull},
    };
    for (const Unit &u : kUnits) {
        if (!equals_ci(unit, u.name)) continue;
        if (!fraction.empty() && u.factor == 1) return *why = "a byte count has no fraction: " + std::string(text), false;
        u128 bytes = u128(whole_value) * u.factor + u128(frac_value) * u.factor / frac_scale;
        if (bytes > u128(UINT64_MAX)) return *why = "byte count too large: " + std::string(text), false;
        out->bytes = uint64_t(bytes);
        return true;
    }
    *why = "unknown unit '" + std::string(unit) + "' (" + expected + ")";
    return false;
}

std::optional<GateResult> apply_gate(const DiffResult &diff, const GrowthLimit &limit, GateMetric metric,
                                     std::string_view site, std::string *why) {
    GateResult g;
    if (site.empty()) {
        g.measured = metric == GateMetric::Live ? diff.live_bytes : diff.peak_bytes;
        g.subject = metric == GateMetric::Live ? "live bytes" : "sum of the devices' peak bytes";
    } else {
        if (metric == GateMetric::Peak && !diff.has_peak_composition) {
            *why = "--metric peak with --site needs the bytes each call site held at the peak, which these "
                   "snapshots do not record (written before vramtrace recorded peaks)";
            return std::nullopt;
        }
        std::vector<const SiteDiff *> chosen;
        for (const SiteDiff &d : diff.sites)
            if (d.key == site) chosen.push_back(&d);
        bool exact = !chosen.empty();
        if (!exact)
            for (const SiteDiff &d : diff.sites)
                if (d.key.find(site) != std::string::npos) chosen.push_back(&d);
        if (chosen.empty()) {
            *why = "--site '" + one_line(std::string(site)) + "' matches no call site of either snapshot";
            return std::nullopt;
        }
        for (const SiteDiff *d : chosen) {
            if (metric == GateMetric::Live) {
                g.measured.base += d->live_bytes.base;
                g.measured.now += d->live_bytes.now;
            } else if (d->at_peak) {
                for (const auto &[device, c] : *d->at_peak) g.measured.base += c.base, g.measured.now += c.now;
            }
        }
        std::string what = metric == GateMetric::Live ? "live bytes" : "bytes at the peaks";
        if (exact) g.subject = what + " of call site '" + one_line(std::string(site)) + "'";
        else
            g.subject = what + " of the " + std::to_string(chosen.size()) + " call site" + (chosen.size() == 1 ? "" : "s") +
                        " containing '" + one_line(std::string(site)) + "'";
    }
    uint64_t growth = g.measured.grew() ? g.measured.now - g.measured.base : 0;
    if (limit.percent) {
        g.exceeded = growth > 0 && (g.measured.base == 0 ||
                                    u128(growth) * 100 * 1000000 > u128(limit.micro_percent) * g.measured.base);
    } else {
        g.exceeded = growth > limit.bytes;
    }
    std::string change = format_change_bytes(g.measured);
    std::string pct = percent_change(g.measured);
    if (!pct.empty()) change += ", " + pct;
    g.verdict = g.subject + " changed by " + change + (g.exceeded ? ": more than the limit " : ": within the limit ") +
                limit.text + (limit.percent ? " of the base" : "");
    return g;
}

std::string format_change_bytes(const Compared &c) {
    i128 d = delta(c);
    if (d == 0) return "0 B";
    bool negative = d < 0;
    uint64_t magnitude = uint64_t(negative ? -d : d);
    std::string sign = negative ? "-" : "+";
    if (magnitude < 1024) return sign + to_dec(magnitude) + " B";
    return sign + report::format_bytes(magnitude) + " (" + sign + to_dec(magnitude) + " B)";
}

std::string format_change_count(const Compared &c) {
    i128 d = delta(c);
    if (d == 0) return "0";
    bool negative = d < 0;
    return (negative ? "-" : "+") + to_dec(uint64_t(negative ? -d : d));
}

std::string format_diff_text(const SnapshotSites &base, const SnapshotSites &now, const DiffResult &diff,
                             const DiffTextOptions &options, const GateResult *gate) {
    std::string out;
    out += "base  " + describe_run(base) + "\n";
    out += "new   " + describe_run(now) + "\n";
    out += match_description(diff.options) + "\n\n";

    TextTable totals({"", "base", "new", "change"});
    auto bytes_row = [&](const std::string &label, const Compared &c) {
        std::string change = format_change_bytes(c);
        std::string pct = percent_change(c);
        if (!pct.empty() && c.changed()) change += "  " + pct;
        totals.add({label, report::format_bytes_exact(c.base), report::format_bytes_exact(c.now), change});
    };
    bytes_row("live bytes", diff.live_bytes);
    totals.add({"live allocations", to_dec(diff.live_count.base), to_dec(diff.live_count.now),
                format_change_count(diff.live_count)});
    if (diff.oom_count)
        totals.add({"OOM failures", to_dec(diff.oom_count->base), to_dec(diff.oom_count->now),
                    format_change_count(*diff.oom_count)});
    for (const DeviceDiff &d : diff.devices) {
        std::string label = report::device_label(d.device);
        bytes_row(label + " current", d.current_bytes);
        bytes_row(label + " peak", d.peak_bytes);
    }
    out += totals.render("");
    if (base.dropped_allocations || now.dropped_allocations || base.dropped_stacks || now.dropped_stacks)
        out += "warning: records were dropped (allocations " + to_dec(base.dropped_allocations) + " -> " +
               to_dec(now.dropped_allocations) + ", stacks " + to_dec(base.dropped_stacks) + " -> " +
               to_dec(now.dropped_stacks) + "): the totals above may differ from the call sites below\n";
    if (std::string categories = format_categories_text(diff); !categories.empty()) out += "\n" + categories;
    if (std::string ranges = format_ranges_text(diff); !ranges.empty()) out += "\n" + ranges;

    size_t grew = 0, shrank = 0, added = 0, gone = 0;
    for (size_t i = 0; i < diff.changed; ++i) {
        switch (diff.sites[i].status) {
        case SiteDiff::Status::Grew: ++grew; break;
        case SiteDiff::Status::Shrank: ++shrank; break;
        case SiteDiff::Status::New: ++added; break;
        case SiteDiff::Status::Gone: ++gone; break;
        case SiteDiff::Status::Same: break;
        }
    }
    size_t unchanged = diff.sites.size() - diff.changed;
    out += "\ncall sites: " + std::to_string(diff.changed) + " changed (" + std::to_string(grew) + " grew, " +
           std::to_string(shrank) + " shrank, " + std::to_string(added) + " new, " + std::to_string(gone) +
           " gone), " + std::to_string(unchanged) + " unchanged";
    out += options.all ? "" : (unchanged > 0 ? " (not listed; --all lists them)" : "");
    out += "\n";
    size_t listed = options.all ? diff.sites.size() : diff.changed;
    if (options.top > 0 && listed > options.top) listed = options.top;
    if (listed > 0) {
        TextTable table({"change", "base", "new", "allocations", "at peak", "status", "site"});
        for (size_t i = 0; i < listed; ++i) {
            const SiteDiff &d = diff.sites[i];
            std::string at_peak = d.at_peak ? format_change_bytes(d.at_peak_sum()) : "n/a";
            std::string counts = to_dec(d.live_count.base) + " -> " + to_dec(d.live_count.now);
            if (d.live_count.changed()) counts += " (" + format_change_count(d.live_count) + ")";
            table.add({format_change_bytes(d.live_bytes), report::format_bytes(d.live_bytes.base),
                       report::format_bytes(d.live_bytes.now), counts, at_peak, status_name(d.status),
                       one_line(d.key)});
        }
        out += table.render("  ");
        size_t total = options.all ? diff.sites.size() : diff.changed;
        if (listed < total) out += "  ... and " + std::to_string(total - listed) + " more (--top 0 lists all)\n";
    }
    if (!diff.has_peak_composition)
        out += "(at peak: n/a, these snapshots do not record what each call site held at the peak)\n";
    if (gate) out += "\ngate: " + gate->verdict + (gate->exceeded ? ": FAILED" : ": passed") + "\n";
    return out;
}

nlohmann::ordered_json diff_json(const SnapshotSites &base, const SnapshotSites &now, const DiffResult &diff,
                                 const DiffTextOptions &options, const GateResult *gate, const GrowthLimit *limit) {
    nlohmann::ordered_json j;
    j["format"] = "vramtrace-diff";
    j["version"] = 1;
    j["base"] = run_json(base);
    j["new"] = run_json(now);
    j["match"] = {{"frames", diff.options.frames}, {"lines", diff.options.lines}};
    nlohmann::ordered_json totals;
    totals["live_bytes"] = compared_json(diff.live_bytes);
    totals["live_allocations"] = compared_json(diff.live_count);
    totals["peak_bytes"] = compared_json(diff.peak_bytes);
    totals["oom_count"] = diff.oom_count ? compared_json(*diff.oom_count) : nlohmann::ordered_json(nullptr);
    j["totals"] = totals;
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const DeviceDiff &d : diff.devices) {
        nlohmann::ordered_json x;
        x["device"] = d.device;
        x["in_base"] = d.in_base;
        x["in_new"] = d.in_new;
        x["current_bytes"] = compared_json(d.current_bytes);
        x["peak_bytes"] = compared_json(d.peak_bytes);
        x["allocation_count"] = compared_json(d.allocation_count);
        x["free_count"] = compared_json(d.free_count);
        devices.push_back(std::move(x));
    }
    j["devices"] = std::move(devices);
    nlohmann::ordered_json categories = nlohmann::ordered_json::array();
    for (const CategoryDiff &c : diff.categories) {
        nlohmann::ordered_json x;
        x["device"] = c.device;
        x["category"] = c.category;
        x["live_bytes"] = compared_json(c.live_bytes);
        x["live_allocations"] = compared_json(c.live_count);
        categories.push_back(std::move(x));
    }
    j["categories"] = std::move(categories);
    if (!diff.ranges.empty()) {
        nlohmann::ordered_json ranges = nlohmann::ordered_json::array();
        for (const RangeDiff &r : diff.ranges) {
            nlohmann::ordered_json x;
            x["device"] = r.device;
            x["nvtx_range"] = r.range;
            x["live_bytes"] = compared_json(r.live_bytes);
            x["live_allocations"] = compared_json(r.live_count);
            x["at_peak_bytes"] = compared_json(r.at_peak);
            ranges.push_back(std::move(x));
        }
        j["nvtx_ranges"] = std::move(ranges);
    }
    nlohmann::ordered_json sites = nlohmann::ordered_json::array();
    size_t listed = options.all ? diff.sites.size() : diff.changed;
    if (options.top > 0 && listed > options.top) listed = options.top;
    for (size_t i = 0; i < listed; ++i) {
        const SiteDiff &d = diff.sites[i];
        nlohmann::ordered_json x;
        x["key"] = d.key;
        x["status"] = status_name(d.status);
        x["live_bytes"] = compared_json(d.live_bytes);
        x["live_allocations"] = compared_json(d.live_count);
        if (d.at_peak) {
            nlohmann::ordered_json peaks = nlohmann::ordered_json::array();
            for (const auto &[device, c] : *d.at_peak) {
                nlohmann::ordered_json p = compared_json(c);
                p["device"] = device;
                peaks.push_back(std::move(p));
            }
            x["bytes_at_peak"] = std::move(peaks);
        } else {
            x["bytes_at_peak"] = nullptr;
        }
        x["devices"] = d.devices;
        x["apis"] = d.apis;
        sites.push_back(std::move(x));
    }
    j["sites"] = std::move(sites);
    j["changed_sites"] = diff.changed;
    j["unchanged_sites"] = diff.sites.size() - diff.changed;
    if (gate && limit) {
        nlohmann::ordered_json g;
        g["limit"] = limit->text;
        if (limit->percent) g["limit_micro_percent"] = limit->micro_percent;
        else g["limit_bytes"] = limit->bytes;
        g["subject"] = gate->subject;
        g["measured"] = compared_json(gate->measured);
        g["failed"] = gate->exceeded;
        j["gate"] = std::move(g);
    } else {
        j["gate"] = nullptr;
    }
    return j;
}

} // namespace vramtrace::cli
