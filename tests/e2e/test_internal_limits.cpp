// Internal limits reached are counted in the snapshot and said in the summary, never silent:
// the event ring wrapping (VRAMTRACE_EVENTS=4) and stacks the depot cannot store
// (VRAMTRACE_TEST_FAIL_MAPPINGS=1: no memory can be mapped once the tracker is built). The live
// table's and the peak sites' drops cannot be forced cheaply in a process (their first memory is
// mapped at start); tests/unit/tracking/test_mapping_failures.cpp counts them, and
// tests/unit/report/test_summary_limits.cpp checks their summary lines.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "harness.h"

using namespace e2e;

namespace {

// The summary's lines from "warning: " / "note: the event history" on, with their indented
// continuation lines, without the "vramtrace: " prefix.
std::vector<std::string> limit_lines(const std::string &err) {
    std::vector<std::string> out;
    bool after = false;
    for (size_t at = 0; at < err.size();) {
        size_t end = err.find('\n', at);
        if (end == std::string::npos) end = err.size();
        std::string line = err.substr(at, end - at);
        at = end + 1;
        if (line.rfind("vramtrace: ", 0) != 0) continue;
        line.erase(0, 11);
        if (line.rfind("warning: ", 0) == 0 || line.rfind("note: the event history", 0) == 0) after = true;
        else if (line.rfind("  ", 0) != 0) after = false;
        if (after) out.push_back(line);
    }
    return out;
}

std::vector<std::string> event_sequence(const nlohmann::json &s) {
    std::vector<std::string> out;
    for (const auto &e : s.at("events")) {
        std::string type = e.at("type");
        out.push_back(type == "mark" ? "mark " + e.at("label").get<std::string>()
                                     : type + " " + std::to_string(e.at("size").get<uint64_t>()));
    }
    return out;
}

} // namespace

TEST_CASE("a wrapped event ring is counted in the snapshot and noted in the summary") {
    // vt_peak_program: mark start, alloc 3 MiB, alloc 5 MiB, mark peak, free 5 MiB, alloc 1 MiB,
    // mark end, its own dump (7 events), then frees 3 MiB and 1 MiB before exit (9 events).
    std::string dir = make_temp_dir("limits-events");
    RunResult r = run({bin_dir() + "/vt_peak_program", dir + "/dump.json"},
                      {true, {{"VRAMTRACE_OUTPUT", dir + "/exit.json"}, {"VRAMTRACE_EVENTS", "4"}}, dir});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);

    auto d = load_json(dir + "/dump.json");
    CHECK(d.at("event_history").at("capacity") == 4);
    CHECK(d.at("event_history").at("recorded") == 7);
    CHECK(d.at("event_history").at("wrapped") == true);
    CHECK(event_sequence(d) == std::vector<std::string>{"mark peak", "free 5242880", "alloc 1048576", "mark end"});
    CHECK(d.at("event_history").at("complete_from_ns") == d.at("events").at(0).at("time_ns"));

    auto x = load_json(dir + "/exit.json");
    CHECK(x.at("event_history").at("recorded") == 9);
    CHECK(event_sequence(x) == std::vector<std::string>{"alloc 1048576", "mark end", "free 3145728", "free 1048576"});
    CHECK(x.at("dropped") == nlohmann::json{{"allocations", 0}, {"stacks", 0}, {"peak_sites", 0}});
    CHECK(limit_lines(r.err) ==
          std::vector<std::string>{"note: the event history kept the newest 4 events of 9 (VRAMTRACE_EVENTS=4)"});
}

TEST_CASE("stacks the depot cannot store are counted and warned about, the bytes stay exact") {
    std::string dir = make_temp_dir("limits-stacks");
    RunResult r = run({bin_dir() + "/vt_peak_program", dir + "/dump.json"},
                      {true, {{"VRAMTRACE_OUTPUT", dir + "/exit.json"}, {"VRAMTRACE_TEST_FAIL_MAPPINGS", "1"}}, dir});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "mark: 0\ndump: 0\nnull label: -3\n");

    // Three allocations, each from a stack that could not be stored: all three recorded, stack 0.
    auto d = load_json(dir + "/dump.json");
    CHECK(d.at("dropped") == nlohmann::json{{"allocations", 0}, {"stacks", 3}, {"peak_sites", 0}});
    REQUIRE(d.at("allocations").size() == 2); // 3 MiB and 1 MiB live at the dump
    for (const auto &a : d.at("allocations")) CHECK(a.at("stack") == 0);
    CHECK(d.at("stacks").size() == 0);
    CHECK(d.at("devices").at(0).at("current_bytes") == (4u << 20));
    // The peak is still exact, all under stack 0.
    CHECK(d.at("peaks").at(0).at("peak_bytes") == (8u << 20));
    CHECK(d.at("peaks").at(0).at("sites") ==
          nlohmann::json::array({{{"stack", 0}, {"bytes", 8u << 20}, {"count", 2}}}));

    auto x = load_json(dir + "/exit.json");
    CHECK(x.at("dropped") == nlohmann::json{{"allocations", 0}, {"stacks", 3}, {"peak_sites", 0}});
    CHECK(x.at("devices").at(0).at("allocation_count") == 3);
    CHECK(x.at("devices").at(0).at("free_count") == 3);
    CHECK(limit_lines(r.err) == std::vector<std::string>{
                                    "warning: 3 stacks could not be stored (no memory for the stack depot);",
                                    "  allocations without a stack show as (no stack captured)"});
}
