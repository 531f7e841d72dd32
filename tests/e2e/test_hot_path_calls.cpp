// What the tracer itself asks the driver per allocation + free pair, counted on the stand-in driver
// (STANDIN_CUDA_TRACE=1 logs every entry point it serves): part of a traced pair's cost, since a
// driver query can take the driver's own locks. Two runs of different lengths, traced and not: the
// difference of the differences is what scales with the pairs, start-up and exit calls cancel.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>

#include "harness.h"

using namespace e2e;

namespace {

// Entry point name -> calls, from the stand-in's "[standin-cuda] NAME(...)" lines.
std::map<std::string, long> driver_calls(const std::string &err) {
    std::map<std::string, long> calls;
    std::istringstream lines(err);
    const std::string prefix = "[standin-cuda] ";
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(prefix, 0) != 0) continue;
        std::string rest = line.substr(prefix.size());
        size_t end = rest.find_first_of("( ");
        ++calls[rest.substr(0, end)];
    }
    return calls;
}

std::map<std::string, long> run_pairs(long pairs, bool traced, const char *devices) {
    std::string dir = make_temp_dir("hot_path_calls");
    RunResult r = run({bin_dir() + "/vt_pairs_program", std::to_string(pairs)},
                      {traced,
                       {{"STANDIN_CUDA_TRACE", "1"},
                        {"STANDIN_CUDA_DEVICES", devices},
                        {"VRAMTRACE_OUTPUT", dir + "/snap.json"},
                        {"VRAMTRACE_SUMMARY", "0"}},
                       dir});
    INFO(r.err.substr(0, 4000));
    REQUIRE(r.exit_code == 0);
    return driver_calls(r.err);
}

// Driver calls that the tracer adds and that scale with the pairs: name -> calls per `extra` pairs
// of each kind, where `extra` is the difference of the two runs' lengths.
std::map<std::string, long> scaling_calls(const char *devices, long *extra_out) {
    constexpr long kShort = 200, kLong = 700;
    auto plain_short = run_pairs(kShort, false, devices), plain_long = run_pairs(kLong, false, devices);
    auto traced_short = run_pairs(kShort, true, devices), traced_long = run_pairs(kLong, true, devices);
    std::map<std::string, long> per_extra_pairs;
    for (auto *m : {&plain_short, &plain_long, &traced_short, &traced_long})
        for (auto &[name, n] : *m) per_extra_pairs[name] = 0;
    for (auto &[name, n] : per_extra_pairs)
        n = (traced_long[name] - traced_short[name]) - (plain_long[name] - plain_short[name]);
    std::map<std::string, long> scaling;
    for (auto &[name, n] : per_extra_pairs)
        if (n != 0) scaling[name] = n;
    *extra_out = kLong - kShort;
    return scaling;
}

std::string listed(const std::map<std::string, long> &calls) {
    std::ostringstream seen;
    for (auto &[name, n] : calls) seen << name << " " << n << "\n";
    return seen.str();
}

} // namespace

TEST_CASE("hot path: with one visible device the tracer asks the driver one cuCtxGetCurrent per cudaMalloc, nothing per stream-ordered allocation or free") {
    long extra = 0;
    auto scaling = scaling_calls("1", &extra);
    INFO("driver calls the tracer adds for " << extra << " more pairs of each kind:\n" << listed(scaling));
    CHECK(scaling == std::map<std::string, long>{{"cuCtxGetCurrent", extra}});
}

TEST_CASE("hot path: with two visible devices the tracer also asks one cuStreamGetDevice per stream-ordered allocation") {
    long extra = 0;
    auto scaling = scaling_calls("2", &extra);
    INFO("driver calls the tracer adds for " << extra << " more pairs of each kind:\n" << listed(scaling));
    CHECK(scaling == std::map<std::string, long>{{"cuCtxGetCurrent", extra}, {"cuStreamGetDevice", extra}});
}
