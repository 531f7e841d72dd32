// Plain-text tables. See text_table.h.
#include "common/text_table.h"

#include "report/text_safety.h"

#include <algorithm>

namespace vramtrace::cli {

namespace {

size_t display_width(std::string_view s) {
    size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

} // namespace

std::string one_line(std::string_view text) { return report::one_line(text); }

std::string TextTable::render(std::string_view indent) const {
    size_t columns = header_.size();
    for (const auto &row : rows_) columns = std::max(columns, row.size());
    std::vector<size_t> width(columns, 0);
    bool has_header = std::any_of(header_.begin(), header_.end(), [](const std::string &h) { return !h.empty(); });
    auto measure = [&](const std::vector<std::string> &row) {
        for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
    };
    if (has_header) measure(header_);
    for (const auto &row : rows_) measure(row);
    std::string out;
    auto emit = [&](const std::vector<std::string> &row) {
        std::string line(indent);
        for (size_t c = 0; c < row.size(); ++c) {
            line += row[c];
            if (c + 1 < row.size()) line.append(width[c] - display_width(row[c]) + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line;
        out += '\n';
    };
    if (has_header) emit(header_);
    for (const auto &row : rows_) emit(row);
    return out;
}

} // namespace vramtrace::cli
