// The TUI's tables (tools/commands/top_layout.h) and the split of NVML's processes into traced and
// untraced (tools/analysis/host_gpus.h): plain functions, checked with exact texts and bytes.
#include <catch2/catch.hpp>
#include <string>

#include "analysis/host_gpus.h"
#include "commands/top_layout.h"

using namespace vramtrace::cli;

TEST_CASE("top layout: a call site is cut in the middle of its path, file:line kept", "[live]") {
    const std::string site = "hold_weights() at /work/tree/tests/e2e/programs/live_program.cpp:32 (vt_live_program)";
    CHECK(cut_middle(site, 200) == site);
    CHECK(cut_middle(site, 56) == "hold_weights() a...live_program.cpp:32 (vt_live_program)");
    CHECK(cut_middle(site, 56).size() == 56);
    // Too short for the name and the module: the module goes first.
    CHECK(cut_middle(site, 40) == "hold_weights() at ...live_program.cpp:32");
    CHECK(cut_middle("no path at all here, just a long text", 20) == "no pat...a long text");
    CHECK(cut_middle("abcdefghij", 5) == "abcde");
}

TEST_CASE("top layout: a column equal on every row is left out, then the least needed ones", "[live]") {
    std::vector<Column> cols = {{"live", {"6.00 MiB", "5.00 MiB"}, true, 0, 9},
                                {"allocs", {"2", "1"}, true, 0, 3},
                                {"category", {"other", "other"}, false, 0, 1, true},
                                {"call site", {"f() at /a/b.cpp:1 (m)", "g() at /a/c.cpp:2 (m)"}, false, 0, 8, false, true}};
    Layout wide = lay_out(cols, 80);
    CHECK(wide.shown == std::vector<std::string>{"live", "allocs", "call site"});
    CHECK(wide.header == "    live  allocs  call site");
    CHECK(wide.rows == std::vector<std::string>{"6.00 MiB       2  f() at /a/b.cpp:1 (m)", "5.00 MiB       1  g() at /a/c.cpp:2 (m)"});
    cols[2].cells[1] = "parameter";
    CHECK(lay_out(cols, 80).shown == std::vector<std::string>{"live", "allocs", "category", "call site"});
    // 30 columns: category (priority 1), then allocs (3) give way, and the call site is cut to
    // what is left rather than left out.
    Layout narrow = lay_out(cols, 30);
    CHECK(narrow.shown == std::vector<std::string>{"live", "call site"});
    CHECK(narrow.rows[0] == "6.00 MiB  f() at /a/...b.cpp:1");
    CHECK(narrow.rows[0].size() == 30);
    // An empty cell continues the row above: it is no value of its own.
    std::vector<Column> list = {{"pid", {"1", ""}, false, 0, 5}, {"rank", {"-", ""}, false, 0, 0, true}};
    CHECK(lay_out(list, 80).shown == std::vector<std::string>{"pid"});
}

TEST_CASE("top layout: growth over the last 10 s and since the first reading", "[live]") {
    GrowthTracker g;
    g.add(0, {{"a", 100}, {"b", 50}});
    g.add(5000, {{"a", 300}, {"b", 50}});
    CHECK(g.last_10s("a") == 200); // younger than 10 s: since the first reading
    CHECK(g.window_s() == 5.0);
    g.add(10000, {{"a", 400}, {"b", 40}, {"c", 7}});
    g.add(12000, {{"a", 450}, {"b", 40}, {"c", 9}});
    CHECK(g.last_10s("a") == 350); // against the newest reading at least 10 s old: the one at 0
    g.add(16000, {{"a", 500}, {"b", 40}, {"c", 9}});
    CHECK(g.last_10s("a") == 200); // now against the one at 5 s (11 s old; the one at 10 s is 6 s old)
    CHECK(g.window_s() == 11.0);
    CHECK(g.since_first("a") == 400);
    CHECK(g.last_10s("b") == -10);
    CHECK(g.since_first("c") == 9);  // absent from the first reading: 0 then
    CHECK(g.last_10s("gone") == 0);
    CHECK(format_growth(0) == "0");
    CHECK(format_growth(1048576) == "+1.00 MiB");
    CHECK(format_growth(-512) == "-512 B");
    g.clear();
    CHECK(g.last_10s("a") == 0);
}

TEST_CASE("host gpus: NVML's processes split into traced and untraced, each GPU's bytes", "[live]") {
    NvmlGpu g0;
    g0.index = 0;
    g0.uuid = "GPU-0";
    g0.total_bytes = 1000, g0.free_bytes = 300, g0.used_bytes = 700;
    g0.processes = {{10, "python3", 400}, {20, "train", 250}, {30, "smi", std::nullopt}};
    NvmlGpu g1;
    g1.index = 1;
    g1.uuid = "GPU-1";
    g1.processes = {{20, "train", 5}};
    TracedProcess traced;
    traced.pid = 10;
    vramtrace::snapshot::DeviceTotals d;
    d.uuid = "GPU-0";
    d.current_bytes = 123;
    d.process_used_bytes = 400;
    traced.devices = {d};
    TracedProcess untracked_nvml; // traced, its reading without NVML's figure
    untracked_nvml.pid = 40;
    vramtrace::snapshot::DeviceTotals e;
    e.uuid = "GPU-1";
    e.current_bytes = 77;
    untracked_nvml.devices = {e};
    HostGpus h = split_host_gpus({g0, g1}, {traced, untracked_nvml});
    REQUIRE(h.gpus.size() == 2);
    CHECK(h.gpus[0].traced_bytes == 400);
    CHECK(h.gpus[0].untraced_bytes == 250);
    CHECK(h.gpus[1].traced_bytes == 77);
    CHECK(h.gpus[1].untraced_bytes == 5);
    REQUIRE(h.untraced.size() == 3);
    CHECK(h.untraced[0].pid == 20);
    CHECK(h.untraced[0].gpu == 0);
    CHECK(h.untraced[0].used_bytes == 250u);
    CHECK(h.untraced[1].pid == 30);
    CHECK_FALSE(h.untraced[1].used_bytes.has_value());
    CHECK(h.untraced[2].pid == 20);
    CHECK(h.untraced[2].uuid == "GPU-1");
}
