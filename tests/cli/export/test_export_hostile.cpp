// Exporters against hostile snapshots: a stack of 100 000 frames and a frame with 200 000 inlined
// functions (a graph drawn by recursion, one call per level, exhausts the stack near 7 600), labels
// cut on UTF-8 character boundaries, and control characters never written raw into a text format.
#include <catch2/catch.hpp>

#include <string>

#include "export/export.h"
#include "export_fixture.h"
#include "report/text_safety.h"

using namespace vramtrace;

namespace {

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// One allocation on device 0 whose stack is `depth` distinct frames deep, the innermost one with
// `inlined` inlined functions.
snapshot::Snapshot deep_snapshot(size_t depth, size_t inlined) {
    snapshot::Snapshot s;
    s.process.pid = 1;
    s.process.reason = "exit";
    s.devices = {{0, 4096, 4096, 1, 0, 4096, 0}};
    snapshot::Stack stack{1, {}, 0};
    for (size_t i = 0; i < depth; ++i) {
        snapshot::Frame f{0x1000 + i, -1, 0, "f" + std::to_string(i), "", 0, {}};
        if (i == 0)
            for (size_t k = 0; k < inlined; ++k) f.inlined.push_back({"inl" + std::to_string(k), "/src/x.h", 1});
        s.frames.push_back(f);
        stack.frames.push_back(uint32_t(i));
    }
    s.stacks = {stack};
    s.allocations = {{0x7f0000000000, 4096, "device", 0, "cudaMalloc", 0, 1, 100, 1}};
    return s;
}

} // namespace

TEST_CASE("hostile exports: the HTML page holds 512 frames of a 100 000-frame stack and a marker", "[export]") {
    exporter::Options at_exit;
    at_exit.at = exporter::At::Exit;
    for (auto [depth, inlined] : {std::pair<size_t, size_t>{100000, 0}, {2, 200000}}) {
        INFO("depth " << depth << ", inlined " << inlined);
        snapshot::Snapshot s = deep_snapshot(depth, inlined);
        std::string html = exporter::export_html(s, at_exit, nullptr);
        // The 512 leaf-most frames, one marker for the rest (the page draws the root above them).
        std::string leaf = inlined ? "inl" : "f";
        CHECK(count_of(html, "\"" + leaf + "511\"") == 1);
        CHECK(count_of(html, "\"" + leaf + "512\"") == 0);
        size_t total = depth + inlined;
        CHECK(count_of(html, "\"(" + std::to_string(total - 512) + " more frames not drawn)\"") == 1);
        // The other formats keep every frame.
        std::string folded = exporter::export_folded(s, at_exit, nullptr);
        CHECK(count_of(folded, ";") == total - 1);
        CHECK(!exporter::export_pprof(s, at_exit, nullptr).empty());
        CHECK(!exporter::export_pickle(s, {}, nullptr).empty());
        CHECK(!exporter::export_chrome(s, {}, nullptr).empty());
    }
}

TEST_CASE("hostile exports: labels are cut on character boundaries, control characters escaped", "[export]") {
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    // A mark label cut at 24 bytes with "é" at bytes 23-24; names with ESC, CR and a bad byte.
    snapshot::Event mark;
    mark.type = "mark";
    mark.time_ns = 2500000000;
    mark.label = std::string(23, 'm') + "\xc3\xa9 and more";
    s.events.events.push_back(mark);
    s.frames[1].function = "evil\x1b[2J\rname\xff" + std::string(200, 'x') + "\xe2\x82\xac";
    s.frames[2].function = std::string(60, 'y') + "\xe2\x82\xac" + std::string(60, 'z');
    exporter::Options at_exit;
    at_exit.at = exporter::At::Exit;
    std::string html = exporter::export_html(s, at_exit, nullptr);
    CHECK(report::is_valid_utf8(html));
    CHECK(html.find('\x1b') == std::string::npos);
    CHECK(html.find('\r') == std::string::npos);
    CHECK(html.find("\"" + std::string(23, 'm') + "\xc3\xa9 and more\"") != std::string::npos); // whole, as text
    CHECK(html.find("evil\\x1b[2J\\x0dname\\xff") != std::string::npos);
    std::string folded = exporter::export_folded(s, at_exit, nullptr);
    CHECK(folded.find('\x1b') == std::string::npos);
    CHECK(folded.find("evil\\x1b[2J name\\xff") != std::string::npos);
    for (char c : folded) CHECK_FALSE((static_cast<unsigned char>(c) < 0x20 && c != '\n'));
}

TEST_CASE("hostile exports: sizes that add up past 2^64 saturate in the HTML tables", "[export]") {
    snapshot::Snapshot s = deep_snapshot(3, 0);
    s.stacks.push_back({2, {0, 1}, 0}); // f1;f0 beside stack 1's f2;f1;f0: the same call site f0
    s.allocations.push_back({0x7f0000100000, uint64_t(1) << 63, "device", 0, "cudaMalloc", 0, 1, 100, 1});
    s.allocations.push_back({0x7f0000200000, uint64_t(1) << 63, "device", 0, "cudaMalloc", 0, 1, 100, 2});
    exporter::Options at_exit;
    at_exit.at = exporter::At::Exit;
    std::string html = exporter::export_html(s, at_exit, nullptr);
    INFO(html.substr(html.find("<section class")));
    CHECK(html.find("<tr><td class=\"n\">16.00 EiB (18446744073709551615 B)</td><td class=\"n\">3</td><td>f0 (0x1000)</td></tr>") !=
          std::string::npos);
    // The page's data keeps each size as it is.
    CHECK(count_of(html, "9223372036854775808") == 2);
}
