// A library dlopen'ed, allocating and dlclose'd before the exit snapshot: its frames are still named
// (function and file:line, from the file on disk) and it is listed in modules[] with its build id,
// thanks to the module registry (lib/tracking/module_registry.h).
#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "harness.h"

using namespace e2e;

namespace {

// The plugin's one allocation (its expect-live line in the program's output) is the only live one
// in the snapshot, named plugin_allocate at dlclose_plugin.c:<its line>.
void check_plugin_allocation_live(const nlohmann::json &snapshot, const std::string &program_out) {
    auto expected = parse_expectations(program_out);
    REQUIRE(expected.size() == 1);
    auto live = live_allocations(snapshot);
    INFO(describe(expected, live));
    CHECK(same_live_set(expected, live, false));
    REQUIRE(live.size() == 1);
    CHECK(live[0].function == "plugin_allocate");
    CHECK(live[0].file == "dlclose_plugin.c");
    CHECK(live[0].line == expected[0].line);
}

} // namespace

TEST_CASE("a dlclose'd library's frames are named in the exit snapshot, its module listed with its build id") {
    std::string dir = make_temp_dir("dlclose");
    std::string plugin = bin_dir() + "/libvt_dlclose_plugin.so";
    RunResult r = run({bin_dir() + "/vt_dlclose_program", plugin},
                      {true, {{"VRAMTRACE_OUTPUT", dir + "/exit.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(field_after(r.out, "unloaded") == "1"); // the plugin really was unloaded before exit

    auto s = load_json(dir + "/exit.json");
    check_plugin_allocation_live(s, r.out);

    // The plugin in modules[]: its path, the base the program saw (l_addr) and its build id.
    std::string build_id = readelf_build_id(plugin);
    REQUIRE(build_id.size() == 40);
    int found = 0;
    for (const auto &m : s.at("modules")) {
        if (m.at("path") != plugin) continue;
        ++found;
        CHECK(m.at("base") == field_after(r.out, "plugin-base"));
        CHECK(m.at("build_id") == build_id);
    }
    CHECK(found == 1);
}

TEST_CASE("a runtime loaded only in a library's RTLD_LOCAL scope is found: the call succeeds and is tracked") {
    // Without the fallback in real_functions.cpp, dlsym(RTLD_NEXT, "cudaMalloc") finds nothing and
    // the plugin's cudaMalloc fails with 999 (exit status 6 here).
    std::string dir = make_temp_dir("local_runtime");
    std::string plugin = bin_dir() + "/libvt_dlclose_plugin.so";
    RunResult plain = run({bin_dir() + "/vt_local_runtime_program", plugin}, {false, {}, dir});
    REQUIRE(plain.exit_code == 0);
    RunResult r = run({bin_dir() + "/vt_local_runtime_program", plugin},
                      {true, {{"VRAMTRACE_OUTPUT", dir + "/exit.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == plain.out);
    CHECK(r.err.find("cannot find the real") == std::string::npos);
    check_plugin_allocation_live(load_json(dir + "/exit.json"), r.out);
}
