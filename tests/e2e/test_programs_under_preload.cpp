// Example programs run under the preload library on the stand-in driver: the snapshot at exit must
// list exactly what each program says it left live (size, API, device, call site file:line), and the
// program's stdout and exit status must be what they are without the library.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>

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

// Every VRAMTRACE_* setting of the table in docs/configuration.md with a value it cannot take: the program's stdout
// and exit status stay as without the library, the snapshot is written with the leaks exactly as
// usual, and each variable gets exactly one warning line naming it and what is used instead. The
// values also cover a 3000-byte value (shown cut at 64 bytes, so the default still ends the line),
// a newline (shown as '?', so it cannot start a line of its own) and bytes that are not UTF-8.
// Path settings take any text: VRAMTRACE_OUTPUT's failures are test_output_faults.cpp's, and an
// unwritable VRAMTRACE_PROMETHEUS_TEXTFILE is written (and warned about) only by the reporter
// thread, not in this short program's lifetime; VRAMTRACE_LIBDW naming no library is here.
TEST_CASE("garbage in VRAMTRACE_* variables: one warning each, defaults used, program unchanged") {
    const std::string long_value(3000, 'x');
    // variable, garbage, the warning's text after "vramtrace: warning: "
    const std::vector<std::array<std::string, 3>> cases = {
        {"VRAMTRACE_DISABLE", "maybe", "VRAMTRACE_DISABLE=\"maybe\" is not a boolean (use 0 or 1); using the default 0"},
        {"VRAMTRACE_SUMMARY", "yes please", "VRAMTRACE_SUMMARY=\"yes please\" is not a boolean (use 0 or 1); using the default 1"},
        {"VRAMTRACE_DEBUG", "2", "VRAMTRACE_DEBUG=\"2\" is not a boolean (use 0 or 1); using the default 0"},
        {"VRAMTRACE_HOOK_EXPORTS", "on\noff", "VRAMTRACE_HOOK_EXPORTS=\"on?off\" is not a boolean (use 0 or 1); using the default 1"},
        {"VRAMTRACE_HOOK_DLSYM", "-1", "VRAMTRACE_HOOK_DLSYM=\"-1\" is not a boolean (use 0 or 1); using the default 1"},
        {"VRAMTRACE_HOOK_PROCADDRESS", "\xff\xfe", "VRAMTRACE_HOOK_PROCADDRESS=\"\xff\xfe\" is not a boolean (use 0 or 1); using the default 1"},
        {"VRAMTRACE_FOLLOW", "TRUE!", "VRAMTRACE_FOLLOW=\"TRUE!\" is not a boolean (use 0 or 1); using the default 1"},
        {"VRAMTRACE_CRASH_DUMP", long_value, "VRAMTRACE_CRASH_DUMP=\"" + std::string(64, 'x') +
                                                 "...\" is not a boolean (use 0 or 1); using the default 1"},
        {"VRAMTRACE_PYTHON", "snake", "VRAMTRACE_PYTHON=\"snake\" is not a boolean (use 0 or 1); using the default 1"},
        {"VRAMTRACE_STACK_DEPTH", "lots", "VRAMTRACE_STACK_DEPTH=\"lots\" is not a whole number from 0 to 256; using the default 32"},
        {"VRAMTRACE_EVENTS", "99999999999999999999999", "VRAMTRACE_EVENTS=\"99999999999999999999999\" is not a whole "
                                                        "number from 0 to 268435456; using the default 65536"},
        {"VRAMTRACE_SIGNAL", "SIGTERM", "VRAMTRACE_SIGNAL=\"SIGTERM\" is not a signal that can request a snapshot "
                                        "(SIGUSR1, SIGUSR2 or SIGRTMIN+N, by name or number; 0 or none for off); using "
                                        "SIGUSR2"},
        {"VRAMTRACE_OOM_SNAPSHOTS", "3 ", "VRAMTRACE_OOM_SNAPSHOTS=\"3 \" is not a whole number from 0 to 1000; using 3"},
        {"VRAMTRACE_OOM_INTERVAL", "-10", "VRAMTRACE_OOM_INTERVAL=\"-10\" is not a number of seconds from 0 to 86400; using 10"},
        {"VRAMTRACE_WARN_BYTES", "8 GiB please", "VRAMTRACE_WARN_BYTES=\"8 GiB please\" is not a size (bytes with an optional "
                                                 "KiB/MiB/GiB suffix) or a fraction (0.9, 90%) of device memory; no warning"},
        {"VRAMTRACE_WARN_INTERVAL", "ten", "VRAMTRACE_WARN_INTERVAL=\"ten\" is not a number of seconds from 0 to 86400; using 10"},
        {"VRAMTRACE_PERIOD", "1e400", "VRAMTRACE_PERIOD=\"1e400\" is not a number of seconds above 0 (at most 86400); "
                                      "no periodic snapshot"},
        {"VRAMTRACE_PROMETHEUS_PERIOD", "nan", "VRAMTRACE_PROMETHEUS_PERIOD=\"nan\" is not a number of seconds above 0 (at "
                                               "most 86400); using 15"},
    };
    std::map<std::string, std::string> env;
    for (const auto &c : cases) env[c[0]] = c[1];
    Traced t = run_both("leaky_pipeline", {}, env);
    check_exact_leaks(t, false); // exit status and stdout as without the library, exact leaks
    // The snapshot took the defaults.
    CHECK(t.snapshot.at("process").at("stack_depth") == 32);
    CHECK(t.snapshot.at("event_history").at("capacity") == 65536);
    CHECK(list_dir(t.dir).size() == 1); // no periodic snapshot
    // Exactly the expected warnings, each once, each on a line of its own; the summary still printed
    // (VRAMTRACE_SUMMARY's default).
    std::vector<std::string> warnings;
    for (size_t pos = 0; pos < t.traced.err.size();) {
        size_t end = t.traced.err.find('\n', pos);
        if (end == std::string::npos) end = t.traced.err.size();
        std::string line = t.traced.err.substr(pos, end - pos);
        CHECK(line.rfind("vramtrace: ", 0) == 0);
        if (line.rfind("vramtrace: warning: ", 0) == 0) warnings.push_back(line.substr(20));
        pos = end + 1;
    }
    std::vector<std::string> expected;
    for (const auto &c : cases) expected.push_back(c[2]);
    std::sort(warnings.begin(), warnings.end());
    std::sort(expected.begin(), expected.end());
    CHECK(warnings == expected);
    CHECK(t.traced.err.find("vramtrace: snapshot written to ") != std::string::npos);

    // VRAMTRACE_LIBDW naming no library (on its own: the leaks then have no file:line to compare).
    Traced l = run_both("leaky_pipeline", {}, {{"VRAMTRACE_LIBDW", "/nonexistent/libdw.so.1"}, {"VRAMTRACE_SUMMARY", "0"}});
    CHECK(l.traced.exit_code == 0);
    CHECK(stable_output(l.traced.out) == stable_output(l.plain.out));
    CHECK(l.traced.err == "vramtrace: warning: VRAMTRACE_LIBDW: libdw not loaded (/nonexistent/libdw.so.1: cannot open "
                          "shared object file: No such file or directory); frames get function names from ELF symbol "
                          "tables but no file:line\n");
    REQUIRE_FALSE(l.snapshot.is_null());
    std::vector<std::string> functions;
    for (const LiveAllocation &a : live_allocations(l.snapshot)) functions.push_back(a.function);
    std::sort(functions.begin(), functions.end());
    CHECK(functions == std::vector<std::string>{"allocate_activations", "allocate_weights", "allocate_workspace",
                                                "stage_host_batch", "stage_host_batch"});
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
