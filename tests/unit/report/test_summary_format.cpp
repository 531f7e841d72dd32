// The summary: golden file, the "vramtrace: " prefix on every line, leaks vs live wording, top-N
// truncation, escaping, and the degenerate snapshots.
#include <catch2/catch.hpp>

#include <sstream>
#include <vector>

#include "report_test_data.h"
#include "reporting/summary_format.h"

using namespace vramtrace::report;

namespace {

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

void check_every_line_prefixed(const std::string &text) {
    REQUIRE_FALSE(text.empty());
    CHECK(text.back() == '\n');
    for (const std::string &line : lines_of(text)) {
        INFO(line);
        CHECK(line.rfind("vramtrace: ", 0) == 0);
        CHECK(line.back() != ' ');
    }
}

bool has_line(const std::string &text, const std::string &line) {
    for (const std::string &l : lines_of(text))
        if (l == line) return true;
    return false;
}

} // namespace

TEST_CASE("summary of the golden snapshot equals data/summary_golden.txt", "[summary]") {
    std::string expected = vt_test::read_file(std::string(VT_TEST_DATA_DIR) + "/summary_golden.txt");
    REQUIRE_FALSE(expected.empty());
    std::string text = format_summary(vt_test::golden_snapshot());
    CHECK(text == expected);
    check_every_line_prefixed(text);
    // top_n 0 lists every call site: the same here (6 call sites, fewer than the default 10).
    CHECK(format_summary(vt_test::golden_snapshot(), SummaryOptions{0, 5}) == expected);
}

TEST_CASE("summary: top_n truncates both lists and sums up the rest", "[summary]") {
    std::string text = format_summary(vt_test::golden_snapshot(), SummaryOptions{2, 5});
    check_every_line_prefixed(text);
    // Call sites 3..6: 3145728 + 65536 + 4096 + 1000 bytes in 4 allocations.
    const std::string rest = "vramtrace:   ... and 4 more call sites: 3.07 MiB (3216360 B) in 4 allocations";
    size_t first = text.find(rest);
    REQUIRE(first != std::string::npos);
    CHECK(text.find(rest, first + 1) != std::string::npos); // once per list
    CHECK(text.find("worker_thread") == std::string::npos);
    CHECK(has_line(text, "vramtrace: leaked at exit: 9 allocations, 16.07 MiB (16848360 B), from 6 call sites:"));
}

TEST_CASE("summary: sizes per call site are capped", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    std::string text = format_summary(s, SummaryOptions{10, 1});
    CHECK(has_line(text, "vramtrace:     4.00 MiB (4194816 B) in 3 allocations: 2 x 2.00 MiB (2097152 B), and 1 other "
                         "size in 1 allocation"));
    CHECK(has_line(text, "vramtrace:     9.00 MiB (9437184 B) in 2 allocations: 1 x 8.00 MiB (8388608 B), and 1 other "
                         "size in 1 allocation"));
}

TEST_CASE("summary: a snapshot on request lists live allocations, not leaks", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.process.reason = "api";
    std::string text = format_summary(s);
    check_every_line_prefixed(text);
    CHECK(has_line(text, "vramtrace: snapshot taken on request (vramtrace_dump), 5.25 s after start (vramtrace 0.1.0, "
                         "CUDA driver 13.0)"));
    CHECK(has_line(text, "vramtrace: still live at the snapshot: 9 allocations, 16.07 MiB (16848360 B), from 6 call "
                         "sites:"));
    CHECK(text.find("leak") == std::string::npos);
    s.process.reason = "oom";
    CHECK(has_line(format_summary(s), "vramtrace: snapshot taken (reason: oom), 5.25 s after start (vramtrace 0.1.0, "
                                      "CUDA driver 13.0)"));
}

TEST_CASE("summary: nothing live", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.allocations.clear();
    s.dropped_stacks = 0;
    std::string text = format_summary(s);
    check_every_line_prefixed(text);
    CHECK(lines_of(text).back() == "vramtrace: no leaks: every tracked allocation was freed before exit");
    CHECK(text.find("top call sites") == std::string::npos);
    s.process.reason = "api";
    CHECK(lines_of(format_summary(s)).back() == "vramtrace: no tracked allocation is live at the snapshot");
}

TEST_CASE("summary: an empty snapshot", "[summary]") {
    std::string text = format_summary(Snapshot{});
    check_every_line_prefixed(text);
    CHECK(text == "vramtrace: ==== memory summary: pid 0 ====\n"
                  "vramtrace: command: (unknown)\n"
                  "vramtrace: snapshot taken (reason unknown), running time unknown\n"
                  "vramtrace: memory by device: none (no allocation went through an intercepted call)\n"
                  "vramtrace: no tracked allocation is live at the snapshot\n");
}

TEST_CASE("summary: dropped allocations are reported", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.dropped_allocations = 3;
    s.dropped_stacks = 0;
    std::string text = format_summary(s);
    CHECK(lines_of(text).back() == "vramtrace: warning: 3 allocations could not be recorded (no memory for the live "
                                   "table); the live figures above are incomplete");
    CHECK(text.find("stack could not") == std::string::npos);
}

TEST_CASE("summary: snapshot text never breaks a line", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.process.command_line = {"./a.out", "two\nlines", "it's", std::string("\x1b[31mred", 8)};
    s.process.host = "evil\nhost";
    s.frames[3].function = "f\r\n()";
    s.allocations[3].api = "cuda\tMalloc";
    std::string text = format_summary(s);
    check_every_line_prefixed(text);
    CHECK(has_line(text, "vramtrace: command: ./a.out 'two\\nlines' 'it'\\''s' '\\x1b[31mred'"));
    CHECK(has_line(text, "vramtrace: ==== memory summary: pid 4242 on evil\\nhost ===="));
    CHECK(text.find("f\\r\\n() at /src/model.cpp:17 (train)") != std::string::npos);
    CHECK(text.find("cuda\\tMalloc") != std::string::npos);
}

TEST_CASE("summary: devices are listed GPUs first, then host, then unknown", "[summary]") {
    Snapshot s;
    s.devices = {{-2, 1, 1, 1, 0, 1, 0}, {-1, 2, 2, 1, 0, 2, 0}, {0, 3, 3, 1, 0, 3, 0}, {2, 4, 4, 1, 0, 4, 0}};
    std::string text = format_summary(s);
    size_t gpu0 = text.find("vramtrace:   cuda:0"), gpu2 = text.find("vramtrace:   cuda:2"),
           host = text.find("vramtrace:   host"), unknown = text.find("vramtrace:   unknown");
    REQUIRE(gpu0 != std::string::npos);
    REQUIRE(gpu2 != std::string::npos);
    REQUIRE(host != std::string::npos);
    REQUIRE(unknown != std::string::npos);
    CHECK(gpu0 < gpu2);
    CHECK(gpu2 < host);
    CHECK(host < unknown);
}

TEST_CASE("summary: running time and versions when partly unknown", "[summary]") {
    Snapshot s = vt_test::golden_snapshot();
    s.process.driver_version = 12040;
    s.process.vramtrace_version.clear();
    s.process.dump_time_ns = s.process.start_time_ns - 1; // clock went backwards
    CHECK(has_line(format_summary(s), "vramtrace: snapshot taken at exit, running time unknown (CUDA driver 12.4)"));
    s.process.driver_version = 0;
    s.process.start_time_ns = 0;
    CHECK(has_line(format_summary(s), "vramtrace: snapshot taken at exit, running time unknown"));
    s.process.command_line.clear();
    CHECK(has_line(format_summary(s), "vramtrace: command: /home/me/train"));
}
