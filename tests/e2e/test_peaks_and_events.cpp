// Peak composition and the event history, end to end on the stand-in driver (peak_program.cpp).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "harness.h"

using namespace e2e;

namespace {

// The call-site function of a stack id in a snapshot (parameter list dropped), "" when none.
std::string call_site_function(const nlohmann::json &s, uint64_t stack_id) {
    for (const auto &st : s.at("stacks")) {
        if (st.at("id").get<uint64_t>() != stack_id) continue;
        int cs = st.at("call_site").get<int>();
        if (cs < 0) return "";
        std::string f = s.at("frames").at(st.at("frames").at(cs).get<size_t>()).at("function");
        return f.substr(0, f.find('('));
    }
    return "";
}

} // namespace

TEST_CASE("peaks name exactly the call sites live at the peak, marks appear in order") {
    std::string dir = make_temp_dir("peaks");
    RunResult r = run({bin_dir() + "/vt_peak_program", dir + "/peak.json"},
                      {true, {{"VRAMTRACE_OUTPUT", dir + "/exit.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "mark: 0\ndump: 0\nnull label: -3\n");
    auto s = load_json(dir + "/peak.json");

    REQUIRE(s.at("peaks").size() == 1);
    const auto &peak = s.at("peaks").at(0);
    CHECK(peak.at("device") == 0);
    CHECK(peak.at("peak_bytes").get<uint64_t>() == (8u << 20));
    REQUIRE(peak.at("sites").size() == 2);
    std::map<std::string, std::pair<uint64_t, uint64_t>> sites;
    for (const auto &site : peak.at("sites"))
        sites[call_site_function(s, site.at("stack"))] = {site.at("bytes"), site.at("count")};
    CHECK(sites == std::map<std::string, std::pair<uint64_t, uint64_t>>{
                       {"alloc_a", {3u << 20, 1}}, {"alloc_b", {5u << 20, 1}}});
    // Sites come bytes descending: B first.
    CHECK(call_site_function(s, peak.at("sites").at(0).at("stack")) == "alloc_b");
    CHECK(s.at("devices").at(0).at("peak_bytes").get<uint64_t>() == (8u << 20));
    CHECK(s.at("devices").at(0).at("current_bytes").get<uint64_t>() == (4u << 20));

    // The history: marks in order with their labels, allocations and the free between them.
    const auto &h = s.at("event_history");
    CHECK(h.at("capacity").get<uint64_t>() == 65536);
    CHECK(h.at("wrapped") == false);
    std::vector<std::string> seq;
    for (const auto &e : s.at("events")) {
        std::string type = e.at("type");
        if (type == "mark") seq.push_back("mark " + e.at("label").get<std::string>());
        else seq.push_back(type + " " + std::to_string(e.at("size").get<uint64_t>()) + " " +
                           call_site_function(s, e.at("stack")));
    }
    CHECK(seq == std::vector<std::string>{"mark start", "alloc 3145728 alloc_a", "alloc 5242880 alloc_b", "mark peak",
                                          "free 5242880 alloc_b", "alloc 1048576 alloc_c", "mark end"});
    CHECK(h.at("recorded").get<uint64_t>() == 7);
    uint64_t previous = h.at("complete_from_ns");
    for (const auto &e : s.at("events")) {
        CHECK(e.at("time_ns").get<uint64_t>() >= previous);
        previous = e.at("time_ns");
    }
    CHECK(s.at("process").at("dump_monotonic_ns").get<uint64_t>() >= previous);
    CHECK(s.at("process").at("rank") == "");
    CHECK(s.at("process").at("symbolized") == true);

    // VRAMTRACE_EVENTS=0: no history; garbage: a warning and the default; RANK is recorded.
    RunResult off = run({bin_dir() + "/vt_peak_program", dir + "/off.json"},
                        {true, {{"VRAMTRACE_EVENTS", "0"}, {"VRAMTRACE_SUMMARY", "0"}, {"RANK", "3"}}, dir});
    REQUIRE(off.exit_code == 0);
    auto o = load_json(dir + "/off.json");
    CHECK(o.at("events").size() == 0);
    CHECK(o.at("event_history").at("capacity") == 0);
    CHECK(o.at("process").at("rank") == "3");
    CHECK(o.at("peaks").at(0).at("peak_bytes").get<uint64_t>() == (8u << 20));
    RunResult bad = run({bin_dir() + "/vt_peak_program", dir + "/bad.json"},
                        {true, {{"VRAMTRACE_EVENTS", "lots"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    REQUIRE(bad.exit_code == 0);
    CHECK(bad.err.find("VRAMTRACE_EVENTS=\"lots\" is not a whole number") != std::string::npos);
    CHECK(load_json(dir + "/bad.json").at("event_history").at("capacity") == 65536);

    // Without the library the program runs and every call says so.
    RunResult plain = run({bin_dir() + "/vt_peak_program", dir + "/none.json"}, {false, {}, dir});
    CHECK(plain.exit_code == 0);
    CHECK(plain.out == "mark: -1\ndump: -1\nnull label: -1\n");
}
