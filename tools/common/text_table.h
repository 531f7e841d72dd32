// Plain-text tables and one-line text for the CLI's reports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vramtrace::cli {

// report::one_line (lib/report/text_safety.h), by the name the CLI's tables use.
std::string one_line(std::string_view text);

// Columns separated by two spaces, each as wide as its widest cell (counted in UTF-8 characters);
// the last column is not padded, and no line ends in a space.
class TextTable {
public:
    explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    size_t size() const { return rows_.size(); }
    // The header (when any of its cells is not empty) and the rows, each line starting with `indent`.
    std::string render(std::string_view indent) const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

} // namespace vramtrace::cli
