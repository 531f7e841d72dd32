// The triggers (docs/triggers.md) on the stand-in driver: an out-of-memory snapshot captured inside
// the failing call, the snapshot signal with the program's own uses of that signal, the threshold
// warning, the periodic snapshot of a process killed with SIGKILL, the Prometheus textfile.
#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "harness.h"

using namespace e2e;

namespace {

constexpr const char *kSmallDevice = "67108864"; // 64 MiB: the stand-in device of these tests

std::string program(const std::string &name) { return bin_dir() + "/" + name; }

// The call site "function file:line" of a snapshot's stack id (function without parameters).
std::string call_site_of(const nlohmann::json &snapshot, uint64_t stack_id) {
    for (const auto &s : snapshot.at("stacks")) {
        if (s.at("id").get<uint64_t>() != stack_id) continue;
        int site = s.at("call_site").get<int>();
        if (site < 0) return "<no call site>";
        const auto &f = snapshot.at("frames").at(s.at("frames").at(site).get<size_t>());
        std::string function = f.at("function").get<std::string>();
        function = function.substr(0, function.find('('));
        std::string file = f.at("file").get<std::string>();
        return function + " " + file.substr(file.rfind('/') + 1) + ":" + std::to_string(f.at("line").get<int>());
    }
    return "<no stack " + std::to_string(stack_id) + ">";
}

// The value after "prefix " on the first line starting with it.
std::string line_after(const std::string &text, const std::string &prefix) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix + " ", 0) == 0) return line.substr(prefix.size() + 1);
    return "<none>";
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

std::vector<std::string> names_with(const std::string &dir, const std::string &part) {
    std::vector<std::string> out;
    for (const std::string &name : list_dir(dir))
        if (name.find(part) != std::string::npos) out.push_back(name);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("triggers: an OOM is captured inside the failing call, the program sees exactly what it would have") {
    std::map<std::string, std::string> env = {{"STANDIN_CUDA_DEVICE_BYTES", kSmallDevice}};
    RunResult plain = run({program("standin_prog_trigger_oom"), "3"}, {false, env, ""});
    std::string dir = make_temp_dir("triggers-oom");
    env["VRAMTRACE_OUTPUT"] = dir + "/snap.json";
    RunResult traced = run({program("standin_prog_trigger_oom"), "3"}, {true, env, dir});
    INFO("stderr:\n" << traced.err);
    REQUIRE(plain.exit_code == 3);
    CHECK(traced.exit_code == 3);
    CHECK(traced.out == plain.out); // result codes, untouched pointers and errno of every failing call
    CHECK(count_of(plain.out, "result 2 pointer-untouched 1 errno 33\n") == 3);

    // Default rate limit: one OOM snapshot for three failures in a burst.
    CHECK(names_with(dir, "snap.") == std::vector<std::string>{"snap.json", "snap.oom-1.json"});
    nlohmann::json oom = load_json(dir + "/snap.oom-1.json");
    CHECK(oom.at("process").at("reason") == "oom");
    REQUIRE(oom.at("ooms").size() == 1);
    const auto &event = oom.at("ooms").at(0);
    CHECK(event.at("requested_bytes") == 50331648);
    CHECK(event.at("api") == "cudaMalloc");
    CHECK(event.at("device") == 0);
    CHECK(event.at("result") == 2);
    CHECK(event.at("device_total_bytes") == 67108864);
    CHECK(event.at("device_free_bytes") == 67108864 - 25165824);
    CHECK(event.at("tracked_bytes") == 25165824);
    CHECK(call_site_of(oom, event.at("stack").get<uint64_t>()) ==
          line_after(plain.out, "expect-oom").substr(line_after(plain.out, "expect-oom").find("request_too_much")));
    CHECK(line_after(plain.out, "expect-oom").rfind("50331648 cudaMalloc 0 ", 0) == 0);
    // The live set at the failure is what the program held.
    auto expected = parse_expectations(plain.out);
    REQUIRE(expected.size() == 2);
    auto live = live_allocations(oom);
    INFO(describe(expected, live));
    CHECK(same_live_set(expected, live, false));
    CHECK(oom.at("oom_count") == 1);

    // The exit snapshot lists every failure.
    nlohmann::json at_exit = load_json(dir + "/snap.json");
    CHECK(at_exit.at("oom_count") == 3);
    REQUIRE(at_exit.at("ooms").size() == 3);
    for (const auto &o : at_exit.at("ooms")) {
        CHECK(o.at("requested_bytes") == 50331648);
        CHECK(o.at("stack") == event.at("stack"));
    }
    CHECK(same_live_set(expected, live_allocations(at_exit), false));
    CHECK(count_of(traced.err, "vramtrace: out of memory: cudaMalloc of 48.00 MiB (50331648 B) on cuda:0 failed "
                               "(driver: 40.00 MiB (41943040 B) free of 64.00 MiB (67108864 B)); snapshot written to " +
                               dir + "/snap.oom-1.json\n") == 1);
}

TEST_CASE("triggers: OOM snapshots obey VRAMTRACE_OOM_SNAPSHOTS and VRAMTRACE_OOM_INTERVAL") {
    std::string dir = make_temp_dir("triggers-oom-limit");
    RunResult traced = run({program("standin_prog_trigger_oom"), "5"},
                           {true,
                            {{"STANDIN_CUDA_DEVICE_BYTES", kSmallDevice},
                             {"VRAMTRACE_OUTPUT", dir + "/snap.json"},
                             {"VRAMTRACE_OOM_SNAPSHOTS", "2"},
                             {"VRAMTRACE_OOM_INTERVAL", "0"},
                             {"VRAMTRACE_SUMMARY", "0"}},
                            dir});
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == 3);
    CHECK(names_with(dir, "snap.") == std::vector<std::string>{"snap.json", "snap.oom-1.json", "snap.oom-2.json"});
    CHECK(load_json(dir + "/snap.oom-2.json").at("oom_count") == 2);
    CHECK(load_json(dir + "/snap.json").at("oom_count") == 5);

    std::string off = make_temp_dir("triggers-oom-off");
    RunResult none = run({program("standin_prog_trigger_oom"), "2"},
                         {true,
                          {{"STANDIN_CUDA_DEVICE_BYTES", kSmallDevice},
                           {"VRAMTRACE_OUTPUT", off + "/snap.json"},
                           {"VRAMTRACE_OOM_SNAPSHOTS", "0"}},
                          off});
    CHECK(none.exit_code == 3);
    CHECK(names_with(off, "snap.") == std::vector<std::string>{"snap.json"});
    CHECK(load_json(off + "/snap.json").at("oom_count") == 2);
}

namespace {

struct SignalRun {
    RunResult result;
    std::string dir;
};

SignalRun run_signal_program(const std::string &mode, int signo, bool wait, std::map<std::string, std::string> env = {}) {
    SignalRun r;
    r.dir = make_temp_dir("triggers-signal-" + mode);
    env["VRAMTRACE_OUTPUT"] = r.dir + "/snap.json";
    env["VRAMTRACE_SUMMARY"] = "0";
    r.result = run({program("standin_prog_trigger_signal"), mode, std::to_string(signo),
                    wait ? r.dir + "/snap.signal-1.json" : "-"},
                   {true, env, r.dir});
    return r;
}

// The expect-live lines of the allocation made before the signal.
std::vector<ExpectedLive> before_signal(const std::string &out) {
    auto all = parse_expectations(out);
    std::vector<ExpectedLive> first;
    for (const auto &e : all)
        if (e.function == "hold_before") first.push_back(e);
    return first;
}

} // namespace

TEST_CASE("triggers: SIGUSR2 (default SIG_DFL) writes a snapshot and the program keeps running") {
    SignalRun r = run_signal_program("plain", SIGUSR2, true);
    INFO("stdout:\n" << r.result.out << "stderr:\n" << r.result.err);
    CHECK(r.result.exit_code == 0);
    CHECK(line_after(r.result.out, "wait-file") == "appeared");
    CHECK(line_after(r.result.out, "program-handler") == "0 0 0");
    REQUIRE(file_exists(r.dir + "/snap.signal-1.json"));
    nlohmann::json s = load_json(r.dir + "/snap.signal-1.json");
    CHECK(s.at("process").at("reason") == "signal");
    CHECK(same_live_set(before_signal(r.result.out), live_allocations(s), false));
    CHECK(same_live_set(parse_expectations(r.result.out), live_allocations(load_json(r.dir + "/snap.json")), false));
    CHECK(r.result.err == "vramtrace: snapshot on signal written to " + r.dir + "/snap.signal-1.json\n");
}

TEST_CASE("triggers: VRAMTRACE_SIGNAL by name, a program handler installed before is chained with its siginfo") {
    SignalRun r = run_signal_program("chain-before", SIGUSR1, true, {{"VRAMTRACE_SIGNAL", "SIGUSR1"}});
    INFO("stdout:\n" << r.result.out << "stderr:\n" << r.result.err);
    CHECK(r.result.exit_code == 0);
    CHECK(line_after(r.result.out, "wait-file") == "appeared");
    // Called once, with the signal number and the sender (this process) in its siginfo.
    CHECK(line_after(r.result.out, "program-handler") == "1 " + std::to_string(SIGUSR1) + " 1");
    REQUIRE(file_exists(r.dir + "/snap.signal-1.json"));
    CHECK(same_live_set(before_signal(r.result.out), live_allocations(load_json(r.dir + "/snap.signal-1.json")), false));
}

TEST_CASE("triggers: a handler the program installs afterwards replaces ours, and the exit report says so") {
    SignalRun r = run_signal_program("handler-after", SIGUSR2, false);
    INFO("stdout:\n" << r.result.out << "stderr:\n" << r.result.err);
    CHECK(r.result.exit_code == 0);
    CHECK(line_after(r.result.out, "program-handler") == "1 " + std::to_string(SIGUSR2) + " 0");
    // A signal our handler had seen would have been written at exit at the latest.
    CHECK(names_with(r.dir, "snap.") == std::vector<std::string>{"snap.json"});
    CHECK(r.result.err == "vramtrace: the program installed its own SIGUSR2 handler after vramtrace's: SIGUSR2 "
                          "requested no snapshot from then on (set VRAMTRACE_SIGNAL to a signal the program does "
                          "not use)\n");
}

TEST_CASE("triggers: an ignored signal stays ignored and requests nothing") {
    SignalRun r = run_signal_program("ignored", SIGUSR2, false, {{"VRAMTRACE_SIGNAL", "usr2"}});
    INFO("stdout:\n" << r.result.out << "stderr:\n" << r.result.err);
    CHECK(r.result.exit_code == 0);
    CHECK(line_after(r.result.out, "program-handler") == "0 0 0");
    CHECK(names_with(r.dir, "snap.") == std::vector<std::string>{"snap.json"});
    CHECK(r.result.err == "vramtrace: SIGUSR2 is ignored in this process (SIG_IGN); it is left ignored and "
                          "requests no snapshot (VRAMTRACE_SIGNAL)\n");
}

TEST_CASE("triggers: VRAMTRACE_SIGNAL=none leaves the default action (the signal ends the program)") {
    SignalRun r = run_signal_program("plain", SIGUSR2, false, {{"VRAMTRACE_SIGNAL", "none"}});
    CHECK(r.result.exit_code == 128 + SIGUSR2);
    CHECK(names_with(r.dir, "snap.").empty());
}

TEST_CASE("triggers: VRAMTRACE_WARN_BYTES warns at each upward crossing with the call sites of that moment") {
    const std::string site = "standin_prog_trigger_watch.cpp:";
    int line_a = 0; // hold_a's line; hold_b, hold_c are the next ones (one HOLD per line)
    auto warning = [&](const std::string &threshold, const std::string &live, const std::string &second,
                       const std::string &second_bytes, int second_offset) {
        std::string text = "vramtrace: warning: cuda:0 crossed VRAMTRACE_WARN_BYTES=" + threshold + " with " + live +
                           " live; top call sites:\n";
        text += "vramtrace:   6.00 MiB (6291456 B) in 1 allocation at hold_a(bool) at ";
        text += "@" + site + std::to_string(line_a) + " (standin_prog_trigger_watch)\n";
        text += "vramtrace:   " + second_bytes + " in 1 allocation at " + second + "(bool) at ";
        text += "@" + site + std::to_string(line_a + second_offset) + " (standin_prog_trigger_watch)\n";
        return text;
    };
    // Compared with the directory part of each source path replaced by "@".
    auto without_dirs = [](std::string err) {
        std::string out;
        std::istringstream lines(err);
        for (std::string line; std::getline(lines, line);) {
            // The directories before the file name, absolute or relative as the build recorded them.
            size_t file = line.find("/standin_prog_trigger_watch.cpp:");
            size_t at = file == std::string::npos ? file : line.rfind(" at ", file);
            if (at != std::string::npos) line = line.substr(0, at + 4) + "@" + line.substr(file + 1);
            out += line + "\n";
        }
        return out;
    };
    std::string dir = make_temp_dir("triggers-threshold");
    RunResult every = run({program("standin_prog_trigger_watch"), "threshold"},
                          {true,
                           {{"STANDIN_CUDA_DEVICE_BYTES", kSmallDevice},
                            {"VRAMTRACE_WARN_BYTES", "8MiB"},
                            {"VRAMTRACE_WARN_INTERVAL", "0"},
                            {"VRAMTRACE_SUMMARY", "0"},
                            {"VRAMTRACE_OUTPUT", dir + "/snap.json"}},
                           dir});
    CHECK(every.exit_code == 0);
    auto expected = parse_expectations(every.out);
    REQUIRE(expected.size() == 3);
    REQUIRE(expected[0].function == "hold_a");
    line_a = expected[0].line;
    CHECK(without_dirs(every.err) ==
          warning("8.00 MiB (8388608 B)", "9.00 MiB (9437184 B)", "hold_b", "3.00 MiB (3145728 B)", 1) +
              warning("8.00 MiB (8388608 B)", "10.00 MiB (10485760 B)", "hold_c", "4.00 MiB (4194304 B)", 2));

    // A fraction of the device (0.125 of 64 MiB = 8 MiB), default interval: the second crossing, a
    // moment later, gives no second warning.
    RunResult fraction = run({program("standin_prog_trigger_watch"), "threshold"},
                             {true,
                              {{"STANDIN_CUDA_DEVICE_BYTES", kSmallDevice},
                               {"VRAMTRACE_WARN_BYTES", "0.125"},
                               {"VRAMTRACE_SUMMARY", "0"},
                               {"VRAMTRACE_OUTPUT", dir + "/snap2.json"}},
                              dir});
    CHECK(fraction.exit_code == 0);
    CHECK(without_dirs(fraction.err) ==
          warning("8.00 MiB (8388608 B)", "9.00 MiB (9437184 B)", "hold_b", "3.00 MiB (3145728 B)", 1));
}

TEST_CASE("triggers: VRAMTRACE_WARN_BYTES names the sites of the crossing while the program goes on allocating") {
    // The hook only records the crossing; the reporter reads the live table later, when the
    // program has freed hold_b and allocated and freed 1 MiB many times: the warning still lists
    // what was live at 9 MiB (rebuilt from the event history, lib/triggers/crossing_live_set.h).
    std::string dir = make_temp_dir("triggers-threshold-churn");
    RunResult r = run({program("standin_prog_trigger_watch"), "threshold-churn"},
                      {true,
                       {{"STANDIN_CUDA_DEVICE_BYTES", kSmallDevice},
                        {"VRAMTRACE_WARN_BYTES", "8MiB"},
                        {"VRAMTRACE_SUMMARY", "0"},
                        {"VRAMTRACE_OUTPUT", dir + "/snap.json"}},
                       dir});
    CHECK(r.exit_code == 0);
    auto expected = parse_expectations(r.out);
    REQUIRE(expected.size() == 2);
    REQUIRE(expected[0].function == "hold_a");
    const int line_a = expected[0].line;
    const std::string site = "@standin_prog_trigger_watch.cpp:";
    const std::string want =
        "vramtrace: warning: cuda:0 crossed VRAMTRACE_WARN_BYTES=8.00 MiB (8388608 B) with 9.00 MiB (9437184 B) "
        "live; top call sites:\n"
        "vramtrace:   6.00 MiB (6291456 B) in 1 allocation at hold_a(bool) at " +
        site + std::to_string(line_a) +
        " (standin_prog_trigger_watch)\n"
        "vramtrace:   3.00 MiB (3145728 B) in 1 allocation at hold_b(bool) at " +
        site + std::to_string(line_a + 1) + " (standin_prog_trigger_watch)\n";
    // The directories before the file name, absolute or relative as the build recorded them: "@".
    std::string err;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
        size_t f = line.find("/standin_prog_trigger_watch.cpp:");
        size_t at = f == std::string::npos ? f : line.rfind(" at ", f);
        if (at != std::string::npos) line = line.substr(0, at + 4) + "@" + line.substr(f + 1);
        err += line + "\n";
    }
    CHECK(err == want);
}

TEST_CASE("triggers: VRAMTRACE_PERIOD leaves a recent snapshot when the process is killed with SIGKILL") {
    std::string dir = make_temp_dir("triggers-periodic");
    std::string out_file = dir + "/stdout.txt";
    std::vector<std::string> env_strings;
    for (char **e = environ; *e; ++e)
        if (strncmp(*e, "VRAMTRACE_", 10) != 0 && strncmp(*e, "LD_PRELOAD=", 11) != 0) env_strings.push_back(*e);
    for (std::string v : {"LD_PRELOAD=" + preload_list(), "VRAMTRACE_OUTPUT=" + dir + "/snap.json",
                          std::string("VRAMTRACE_PERIOD=0.2"), std::string("VRAMTRACE_SUMMARY=0")})
        env_strings.push_back(v);
    std::vector<char *> envp, argv;
    for (auto &s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe = program("standin_prog_trigger_watch"), mode = "periodic";
    argv = {exe.data(), mode.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data()) == 0);
    posix_spawn_file_actions_destroy(&actions);
    bool appeared = false;
    for (int i = 0; i < 1000 && !appeared; ++i) {
        appeared = file_exists(dir + "/snap.periodic.json");
        if (!appeared) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // Let it be replaced at least once more (it is renamed into place, never half written).
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(appeared);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    CHECK(names_with(dir, "snap") == std::vector<std::string>{"snap.periodic.json"}); // no exit report
    std::ifstream in(out_file);
    std::stringstream out;
    out << in.rdbuf();
    nlohmann::json s = load_json(dir + "/snap.periodic.json");
    CHECK(s.at("process").at("reason") == "periodic");
    auto expected = parse_expectations(out.str());
    REQUIRE(expected.size() == 1);
    CHECK(same_live_set(expected, live_allocations(s), false));
}

TEST_CASE("triggers: the Prometheus textfile holds the counters, mode 0644, and its last reading says process_up 0 at exit") {
    std::string dir = make_temp_dir("triggers-prometheus");
    RunResult r = run({program("standin_prog_trigger_watch"), "prometheus", dir + "/vt-%p.prom"},
                      {true,
                       {{"STANDIN_CUDA_DEVICE_BYTES", kSmallDevice},
                        {"VRAMTRACE_PROMETHEUS_TEXTFILE", dir + "/vt-%p.prom"},
                        {"VRAMTRACE_PROMETHEUS_PERIOD", "0.1"},
                        {"VRAMTRACE_OUTPUT", dir + "/snap-%r.json"},
                        {"VRAMTRACE_SUMMARY", "0"},
                        {"RANK", "3"}},
                       dir});
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    CHECK(r.exit_code == 0);
    REQUIRE(file_exists(dir + "/snap-3.json")); // %r
    nlohmann::json s = load_json(dir + "/snap-3.json");
    std::string pid = std::to_string(s.at("process").at("pid").get<int64_t>());
    std::string host = s.at("process").at("host").get<std::string>();
    std::string uuid[2];
    for (const auto &d : s.at("devices"))
        if (d.at("device").get<int>() >= 0) uuid[d.at("device").get<int>()] = d.value("uuid", "");
    const std::string proc = "pid=\"" + pid + "\",host=\"" + host + "\",rank=\"3\",command=\"standin_prog_tr\"";
    auto labels = [&](int device) {
        return "{device=\"" + std::to_string(device) + "\",uuid=\"" + uuid[device] + "\"," + proc + "}";
    };
    // What the program read while it ran (the whole format, byte for byte: test_prometheus_text.cpp).
    std::string running = r.out.substr(r.out.find("--- begin\n") + 10);
    running = running.substr(0, running.find("--- end\n"));
    for (const std::string &line :
         {"vramtrace_device_current_bytes" + labels(0) + " 6291456", "vramtrace_device_current_bytes" + labels(1) + " 1048576",
          "vramtrace_device_peak_bytes" + labels(0) + " 9437184", "vramtrace_device_peak_bytes" + labels(1) + " 1048576",
          "vramtrace_device_capacity_bytes" + labels(0) + " 67108864", "vramtrace_device_oom_events_total" + labels(0) + " 0",
          "vramtrace_oom_events_total{" + proc + "} 0", "vramtrace_process_up{" + proc + "} 1"})
        CHECK(count_of(running, "\n" + line + "\n") == 1);
    CHECK(count_of(running, "\nvramtrace_call_site_live_bytes{device=\"0\",uuid=\"" + uuid[0] + "\",function=\"hold_a(bool)\"") == 1);
    // (other) is 0 bytes in 0 allocations on both devices: the top 10 hold every site.
    CHECK(count_of(running, "function=\"(other)\",file_line=\"\",category=\"\"," + proc + "} 0\n") == 4);
    CHECK(running.rfind("# vramtrace textfile v1 host=", 0) == 0);
    CHECK(r.out.find("\nmode 644\n") != std::string::npos);
    // At exit: the last reading, now saying process_up 0 with an end time, 0644, no temporary left.
    CHECK(names_with(dir, ".prom") == std::vector<std::string>{"vt-" + pid + ".prom"});
    CHECK(names_with(dir, "tmp").empty());
    std::string last = read_file(dir + "/vt-" + pid + ".prom");
    CHECK(count_of(last, "\nvramtrace_process_up{" + proc + "} 0\n") == 1);
    CHECK(count_of(last, "\nvramtrace_process_end_time_seconds{" + proc + "} ") == 1);
    CHECK(count_of(last, "\nvramtrace_device_current_bytes" + labels(0) + " 6291456\n") == 1);
    CHECK(last.find(" ended_ms=0\n") == std::string::npos);
    struct stat st {};
    REQUIRE(stat((dir + "/vt-" + pid + ".prom").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
}
