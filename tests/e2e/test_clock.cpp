// The times in a snapshot's events against the program's own CLOCK_MONOTONIC (clock_program.cpp),
// with the counter line (lib/core/clock.h) and with VRAMTRACE_TSC=0.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "harness.h"

using namespace e2e;

namespace {

struct Bracket {
    uint64_t before_alloc, after_alloc, after_free;
};

// Whether this machine's kernel keeps time by an invariant TSC (the library's conditions, as the
// kernel reports them).
bool kernel_keeps_time_by_tsc() {
#if defined(__x86_64__)
    std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string name;
    source >> name;
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string all((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
    return name == "tsc" && all.find(" constant_tsc") != std::string::npos &&
           all.find(" nonstop_tsc") != std::string::npos;
#else
    return false;
#endif
}

// Runs the program and checks each event's time against its pair's bracket, widened by `slack` ns.
// Returns the debug line that names the clock.
std::string check_times(const std::map<std::string, std::string> &env, uint64_t slack) {
    std::string dir = make_temp_dir("clock");
    std::map<std::string, std::string> e = env;
    e["VRAMTRACE_OUTPUT"] = dir + "/snap.json";
    e["VRAMTRACE_SUMMARY"] = "0";
    e["VRAMTRACE_DEBUG"] = "1";
    constexpr int kPairs = 150;
    RunResult r = run({bin_dir() + "/vt_clock_program", std::to_string(kPairs)}, {true, e, dir});
    INFO(r.err.substr(0, 3000));
    REQUIRE(r.exit_code == 0);
    std::map<uint64_t, Bracket> by_size;
    std::istringstream lines(r.out);
    for (std::string word; lines >> word;) {
        REQUIRE(word == "pair");
        int i = 0;
        Bracket b{};
        lines >> i >> b.before_alloc >> b.after_alloc >> b.after_free;
        by_size[4096 + static_cast<uint64_t>(i)] = b;
    }
    REQUIRE(by_size.size() == kPairs);
    auto s = load_json(dir + "/snap.json");
    int allocs = 0, frees = 0;
    for (const auto &ev : s.at("events")) {
        auto it = by_size.find(ev.at("size").get<uint64_t>());
        if (it == by_size.end()) continue;
        const uint64_t t = ev.at("time_ns");
        const Bracket &b = it->second;
        INFO("size " << it->first << " " << ev.at("type").get<std::string>() << " at " << t);
        if (ev.at("type") == "alloc") {
            ++allocs;
            CHECK(t + slack >= b.before_alloc);
            CHECK(t <= b.after_alloc + slack);
        } else {
            ++frees;
            CHECK(t + slack >= b.after_alloc);
            CHECK(t <= b.after_free + slack);
        }
    }
    CHECK(allocs == kPairs);
    CHECK(frees == kPairs);
    const size_t at = r.err.find("debug: clock: ");
    REQUIRE(at != std::string::npos);
    return r.err.substr(at + 14, r.err.find('\n', at) - at - 14);
}

} // namespace

TEST_CASE("event times: the counter line stays within 20 us of the program's CLOCK_MONOTONIC") {
    const std::string clock = check_times({}, 20'000);
    if (kernel_keeps_time_by_tsc()) CHECK(clock.rfind("tsc line, ", 0) == 0);
    else CHECK(clock.rfind("vDSO: ", 0) == 0);
}

TEST_CASE("event times: VRAMTRACE_TSC=0 takes clock_gettime, inside each call's bracket") {
    CHECK(check_times({{"VRAMTRACE_TSC", "0"}}, 0) == "vDSO: VRAMTRACE_TSC=0");
}
