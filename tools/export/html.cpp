// `vramtrace export --format html`: the interactive report (tools/export/html/: the page, its data
// and the viewer's JavaScript). This file puts the page together: the head with the process, the
// viewer, and after it the tables of the chosen weights (categories, top call sites) and, for a
// merged snapshot, how its ranks compare (html/imbalance.h), as static text that reads without
// JavaScript. Layout: docs/exports.md.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "export/export.h"
#include "export/export_common.h"
#include "export/html/imbalance.h"
#include "export/html/page.h"
#include "export/html/page_data.h"
#include "report/text_safety.h"
#include "report/text_format.h"

namespace vramtrace::exporter {

namespace {

using html::escape;

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// A colour per memory category (docs/attribution.md), in kCategories' order; grey for a name
// outside it. Constants of ours: no text of the snapshot ever reaches a style attribute.
std::string_view category_colour(std::string_view category) {
    static constexpr std::string_view kColours[] = {"#4e79a7", "#f28e2c", "#59a14f", "#e15759",
                                                    "#af7aa1", "#76b7b2", "#bab0ab"};
    for (size_t i = 0; i < std::size(kCategories); ++i)
        if (kCategories[i] == category) return kColours[i];
    return "#bab0ab";
}

// A category as a coloured square and its name (the name as text).
std::string category_cell(std::string_view category) {
    return "<span style=\"display:inline-block;width:.8em;height:.8em;margin-right:.4em;background:" +
           std::string(category_colour(category)) + "\"></span>" + escape(category);
}

// Sizes in a hostile snapshot can add up past 2^64: sums stop at the top.
uint64_t saturating_add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

// A call site as a table shows it: at most 2000 bytes (cut on a character boundary) and how many
// more there were, so that a hostile 100 000-character name does not make the page that wide.
std::string shown(const std::string &text) {
    constexpr size_t kMax = 2000;
    if (text.size() <= kMax) return text;
    size_t cut = report::utf8_cut_length(text, kMax);
    return text.substr(0, cut) + "\u2026 (" + to_dec(text.size() - cut) + " more bytes)";
}

std::string command_text(const snapshot::Snapshot &snapshot) {
    std::string cmd;
    for (const std::string &a : snapshot.process.command_line) cmd += (cmd.empty() ? "" : " ") + a;
    return cmd;
}

// The process line under the page's heading.
std::string process_html(const snapshot::Snapshot &snapshot, std::string_view name) {
    const snapshot::ProcessInfo &proc = snapshot.process;
    std::string cmd = command_text(snapshot);
    return "<p>" + (name.empty() ? std::string() : "<b>" + escape(name) + ":</b> ") +
           escape(cmd.empty() ? "(no command line)" : cmd) + "<br>pid " + to_dec_signed(proc.pid) + " on " +
           escape(proc.host) + ", snapshot reason " + escape(proc.reason) + ", vramtrace " +
           escape(proc.vramtrace_version) + "</p>\n";
}

// The static tables: the chosen weights (peak, else the dump) by category and by call site.
std::string tables_html(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes) {
    std::string out = "<section class=\"vt-static\">\n";
    // What the tables weigh: the peak (else the dump).
    At at = options.at.value_or(At::Peak);
    if (at == At::Peak && snapshot.peaks.empty()) {
        at = At::Exit;
        out += "<p class=\"note\">The snapshot records no peak composition; the tables show what was live at the dump.</p>\n";
        if (notes) notes->push_back("the snapshot records no peak composition: the flame graph shows what was live at the dump");
    }
    std::vector<WeightedStack> stacks = weighted_stacks(snapshot, options, at);
    uint64_t total = 0;
    // (call site with its via, category, device) -> bytes, allocations; category -> bytes. The
    // device is part of the key (and a column) only where the weights hold more than one device:
    // a table that mixes host memory and cuda:0 says which row is which.
    std::set<int> device_set;
    for (const WeightedStack &w : stacks) device_set.insert(w.device);
    const bool mixed = device_set.size() > 1;
    std::map<std::tuple<std::string, std::string, int>, std::pair<uint64_t, uint64_t>> sites;
    std::map<std::string, uint64_t> category_bytes;
    for (const WeightedStack &w : stacks) {
        total = saturating_add(total, w.bytes);
        std::string where = call_site_text(snapshot, w.stack);
        if (std::string_view via = via_text(snapshot, w.stack); !via.empty()) where += " via " + std::string(via);
        std::string category(category_text(snapshot, w.stack));
        auto &site = sites[{where, category, mixed ? w.device : 0}];
        site.first = saturating_add(site.first, w.bytes);
        site.second = saturating_add(site.second, w.count);
        category_bytes[category] = saturating_add(category_bytes[category], w.bytes);
    }
    // The same weights by category (the legend of the call sites' column), when the frame rules
    // name some category other than "other".
    const bool categories = has_categories(snapshot);
    if (categories) {
        std::vector<std::pair<std::string, uint64_t>> by_category(category_bytes.begin(), category_bytes.end());
        auto rank = [](const std::string &c) {
            return size_t(std::find(std::begin(kCategories), std::end(kCategories), c) - std::begin(kCategories));
        };
        std::stable_sort(by_category.begin(), by_category.end(),
                         [&](auto &a, auto &b) { return rank(a.first) < rank(b.first); });
        out += "<h2>Memory by category</h2>\n<table><tr><th>category</th><th>bytes</th><th>share</th></tr>\n";
        for (const auto &[category, bytes] : by_category)
            out += "<tr><td>" + category_cell(category) + "</td><td class=\"n\">" +
                   escape(report::format_bytes_exact(bytes)) + "</td><td class=\"n\">" +
                   num(total ? 100.0 * double(bytes) / double(total) : 0) + "%</td></tr>\n";
        out += "</table>\n";
    }

    // Top call sites of the same weights.
    std::vector<std::pair<std::tuple<std::string, std::string, int>, std::pair<uint64_t, uint64_t>>> rows(sites.begin(),
                                                                                                        sites.end());
    std::stable_sort(rows.begin(), rows.end(), [](auto &a, auto &b) { return a.second.first > b.second.first; });
    out += "<h2>Top call sites " + std::string(at == At::Peak ? "at each device's peak" : "live at the dump") + "</h2>\n<table><tr><th>bytes</th><th>allocations</th>" +
           std::string(mixed ? "<th>device</th>" : "") + std::string(categories ? "<th>category</th>" : "") +
           "<th>call site</th></tr>\n";
    for (size_t i = 0; i < rows.size() && i < 20; ++i) {
        const auto &[where, category, device] = rows[i].first;
        out += "<tr><td class=\"n\">" + escape(report::format_bytes_exact(rows[i].second.first)) + "</td><td class=\"n\">" +
               to_dec(rows[i].second.second) + "</td>" +
               (mixed ? "<td>" + escape(report::device_label(device)) + "</td>" : std::string()) +
               (categories ? "<td>" + category_cell(category) + "</td>" : std::string()) + "<td>" +
               escape(shown(where)) + "</td></tr>\n";
    }
    out += "</table>\n";
    if (rows.size() > 20) out += "<p>... and " + to_dec(rows.size() - 20) + " more call sites.</p>\n";
    html::append_imbalance(out, snapshot);
    out += "</section>\n";
    return out;
}

// The head: heading and process line(s).
std::string header_html(const std::vector<std::pair<std::string, const snapshot::Snapshot *>> &runs) {
    std::string out = runs.size() > 1 ? "<h1>vramtrace compare</h1>\n" : "<h1>vramtrace report</h1>\n";
    for (const auto &[name, snapshot] : runs) out += process_html(*snapshot, name);
    return out;
}

} // namespace

std::string export_html(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes) {
    std::vector<html::PageRun> runs{{"", html::page_data_json(snapshot, options, notes)}};
    return html::page(command_text(snapshot), header_html({{"", &snapshot}}), runs, tables_html(snapshot, options, notes));
}

std::string export_html_compare(const snapshot::Snapshot &base, const snapshot::Snapshot &snapshot, const Options &options,
                                std::vector<std::string> *notes) {
    std::vector<std::string> base_notes, new_notes;
    std::vector<html::PageRun> runs{{"base", html::page_data_json(base, options, &base_notes)},
                                    {"new", html::page_data_json(snapshot, options, &new_notes)}};
    if (notes) {
        for (const std::string &n : base_notes) notes->push_back("base: " + n);
        for (const std::string &n : new_notes) notes->push_back("new: " + n);
    }
    return html::page(command_text(snapshot), header_html({{"base", &base}, {"new", &snapshot}}), runs, "");
}

} // namespace vramtrace::exporter
