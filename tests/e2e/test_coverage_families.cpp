// Issue 3 coverage: CUDA arrays, graph memory nodes, stream capture, pools at dump time, device
// identity and NVML's per-process figure, on the stand-in driver/runtime (shared and static).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>

#include "harness.h"

using namespace e2e;

namespace {

struct Run {
    RunResult plain, traced;
    nlohmann::json snapshot;
};

Run run_coverage(const std::string &program, bool with_nvml) {
    Run r;
    std::vector<std::string> argv = {bin_dir() + "/" + program};
    std::map<std::string, std::string> env;
    // The stand-in NVML's folder first; what was inherited after it (the sanitizer scripts put the
    // stand-in driver's folder there: tests/sanitizers/run_*_e2e.sh).
    if (with_nvml) {
        const char *inherited = getenv("LD_LIBRARY_PATH");
        env["LD_LIBRARY_PATH"] = bin_dir() + "/../standin-nvml" +
                                 (inherited && *inherited ? std::string(":") + inherited : std::string());
    }
    r.plain = run(argv, {false, env, ""});
    std::string dir = make_temp_dir(program);
    env["VRAMTRACE_OUTPUT"] = dir + "/snap.json";
    r.traced = run(argv, {true, env, dir});
    if (file_exists(dir + "/snap.json")) r.snapshot = load_json(dir + "/snap.json");
    return r;
}

// "expect-pool <what> <device> reserved <bytes> used <bytes>" -> what -> (reserved, used)
std::map<std::string, std::pair<uint64_t, uint64_t>> expected_pools(const std::string &out) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> pools;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream w(line);
        std::string tag, what, r, u;
        int device = 0;
        uint64_t reserved = 0, used = 0;
        if (w >> tag >> what >> device >> r >> reserved >> u >> used && tag == "expect-pool")
            pools[what] = {reserved, used};
    }
    return pools;
}

uint64_t expected_process_used(const std::string &out) {
    size_t at = out.find("expect-process-used 0 ");
    return at == std::string::npos ? 0 : std::stoull(out.substr(at + 22));
}

} // namespace

TEST_CASE("arrays, graph memory nodes, captured stream-ordered allocations, pools, device identity") {
    for (const char *program : {"standin_prog_coverage", "standin_prog_coverage_static"}) {
        bool is_static = std::string(program).find("static") != std::string::npos;
        INFO(program);
        Run t = run_coverage(program, true);
        INFO("stderr of the traced run:\n" << t.traced.err);
        REQUIRE(t.plain.exit_code == 0);
        REQUIRE(t.traced.exit_code == 0);
        CHECK(t.traced.out == t.plain.out);
        REQUIRE(t.snapshot.is_object());

        auto expected = parse_expectations(t.traced.out);
        auto live = live_allocations(t.snapshot);
        INFO(describe(expected, live));
        CHECK(same_live_set(expected, live, is_static));

        // Kinds: arrays are estimates; graph nodes and captured allocations are graph_pool, under
        // the graph that holds them; the allocation before the capture is plain device memory.
        int arrays = 0, graph_nodes = 0, devices = 0;
        for (const auto &a : t.snapshot.at("allocations")) {
            std::string kind = a.at("kind");
            bool estimate = a.contains("size_is_estimate") && a.at("size_is_estimate").get<bool>();
            CHECK(estimate == (kind == "array"));
            arrays += kind == "array";
            graph_nodes += kind == "graph_pool";
            devices += kind == "device";
        }
        CHECK(arrays == 3);
        CHECK(graph_nodes == 3);
        CHECK(devices == 2);

        // Counted: arrays and the two pool allocations, not the graph memory nodes.
        REQUIRE(t.snapshot.at("devices").size() == 1);
        const auto &dev0 = t.snapshot.at("devices").at(0);
        CHECK(dev0.at("current_bytes") == 262144u + 16384u + 10752u + 700000u + 1000000u);
        CHECK(dev0.at("uuid") == "GPU-76747374-616e-6469-6e13-005aa50ff000");
        CHECK(dev0.at("pci_bus_id") == "0000:10:00.0");
        CHECK(dev0.at("total_memory_bytes") == 1073741824u);
        CHECK(dev0.at("process_used_bytes") == expected_process_used(t.traced.out));
        CHECK(dev0.at("process_used_bytes") == 319056384u);

        // Pools, sampled before CUDA's exit handlers ran: the default pool and the created one,
        // and the device's graph memory in its row, each as the program itself read them.
        auto pools = expected_pools(t.traced.out);
        REQUIRE(pools.size() == 3);
        std::map<std::string, std::pair<uint64_t, uint64_t>> tracked;
        for (const auto &p : t.snapshot.at("pools")) {
            CHECK(p.at("device") == 0);
            std::string what = p.at("is_default").get<bool>() ? "default" : "created";
            tracked[what] = {p.at("reserved_bytes").get<uint64_t>(), p.at("used_bytes").get<uint64_t>()};
        }
        tracked["graph"] = {dev0.at("graph_reserved_bytes").get<uint64_t>(), dev0.at("graph_used_bytes").get<uint64_t>()};
        CHECK(tracked == pools);
        // Its graphs are never uploaded or launched, so the graph pool holds nothing (a launched
        // graph's memory: tests/e2e/test_context_lifecycle.cpp).
        CHECK(pools["graph"] == std::make_pair(uint64_t{0}, uint64_t{0}));
    }
}

TEST_CASE("without NVML the report has no process_used_bytes, and everything else is unchanged") {
    Run t = run_coverage("standin_prog_coverage", false);
    REQUIRE(t.traced.exit_code == 0);
    REQUIRE(t.snapshot.is_object());
    const auto &dev0 = t.snapshot.at("devices").at(0);
    CHECK_FALSE(dev0.contains("process_used_bytes"));
    CHECK(dev0.at("uuid") == "GPU-76747374-616e-6469-6e13-005aa50ff000");
    CHECK(t.snapshot.at("pools").size() == 2);
    CHECK(dev0.at("graph_reserved_bytes") == 0);
}

// The capture question costs a driver call per stream-ordered allocation and free; it is asked only
// while some capture is active (cuStreamBeginCapture* seen, not yet ended).
TEST_CASE("stream-ordered allocations ask the driver about capture only while a capture is active") {
    auto queries = [](const std::string &err) {
        size_t n = 0;
        for (size_t at = err.find("] cuStreamGetCaptureInfo"); at != std::string::npos;
             at = err.find("] cuStreamGetCaptureInfo", at + 1))
            ++n;
        for (size_t at = err.find("] cuStreamIsCapturing("); at != std::string::npos;
             at = err.find("] cuStreamIsCapturing(", at + 1))
            ++n;
        return n;
    };
    std::string dir = make_temp_dir("capture_queries");
    std::map<std::string, std::string> env = {{"STANDIN_CUDA_TRACE", "1"}, {"VRAMTRACE_SUMMARY", "0"},
                                              {"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}};
    // No capture at all: 8 stream-ordered allocations and frees on created streams, no question.
    RunResult families = run({bin_dir() + "/standin_prog_families"}, {true, env, dir});
    REQUIRE(families.exit_code == 0);
    CHECK(families.err.find("] cuMemAllocFromPoolAsync(") != std::string::npos);
    CHECK(queries(families.err) == 0);
    // One capture around two allocations and two frees (standin_prog_coverage): one question each.
    RunResult coverage = run({bin_dir() + "/standin_prog_coverage"}, {true, env, dir});
    REQUIRE(coverage.exit_code == 0);
    CHECK(queries(coverage.err) == 4);
}
