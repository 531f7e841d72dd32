// Process life cycle under the preload library (docs/reliability.md): fork, exec and `vramtrace run`
// children, exit while other threads still allocate, exit from a signal handler, _exit.
#include <catch2/catch.hpp>

#include <sstream>
#include <unistd.h>

#include "harness.h"

using namespace e2e;

namespace {

// "child <pid> expect-live ..." lines, by pid.
std::map<int, std::vector<ExpectedLive>> child_expectations(const std::string &out) {
    std::map<int, std::vector<ExpectedLive>> by_pid;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string tag, rest;
        int pid = 0;
        if (!(words >> tag >> pid) || tag != "child") continue;
        std::getline(words, rest);
        auto e = parse_expectations(rest.substr(rest.find_first_not_of(' ')));
        if (!e.empty()) by_pid[pid].insert(by_pid[pid].end(), e.begin(), e.end());
    }
    return by_pid;
}

// The pid of the "child <pid> <suffix>" line.
int child_pid_saying(const std::string &out, const std::string &suffix) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string tag, rest;
        int pid = 0;
        if (!(words >> tag >> pid) || tag != "child") continue;
        std::getline(words, rest);
        if (rest == " " + suffix) return pid;
    }
    return 0;
}

std::string after_prefix(const std::string &out, const std::string &prefix) {
    size_t at = out.find(prefix);
    if (at == std::string::npos) return "<none>";
    size_t end = out.find('\n', at);
    return out.substr(at + prefix.size(), end - at - prefix.size());
}

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The snapshot files of a run directory ("snap-<pid>.json"), by pid.
std::map<int, nlohmann::json> snapshots_by_pid(const std::string &dir) {
    std::map<int, nlohmann::json> out;
    for (const std::string &name : list_dir(dir))
        if (name.rfind("snap-", 0) == 0 && name.size() > 10 && name.substr(name.size() - 5) == ".json")
            out[std::stoi(name.substr(5, name.size() - 10))] = load_json(dir + "/" + name);
    return out;
}

const nlohmann::json &device_entry(const nlohmann::json &snapshot, int device) {
    for (const auto &d : snapshot.at("devices"))
        if (d.at("device").get<int>() == device) return d;
    static const nlohmann::json none = nlohmann::json::object();
    return none;
}

std::string program(const std::string &name) { return bin_dir() + "/" + name; }

// Allocations of the churning threads in lifecycle_program (12345 bytes at churn_forever) are
// allowed in flight at exit, at most `max_churn` of them; everything else must be exactly `expected`.
void check_live_with_churn(const nlohmann::json &snapshot, const std::vector<ExpectedLive> &expected,
                           size_t max_churn) {
    std::vector<LiveAllocation> live = live_allocations(snapshot), rest;
    size_t churn = 0;
    for (const LiveAllocation &l : live) {
        if (l.bytes == 12345) {
            ++churn;
            CHECK(l.function == "churn_forever");
        } else {
            rest.push_back(l);
        }
    }
    INFO(describe(expected, live));
    CHECK(churn <= max_churn);
    CHECK(same_live_set(expected, rest, false));
}

} // namespace

TEST_CASE("fork: a child that uses CUDA reports only its own allocations in its own file, "
          "children that exit without CUDA or only exec write and print nothing") {
    std::string dir = make_temp_dir("fork");
    RunResult plain = run({program("vt_lifecycle_program"), "fork"}, {false, {}, ""});
    RunResult traced = run({program("vt_lifecycle_program"), "fork"},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}}, dir});
    INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(traced.exit_code == 0);
    CHECK(after_prefix(traced.out, "children exit statuses: ") == "0 0 0");

    auto children = child_expectations(traced.out);
    REQUIRE(children.size() == 1);
    const int cuda_child = children.begin()->first;
    const int quiet_child = child_pid_saying(traced.out, "exits without CUDA");
    REQUIRE(quiet_child > 0);

    // Exactly two files: the parent's and the CUDA child's; no temporary file left anywhere.
    auto snaps = snapshots_by_pid(dir);
    REQUIRE(list_dir(dir).size() == 2);
    REQUIRE(snaps.size() == 2);
    REQUIRE(snaps.count(cuda_child) == 1);
    CHECK(snaps.count(quiet_child) == 0);
    int parent = 0;
    for (auto &[pid, s] : snaps)
        if (pid != cuda_child) parent = pid;
    CHECK(snaps[parent].at("process").at("pid").get<int>() == parent);
    CHECK(snaps[cuda_child].at("process").at("pid").get<int>() == cuda_child);
    CHECK(snaps[cuda_child].at("process").at("ppid").get<int>() == parent);

    // The parent: its one leak. The child: its own leak only, not the parent's buffer, and the
    // parent's buffer it freed is not counted as one of its frees.
    auto parent_expected = parse_expectations(plain.out);
    auto parent_live = live_allocations(snaps[parent]);
    INFO(describe(parent_expected, parent_live));
    CHECK(same_live_set(parent_expected, parent_live, false));
    auto child_live = live_allocations(snaps[cuda_child]);
    INFO(describe(children[cuda_child], child_live));
    CHECK(same_live_set(children[cuda_child], child_live, false));
    const auto &child_dev0 = device_entry(snaps[cuda_child], 0);
    CHECK(child_dev0.value("allocation_count", 0ull) == 2);
    CHECK(child_dev0.value("free_count", 0ull) == 1);
    CHECK(child_dev0.value("current_bytes", 0ull) == (3ull << 20));
    const auto &parent_dev0 = device_entry(snaps[parent], 0);
    CHECK(parent_dev0.value("allocation_count", 0ull) == 1);
    CHECK(parent_dev0.value("free_count", 0ull) == 0);

    // Two summaries (parent, CUDA child), nothing from the others.
    CHECK(count_of(traced.err, "vramtrace: snapshot written to ") == 2);
    CHECK(count_of(traced.err, "warning") == 0);
}

TEST_CASE("fork while other threads allocate, free and dump: every child starts from a clean table") {
    std::string dir = make_temp_dir("fork-stress");
    const int kChildren = 24;
    RunResult traced = run({program("vt_fork_stress_program"), dir + "/api-dump.json", std::to_string(kChildren)},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
    REQUIRE(traced.exit_code == 0);
    CHECK(after_prefix(traced.out, "children failed: ") == "0");
    CHECK(traced.err.empty());

    auto children = child_expectations(traced.out);
    REQUIRE(children.size() == static_cast<size_t>(kChildren));
    auto snaps = snapshots_by_pid(dir);
    // One file per child, the parent's, and the parent's last API dump; no temporary files.
    CHECK(list_dir(dir).size() == static_cast<size_t>(kChildren) + 2);
    CHECK(file_exists(dir + "/api-dump.json"));
    REQUIRE(snaps.size() == static_cast<size_t>(kChildren) + 1);
    // The device is whatever the tracer could learn from the fixture driver: compare without it.
    auto same_sites = [](std::vector<ExpectedLive> expected, const std::vector<LiveAllocation> &live) {
        if (expected.size() != live.size()) return false;
        for (size_t i = 0; i < expected.size(); ++i) expected[i].device = live[i].device;
        return same_live_set(expected, live, false);
    };
    for (auto &[pid, expected] : children) {
        INFO("child " << pid);
        REQUIRE(snaps.count(pid) == 1);
        auto live = live_allocations(snaps[pid]);
        INFO(describe(expected, live));
        CHECK(same_sites(expected, live));
        const auto &devices = snaps[pid].at("devices");
        REQUIRE(devices.size() == 1);
        CHECK(devices[0].at("allocation_count").get<uint64_t>() == 201);
        CHECK(devices[0].at("free_count").get<uint64_t>() == 200);
        CHECK(snaps[pid].at("dropped").at("allocations").get<uint64_t>() == 0);
    }
    int parent = 0;
    for (auto &[pid, s] : snaps)
        if (!children.count(pid)) parent = pid;
    REQUIRE(parent != 0);
    auto expected = parse_expectations(traced.out);
    auto live = live_allocations(snaps[parent]);
    INFO(describe(expected, live));
    CHECK(same_sites(expected, live));
}

TEST_CASE("exec children are followed by default, each with its own file") {
    std::string dir = make_temp_dir("follow");
    RunResult traced = run({program("vt_lifecycle_program"), "spawn"},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}}, dir});
    INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
    REQUIRE(traced.exit_code == 0);
    auto children = child_expectations(traced.out);
    REQUIRE(children.size() == 1);
    const int child = children.begin()->first;
    CHECK(after_prefix(traced.out, "ld_preload=") == preload_library());
    auto snaps = snapshots_by_pid(dir);
    REQUIRE(snaps.size() == 2);
    REQUIRE(snaps.count(child) == 1);
    CHECK(same_live_set(children[child], live_allocations(snaps[child]), false));
    for (auto &[pid, s] : snaps)
        if (pid != child) CHECK(same_live_set(parse_expectations(traced.out), live_allocations(s), false));
}

TEST_CASE("VRAMTRACE_FOLLOW=0 traces the first process only and keeps other LD_PRELOAD entries") {
    const std::string other = "/lib/x86_64-linux-gnu/libm.so.6";
    for (bool with_other : {false, true}) {
        INFO("other LD_PRELOAD entry: " << with_other);
        std::string dir = make_temp_dir("nofollow");
        std::map<std::string, std::string> env = {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"},
                                                  {"VRAMTRACE_FOLLOW", "0"}};
        if (with_other) env["LD_PRELOAD"] = preload_library() + ":" + other;
        RunResult traced = run({program("vt_lifecycle_program"), "spawn"}, {true, env, dir});
        INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
        REQUIRE(traced.exit_code == 0);
        CHECK(after_prefix(traced.out, "ld_preload=") == (with_other ? other : "(unset)"));
        auto snaps = snapshots_by_pid(dir);
        REQUIRE(snaps.size() == 1);
        CHECK(same_live_set(parse_expectations(traced.out), live_allocations(snaps.begin()->second), false));
        CHECK(count_of(traced.err, "vramtrace: snapshot written to ") == 1);
    }
}

TEST_CASE("VRAMTRACE_FOLLOW=0: forked children are not traced either") {
    std::string dir = make_temp_dir("nofollow-fork");
    RunResult traced = run({program("vt_lifecycle_program"), "fork"},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}, {"VRAMTRACE_FOLLOW", "0"}}, dir});
    INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
    REQUIRE(traced.exit_code == 0);
    CHECK(list_dir(dir).size() == 1);
    CHECK(count_of(traced.err, "vramtrace: snapshot written to ") == 1);
}

TEST_CASE("vramtrace run follows children by default, --no-follow traces the program only") {
    for (bool follow : {true, false}) {
        INFO("follow: " << follow);
        std::string dir = make_temp_dir("run-follow");
        std::vector<std::string> argv = {cli(), "run", "-o", dir + "/snap-%p.json"};
        if (!follow) argv.push_back("--no-follow");
        argv.insert(argv.end(), {"--", program("vt_lifecycle_program"), "spawn"});
        RunResult r = run(argv, {false, {}, dir});
        INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(snapshots_by_pid(dir).size() == (follow ? 2u : 1u));
        CHECK(list_dir(dir).size() == (follow ? 2u : 1u));
        CHECK(after_prefix(r.out, "ld_preload=") == (follow ? preload_library() : std::string("(unset)")));
    }
}

TEST_CASE("exit() while other threads still allocate and free: one snapshot, no crash") {
    for (int round = 0; round < 5; ++round) {
        INFO("round " << round);
        std::string dir = make_temp_dir("exit-threads");
        RunResult traced = run({program("vt_lifecycle_program"), "exit-threads"},
                               {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}}, dir});
        INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
        REQUIRE(traced.exit_code == 0);
        auto snaps = snapshots_by_pid(dir);
        REQUIRE(snaps.size() == 1);
        CHECK(list_dir(dir).size() == 1);
        CHECK(count_of(traced.err, "vramtrace: snapshot written to ") == 1);
        check_live_with_churn(snaps.begin()->second, parse_expectations(traced.out), 4);
    }
}

TEST_CASE("exit() from a signal handler: the exit status is kept and the snapshot written once") {
    std::string dir = make_temp_dir("exit-signal");
    RunResult plain = run({program("vt_lifecycle_program"), "exit-signal"}, {false, {}, ""});
    RunResult traced = run({program("vt_lifecycle_program"), "exit-signal"},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}}, dir});
    INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
    CHECK(plain.exit_code == 7);
    REQUIRE(traced.exit_code == 7);
    auto snaps = snapshots_by_pid(dir);
    REQUIRE(snaps.size() == 1);
    CHECK(count_of(traced.err, "vramtrace: snapshot written to ") == 1);
    check_live_with_churn(snaps.begin()->second, parse_expectations(traced.out), 1);
}

TEST_CASE("_exit() writes no snapshot and prints nothing (documented)") {
    std::string dir = make_temp_dir("underscore-exit");
    RunResult traced = run({program("vt_lifecycle_program"), "underscore-exit"},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}}, dir});
    CHECK(traced.exit_code == 3);
    CHECK(traced.err.empty());
    CHECK(list_dir(dir).empty());
}
