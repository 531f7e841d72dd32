#include <catch2/catch.hpp>

#include "harness.h"

using namespace e2e;

TEST_CASE("the dlsym hook keeps RTLD_NEXT relative to the caller for names it does not wrap") {
    std::string expected = "next probe: second\nnext malloc is libc's: yes\n";
    RunResult plain = run({bin_dir() + "/vt_rtld_next"}, {false, {}, ""});
    CHECK(plain.out == expected);
    RunResult traced = run({bin_dir() + "/vt_rtld_next"}, {true, {}, ""});
    INFO(traced.err);
    CHECK(traced.exit_code == 0);
    CHECK(traced.out == expected);
}

TEST_CASE("C API: stats and dump at a check point, the program runs without the library too") {
    RunResult plain = run({bin_dir() + "/vt_c_api_program"}, {false, {}, ""});
    CHECK(plain.exit_code == 0);
    CHECK(plain.out == "vramtrace not loaded\n");

    std::string dir = make_temp_dir("c-api");
    RunResult traced = run({bin_dir() + "/vt_c_api_program", dir + "/checkpoint.json"},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/exit.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO(traced.err);
    CHECK(traced.exit_code == 0);
    // 4 MiB + (1 MiB + 4096) live; 777 bytes were allocated and freed before the check point.
    const uint64_t live = (4u << 20) + (1u << 20) + 4096;
    CHECK(traced.out == "devices seen: 1\n"
                        "device 0 current " + std::to_string(live) + " peak " + std::to_string(live + 777) +
                        " allocations 3 frees 1\n"
                        "dump: 0\n");
    auto checkpoint = load_json(dir + "/checkpoint.json");
    CHECK(checkpoint.at("process").at("reason") == "api");
    CHECK(checkpoint.at("allocations").size() == 2);
    CHECK(checkpoint.at("devices").at(0).at("current_bytes").get<uint64_t>() == live);
    auto at_exit = load_json(dir + "/exit.json");
    CHECK(at_exit.at("allocations").size() == 0);
    CHECK(at_exit.at("devices").at(0).at("current_bytes").get<uint64_t>() == 0);
    CHECK(at_exit.at("devices").at(0).at("peak_bytes").get<uint64_t>() == live + 777);
}

TEST_CASE("vramtrace run: preloads the library, passes the exit status, honours --output") {
    std::string dir = make_temp_dir("cli-run");
    RunResult r = run({cli(), "run", "--output", dir + "/out-%p.json", "--", bin_dir() + "/leaky_pipeline"},
                      {false, {}, dir});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    auto files = list_dir(dir);
    REQUIRE(files.size() == 1);
    CHECK(files[0].rfind("out-", 0) == 0);
    auto expected = parse_expectations(r.out);
    auto live = live_allocations(load_json(dir + "/" + files[0]));
    INFO(describe(expected, live));
    CHECK(same_live_set(expected, live, false));

    RunResult status = run({cli(), "run", "--", "/bin/sh", "-c", "exit 7"}, {false, {}, dir});
    CHECK(status.exit_code == 7);

    RunResult summary = run({cli(), "summary", dir + "/" + files[0]}, {false, {}, dir});
    CHECK(summary.exit_code == 0);
    CHECK(summary.out.find("leaked at exit") != std::string::npos);
}
