// Memory the driver frees or keeps without a free call per allocation, on the stand-in driver
// (tests/e2e/programs/standin_prog_lifecycle.cpp): a primary context reset whose addresses come
// back, a destroyed context among two, the last release of a primary context, VMM handles released
// while mapped twice or kept by a retained reference, an imported handle, graph memory read from
// the driver, and a teardown during exit that must end nothing. Every figure is the program's own.
// Each runs with the preload hooks recording and with the CUPTI backend recording (the library
// loaded through CUDA_INJECTION64_PATH alone).
#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#include "harness.h"

using namespace e2e;

namespace {

struct Scenario {
    RunResult plain, traced;
    std::string dir;
    nlohmann::json snapshot;
};

// backend: "preload" or "cupti".
Scenario run_scenario(const std::string &name, const std::string &backend,
                      std::map<std::string, std::string> env = {}) {
    Scenario s;
    std::vector<std::string> argv = {bin_dir() + "/standin_prog_lifecycle", name};
    s.plain = run(argv, {false, env, make_temp_dir("lifecycle-plain-" + name)});
    s.dir = make_temp_dir("lifecycle-" + backend + "-" + name);
    env["VRAMTRACE_OUTPUT"] = s.dir + "/snap.json";
    bool preload = backend == "preload";
    if (!preload) {
        env["CUDA_INJECTION64_PATH"] = preload_library();
        // Sanitizer builds (tests/sanitizers): their runtime must still come first.
        if (const char *first = getenv("VT_E2E_PRELOAD_FIRST"); first != nullptr && *first != 0)
            env["LD_PRELOAD"] = first;
    }
    s.traced = run(argv, {preload, env, s.dir});
    if (file_exists(s.dir + "/snap.json")) s.snapshot = load_json(s.dir + "/snap.json");
    return s;
}

void require_unchanged(const Scenario &s) {
    INFO("stderr of the traced run:\n" << s.traced.err);
    REQUIRE(s.plain.exit_code == 0);
    REQUIRE(s.traced.exit_code == 0);
    REQUIRE(s.traced.out == s.plain.out);
    REQUIRE(!s.snapshot.is_null());
}

const nlohmann::json &device_row(const nlohmann::json &snap, int device) {
    for (const auto &d : snap.at("devices"))
        if (d.at("device") == device) return d;
    FAIL("no row for device " << device);
    static nlohmann::json none;
    return none;
}

// "expect-teardown <api> <cause> <device> <count> <device bytes> <host bytes>" lines.
std::vector<std::string> expected_teardowns(const std::string &out) {
    std::vector<std::string> rows;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("expect-teardown ", 0) == 0) rows.push_back(line.substr(16));
    return rows;
}
std::vector<std::string> tracked_teardowns(const nlohmann::json &snap) {
    std::vector<std::string> rows;
    if (!snap.contains("teardowns")) return rows;
    for (const auto &t : snap.at("teardowns"))
        rows.push_back(t.at("api").get<std::string>() + " " + t.at("cause").get<std::string>() + " " +
                       std::to_string(t.at("device").get<int>()) + " " + std::to_string(t.at("ended_count").get<uint64_t>()) +
                       " " + std::to_string(t.at("ended_bytes").get<uint64_t>()) + " " +
                       std::to_string(t.at("ended_host_bytes").get<uint64_t>()));
    return rows;
}

// The live bytes of each kind in a snapshot.
std::map<std::string, uint64_t> bytes_by_kind(const nlohmann::json &snap) {
    std::map<std::string, uint64_t> out;
    for (const auto &a : snap.at("allocations")) out[a.at("kind").get<std::string>()] += a.at("size").get<uint64_t>();
    return out;
}

// "checkpoint <name> <file> key=value ..." lines: name -> (file, figures).
std::map<std::string, std::pair<std::string, std::map<std::string, uint64_t>>> checkpoints(const std::string &out) {
    std::map<std::string, std::pair<std::string, std::map<std::string, uint64_t>>> all;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        std::istringstream w(line);
        std::string tag, name, file, kv;
        if (!(w >> tag >> name >> file) || tag != "checkpoint") continue;
        auto &entry = all[name];
        entry.first = file;
        while (w >> kv) entry.second[kv.substr(0, kv.find('='))] = std::stoull(kv.substr(kv.find('=') + 1));
    }
    return all;
}

uint64_t events_freed_by(const nlohmann::json &snap, const std::string &cause) {
    uint64_t n = 0;
    for (const auto &e : snap.at("events"))
        if (e.contains("freed_by") && e.at("freed_by") == cause) ++n;
    return n;
}

} // namespace

// With the CUPTI backend the runtime's calls are seen as the driver calls they make (cudaMalloc as
// cuMemAlloc_v2): same_live_set compares through driver_apis_for then.
TEST_CASE("lifecycle: cudaDeviceReset ends the context's allocations, a reused address is exact") {
    std::string backend = GENERATE(as<std::string>{}, "preload", "cupti");
    Scenario s = run_scenario("reset", backend);
    INFO("backend " << backend);
    require_unchanged(s);
    INFO(s.traced.out << s.traced.err);
    std::vector<ExpectedLive> expected = parse_expectations(s.traced.out);
    REQUIRE(expected.size() == 2);
    REQUIRE(s.traced.out.find("reused-address same") != std::string::npos); // the stand-in rewinds
    // The allocation made after the reset at the old address was freed: only the pool allocation
    // (which a reset does not free) and the last allocation are live.
    CHECK(same_live_set(expected, live_allocations(s.snapshot), backend == "cupti"));
    CHECK(tracked_teardowns(s.snapshot) == expected_teardowns(s.traced.out));
    const nlohmann::json &dev0 = device_row(s.snapshot, 0);
    CHECK(dev0.at("current_bytes") == 6u << 20);              // 5 MiB pool + 1 MiB
    CHECK(dev0.at("peak_bytes") == 8u << 20);                 // 3 MiB + 5 MiB before the reset
    CHECK(dev0.at("total_freed_bytes") == 6u << 20);          // 3 MiB by the reset, 3 MiB by cudaFree
    CHECK(device_row(s.snapshot, -1).at("current_bytes") == 0); // the pinned host memory too
    CHECK(events_freed_by(s.snapshot, "context_reset") == 2);
    // The teardown's call sites: what was live in the context then.
    const nlohmann::json &td = s.snapshot.at("teardowns").at(0);
    REQUIRE(td.at("sites").size() == 2);
    CHECK(td.at("sites").at(0).at("bytes") == 3u << 20);
    CHECK(td.at("sites").at(1).at("bytes") == 2u << 20);
    CHECK(s.traced.err.find("cuDevicePrimaryCtxReset_v2 (context_reset) on cuda:0 ended 2 allocations, 3.00 MiB (3145728 B) and 2.00 MiB (2097152 B) of host memory") !=
          std::string::npos);
}

TEST_CASE("lifecycle: cuCtxDestroy of one created context among two ends only its allocations") {
    std::string backend = GENERATE(as<std::string>{}, "preload", "cupti");
    Scenario s = run_scenario("destroy", backend);
    INFO("backend " << backend);
    require_unchanged(s);
    INFO(s.traced.out << s.traced.err);
    CHECK(same_live_set(parse_expectations(s.traced.out), live_allocations(s.snapshot), backend == "cupti"));
    CHECK(tracked_teardowns(s.snapshot) == expected_teardowns(s.traced.out));
    const nlohmann::json &dev0 = device_row(s.snapshot, 0);
    CHECK(dev0.at("current_bytes") == 5u << 20);
    CHECK(dev0.at("peak_bytes") == 9u << 20);
    CHECK(dev0.at("free_count") == 2);
    // Three contexts made allocations: each live allocation names the one it belongs to.
    std::set<uint64_t> contexts;
    for (const auto &a : s.snapshot.at("allocations")) contexts.insert(a.at("context").get<uint64_t>());
    CHECK(contexts.size() == 2);
}

TEST_CASE("lifecycle: the last primary context release ends its allocations, the next generation is apart") {
    std::string backend = GENERATE(as<std::string>{}, "preload", "cupti");
    Scenario s = run_scenario("release", backend);
    INFO("backend " << backend);
    require_unchanged(s);
    INFO(s.traced.out << s.traced.err);
    REQUIRE(s.traced.out.find("reused-address same") != std::string::npos);
    CHECK(same_live_set(parse_expectations(s.traced.out), live_allocations(s.snapshot), backend == "cupti"));
    CHECK(tracked_teardowns(s.snapshot) == expected_teardowns(s.traced.out));
    const nlohmann::json &dev1 = device_row(s.snapshot, 1);
    CHECK(dev1.at("current_bytes") == 6u << 20);
    CHECK(dev1.at("peak_bytes") == 7u << 20);
    CHECK(dev1.at("allocation_count") == 3);
    CHECK(dev1.at("free_count") == 2);
    CHECK(events_freed_by(s.snapshot, "context_release") == 1);
}

TEST_CASE("lifecycle: VMM memory lives until its release, every unmap and every retained reference") {
    std::string backend = GENERATE(as<std::string>{}, "preload", "cupti");
    Scenario s = run_scenario("vmm", backend);
    INFO("backend " << backend);
    require_unchanged(s);
    INFO(s.traced.out << s.traced.err);
    auto points = checkpoints(s.traced.out);
    REQUIRE(points.size() == 6);
    for (const auto &[name, point] : points) {
        INFO("checkpoint " << name);
        nlohmann::json snap = load_json(s.dir + "/" + point.first);
        std::map<std::string, uint64_t> kinds = bytes_by_kind(snap);
        CHECK(kinds["vmm_physical"] == point.second.at("physical"));
        CHECK(kinds["vmm_mapping"] == point.second.at("mapped"));
        CHECK(kinds["va_reservation"] == point.second.at("reserved"));
        // The device counts the physical memory once, however often it is mapped; an import and a
        // reservation not at all.
        CHECK(device_row(snap, 0).at("current_bytes") == point.second.at("physical"));
    }
    nlohmann::json imported = load_json(s.dir + "/" + points.at("imported").first);
    CHECK(bytes_by_kind(imported)["vmm_imported"] == 2u << 20);
    CHECK(same_live_set(parse_expectations(s.traced.out), live_allocations(s.snapshot), backend == "cupti"));
    CHECK(s.traced.err.find("virtual memory (VMM): reserved VA 16.00 MiB in 1 reservation / mapped 2.00 MiB "
                            "(cuda:0 2.00 MiB) / physical 2.00 MiB (cuda:0 2.00 MiB)") != std::string::npos);
}

TEST_CASE("lifecycle: graph memory is read from the driver at every dump, trimmed to zero") {
    std::string backend = GENERATE(as<std::string>{}, "preload", "cupti");
    Scenario s = run_scenario("graph", backend);
    INFO("backend " << backend);
    require_unchanged(s);
    INFO(s.traced.out << s.traced.err);
    auto points = checkpoints(s.traced.out);
    REQUIRE(points.size() == 2);
    for (const auto &[name, point] : points) {
        INFO("checkpoint " << name);
        nlohmann::json snap = load_json(s.dir + "/" + point.first);
        const nlohmann::json &dev0 = device_row(snap, 0);
        CHECK(dev0.at("graph_reserved_bytes") == point.second.at("graph_reserved"));
        CHECK(dev0.at("graph_used_bytes") == point.second.at("graph_used"));
        CHECK(dev0.at("current_bytes") == 0); // graph memory is a row of its own, not tracked bytes
    }
    CHECK(points.at("launched").second.at("graph_reserved") == 6u << 20);
    CHECK(points.at("trimmed").second.at("graph_reserved") == 0);
    CHECK(s.traced.err.find("graph memory (the driver's graph pool, not in tracked memory): 0 B reserved") !=
          std::string::npos);
}

TEST_CASE("lifecycle: a context torn down by the runtime's exit handler ends nothing") {
    std::string backend = GENERATE(as<std::string>{}, "preload", "cupti");
    Scenario s = run_scenario("exit", backend, {{"STANDIN_CUDART_RELEASE_AT_EXIT", "1"}});
    INFO("backend " << backend);
    require_unchanged(s);
    INFO(s.traced.out << s.traced.err);
    CHECK(same_live_set(parse_expectations(s.traced.out), live_allocations(s.snapshot), backend == "cupti"));
    CHECK(!s.snapshot.contains("teardowns"));
    CHECK(device_row(s.snapshot, 0).at("current_bytes") == 7u << 20);
    CHECK(s.traced.err.find("leaked at exit: 1 allocation, 7.00 MiB") != std::string::npos);
}
