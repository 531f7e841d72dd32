// The text pieces every section of the summary is made of: numbers, plurals, one-line snapshot
// text, shell-quoted command lines, percentages, and the line buffer that prefixes, aligns and
// wraps. Internal to lib/report (summary_format.cpp, summary_body.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/summary_format.h"
#include "report/text_safety.h" // one_line
#include "report/text_format.h"

namespace vramtrace::report::summary {

using report::to_dec; // decimal digits, as every report writes them
std::string plural(uint64_t n, std::string_view word); // "1 allocation", "2 allocations"
// A command line as a shell would need it typed: arguments with special characters single-quoted.
std::string shell_words(const std::vector<std::string> &args);
// Share of total in percent with one decimal, rounded half up: "56.0%"; "-" when total is 0.
std::string percent(uint64_t part, uint64_t total);
std::string driver_text(int version); // 12080 -> "12.8"
// Time since the library's start of a CLOCK_MONOTONIC time, when the snapshot places monotonic
// times on the wall clock (ProcessInfo::dump_monotonic_ns); and the same as "N ms after start"
// ("" when not known).
std::optional<uint64_t> since_start(const snapshot::ProcessInfo &p, uint64_t monotonic_ns);
std::string when_text(const snapshot::ProcessInfo &p, uint64_t monotonic_ns);

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
        for (const std::string &text : render(indent, rows, right)) add(text);
    }

    // `first` then the items joined by ", ", broken into lines of at most kWidth characters (the
    // prefix included; an item longer than that gets a line of its own); continuation lines start
    // with `indent`.
    void wrap(std::string first, const std::string &indent, const std::vector<std::string> &items) {
        constexpr size_t kWidth = 100;
        std::string text = std::move(first);
        size_t start = text.size();
        for (size_t i = 0; i < items.size(); ++i) {
            std::string piece = items[i] + (i + 1 < items.size() ? "," : "");
            bool fresh = text.size() == start;
            if (!fresh && kSummaryLinePrefix.size() + text.size() + 1 + piece.size() > kWidth) {
                add(text);
                text = indent;
                start = text.size();
                fresh = true;
            }
            if (!fresh) text += ' ';
            text += piece;
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        add(text);
    }

    static std::vector<std::string> render(std::string_view indent, const std::vector<std::vector<std::string>> &rows,
                                           const std::vector<bool> &right) {
        std::vector<std::string> out;
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
            out.push_back(std::move(text));
        }
        return out;
    }

    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

} // namespace vramtrace::report::summary
