// NVTX ranges end to end (programs/nvtx_program.c): NVTX's own client code loads the library
// through NVTX_INJECTION64_PATH; allocations carry their thread's range stack, the peak is split
// by range stack, marks join the event history. The same program and the same checks with the
// CUPTI backend, where NVTX's calls reach vramtrace through the stand-in libcupti's NVTX callbacks.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include "harness.h"

using namespace e2e;

namespace {

constexpr uint64_t MiB = 1u << 20;

// "domain:name [category] > domain:name" of a range stack id ("" for 0).
std::string range_text(const nlohmann::json &s, uint64_t id) {
    if (id == 0) return "";
    for (const auto &r : s.at("nvtx_ranges")) {
        if (r.at("id").get<uint64_t>() != id) continue;
        std::string out;
        for (size_t i = 0; i < r.at("names").size(); ++i) {
            if (i) out += " > ";
            std::string domain = r.at("domains").at(i);
            out += (domain.empty() ? "" : domain + ":") + r.at("names").at(i).get<std::string>();
            if (r.contains("categories")) {
                CHECK(r.at("categories").size() == r.at("names").size());
                std::string category = r.at("categories").at(i);
                if (!category.empty()) out += " [" + category + "]";
            }
        }
        return out;
    }
    return "?";
}

RunResult run_nvtx(const std::string &dir, std::map<std::string, std::string> env) {
    env.emplace("VRAMTRACE_OUTPUT", dir + "/exit.json");
    env.emplace("VRAMTRACE_SUMMARY", "0");
    return run({bin_dir() + "/vt_nvtx_program", dir + "/nvtx.json"}, {true, env, dir});
}

// Everything the program's snapshot must hold, exactly, whichever backend recorded it.
void check_nvtx_program(const std::string &dir, const RunResult &r) {
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "worker levels: 0 1 1 0\nmain levels: 0 0 0 0 -1\ndump: 0\n");
    auto s = load_json(dir + "/nvtx.json");

    std::map<uint64_t, std::string> live; // size -> range stack
    for (const auto &a : s.at("allocations"))
        live[a.at("size").get<uint64_t>()] = range_text(s, a.value("range", uint64_t{0}));
    CHECK(live == std::map<uint64_t, std::string>{
                      {1 * MiB, "step > ml:forward [phase]"}, {2 * MiB, "step"}, {3 * MiB, ""}, {4 * MiB, ""},
                      {16 * MiB, "loader"}});

    REQUIRE(s.at("peaks").size() == 1);
    const auto &peak = s.at("peaks").at(0);
    CHECK(peak.at("peak_bytes").get<uint64_t>() == 27 * MiB);
    std::map<std::string, std::pair<uint64_t, uint64_t>> ranges;
    uint64_t sum = 0;
    for (const auto &row : peak.at("ranges")) {
        ranges[range_text(s, row.at("range"))] = {row.at("bytes"), row.at("count")};
        sum += row.at("bytes").get<uint64_t>();
    }
    CHECK(ranges == std::map<std::string, std::pair<uint64_t, uint64_t>>{{"step > ml:forward [phase]", {1 * MiB, 1}},
                                                                         {"step", {2 * MiB, 1}},
                                                                         {"loader > aten::mm", {8 * MiB, 1}},
                                                                         {"loader", {16 * MiB, 1}}});
    CHECK(sum == 27 * MiB);
    // The sites are still by call stack: the range keys are folded back into them.
    uint64_t site_sum = 0;
    for (const auto &site : peak.at("sites")) site_sum += site.at("bytes").get<uint64_t>();
    CHECK(site_sum == 27 * MiB);
    for (const auto &site : peak.at("sites")) CHECK(site.at("stack").get<uint64_t>() != 0);

    // The pool's regions: the two live ones inside the 3 MiB segment, exact; the bad ones counted.
    std::string segment;
    for (const auto &a : s.at("allocations"))
        if (a.at("size").get<uint64_t>() == 3 * MiB) segment = a.at("address");
    REQUIRE(s.at("nvtx_regions").size() == 2);
    std::vector<std::tuple<uint64_t, std::string, std::string>> regions;
    for (const auto &r : s.at("nvtx_regions")) {
        CHECK(r.at("segment") == segment);
        CHECK(r.at("heap") == segment);
        CHECK(r.at("segment_size").get<uint64_t>() == 3 * MiB);
        regions.emplace_back(r.at("size").get<uint64_t>(), range_text(s, r.at("range")), r.at("address"));
    }
    uint64_t base = std::stoull(segment, nullptr, 16);
    auto hex = [](uint64_t v) {
        char b[32];
        snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
        return std::string(b);
    };
    CHECK(regions == std::vector<std::tuple<uint64_t, std::string, std::string>>{
                         {512 * 1024, "optimizer", hex(base)}, {128 * 1024, "", hex(base + MiB)}});
    CHECK(s.at("dropped").at("nvtx_regions_outside") == 2);
    CHECK(s.at("dropped").at("nvtx_unregisters_unknown") == 1);
    CHECK(!s.at("dropped").contains("nvtx_regions"));

    // The summary, from the file through the CLI's reader: live and at-peak bytes by range stack.
    RunResult summary = run({cli(), "summary", dir + "/nvtx.json"}, {false, {}, dir});
    REQUIRE(summary.exit_code == 0);
    std::string text = summary.out + summary.err;
    size_t at = text.find("vramtrace: memory by NVTX range");
    REQUIRE(at != std::string::npos);
    CHECK(text.substr(at, text.find("vramtrace: still live", at) - at) ==
          "vramtrace: memory by NVTX range (the push/pop ranges open on the allocating thread, outermost first):\n"
          "vramtrace:   cuda:0                            live  allocations    at peak\n"
          "vramtrace:     loader                     16.00 MiB            1  16.00 MiB\n"
          "vramtrace:     loader > aten::mm                0 B            0   8.00 MiB\n"
          "vramtrace:     step                        2.00 MiB            1   2.00 MiB\n"
          "vramtrace:     step > ml:forward [phase]   1.00 MiB            1   1.00 MiB\n"
          "vramtrace:     (no range)                  7.00 MiB            2        0 B\n"
          "vramtrace: memory inside pools (NVTX memory API: regions inside the allocations that back them):\n"
          "vramtrace:   device  segment" + std::string(segment.size() - 7, ' ') +
          "      size  used by regions  regions  free inside the pool\n"
          "vramtrace:   cuda:0  " + segment + "  3.00 MiB       640.00 KiB        2              2.38 MiB\n"
          "vramtrace:   device  regions by NVTX range       bytes  regions\n"
          "vramtrace:   cuda:0  optimizer              512.00 KiB        1\n"
          "vramtrace:   cuda:0  (no range)             128.00 KiB        1\n"
          "vramtrace:   warning: not trusted: 2 regions outside every tracked allocation, 1 unregister of no live "
          "region or heap, 0 registrations beyond vramtrace's tables\n");

    // Folded stacks at exit put the open ranges on top.
    RunResult folded = run({cli(), "export", "--format", "folded", dir + "/nvtx.json"}, {false, {}, dir});
    REQUIRE(folded.exit_code == 0);
    std::map<std::string, uint64_t> by_top;
    const std::vector<std::string> tops = {"step;ml:forward [phase];", "loader;aten::mm;", "step;", "loader;",
                                           "(no range);"};
    for (size_t at = 0, end; at < folded.out.size(); at = end + 1) {
        end = folded.out.find('\n', at);
        std::string line = folded.out.substr(at, end - at);
        std::string top = "?";
        for (const std::string &t : tops)
            if (line.rfind(t, 0) == 0) {
                top = t.substr(0, t.size() - 1);
                break;
            }
        by_top[top] += std::stoull(line.substr(line.rfind(' ') + 1));
    }
    CHECK(by_top == std::map<std::string, uint64_t>{{"(no range)", 7 * MiB},
                                                    {"loader", 16 * MiB},
                                                    {"step", 2 * MiB},
                                                    {"step;ml:forward [phase]", 1 * MiB}});

    // diff matches ranges by name: the run against itself, every row exact and unchanged.
    RunResult diff = run({cli(), "diff", "--json", dir + "/nvtx.json", dir + "/nvtx.json"}, {false, {}, dir});
    REQUIRE(diff.exit_code == 0);
    auto dj = nlohmann::json::parse(diff.out);
    std::map<std::string, std::pair<uint64_t, uint64_t>> diff_rows; // range -> (live, at peak), base == new
    for (const auto &row : dj.at("nvtx_ranges")) {
        CHECK(row.at("device") == 0);
        CHECK(row.at("live_bytes").at("base") == row.at("live_bytes").at("new"));
        CHECK(row.at("at_peak_bytes").at("base") == row.at("at_peak_bytes").at("new"));
        diff_rows[row.at("nvtx_range")] = {row.at("live_bytes").at("new"), row.at("at_peak_bytes").at("new")};
    }
    CHECK(diff_rows == std::map<std::string, std::pair<uint64_t, uint64_t>>{{"(no range)", {7 * MiB, 0}},
                                                                            {"loader", {16 * MiB, 16 * MiB}},
                                                                            {"loader > aten::mm", {0, 8 * MiB}},
                                                                            {"step", {2 * MiB, 2 * MiB}},
                                                                            {"step > ml:forward [phase]", {1 * MiB, 1 * MiB}}});

    std::vector<std::string> marks;
    for (const auto &e : s.at("events"))
        if (e.at("type") == "mark") marks.push_back(e.at("label"));
    CHECK(marks == std::vector<std::string>{"checkpoint"});

    // Start/end ranges: by start time, with the thread that started and the one that ended each;
    // the one still open has no end. The threads are those that made the 2 MiB (main) and the
    // 16 MiB (worker) allocations.
    uint64_t main_tid = 0, worker_tid = 0;
    for (const auto &a : s.at("allocations")) {
        if (a.at("size").get<uint64_t>() == 2 * MiB) main_tid = a.at("thread_id");
        if (a.at("size").get<uint64_t>() == 16 * MiB) worker_tid = a.at("thread_id");
    }
    REQUIRE(main_tid != 0);
    REQUIRE(worker_tid != 0);
    CHECK(main_tid != worker_tid);
    // domain, name, category, start, end thread
    using IntervalRow = std::tuple<std::string, std::string, std::string, uint64_t, uint64_t>;
    std::vector<IntervalRow> intervals;
    REQUIRE(s.at("nvtx_intervals").size() == 3);
    uint64_t previous_start = 0;
    for (const auto &v : s.at("nvtx_intervals")) {
        uint64_t start = v.at("start_ns");
        CHECK(start >= previous_start);
        previous_start = start;
        CHECK(v.contains("end_ns") == v.contains("end_thread"));
        if (v.contains("end_ns")) CHECK(v.at("end_ns").get<uint64_t>() >= start);
        CHECK(v.size() == (v.contains("end_ns") ? 6u : 4u) + (v.contains("category") ? 1u : 0u));
        intervals.emplace_back(v.at("domain"), v.at("name"), v.value("category", std::string("(none)")),
                               v.at("start_thread"), v.value("end_thread", uint64_t{0}));
    }
    CHECK(intervals == std::vector<IntervalRow>{{"", "load phase", "io", main_tid, main_tid},
                                                {"", "handoff", "(none)", main_tid, worker_tid},
                                                {"ml", "epoch", "9", main_tid, 0}});
    // "handoff" ends on the worker, before "load phase" ends on main after the join.
    CHECK(s.at("nvtx_intervals").at(1).at("end_ns").get<uint64_t>() <=
          s.at("nvtx_intervals").at(0).at("end_ns").get<uint64_t>());
    CHECK(!s.at("dropped").contains("nvtx_intervals"));

    // The event history: each alloc and free carries its allocation's range stack.
    std::vector<std::pair<std::string, std::string>> history; // "alloc SIZE", range stack
    for (const auto &e : s.at("events"))
        if (e.at("type") == "alloc" || e.at("type") == "free")
            history.emplace_back(e.at("type").get<std::string>() + " " +
                                     std::to_string(e.at("size").get<uint64_t>() / 1024) + " KiB",
                                 range_text(s, e.value("range", uint64_t{0})));
    CHECK(history == std::vector<std::pair<std::string, std::string>>{{"alloc 1024 KiB", "step > ml:forward [phase]"},
                                                                      {"alloc 2048 KiB", "step"},
                                                                      {"alloc 8192 KiB", "loader > aten::mm"},
                                                                      {"alloc 16384 KiB", "loader"},
                                                                      {"free 8192 KiB", "loader > aten::mm"},
                                                                      {"alloc 4096 KiB", ""},
                                                                      {"alloc 3072 KiB", ""}});

    // The Chrome trace: one slice per start/end range on its starting thread, and the range stacks.
    RunResult chrome = run({cli(), "export", "--format", "chrome", dir + "/nvtx.json"}, {false, {}, dir});
    REQUIRE(chrome.exit_code == 0);
    auto trace = nlohmann::json::parse(chrome.out);
    std::vector<std::tuple<std::string, std::string, uint64_t, bool>> slices; // name, category, tid, open
    std::map<std::string, int> ranged;                                        // nvtx_range -> events
    for (const auto &e : trace.at("traceEvents")) {
        if (e.value("cat", "") == "nvtx")
            slices.emplace_back(e.at("name"), e.at("args").value("category", "(none)"), e.at("tid"),
                                e.at("args").contains("open"));
        if (e.contains("args") && e.at("args").contains("nvtx_range")) ++ranged[e.at("args").at("nvtx_range")];
    }
    CHECK(slices == std::vector<std::tuple<std::string, std::string, uint64_t, bool>>{
                        {"load phase", "io", main_tid, false},
                        {"handoff", "(none)", main_tid, false},
                        {"ml:epoch", "9", main_tid, true}});
    CHECK(ranged == std::map<std::string, int>{{"step > ml:forward [phase]", 1}, {"step", 1}, {"loader > aten::mm", 2},
                                               {"loader", 1}});

    // The range stacks' categories as written: a list only where a range has one.
    std::vector<std::string> with_categories;
    for (const auto &rs : s.at("nvtx_ranges"))
        if (rs.contains("categories")) with_categories.push_back(rs.at("categories").dump());
    CHECK(with_categories == std::vector<std::string>{"[\"\",\"phase\"]"});
}

} // namespace

TEST_CASE("nvtx: allocations carry their thread's range stack over two domains, and the peak by range is exact") {
    std::string dir = make_temp_dir("nvtx");
    RunResult r = run_nvtx(dir, {{"NVTX_INJECTION64_PATH", preload_library()}});
    check_nvtx_program(dir, r);
    auto s = load_json(dir + "/nvtx.json");
    for (const auto &a : s.at("allocations")) CHECK(a.at("api") == "cudaMalloc");
}

TEST_CASE("nvtx: with the CUPTI backend NVTX comes through CUPTI's NVTX callbacks, with the same ranges, bytes and "
          "categories") {
    std::string dir = make_temp_dir("nvtx-cupti");
    RunResult r = run({cli(), "run", "--backend=cupti", "--quiet", "--output", dir + "/exit.json", "--", bin_dir() + "/vt_nvtx_program",
                       dir + "/nvtx.json"},
                      {false, {{"VRAMTRACE_SUMMARY", "0"}, {"VRAMTRACE_DEBUG", "1"}}, dir});
    // NVTX was handed to the stand-in libcupti (found beside the stand-in libcudart), whose NVTX
    // callbacks carried every call; CUPTI's driver callbacks recorded the allocations.
    std::string cupti = "/standin/libcupti.so.13";
    CHECK(r.err.find(cupti + "), 24 NVTX callbacks\n") != std::string::npos);
    CHECK(r.err.find("CUPTI backend: subscribed to 64 driver callbacks and 24 NVTX callbacks through ") !=
          std::string::npos);
    CHECK(r.err.find("warning") == std::string::npos);
    check_nvtx_program(dir, r);
    auto s = load_json(dir + "/nvtx.json");
    for (const auto &a : s.at("allocations")) CHECK(a.at("api") == "cuMemAlloc_v2");
}

TEST_CASE("nvtx: without NVTX_INJECTION64_PATH, or with tracing off, the program runs with NVTX's no-ops") {
    std::string dir = make_temp_dir("nvtx-off");
    RunResult r = run_nvtx(dir, {});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // NVTX's own no-ops: every push and pop returns NVTX_NO_PUSH_POP_TRACKING (-2).
    CHECK(r.out == "worker levels: -2 -2 -2 -2\nmain levels: -2 -2 -2 -2 -2\ndump: 0\n");
    auto s = load_json(dir + "/nvtx.json");
    CHECK(!s.contains("nvtx_ranges"));
    CHECK(!s.contains("nvtx_intervals"));
    for (const auto &a : s.at("allocations")) CHECK(!a.contains("range"));
    CHECK(!s.at("peaks").at(0).contains("ranges"));

    std::string dir2 = make_temp_dir("nvtx-disabled");
    RunResult d = run_nvtx(dir2, {{"NVTX_INJECTION64_PATH", preload_library()}, {"VRAMTRACE_DISABLE", "1"}});
    INFO(d.err);
    REQUIRE(d.exit_code == 0);
    // InitializeInjectionNvtx2 declined: NVTX's no-ops again; the dump is refused as disabled.
    CHECK(d.out == "worker levels: -2 -2 -2 -2\nmain levels: -2 -2 -2 -2 -2\ndump: -4\n");
}

TEST_CASE("nvtx: with CUPTI held by another tool, --backend=cupti falls back on the preload hooks and the library's own "
          "NVTX slots, with the same ranges") {
    std::string dir = make_temp_dir("nvtx-cupti-held");
    RunResult r = run({cli(), "run", "--backend=cupti", "--quiet", "--output", dir + "/exit.json", "--", bin_dir() + "/vt_nvtx_program",
                       dir + "/nvtx.json"},
                      {false, {{"VRAMTRACE_SUMMARY", "0"}, {"STANDIN_CUPTI_HELD_BY", "Nsight Systems"}}, dir});
    CHECK(r.err == "vramtrace: warning: CUPTI is already held by Nsight Systems (one subscriber per process); using the "
                   "preload hooks instead\n");
    check_nvtx_program(dir, r);
    // The preload hooks record from cuInit on: the first cudaMalloc, which starts the driver, was
    // entered while they were still passive, so its driver call is what they saw.
    auto s = load_json(dir + "/nvtx.json");
    std::map<uint64_t, std::string> api;
    for (const auto &a : s.at("allocations")) api[a.at("size").get<uint64_t>()] = a.at("api");
    CHECK(api == std::map<uint64_t, std::string>{{1 * MiB, "cuMemAlloc_v2"}, {2 * MiB, "cudaMalloc"},
                                                 {3 * MiB, "cudaMalloc"}, {4 * MiB, "cudaMalloc"},
                                                 {16 * MiB, "cudaMalloc"}});
}

TEST_CASE("nvtx: NVTX_INJECTION64_PATH naming libcupti itself is kept under --backend=cupti, calls before cuInit are "
          "not seen then") {
    // NVTX then loads libcupti at its first call, before cuInit, when vramtrace has not subscribed
    // yet: CUPTI reports nothing of what comes before (the domain, its string and category names,
    // the pushes of "step" and "ml:forward"). What follows is followed; the memory API goes to
    // libcupti, which passes none of it on.
    std::string dir = make_temp_dir("nvtx-cupti-direct");
    std::string cupti = bin_dir() + "/../standin/libcupti.so.13";
    RunResult r = run({cli(), "run", "--backend=cupti", "--quiet", "--output", dir + "/exit.json", "--", bin_dir() + "/vt_nvtx_program",
                       dir + "/nvtx.json"},
                      {false, {{"VRAMTRACE_SUMMARY", "0"}, {"NVTX_INJECTION64_PATH", cupti}}, dir});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "worker levels: 0 1 1 0\nmain levels: 0 0 0 0 -1\ndump: 0\n");
    auto s = load_json(dir + "/nvtx.json");
    std::map<uint64_t, std::string> live;
    for (const auto &a : s.at("allocations"))
        live[a.at("size").get<uint64_t>()] = range_text(s, a.value("range", uint64_t{0}));
    CHECK(live == std::map<uint64_t, std::string>{
                      {1 * MiB, ""}, {2 * MiB, ""}, {3 * MiB, ""}, {4 * MiB, ""}, {16 * MiB, "loader"}});
    std::vector<std::tuple<std::string, std::string, std::string>> intervals; // domain, name, category
    for (const auto &v : s.at("nvtx_intervals"))
        intervals.emplace_back(v.at("domain"), v.at("name"), v.value("category", std::string("(none)")));
    CHECK(intervals == std::vector<std::tuple<std::string, std::string, std::string>>{
                           {"", "load phase", "2"}, {"", "handoff", "(none)"}, {"", "epoch", "9"}});
    CHECK(!s.contains("nvtx_regions"));
}
