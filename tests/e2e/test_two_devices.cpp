// Two devices on the stand-in driver (its default): every record on the device that holds it,
// whatever the calling thread's current device, and no context made by vramtrace on a device the
// program never uses. (The same checks on two real GPUs: tests/gpu/run_two_gpus.sh.)
#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <sstream>

#include "harness.h"

using namespace e2e;

namespace {

struct Two {
    RunResult plain, traced;
    nlohmann::json snapshot;
};

Two run_two(const std::string &scenario, std::map<std::string, std::string> env = {}) {
    Two t;
    std::vector<std::string> argv = {bin_dir() + "/standin_prog_two_devices", scenario};
    t.plain = run(argv, {false, env, ""});
    std::string dir = make_temp_dir("two-devices-" + scenario);
    env["VRAMTRACE_OUTPUT"] = dir + "/snap.json";
    t.traced = run(argv, {true, env, dir});
    if (file_exists(dir + "/snap.json")) t.snapshot = load_json(dir + "/snap.json");
    return t;
}

// The stand-in's trace lines of calls that make or change a context, with their arguments (the
// handles' addresses, which differ from run to run, left out).
std::multiset<std::string> context_calls(const std::string &err) {
    std::multiset<std::string> calls;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);)
        for (const char *name : {"cuDevicePrimaryCtxRetain(", "cuCtxCreate", "cuCtxSetCurrent(", "cuCtxPushCurrent"})
            if (line.rfind("[standin-cuda] ", 0) == 0 && line.find(name) != std::string::npos)
                calls.insert(std::regex_replace(line.substr(0, line.find(" -> ")), std::regex("0x[0-9a-f]+"), "0x"));
    return calls;
}

} // namespace

TEST_CASE("two devices: frees from another device or no context, streams and managed memory of device 1") {
    Two t = run_two("cross");
    INFO("stderr of the traced run:\n" << t.traced.err);
    REQUIRE(t.plain.exit_code == 0);
    REQUIRE(t.traced.exit_code == 0);
    REQUIRE(t.traced.out == t.plain.out);
    CHECK(same_live_set(parse_expectations(t.traced.out), live_allocations(t.snapshot), false));
    std::map<int, nlohmann::json> rows;
    for (const auto &d : t.snapshot.at("devices")) rows[d.at("device").get<int>()] = d;
    REQUIRE(rows.count(0) == 1);
    REQUIRE(rows.count(1) == 1);
    // Device 1: 100 KiB and 200 KiB allocated and freed (from device 0 and from a thread with no
    // context), 300 KiB and 400 KiB live.
    CHECK(rows[1].at("current_bytes") == 700u * 1024);
    CHECK(rows[1].at("allocation_count") == 4);
    CHECK(rows[1].at("free_count") == 2);
    CHECK(rows[1].at("total_freed_bytes") == 300u * 1024);
    CHECK(rows[0].at("current_bytes") == 500u * 1024);
    CHECK(rows[0].at("free_count") == 0);
    CHECK(rows[0].at("uuid") != rows[1].at("uuid"));
}

TEST_CASE("two devices: a stream handle reused for another device's stream gives the new stream's device") {
    Two t = run_two("reuse", {{"STANDIN_CUDA_TRACE", "1"}});
    INFO("stderr of the traced run:\n" << t.traced.err.substr(0, 6000));
    REQUIRE(t.plain.exit_code == 0);
    REQUIRE(t.traced.exit_code == 0);
    REQUIRE(t.traced.out.find("same-handle 1") != std::string::npos); // else the reuse was not tested
    CHECK(same_live_set(parse_expectations(t.traced.out), live_allocations(t.snapshot), false));
    std::map<int, nlohmann::json> rows;
    for (const auto &d : t.snapshot.at("devices")) rows[d.at("device").get<int>()] = d;
    REQUIRE(rows.count(1) == 1);
    CHECK(rows[1].at("current_bytes") == 2u << 20);
    CHECK(rows[1].at("allocation_count") == 1);
    REQUIRE(rows.count(0) == 1);
    CHECK(rows[0].at("current_bytes") == 0);
    CHECK(rows[0].at("allocation_count") == 3);
}

TEST_CASE("two devices: a program that only uses device 1 gets no context on device 0 from vramtrace") {
    Two t = run_two("only1", {{"STANDIN_CUDA_TRACE", "1"}});
    INFO("stderr of the traced run:\n" << t.traced.err);
    REQUIRE(t.plain.exit_code == 0);
    REQUIRE(t.traced.exit_code == 0);
    CHECK(same_live_set(parse_expectations(t.traced.out), live_allocations(t.snapshot), false));
    std::multiset<std::string> plain = context_calls(t.plain.err), traced = context_calls(t.traced.err);
    CHECK(!plain.empty());
    CHECK(traced == plain);
    for (const std::string &call : traced) CHECK(call.find("dev=0") == std::string::npos);
    REQUIRE(t.snapshot.at("devices").size() == 1);
    CHECK(t.snapshot.at("devices").at(0).at("device") == 1);
}

TEST_CASE("two devices: an IPC import in another process is listed under the exporter's device and UUID, never counted") {
    // The exporter allocates 3 MiB on device 1 and starts the importer, which opens the handle with
    // device 0 current and allocates nothing else: its only record of device 1 is the import.
    std::vector<std::string> argv = {bin_dir() + "/standin_prog_two_devices", "ipc"};
    RunResult plain = run(argv, {false, {}, ""});
    std::string dir = make_temp_dir("two-devices-ipc");
    RunResult traced = run(argv, {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO("stderr of the traced run:\n" << traced.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(traced.exit_code == 0);
    REQUIRE(traced.out == plain.out);
    nlohmann::json exporter, importer;
    std::vector<std::string> snapshots;
    for (const std::string &f : list_dir(dir))
        if (f.rfind("snap-", 0) == 0) snapshots.push_back(dir + "/" + f);
    REQUIRE(snapshots.size() == 2);
    for (const std::string &path : snapshots) {
        nlohmann::json j = load_json(path);
        bool imports = false;
        for (const auto &a : j.at("allocations")) imports |= a.at("api") == "cudaIpcOpenMemHandle";
        (imports ? importer : exporter) = j;
    }
    REQUIRE(!exporter.is_null());
    REQUIRE(!importer.is_null());
    // The exporter: one counted allocation of 3 MiB on device 1.
    REQUIRE(exporter.at("devices").size() == 1);
    const auto &exported_on = exporter.at("devices").at(0);
    CHECK(exported_on.at("device") == 1);
    CHECK(exported_on.at("current_bytes") == 3u << 20);
    // The importer: the import is on device 1, its row names device 1's UUID and counts nothing.
    REQUIRE(importer.at("allocations").size() == 1);
    const auto &import = importer.at("allocations").at(0);
    CHECK(import.at("device") == 1);
    CHECK(import.at("kind") == "ipc_imported");
    CHECK(import.at("size") == 3u << 20);
    std::map<int, nlohmann::json> rows;
    for (const auto &d : importer.at("devices")) rows[d.at("device").get<int>()] = d;
    REQUIRE(rows.count(1) == 1);
    CHECK(rows[1].at("uuid") == exported_on.at("uuid"));
    CHECK(rows[1].at("current_bytes") == 0);
    CHECK(rows[1].at("peak_bytes") == 0);
    CHECK(rows[1].at("allocation_count") == 0);
    CHECK(rows.count(0) == 0); // device 0 was made current but holds nothing
    std::string importer_path;
    for (const std::string &path : snapshots)
        if (load_json(path) == importer) importer_path = path;
    RunResult summary = run({bin_dir() + "/vramtrace", "summary", importer_path}, {false, {}, dir});
    CHECK(summary.out.find("vramtrace: IPC imports still open on cuda:1 (" + exported_on.at("uuid").get<std::string>() +
                           "): 1 allocation, 3.00 MiB (3145728 B) of another process's memory, not counted here\n") !=
          std::string::npos);
    // Merged, device 1's UUID holds the exporter's 3 MiB once.
    RunResult merged = run({bin_dir() + "/vramtrace", "merge", "--output", dir + "/merged.json", snapshots[0], snapshots[1]},
                           {false, {}, dir});
    INFO("merge: " << merged.err);
    REQUIRE(merged.exit_code == 0);
    nlohmann::json m = load_json(dir + "/merged.json");
    uint64_t on_device1 = 0;
    for (const auto &d : m.at("devices"))
        if (d.contains("uuid") && d.at("uuid") == exported_on.at("uuid")) on_device1 += d.at("current_bytes").get<uint64_t>();
    CHECK(on_device1 == 3u << 20);
}

TEST_CASE("two devices: ranks with their own CUDA_VISIBLE_DEVICES each see ordinal 0, snapshots and merge tell the GPUs apart by UUID") {
    // Rank 0 is given physical device 1, rank 1 physical device 0 (as a launcher does, one GPU per
    // rank): both allocate on "cuda:0". VRAMTRACE_OUTPUT's %r names each rank's file.
    std::string dir = make_temp_dir("two-devices-visible");
    std::vector<std::string> argv = {bin_dir() + "/leaky_pipeline"};
    std::map<std::string, std::string> uuid_of_rank;
    uint64_t live_bytes = 0;
    for (const auto &[rank, visible] : std::vector<std::pair<std::string, std::string>>{{"0", "1"}, {"1", "0"}}) {
        RunResult r = run(argv, {true,
                                 {{"CUDA_VISIBLE_DEVICES", visible},
                                  {"RANK", rank},
                                  {"VRAMTRACE_OUTPUT", dir + "/rank-%r.json"},
                                  {"VRAMTRACE_SUMMARY", "0"}},
                                 dir});
        INFO("rank " << rank << ": " << r.err);
        REQUIRE(r.exit_code == 0);
        uint64_t expected = 0; // what the program says it leaves on its device 0
        for (const ExpectedLive &e : parse_expectations(r.out))
            if (e.device == 0) expected += e.bytes;
        REQUIRE(expected != 0);
        nlohmann::json s = load_json(dir + "/rank-" + rank + ".json");
        nlohmann::json d;
        for (const auto &row : s.at("devices"))
            if (row.at("device") == 0) d = row;
        REQUIRE(!d.is_null());
        uuid_of_rank[rank] = d.at("uuid").get<std::string>();
        CHECK(d.at("current_bytes") == expected);
        live_bytes = expected;
    }
    // The stand-in's UUIDs end in the physical index.
    CHECK(uuid_of_rank["0"].substr(uuid_of_rank["0"].size() - 2) == "01");
    CHECK(uuid_of_rank["1"].substr(uuid_of_rank["1"].size() - 2) == "00");
    RunResult merged = run({bin_dir() + "/vramtrace", "merge", "--output", dir + "/merged.json", dir + "/rank-0.json",
                            dir + "/rank-1.json"},
                           {false, {}, dir});
    INFO("merge: " << merged.err);
    REQUIRE(merged.exit_code == 0);
    // Each input's GPU under its own UUID; the merged "devices" rows sum by ordinal (a merged
    // snapshot reads as one), so they name no UUID where the inputs' GPUs differ.
    nlohmann::json m = load_json(dir + "/merged.json");
    std::map<std::string, uint64_t> by_uuid;
    for (const auto &d : m.at("merged_devices"))
        if (d.at("device") == 0) by_uuid[d.at("uuid").get<std::string>()] += d.at("current_bytes").get<uint64_t>();
    CHECK(by_uuid == std::map<std::string, uint64_t>{{uuid_of_rank["0"], live_bytes}, {uuid_of_rank["1"], live_bytes}});
    for (const auto &d : m.at("devices"))
        if (d.at("device") == 0) CHECK(!d.contains("uuid"));
    // The text report's device table: one row per UUID, one process each.
    RunResult text = run({bin_dir() + "/vramtrace", "merge", dir + "/rank-0.json", dir + "/rank-1.json"}, {false, {}, dir});
    REQUIRE(text.exit_code == 0);
    std::string report = text.out + text.err;
    for (const std::string &uuid : {uuid_of_rank["0"], uuid_of_rank["1"]})
        CHECK(std::regex_search(report, std::regex(uuid + " \\([^)]* cuda:0\\) +1 ")));
}
