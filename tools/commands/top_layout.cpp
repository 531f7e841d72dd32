// The TUI's tables (top_layout.h).
#include "commands/top_layout.h"

#include <algorithm>

#include "report/text_safety.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"

namespace vramtrace::cli {

namespace {
// How many characters at the end of a call site are kept whole: from the basename of the file
// before ":LINE" to the end (0 when there is no such path).
size_t kept_end(const std::string &text) {
    size_t colon = text.rfind(':');
    size_t slash = colon == std::string::npos ? std::string::npos : text.rfind('/', colon);
    return slash == std::string::npos ? 0 : text.size() - slash - 1;
}
} // namespace

std::string cut_middle(const std::string &text, size_t width) {
    if (text.size() <= width) return text;
    if (width < 8) return text.substr(0, width);
    std::string tail = text.substr(text.size() - kept_end(text));
    // Short of room for the function's name, the module in parentheses at the end goes first.
    if (tail.size() + 3 + 12 > width && tail.size() > 2 && tail.back() == ')') {
        size_t open = tail.rfind(" (");
        if (open != std::string::npos && open > 0 && tail.find(':') < open) tail.erase(open);
    }
    if (!tail.empty() && tail.size() + 3 + 4 <= width) {
        size_t head = width - 3 - tail.size();
        return text.substr(0, head) + "..." + tail;
    }
    size_t keep_tail = (width - 3) * 2 / 3, keep_head = width - 3 - keep_tail;
    return text.substr(0, keep_head) + "..." + text.substr(text.size() - keep_tail);
}

Layout lay_out(const std::vector<Column> &columns, size_t width) {
    std::vector<size_t> kept;
    std::vector<size_t> widths(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) {
        const Column &c = columns[i];
        // Empty cells (a row continuing the one above) do not count as a value.
        std::vector<std::string> values;
        for (const std::string &v : c.cells)
            if (!v.empty() && std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
        if (c.hide_if_same && values.size() <= 1) continue;
        size_t w = c.header.size();
        for (const std::string &cell : c.cells) w = std::max(w, cell.size());
        // A flexible column asks for room for its cells' ends (file:line and the module) and a
        // little of their starts, so that narrower columns give way before those are cut.
        size_t wanted = 8;
        if (c.flexible)
            for (const std::string &cell : c.cells) wanted = std::max(wanted, std::min(cell.size(), kept_end(cell) + 3 + 12));
        widths[i] = c.flexible ? std::max(std::min(wanted, width / 2 + 8), c.min_width) : std::max(w, c.min_width);
        kept.push_back(i);
    }
    auto total = [&] {
        size_t sum = 0;
        for (size_t i : kept) sum += widths[i];
        return sum + (kept.empty() ? 0 : 2 * (kept.size() - 1));
    };
    // First the columns less needed than the flexible one go while it lacks the room it asks
    // for; then, where even its least width does not fit, the least needed of the others.
    auto drop_lowest = [&](auto eligible) {
        size_t best = kept.size();
        for (size_t k = 0; k < kept.size(); ++k)
            if (eligible(kept[k]) &&
                (best == kept.size() || columns[kept[k]].priority < columns[kept[best]].priority))
                best = k;
        if (best == kept.size()) return false;
        kept.erase(kept.begin() + long(best));
        return true;
    };
    int flexible_priority = -1 << 30;
    for (size_t i : kept)
        if (columns[i].flexible) flexible_priority = columns[i].priority;
    auto below_flexible = [&](size_t i) { return !columns[i].flexible && columns[i].priority < flexible_priority; };
    while (total() > width && drop_lowest(below_flexible)) {
    }
    for (size_t i : kept)
        if (columns[i].flexible && total() > width) {
            const size_t least = std::max<size_t>(columns[i].min_width, 8), over = total() - width;
            widths[i] = std::max(least, widths[i] - std::min(widths[i], over));
        }
    while (total() > width && kept.size() > 1 && drop_lowest([&](size_t i) { return !columns[i].flexible; })) {
    }
    // The flexible column takes the rest of the line (up to its widest cell).
    for (size_t i : kept)
        if (columns[i].flexible) {
            size_t w = columns[i].header.size();
            for (const std::string &cell : columns[i].cells) w = std::max(w, cell.size());
            size_t spare = width > total() ? width - total() : 0;
            widths[i] = std::min(w, widths[i] + spare);
        }
    auto cell = [&](size_t i, const std::string &v) {
        const size_t w = widths[i];
        std::string s = columns[i].flexible ? cut_middle(v, w) : v.substr(0, w);
        if (s.size() < w) s = columns[i].right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
        return s;
    };
    Layout out;
    size_t rows = 0;
    for (const Column &c : columns) rows = std::max(rows, c.cells.size());
    out.rows.assign(rows, "");
    for (size_t k = 0; k < kept.size(); ++k) {
        size_t i = kept[k];
        const std::string sep = k == 0 ? "" : "  ";
        out.header += sep + cell(i, columns[i].header);
        out.shown.push_back(columns[i].header);
        for (size_t r = 0; r < rows; ++r) out.rows[r] += sep + cell(i, r < columns[i].cells.size() ? columns[i].cells[r] : "");
    }
    // No trailing blanks: a row ends where its text does.
    auto trim = [](std::string &s) { s.erase(s.find_last_not_of(' ') + 1); };
    trim(out.header);
    for (std::string &r : out.rows) trim(r);
    return out;
}

int64_t GrowthTracker::at(const Reading &r, const std::string &key) {
    auto it = r.bytes.find(key);
    return it == r.bytes.end() ? 0 : int64_t(it->second);
}

void GrowthTracker::add(uint64_t now_ms, const std::map<std::string, uint64_t> &bytes) {
    Reading r{now_ms, bytes};
    if (!have_first_) first_ = r, have_first_ = true;
    recent_.push_back(std::move(r));
    // Keep the newest reading that is at least 10 s old as the base, drop the ones before it.
    while (recent_.size() > 1 && now_ms >= recent_[1].ms + 10000) recent_.pop_front();
}

int64_t GrowthTracker::last_10s(const std::string &key) const {
    if (recent_.empty()) return 0;
    return at(recent_.back(), key) - at(recent_.front(), key);
}

int64_t GrowthTracker::since_first(const std::string &key) const {
    if (recent_.empty()) return 0;
    return at(recent_.back(), key) - at(first_, key);
}

double GrowthTracker::window_s() const {
    return recent_.empty() ? 0.0 : double(recent_.back().ms - recent_.front().ms) / 1000.0;
}

void GrowthTracker::clear() {
    recent_.clear();
    have_first_ = false;
}

std::string format_growth(int64_t bytes) {
    if (bytes == 0) return "0";
    return (bytes > 0 ? "+" : "-") + report::format_bytes(uint64_t(bytes > 0 ? bytes : -bytes));
}

} // namespace vramtrace::cli
