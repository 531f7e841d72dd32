// Each interposition layer catches allocations on its own (the other two switched off), and a layer
// that is off catches nothing.
#include <catch2/catch.hpp>

#include "harness.h"

using namespace e2e;

namespace {

std::map<std::string, std::string> only(const std::string &layer) {
    std::map<std::string, std::string> env = {{"VRAMTRACE_HOOK_EXPORTS", "0"},
                                              {"VRAMTRACE_HOOK_DLSYM", "0"},
                                              {"VRAMTRACE_HOOK_PROCADDRESS", "0"}};
    env["VRAMTRACE_HOOK_" + layer] = "1";
    return env;
}

// Runs program under the preload with env; returns the APIs of the allocations live at exit
// (empty when no snapshot was written).
std::vector<std::string> traced_apis(const std::string &program, std::map<std::string, std::string> env) {
    std::string dir = make_temp_dir("layers-" + program);
    env["VRAMTRACE_OUTPUT"] = dir + "/snap.json";
    env["VRAMTRACE_SUMMARY"] = "0";
    RunResult r = run({bin_dir() + "/" + program}, {true, env, dir});
    INFO(program << " stderr:\n" << r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> apis;
    if (!file_exists(dir + "/snap.json")) return apis;
    nlohmann::json snapshot = load_json(dir + "/snap.json"); // kept alive for the loop
    for (const auto &a : snapshot.at("allocations")) apis.push_back(a.at("api"));
    std::sort(apis.begin(), apis.end());
    return apis;
}

size_t count_prefix(const std::vector<std::string> &apis, const std::string &prefix) {
    return std::count_if(apis.begin(), apis.end(), [&](auto &a) { return a.rfind(prefix, 0) == 0; });
}

size_t expected_count(const std::string &program) {
    RunResult r = run({bin_dir() + "/" + program}, {false, {}, ""});
    return parse_expectations(r.out).size();
}

} // namespace

TEST_CASE("exports layer alone: runtime calls of a shared-cudart program, nothing of a static one") {
    auto apis = traced_apis("leaky_pipeline", only("EXPORTS"));
    CHECK(apis.size() == expected_count("leaky_pipeline"));
    CHECK(count_prefix(apis, "cuda") == apis.size());
    CHECK(traced_apis("leaky_pipeline_static", only("EXPORTS")).empty());
    CHECK(traced_apis("standin_prog_dlsym", only("EXPORTS")).empty());
}

TEST_CASE("dlsym layer alone: a program that dlsym's driver functions, nothing else") {
    auto apis = traced_apis("standin_prog_dlsym", only("DLSYM"));
    CHECK(apis.size() == expected_count("standin_prog_dlsym"));
    CHECK(count_prefix(apis, "cuMemAlloc") == apis.size());
    CHECK(traced_apis("leaky_pipeline_static", only("DLSYM")).empty());
}

TEST_CASE("cuGetProcAddress layer alone: static and shared cudart, seen at the driver") {
    auto apis = traced_apis("leaky_pipeline_static", only("PROCADDRESS"));
    CHECK(apis.size() == expected_count("leaky_pipeline_static"));
    CHECK(count_prefix(apis, "cu") == apis.size());
    CHECK(count_prefix(apis, "cuda") == 0);
    auto shared = traced_apis("leaky_pipeline", only("PROCADDRESS"));
    CHECK(shared.size() == expected_count("leaky_pipeline"));
    CHECK(count_prefix(shared, "cuda") == 0);
    CHECK(traced_apis("standin_prog_dlsym", only("PROCADDRESS")).empty());
}

TEST_CASE("all layers on: a shared-cudart allocation is recorded once, as the runtime call") {
    auto apis = traced_apis("leaky_pipeline", {});
    CHECK(apis.size() == expected_count("leaky_pipeline"));
    CHECK(count_prefix(apis, "cuda") == apis.size());
}

TEST_CASE("VRAMTRACE_DEBUG=1 reports every layer installed and working") {
    std::string dir = make_temp_dir("debug");
    RunResult r = run({bin_dir() + "/leaky_pipeline_static"},
                      {true, {{"VRAMTRACE_DEBUG", "1"}, {"VRAMTRACE_OUTPUT", dir + "/s.json"}}, dir});
    INFO(r.err);
    CHECK(r.err.find("vramtrace: debug: layer exports: installed") != std::string::npos);
    CHECK(r.err.find("vramtrace: debug: layer dlsym: installed") != std::string::npos);
    CHECK(r.err.find("vramtrace: debug: layer dlsym against the driver: working") != std::string::npos);
    CHECK(r.err.find("vramtrace: debug: layer cuGetProcAddress against the driver: working") != std::string::npos);
    CHECK(r.err.find("warning") == std::string::npos);
}
