// A self-contained HTML report: no network, inline SVG, a few lines of inline CSS and JS. Per
// device the tracked bytes over time (from the event history) with marks and the peak; an icicle
// graph (root on top) of what was live at the peak (or at the dump); the top call sites of the
// same weights; for a merged snapshot, how its ranks compare. Layout: docs/exports.md.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "export/export.h"
#include "export/export_common.h"
#include "report/text_safety.h"

namespace vramtrace::exporter {

namespace {

// HTML text and attribute values: markup characters as entities, control characters (ESC, CR, a
// lone byte that is not UTF-8) as visible \xHH (report::escape_control_characters).
std::string esc(std::string_view raw) {
    std::string text = report::escape_control_characters(raw);
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string seconds_text(uint64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", double(ns) / 1e9);
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
           std::string(category_colour(category)) + "\"></span>" + esc(category);
}

// A stable warm colour per frame name (flame graph convention).
std::string colour(std::string_view name) {
    uint32_t h = 2166136261u;
    for (char c : name) h = (h ^ uint8_t(c)) * 16777619u;
    return "hsl(" + to_dec(10 + h % 40) + ",85%," + to_dec(55 + (h >> 8) % 15) + "%)";
}

struct Node {
    std::string name, where;
    uint64_t bytes = 0;
    std::map<std::string, std::unique_ptr<Node>> children;
};

constexpr double kWidth = 1000, kRow = 18;

// Sizes in a hostile snapshot can add up past 2^64: sums stop at the top, so that no node ever
// holds more than its parent (the widths below are fractions of the parent's).
uint64_t saturating_add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }
// Rows of the icicle graph below the root; the frames of a deeper stack (a runaway recursion, a
// frame with 200 000 inlined functions) end in one marker node that says how many were left out.
constexpr size_t kMaxGraphDepth = 512;

// Frees a tree without recursion (a chain of unique_ptr destructors would recurse once per level).
void free_tree(Node &root) {
    std::vector<std::unique_ptr<Node>> pending;
    for (auto &[name, child] : root.children) pending.push_back(std::move(child));
    root.children.clear();
    while (!pending.empty()) {
        std::unique_ptr<Node> node = std::move(pending.back());
        pending.pop_back();
        for (auto &[name, child] : node->children) pending.push_back(std::move(child));
        node->children.clear();
    }
}

// Draws one node (its rectangle and label); draw_graph walks the tree.
void draw_node(std::string &out, const Node &node, double x, double width, int depth, uint64_t total) {
    double y = depth * kRow;
    std::string label = node.name + " — " + report::format_bytes_exact(node.bytes) + " (" +
                        num(total ? 100.0 * double(node.bytes) / double(total) : 0) + "%)";
    if (!node.where.empty()) label += " " + node.where;
    out += "<g class=\"f\" data-t=\"" + esc(label) + "\"><rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
           num(std::max(width - 0.5, 0.1)) + "\" height=\"" + num(kRow - 1) + "\" fill=\"" + colour(node.name) +
           "\"><title>" + esc(label) + "</title></rect>";
    size_t chars = size_t(width / 7);
    if (chars >= 4) {
        // Cut on a UTF-8 character boundary, never inside one.
        std::string text = node.name.size() > chars
                               ? node.name.substr(0, report::utf8_cut_length(node.name, chars - 2)) + ".."
                               : node.name;
        out += "<text x=\"" + num(x + 3) + "\" y=\"" + num(y + 13) + "\">" + esc(text) + "</text>";
    }
    out += "</g>\n";
}

// The icicle graph, depth first, each node's children by bytes descending (then name) left to
// right; iterative, so the depth of the tree never meets the depth of the C stack.
void draw_graph(std::string &out, const Node &root, uint64_t total, int &max_depth) {
    struct Item {
        const Node *node;
        double x, width;
        int depth;
    };
    std::vector<Item> todo{{&root, 0, kWidth, 0}};
    while (!todo.empty()) {
        Item it = todo.back();
        todo.pop_back();
        max_depth = std::max(max_depth, it.depth);
        draw_node(out, *it.node, it.x, it.width, it.depth, total);
        std::vector<const Node *> kids;
        for (const auto &[n, child] : it.node->children) kids.push_back(child.get());
        std::stable_sort(kids.begin(), kids.end(), [](auto *a, auto *b) { return a->bytes > b->bytes; });
        std::vector<Item> row;
        double cx = it.x;
        for (const Node *child : kids) {
            double w = it.node->bytes ? it.width * double(child->bytes) / double(it.node->bytes) : 0;
            w = std::min(w, it.x + it.width - cx); // within the parent's span, whatever the sums
            if (w >= 0.3) row.push_back({child, cx, w, it.depth + 1});
            cx += w;
        }
        todo.insert(todo.end(), row.rbegin(), row.rend()); // the leftmost child is drawn next
    }
}

void timeline_svg(std::string &out, const report::Snapshot &snapshot, const DeviceSeries &s, uint64_t origin,
                  uint64_t end, const std::vector<const report::Event *> &marks) {
    const double w = kWidth, h = 200, left = 80, right = 10, top = 10, bottom = 24;
    uint64_t span = end > origin ? end - origin : 1;
    double ymax = double(std::max<uint64_t>(s.max_bytes, 1));
    auto X = [&](uint64_t t) { return left + (w - left - right) * double(t > origin ? t - origin : 0) / double(span); };
    auto Y = [&](uint64_t b) { return top + (h - top - bottom) * (1.0 - double(b) / ymax); };
    out += "<svg viewBox=\"0 0 " + num(w) + " " + num(h) + "\" class=\"tl\">\n";
    out += "<line x1=\"" + num(left) + "\" y1=\"" + num(Y(0)) + "\" x2=\"" + num(w - right) + "\" y2=\"" + num(Y(0)) +
           "\" class=\"ax\"/><line x1=\"" + num(left) + "\" y1=\"" + num(top) + "\" x2=\"" + num(left) + "\" y2=\"" +
           num(Y(0)) + "\" class=\"ax\"/>\n";
    out += "<text x=\"" + num(left - 4) + "\" y=\"" + num(top + 10) + "\" text-anchor=\"end\">" +
           esc(report::format_bytes(s.max_bytes)) + "</text><text x=\"" + num(left - 4) + "\" y=\"" + num(Y(0)) +
           "\" text-anchor=\"end\">0</text>\n";
    out += "<text x=\"" + num(left) + "\" y=\"" + num(h - 6) + "\">0 s</text><text x=\"" + num(w - right) + "\" y=\"" +
           num(h - 6) + "\" text-anchor=\"end\">" + seconds_text(span) + "</text>\n";
    std::string points;
    uint64_t last = 0;
    bool first = true;
    for (const SeriesPoint &p : s.points) {
        if (!first) points += num(X(p.time_ns)) + "," + num(Y(last)) + " ";
        points += num(X(p.time_ns)) + "," + num(Y(p.bytes)) + " ";
        last = p.bytes;
        first = false;
    }
    if (!s.points.empty()) points += num(X(end)) + "," + num(Y(last));
    out += "<polyline class=\"cv\" points=\"" + points + "\"/>\n";
    for (const report::Event *m : marks) {
        double x = X(m->time_ns);
        out += "<line class=\"mk\" x1=\"" + num(x) + "\" y1=\"" + num(top) + "\" x2=\"" + num(x) + "\" y2=\"" +
               num(Y(0)) + "\"><title>" + esc(m->label) + " at " + seconds_text(m->time_ns - std::min(m->time_ns, origin)) +
               "</title></line><text class=\"mt\" x=\"" + num(x + 2) + "\" y=\"" + num(top + 8) + "\">" +
               esc(m->label.substr(0, report::utf8_cut_length(m->label, 24))) + "</text>\n";
    }
    for (const report::DevicePeak &p : snapshot.peaks) {
        if (p.device != s.device || p.time_ns == 0) continue;
        out += "<circle class=\"pk\" cx=\"" + num(X(p.time_ns)) + "\" cy=\"" + num(Y(std::min(p.peak_bytes, s.max_bytes))) +
               "\" r=\"4\"><title>peak " + esc(report::format_bytes_exact(p.peak_bytes)) + " at " +
               seconds_text(p.time_ns - std::min(p.time_ns, origin)) + "</title></circle>\n";
    }
    out += "</svg>\n";
}

// A merged snapshot's ranks compared (docs/cli.md, "Imbalance"): per device role the minimum,
// median and maximum of the current and peak bytes, then each outlier with the call sites that
// make it heavier than the median rank.
void imbalance_html(std::string &out, const report::Snapshot &snapshot) {
    if (snapshot.imbalance.empty()) return;
    auto who = [](int64_t rank, uint64_t input) {
        return rank >= 0 ? "rank " + to_dec(uint64_t(rank)) : "process #" + to_dec(input);
    };
    auto bytes = [](uint64_t b) { return esc(report::format_bytes_exact(b)); };
    out += "<h2>Imbalance across ranks</h2>\n";
    for (size_t i = 0; i < snapshot.imbalance.size(); ++i) {
        const report::ImbalanceRole &r = snapshot.imbalance[i];
        std::string role = r.role == "gpu" ? "GPU " + to_dec(r.role_index + 1) + " of each rank"
                           : r.role == "host" ? std::string("host-pinned memory") : std::string("unknown device");
        out += "<h3>" + esc(role) + ", " + to_dec(r.ranks) + " ranks</h3>\n<table><tr><th></th><th>min</th><th>median</th>"
               "<th>max</th></tr>\n";
        out += "<tr><td>current</td><td class=\"n\">" + bytes(r.current_min_bytes) + ", " +
               esc(who(r.current_min_rank, r.current_min_input)) + "</td><td class=\"n\">" + bytes(r.current_median_bytes) +
               "</td><td class=\"n\">" + bytes(r.current_max_bytes) + ", " + esc(who(r.current_max_rank, r.current_max_input)) +
               "</td></tr>\n";
        out += "<tr><td>peak</td><td class=\"n\">" + bytes(r.peak_min_bytes) + ", " +
               esc(who(r.peak_min_rank, r.peak_min_input)) + "</td><td class=\"n\">" + bytes(r.peak_median_bytes) +
               "</td><td class=\"n\">" + bytes(r.peak_max_bytes) + ", " + esc(who(r.peak_max_rank, r.peak_max_input)) +
               "</td></tr>\n</table>\n";
        out += "<p>Outliers: " + to_dec(r.outliers) + " (peak with |0.6745 (peak - median) / scale| &gt; 3.5, scale " +
               bytes(r.scale_bytes) + " = max(median absolute deviation " + bytes(r.peak_mad_bytes) +
               ", 1% of the median, 1 MiB)).</p>\n";
        for (const report::ImbalanceOutlier &o : snapshot.imbalance_outliers) {
            if (o.imbalance != i) continue;
            char z[32];
            std::snprintf(z, sizeof z, "%+.1f", report::imbalance_z(r, o.peak_bytes));
            out += "<h4>" + esc(who(o.rank, o.input)) + " (" + esc(o.host) + " " + esc(report::device_label(o.device)) +
                   "): peak " + bytes(o.peak_bytes) + ", z " + z + "</h4>\n";
            if (!o.sites_known) {
                out += "<p class=\"note\">Its call sites at the peak are not known: it came from a merged snapshot.</p>\n";
                continue;
            }
            out += "<table><tr><th>above the median</th><th>allocations at peak</th><th>call site</th></tr>\n";
            for (const report::PeakSite &site : o.sites)
                out += "<tr><td class=\"n\">+" + bytes(site.bytes) + "</td><td class=\"n\">" + to_dec(site.count) +
                       "</td><td>" + esc(call_site_text(snapshot, site.stack)) + "</td></tr>\n";
            out += "</table>\n";
        }
    }
}

} // namespace

std::string export_html(const report::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes) {
    const report::ProcessInfo &proc = snapshot.process;
    std::string cmd;
    for (const std::string &a : proc.command_line) cmd += (cmd.empty() ? "" : " ") + a;
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>vramtrace: " + esc(cmd) +
        "</title>\n<style>\nbody{font:14px sans-serif;margin:1em 2em;color:#222}h2{margin-top:1.5em}"
        "svg{width:100%;max-width:1000px;display:block}svg text{font:11px sans-serif}.ax{stroke:#888}"
        ".cv{fill:none;stroke:#1565c0;stroke-width:1.5}.mk{stroke:#2e7d32;stroke-dasharray:3 3}.mt{fill:#2e7d32}"
        ".pk{fill:#c62828}.f rect{stroke:#fff;stroke-width:.5}.f:hover rect{stroke:#000}"
        "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #ddd}"
        "td.n{text-align:right;white-space:nowrap}#info{font-family:monospace;min-height:1.4em}.note{color:#8a4b00}\n"
        "</style></head><body>\n<h1>vramtrace report</h1>\n<p>" +
        esc(cmd.empty() ? "(no command line)" : cmd) + "<br>pid " + to_dec_signed(proc.pid) + " on " + esc(proc.host) +
        ", snapshot reason " + esc(proc.reason) + ", vramtrace " + esc(proc.vramtrace_version) + "</p>\n";

    // Memory over time.
    out += "<h2>Tracked memory over time</h2>\n";
    Timeline timeline = build_timeline(snapshot, options);
    uint64_t origin = time_origin_ns(snapshot);
    uint64_t end = origin;
    for (const DeviceSeries &s : timeline.devices)
        if (!s.points.empty()) end = std::max(end, s.points.back().time_ns);
    if (proc.dump_monotonic_ns > end) end = proc.dump_monotonic_ns;
    std::vector<const report::Event *> marks;
    for (const report::Event &e : snapshot.events.events)
        if (e.type == "mark") marks.push_back(&e);
    if (!timeline.from_events) {
        std::string note = "The snapshot has no event history (VRAMTRACE_EVENTS=0, or an older vramtrace): the curves "
                           "add up only the allocations live at the dump, at the times they were made.";
        out += "<p class=\"note\">" + esc(note) + "</p>\n";
        if (notes) notes->push_back("the snapshot has no event history: the curves show only the allocations live at the dump");
    } else if (snapshot.events.wrapped) {
        out += "<p class=\"note\">The event history wrapped: events before " +
               seconds_text(snapshot.events.complete_from_ns - std::min(snapshot.events.complete_from_ns, origin)) +
               " were dropped (VRAMTRACE_EVENTS keeps the most recent).</p>\n";
    }
    if (timeline.devices.empty()) out += "<p>No tracked memory.</p>\n";
    for (const DeviceSeries &s : timeline.devices) {
        out += "<h3>" + esc(report::device_label(s.device)) + ", up to " + esc(report::format_bytes_exact(s.max_bytes)) +
               "</h3>\n";
        timeline_svg(out, snapshot, s, origin, end, marks);
    }

    // Icicle graph of the peak (else the dump).
    At at = options.at.value_or(At::Peak);
    if (at == At::Peak && snapshot.peaks.empty()) {
        at = At::Exit;
        out += "<p class=\"note\">The snapshot records no peak composition; the graph shows what was live at the dump.</p>\n";
        if (notes) notes->push_back("the snapshot records no peak composition: the flame graph shows what was live at the dump");
    }
    std::vector<WeightedStack> stacks = weighted_stacks(snapshot, options, at);
    Node root;
    root.name = at == At::Peak ? "all (at each device's peak)" : "all (live at the dump)";
    // (call site with its via, category) -> bytes, allocations; category -> bytes
    std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> sites;
    std::map<std::string, uint64_t> category_bytes;
    bool several = false;
    for (const WeightedStack &w : stacks) several |= w.device != stacks.front().device;
    for (const WeightedStack &w : stacks) {
        Node *node = &root;
        root.bytes = saturating_add(root.bytes, w.bytes);
        auto step = [&](const std::string &name, const std::string &where) {
            auto &child = node->children[name];
            if (!child) {
                child = std::make_unique<Node>();
                child->name = name;
                child->where = where;
            }
            child->bytes = saturating_add(child->bytes, w.bytes);
            node = child.get();
        };
        if (several) step(report::device_label(w.device), "");
        std::vector<NamedFrame> frames = expand_stack(snapshot, snapshot.find_stack(w.stack));
        if (frames.empty()) step(std::string(kNoStackName), "");
        size_t depth = 0;
        for (auto it = frames.rbegin(); it != frames.rend(); ++it, ++depth) {
            if (depth == kMaxGraphDepth) {
                step("(" + to_dec(uint64_t(frames.rend() - it)) + " more frames not drawn)", "");
                break;
            }
            std::string where = it->file.empty() ? "" : "at " + it->file + (it->line ? ":" + to_dec(it->line) : "");
            if (it->inlined) where += " (inlined)";
            step(it->name, where);
        }
        std::string where = call_site_text(snapshot, w.stack);
        if (std::string_view via = via_text(snapshot, w.stack); !via.empty()) where += " via " + std::string(via);
        std::string category(category_text(snapshot, w.stack));
        auto &site = sites[{where, category}];
        site.first = saturating_add(site.first, w.bytes);
        site.second = saturating_add(site.second, w.count);
        category_bytes[category] = saturating_add(category_bytes[category], w.bytes);
    }
    out += "<h2>" + std::string(at == At::Peak ? "Live at the peak" : "Live at the dump") +
           " (icicle graph, callers on top)</h2>\n<div id=\"info\">&nbsp;</div>\n";
    std::string graph;
    int max_depth = 0;
    if (root.bytes > 0) draw_graph(graph, root, root.bytes, max_depth);
    free_tree(root);
    out += "<svg viewBox=\"0 0 " + num(kWidth) + " " + num((max_depth + 1) * kRow) + "\" id=\"flame\">\n" + graph +
           "</svg>\n";

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
                   esc(report::format_bytes_exact(bytes)) + "</td><td class=\"n\">" +
                   num(root.bytes ? 100.0 * double(bytes) / double(root.bytes) : 0) + "%</td></tr>\n";
        out += "</table>\n";
    }

    // Top call sites of the same weights.
    std::vector<std::pair<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>>> rows(sites.begin(),
                                                                                                   sites.end());
    std::stable_sort(rows.begin(), rows.end(), [](auto &a, auto &b) { return a.second.first > b.second.first; });
    out += "<h2>Top call sites</h2>\n<table><tr><th>bytes</th><th>allocations</th>" +
           std::string(categories ? "<th>category</th>" : "") + "<th>call site</th></tr>\n";
    for (size_t i = 0; i < rows.size() && i < 20; ++i)
        out += "<tr><td class=\"n\">" + esc(report::format_bytes_exact(rows[i].second.first)) + "</td><td class=\"n\">" +
               to_dec(rows[i].second.second) + "</td>" +
               (categories ? "<td>" + category_cell(rows[i].first.second) + "</td>" : std::string()) + "<td>" +
               esc(rows[i].first.first) + "</td></tr>\n";
    out += "</table>\n";
    if (rows.size() > 20) out += "<p>... and " + to_dec(rows.size() - 20) + " more call sites.</p>\n";
    imbalance_html(out, snapshot);
    out += "<script>\nfor (const g of document.querySelectorAll('#flame .f'))\n"
           "  g.addEventListener('mouseover', () => { document.getElementById('info').textContent = g.dataset.t; });\n"
           "</script>\n</body></html>\n";
    return out;
}

} // namespace vramtrace::exporter
