// What the terminal UI of `vramtrace top` shows in its tables, kept apart from the drawing so
// that the choices are plain functions: which columns fit the width, how a call site is cut, and
// how much each site grew.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace vramtrace::cli {

// `text` in at most `width` characters (bytes; names are escaped to ASCII-safe text first). A
// call site "f() at /long/path/file.cpp:42 (module)" that does not fit loses the middle of its
// path, never its end, so file:line stays; "..." marks the cut.
std::string cut_middle(const std::string &text, size_t width);

// One column of a table: a header, its cells, right-aligned or not, and how wide it may get.
struct Column {
    std::string header;
    std::vector<std::string> cells;
    bool right = false;
    size_t min_width = 0;     // 0: the widest cell or header
    int priority = 0;         // which columns go first when the width is short: higher stays longer
    bool hide_if_same = false; // hidden when every row holds the same value (then it tells nothing);
                               // an empty cell continues the row above and is no value
    bool flexible = false;    // takes the width left over, its cells cut in the middle
};

// The header and rows of `columns` laid out in `width` characters, two spaces between columns:
// columns marked hide_if_same are dropped when all their cells are equal (or there are no rows),
// then the lowest priority ones until the rest fit; the flexible column gets what is left.
struct Layout {
    std::string header;
    std::vector<std::string> rows;
    std::vector<std::string> shown; // the headers of the columns kept, in order
};
Layout lay_out(const std::vector<Column> &columns, size_t width);

// Each call site's bytes over time, from one reading a second: the change over the last 10 s
// and since the first reading this viewer made. A site absent from a reading holds 0 bytes then.
class GrowthTracker {
public:
    // A reading at `now_ms` (the viewer's monotonic clock) with each site's bytes, by its key.
    void add(uint64_t now_ms, const std::map<std::string, uint64_t> &bytes);
    // Bytes now minus bytes 10 s ago (or at the first reading, when that is more recent).
    int64_t last_10s(const std::string &key) const;
    int64_t since_first(const std::string &key) const;
    // Seconds the 10 s figure covers now (less than 10 while the viewer is younger).
    double window_s() const;
    void clear();

private:
    struct Reading {
        uint64_t ms = 0;
        std::map<std::string, uint64_t> bytes;
    };
    Reading first_;
    std::deque<Reading> recent_; // newest last, at least one older than 10 s kept when there is one
    bool have_first_ = false;
    static int64_t at(const Reading &r, const std::string &key);
};

// "+1.00 MiB", "-512.00 KiB", "0".
std::string format_growth(int64_t bytes);

} // namespace vramtrace::cli
