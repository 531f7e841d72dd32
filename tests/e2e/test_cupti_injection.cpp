// The CUPTI backend end to end on the stand-in: the stand-in driver loads CUDA_INJECTION64_PATH at
// cuInit and calls the callbacks that the stand-in libcupti (tests/standin/cupti) registered
// around its memory entry points. standin_prog_injection prints what it leaves live (runtime API
// names); CUPTI records the driver calls those make, the preload hooks the runtime calls.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "harness.h"

using namespace e2e;

namespace {

const char *const kProgram = "standin_prog_injection";
const char *const kHolder = "Nsight Systems";

std::string standin_cupti() { return bin_dir() + "/../standin/libcupti.so.13"; }

// The driver call the stand-in runtime makes for each runtime call of the program, and its kind.
std::string driver_api(const std::string &runtime_api) {
    if (runtime_api == "cudaMalloc") return "cuMemAlloc_v2";
    if (runtime_api == "cudaMallocAsync") return "cuMemAllocAsync";
    if (runtime_api == "cudaMallocHost") return "cuMemAllocHost_v2";
    if (runtime_api == "cudaHostAlloc") return "cuMemHostAlloc";
    if (runtime_api == "cuMemCreate") return "cuMemCreate";
    return "(no driver call for " + runtime_api + ")";
}
std::string kind_of(const std::string &api) {
    if (api == "cuMemCreate") return "vmm_physical";
    return api == "cudaMallocHost" || api == "cudaHostAlloc" ? "host_pinned" : "device";
}

// stdout without the expect-mapping line, whose address differs from run to run.
std::string without_mappings(const std::string &out) {
    std::string kept;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("expect-mapping ", 0) != 0) kept += line + "\n";
    return kept;
}

// "<bytes> <api> <kind> dev <device> <function> <file>:<line>", sorted.
std::vector<std::string> expected_rows(const std::string &program_stdout, bool driver_names) {
    std::vector<std::string> rows;
    for (const ExpectedLive &e : parse_expectations(program_stdout))
        rows.push_back(std::to_string(e.bytes) + " " + (driver_names ? driver_api(e.api) : e.api) + " " +
                       kind_of(e.api) + " dev " + std::to_string(e.device) + " " + e.function + " " + e.file + ":" +
                       std::to_string(e.line));
    std::sort(rows.begin(), rows.end());
    return rows;
}
std::vector<std::string> tracked_rows(const nlohmann::json &snapshot) {
    std::vector<std::string> rows;
    for (const LiveAllocation &l : live_allocations(snapshot)) {
        if (l.kind == "vmm_mapping" || l.kind == "va_reservation") continue; // mappings: the expect-mapping line
        rows.push_back(std::to_string(l.bytes) + " " + l.api + " " + l.kind + " dev " + std::to_string(l.device) + " " +
                       l.function + " " + l.file + ":" + std::to_string(l.line));
    }
    std::sort(rows.begin(), rows.end());
    return rows;
}

struct Traced {
    RunResult plain, traced;
    std::string dir;
    bool has_snapshot = false;
    nlohmann::json snapshot;
};

// how: "inject" (CUDA_INJECTION64_PATH only, no LD_PRELOAD of the library) or "cli" (`vramtrace run
// --backend=cupti`).
Traced run_traced(const std::string &name, const std::string &how, std::map<std::string, std::string> env) {
    Traced t;
    std::string program = bin_dir() + "/" + kProgram;
    t.plain = run({program}, {false, env, ""});
    t.dir = make_temp_dir(name);
    std::string out = t.dir + "/snap.json";
    env["VRAMTRACE_SUMMARY"] = "0";
    if (how == "inject") {
        env["CUDA_INJECTION64_PATH"] = preload_library();
        env["VRAMTRACE_OUTPUT"] = out;
        // Sanitizer builds (tests/sanitizers): their runtime must still come first.
        if (const char *first = getenv("VT_E2E_PRELOAD_FIRST"); first != nullptr && *first != 0)
            env["LD_PRELOAD"] = first;
        t.traced = run({program}, {false, env, t.dir});
    } else {
        t.traced = run({cli(), "run", "--backend=cupti", "--output", out, "--", program}, {false, env, t.dir});
    }
    t.has_snapshot = file_exists(out);
    if (t.has_snapshot) t.snapshot = load_json(out);
    return t;
}

// The VMM mapping the program left: one, at the address, size and handle it printed.
void check_mapping(const Traced &t) {
    std::vector<ExpectedMapping> expected = parse_mapping_expectations(t.traced.out);
    REQUIRE(expected.size() == 1);
    CHECK(tracked_mappings(live_allocations(t.snapshot)) == expected);
}

} // namespace

TEST_CASE("cupti: injection without LD_PRELOAD records the driver calls, exactly") {
    Traced t = run_traced("cupti_inject", "inject", {{"VRAMTRACE_CUPTI_LIBRARY", standin_cupti()}});
    INFO("stderr of the traced run:\n" << t.traced.err);
    REQUIRE(t.plain.exit_code == 0);
    CHECK(t.traced.exit_code == 0);
    CHECK(without_mappings(t.traced.out) == without_mappings(t.plain.out));
    CHECK(t.traced.err.empty());
    REQUIRE(t.has_snapshot);
    std::vector<std::string> expected = expected_rows(t.traced.out, true);
    REQUIRE(expected.size() == 6);
    CHECK(tracked_rows(t.snapshot) == expected);
    check_mapping(t);
}

TEST_CASE("cupti: vramtrace run --backend=cupti records through CUPTI, libcupti found beside libcudart") {
    // No VRAMTRACE_CUPTI_LIBRARY: the stand-in libcupti.so.13 lies beside the stand-in libcudart.
    Traced t = run_traced("cupti_cli", "cli", {{"VRAMTRACE_DEBUG", "1"}});
    INFO("stderr of the traced run:\n" << t.traced.err);
    REQUIRE(t.plain.exit_code == 0);
    CHECK(t.traced.exit_code == 0);
    CHECK(without_mappings(t.traced.out) == without_mappings(t.plain.out));
    CHECK(t.traced.err.find("CUPTI backend: subscribed to ") != std::string::npos);
    CHECK(t.traced.err.find("/standin/libcupti.so.13\n") != std::string::npos);
    CHECK(t.traced.err.find("warning") == std::string::npos);
    REQUIRE(t.has_snapshot);
    std::vector<std::string> expected = expected_rows(t.traced.out, true);
    REQUIRE(expected.size() == 6);
    CHECK(tracked_rows(t.snapshot) == expected);
    check_mapping(t);
}

TEST_CASE("cupti: held by another tool, vramtrace run --backend=cupti falls back on the preload hooks") {
    Traced t = run_traced("cupti_held_cli", "cli", {{"STANDIN_CUPTI_HELD_BY", kHolder}});
    REQUIRE(t.plain.exit_code == 0);
    CHECK(t.traced.exit_code == 0);
    CHECK(without_mappings(t.traced.out) == without_mappings(t.plain.out));
    // The warning, then run's verdict line.
    const std::string warning = std::string("vramtrace: warning: CUPTI is already held by ") + kHolder +
                                " (one subscriber per process); using the preload hooks instead\n";
    CHECK(t.traced.err.rfind(warning, 0) == 0);
    CHECK(t.traced.err.substr(warning.size()).rfind("vramtrace: wrote " + t.dir, 0) == 0);
    CHECK(std::count(t.traced.err.begin(), t.traced.err.end(), '\n') == 2);
    REQUIRE(t.has_snapshot);
    std::vector<std::string> expected = expected_rows(t.traced.out, false);
    REQUIRE(expected.size() == 6);
    CHECK(tracked_rows(t.snapshot) == expected);
    check_mapping(t);
}

TEST_CASE("cupti: held by another tool, injection only: one line, the program runs untracked") {
    Traced t = run_traced("cupti_held_inject", "inject",
                          {{"STANDIN_CUPTI_HELD_BY", kHolder}, {"VRAMTRACE_CUPTI_LIBRARY", standin_cupti()}});
    REQUIRE(t.plain.exit_code == 0);
    CHECK(t.traced.exit_code == 0);
    CHECK(without_mappings(t.traced.out) == without_mappings(t.plain.out));
    CHECK(t.traced.err == std::string("vramtrace: warning: CUPTI is already held by ") + kHolder +
                              " (one subscriber per process); this process is not tracked (`vramtrace run "
                              "--backend=cupti` also preloads the library, to fall back on its hooks)\n");
    CHECK_FALSE(t.has_snapshot);
    CHECK(list_dir(t.dir).empty());
}

namespace {

// "<bytes> <kind> dev <device> <function> <file>:<line>" of every live record, sorted (addresses
// differ between two processes, so they are left out).
std::vector<std::string> kinds_and_sites(const nlohmann::json &snapshot) {
    std::vector<std::string> rows;
    for (const LiveAllocation &l : live_allocations(snapshot))
        rows.push_back(std::to_string(l.bytes) + " " + l.kind + " dev " + std::to_string(l.device) + " " + l.function +
                       " " + l.file + ":" + std::to_string(l.line));
    std::sort(rows.begin(), rows.end());
    return rows;
}

// device -> current bytes, from the snapshot's devices.
std::map<int, uint64_t> current_bytes(const nlohmann::json &snapshot) {
    std::map<int, uint64_t> bytes;
    for (const auto &d : snapshot.at("devices"))
        bytes[d.at("device").get<int>()] = d.at("current_bytes").get<uint64_t>();
    return bytes;
}

} // namespace

TEST_CASE("cupti: every allocation family reaches CUPTI: the live set and kinds of the preload hooks") {
    // The stand-in driver makes a CUPTI callback for every entry point it serves that CUPTI
    // follows (hooks.def's driver rows): managed, pitched, pool, registered, IPC, array, VMM,
    // graph and captured stream-ordered memory all reach the CUPTI backend.
    for (const char *name : {"leaky_pipeline", "standin_prog_families", "standin_prog_coverage"}) {
        INFO(name);
        std::string program = bin_dir() + "/" + name;
        std::string dir = make_temp_dir(std::string("cupti_families_") + name);
        RunResult cupti = run({cli(), "run", "--backend=cupti", "--quiet", "--output", dir + "/cupti.json", "--",
                               program},
                              {false, {}, dir});
        RunResult preload =
            run({program}, {true, {{"VRAMTRACE_OUTPUT", dir + "/preload.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
        INFO("stderr under CUPTI:\n" << cupti.err);
        REQUIRE(cupti.exit_code == 0);
        REQUIRE(preload.exit_code == 0);
        CHECK(cupti.err.empty());
        REQUIRE(file_exists(dir + "/cupti.json"));
        REQUIRE(file_exists(dir + "/preload.json"));
        nlohmann::json traced = load_json(dir + "/cupti.json"), hooked = load_json(dir + "/preload.json");
        // What the program says it left live, under the driver calls' names.
        std::vector<ExpectedLive> expected = parse_expectations(cupti.out);
        std::vector<LiveAllocation> live = live_allocations(traced);
        INFO(describe(expected, live));
        CHECK(same_live_set(expected, live, /*static_cudart=*/true));
        CHECK(kinds_and_sites(traced) == kinds_and_sites(hooked));
        CHECK(current_bytes(traced) == current_bytes(hooked));
    }
}

TEST_CASE("cupti: leaky_pipeline's managed workspace is recorded under --backend=cupti with its exact size") {
    std::string dir = make_temp_dir("cupti_managed");
    RunResult r = run({cli(), "run", "--backend=cupti", "--no-summary", "--output", dir + "/snap.json", "--",
                       bin_dir() + "/leaky_pipeline"},
                      {false, {}, dir});
    REQUIRE(r.exit_code == 0);
    REQUIRE(file_exists(dir + "/snap.json"));
    std::vector<std::string> managed;
    for (const LiveAllocation &l : live_allocations(load_json(dir + "/snap.json")))
        if (l.kind == "managed")
            managed.push_back(std::to_string(l.bytes) + " " + l.api + " " + l.function + " " + l.file + ":" +
                              std::to_string(l.line));
    // 768 KiB + 64 B (examples/leaky_pipeline.cpp, kWorkspaceBytes); the 1 KiB + 8 B scratch is freed.
    CHECK(managed == std::vector<std::string>{"786496 cuMemAllocManaged allocate_workspace leaky_pipeline.cpp:130"});
}
