// Threads created and destroyed in large numbers (docs/reliability.md): the snapshot still holds
// exactly what the surviving allocations are, and the tracker keeps no per-thread state that grows
// with the number of threads that ever existed.
#include <catch2/catch.hpp>

#include <sstream>

#include "harness.h"

using namespace e2e;

namespace {

long rss_growth_kib(const std::string &out) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("rss-growth-kib ", 0) == 0) return std::stol(line.substr(15));
    return -1;
}

} // namespace

TEST_CASE("20000 short-lived threads: exact leaks and no per-thread growth") {
    std::vector<std::string> argv = {bin_dir() + "/vt_thread_churn_program"};
    RunResult plain = run(argv, {false, {}, ""});
    std::string dir = make_temp_dir("thread_churn");
    RunResult traced = run(argv, {true, {{"VRAMTRACE_OUTPUT", dir + "/snap.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO("stderr of the traced run:\n" << traced.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(traced.exit_code == 0);
    auto expected = parse_expectations(plain.out);
    REQUIRE(expected.size() == 40); // threads 0, 500, ..., 19500
    auto snapshot = load_json(dir + "/snap.json");
    auto live = live_allocations(snapshot);
    INFO(describe(expected, live));
    CHECK(same_live_set(expected, live, false));
    CHECK(snapshot["devices"][0]["allocation_count"].get<uint64_t>() == 20000 + 40);
    CHECK(snapshot["devices"][0]["free_count"].get<uint64_t>() == 20000);
    // 16000 threads in the measured wave. The tracker legitimately touches new pages of its table
    // while new addresses come (the stand-in maps each allocation, so addresses vary), up to the
    // first level's 65536 slots x 56 bytes = 3.5 MiB; anything per thread beyond ~260 bytes would
    // exceed that bound over 16000 threads.
    long plain_growth = rss_growth_kib(plain.out), traced_growth = rss_growth_kib(traced.out);
    INFO("resident set growth over 16000 threads: untraced " << plain_growth << " KiB, traced "
                                                              << traced_growth << " KiB");
    REQUIRE(plain_growth >= 0);
    CHECK(traced_growth <= plain_growth + 4096);
}

TEST_CASE("short-lived threads, a smaller wave: 5000 threads, exact leaks and counts") {
    // The same program with 1000 threads in its measured wave (5000 in all): small enough for
    // ThreadSanitizer (tests/sanitizers/run_tsan_e2e.sh), which cannot hold the 20000 above.
    std::vector<std::string> argv = {bin_dir() + "/vt_thread_churn_program", "1000"};
    RunResult plain = run(argv, {false, {}, ""});
    std::string dir = make_temp_dir("thread_churn_small");
    RunResult traced = run(argv, {true, {{"VRAMTRACE_OUTPUT", dir + "/snap.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO("stderr of the traced run:\n" << traced.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(traced.exit_code == 0);
    auto expected = parse_expectations(plain.out);
    REQUIRE(expected.size() == 10); // threads 0, 500, ..., 4500
    auto snapshot = load_json(dir + "/snap.json");
    auto live = live_allocations(snapshot);
    INFO(describe(expected, live));
    CHECK(same_live_set(expected, live, false));
    CHECK(snapshot["devices"][0]["allocation_count"].get<uint64_t>() == 5000 + 10);
    CHECK(snapshot["devices"][0]["free_count"].get<uint64_t>() == 5000);
}
