// Example programs run under the preload library on the stand-in driver: the snapshot at exit must
// list exactly what each program says it left live (size, API, device, call site file:line), and the
// program's stdout and exit status must be what they are without the library.
#include <catch2/catch.hpp>

#include "harness.h"

using namespace e2e;

namespace {

struct Traced {
    RunResult plain, traced;
    nlohmann::json snapshot;
    std::string dir;
};

Traced run_both(const std::string &program, std::vector<std::string> args = {},
                std::map<std::string, std::string> env = {}) {
    Traced t;
    std::vector<std::string> argv = {bin_dir() + "/" + program};
    argv.insert(argv.end(), args.begin(), args.end());
    t.plain = run(argv, {false, env, ""});
    t.dir = make_temp_dir(program);
    env["VRAMTRACE_OUTPUT"] = t.dir + "/snap-%p.json";
    t.traced = run(argv, {true, env, t.dir});
    for (const std::string &name : list_dir(t.dir))
        if (name.rfind("snap-", 0) == 0) t.snapshot = load_json(t.dir + "/" + name);
    return t;
}

// A program's stdout without its expect-mapping lines (mapped addresses differ from run to run).
std::string stable_output(const std::string &out) {
    std::string kept;
    size_t pos = 0;
    while (pos < out.size()) {
        size_t end = out.find('\n', pos);
        end = end == std::string::npos ? out.size() : end + 1;
        if (out.compare(pos, 15, "expect-mapping ") != 0) kept.append(out, pos, end - pos);
        pos = end;
    }
    return kept;
}

void check_exact_leaks(const Traced &t, bool static_cudart) {
    INFO("stderr of the traced run:\n" << t.traced.err);
    REQUIRE(t.plain.exit_code == 0);
    CHECK(t.traced.exit_code == t.plain.exit_code);
    CHECK(stable_output(t.traced.out) == stable_output(t.plain.out));
    REQUIRE_FALSE(t.snapshot.is_null());
    auto expected = parse_expectations(t.plain.out);
    REQUIRE_FALSE(expected.empty());
    auto live = live_allocations(t.snapshot);
    INFO(describe(expected, live));
    CHECK(same_live_set(expected, live, static_cudart));
}

} // namespace

TEST_CASE("shared cudart: the snapshot lists exactly the leaked allocations with their call sites") {
    Traced t = run_both("leaky_pipeline");
    check_exact_leaks(t, false);
    // The summary on stderr names the leaks, every line prefixed.
    CHECK(t.traced.err.find("vramtrace: ") != std::string::npos);
    for (size_t pos = 0; pos < t.traced.err.size();) {
        size_t end = t.traced.err.find('\n', pos);
        std::string line = t.traced.err.substr(pos, end - pos);
        INFO(line);
        CHECK(line.rfind("vramtrace: ", 0) == 0);
        if (end == std::string::npos) break;
        pos = end + 1;
    }
}

TEST_CASE("static cudart: allocations are seen at the driver through cuGetProcAddress") {
    Traced t = run_both("leaky_pipeline_static");
    check_exact_leaks(t, true);
}

TEST_CASE("a program linked with -lcuda is seen through the exported driver symbols") {
    Traced t = run_both("standin_prog_driver_link");
    check_exact_leaks(t, false);
}

TEST_CASE("a program that dlsym's the driver directly is seen through the dlsym hook") {
    Traced t = run_both("standin_prog_dlsym");
    check_exact_leaks(t, false);
}

TEST_CASE("many threads allocating and freeing: exact leaks, one per thread") {
    Traced t = run_both("standin_prog_threads", {"8", "2000"});
    check_exact_leaks(t, false);
    auto live = live_allocations(t.snapshot);
    CHECK(live.size() == 8);
    // Every allocation made was counted once, every free once.
    const auto &dev0 = t.snapshot.at("devices").at(0);
    CHECK(dev0.at("allocation_count").get<uint64_t>() - dev0.at("free_count").get<uint64_t>() == 8);
}

TEST_CASE("out of memory is passed through untouched") {
    Traced t = run_both("standin_prog_oom");
    INFO(t.traced.err);
    CHECK(t.plain.exit_code == 0);
    CHECK(t.traced.exit_code == 0);
    CHECK(t.traced.out == t.plain.out);
}

TEST_CASE("a process that never touches CUDA writes nothing and prints nothing") {
    Traced t = run_both("standin_prog_no_cuda");
    CHECK(t.traced.exit_code == 0);
    CHECK(t.traced.err.empty());
    CHECK(t.traced.out == t.plain.out);
    CHECK(list_dir(t.dir).empty());
}

TEST_CASE("a process that initializes CUDA but allocates nothing writes nothing and prints nothing") {
    Traced t = run_both("standin_prog_lookup_only");
    CHECK(t.traced.exit_code == 0);
    CHECK(t.traced.out == "devices: 2\n");
    CHECK(t.traced.err.empty());
    CHECK(list_dir(t.dir).empty());
}

TEST_CASE("VRAMTRACE_SUMMARY=0 keeps stderr quiet but still writes the snapshot") {
    Traced t = run_both("leaky_pipeline", {}, {{"VRAMTRACE_SUMMARY", "0"}});
    CHECK(t.traced.err.empty());
    CHECK_FALSE(t.snapshot.is_null());
}

TEST_CASE("failed frees reach the driver, return its result, and keep the allocation tracked") {
    Traced t = run_both("standin_prog_bad_frees");
    // The driver's own answers, the same traced and untraced (compared by check_exact_leaks).
    CHECK(t.plain.out.find("free unknown: 1\n") != std::string::npos);
    CHECK(t.plain.out.find("freehost of a device pointer: 1\n") != std::string::npos);
    CHECK(t.plain.out.find("first free: 0\nsecond free: 1\nfree null: 0\n") != std::string::npos);
    check_exact_leaks(t, false);
    const auto &dev0 = t.snapshot.at("devices").at(0);
    CHECK(dev0.at("allocation_count").get<uint64_t>() == 2);
    CHECK(dev0.at("free_count").get<uint64_t>() == 1);
    CHECK(dev0.at("current_bytes").get<uint64_t>() == (6u << 20));
}

TEST_CASE("garbage in VRAMTRACE_* variables: one warning each, defaults used, program unchanged") {
    Traced t = run_both("leaky_pipeline", {}, {{"VRAMTRACE_STACK_DEPTH", "lots"}, {"VRAMTRACE_SUMMARY", "maybe"}});
    check_exact_leaks(t, false);
    CHECK(t.traced.err.find("vramtrace: warning: VRAMTRACE_STACK_DEPTH=\"lots\" is not a whole number") !=
          std::string::npos);
    CHECK(t.traced.err.find("vramtrace: warning: VRAMTRACE_SUMMARY=\"maybe\" is not a boolean") != std::string::npos);
    CHECK(t.snapshot.at("process").at("stack_depth") == 32);
}

TEST_CASE("every allocation family: pitched, 3D, pools, host registration, IPC import, VMM") {
    for (const char *program : {"standin_prog_families", "standin_prog_families_static"}) {
        bool is_static = std::string(program).find("static") != std::string::npos;
        INFO(program);
        Traced t = run_both(program);
        check_exact_leaks(t, is_static);
        // The VMM mapping the program left in place, linked to its physical handle.
        auto mappings = tracked_mappings(live_allocations(t.snapshot));
        auto expected = parse_mapping_expectations(t.traced.out);
        REQUIRE(expected.size() == 1);
        CHECK(mappings == expected);
        // Counted: everything but the IPC import and the mapping. Device 1 holds the VMM memory.
        uint64_t device0 = 0, device1 = 0, host = 0;
        for (const auto &d : t.snapshot.at("devices")) {
            int id = d.at("device");
            uint64_t current = d.at("current_bytes");
            (id == 0 ? device0 : id == 1 ? device1 : host) += current;
        }
        CHECK(device0 == 307200u + 245760u + 3145828u + 65536u + 2000000u + 5243392u);
        CHECK(device1 == 4194304u);
        CHECK(host == 200000u);
    }
}
