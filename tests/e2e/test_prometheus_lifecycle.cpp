// The Prometheus textfile's lifecycle on the stand-in driver (docs/monitoring.md): a fatal signal
// leaves the last reading with process_up 0 and an end time, written by the crash handler; the
// call-site series follow VRAMTRACE_PROMETHEUS_SITES. (Exit: test_triggers.cpp; SIGKILL and the
// sweep, with the servers: tests/e2e/prometheus/prometheus_e2e.py.)
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

using namespace e2e;

namespace {

std::string read_text(const std::string &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The value of the one sample line that starts with `prefix` ("name{labels}"), "" when none or many.
std::string value_of(const std::string &text, const std::string &prefix) {
    std::string found;
    int n = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix, 0) == 0) found = line.substr(line.rfind(' ') + 1), ++n;
    return n == 1 ? found : "";
}

} // namespace

TEST_CASE("prometheus lifecycle: a crash writes the last reading with process_up 0 from the signal handler") {
    std::string dir = make_temp_dir("prometheus-crash");
    const std::string textfile = dir + "/vt.prom";
    RunResult r = run({bin_dir() + "/standin_prog_crash", "segv"},
                      {true,
                       {{"VRAMTRACE_PROMETHEUS_TEXTFILE", textfile},
                        {"VRAMTRACE_PROMETHEUS_PERIOD", "0.05"},
                        // Dies once a reading shows the last allocation (the pinned buffer).
                        {"CRASH_AFTER_FILE", textfile},
                        {"CRASH_AFTER_TEXT", "vramtrace_device_current_bytes{device=\"host\""},
                        {"VRAMTRACE_OUTPUT", dir + "/snap.json"},
                        {"VRAMTRACE_SUMMARY", "0"}},
                       dir});
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    CHECK(r.exit_code == 128 + 11);
    REQUIRE(file_exists(textfile));
    std::string text = read_text(textfile);
    INFO("textfile:\n" << text);
    CHECK(value_of(text, "vramtrace_process_up{") == "0");
    std::string end = value_of(text, "vramtrace_process_end_time_seconds{");
    std::string updated = value_of(text, "vramtrace_process_last_update_time_seconds{");
    REQUIRE(!end.empty());
    REQUIRE(!updated.empty());
    CHECK(std::stod(end) >= std::stod(updated));
    CHECK(std::stod(end) - std::stod(updated) < 10.0);
    // The header says the same end, in milliseconds.
    std::string ms = end.substr(0, end.find('.')) + end.substr(end.find('.') + 1);
    CHECK(text.find(" ended_ms=" + ms + "\n") != std::string::npos);
    // The last reading before the crash: 1 MiB + 3 MiB on device 0, 64 KiB pinned.
    CHECK(value_of(text, "vramtrace_device_current_bytes{device=\"0\"") == "4194304");
    CHECK(value_of(text, "vramtrace_device_current_bytes{device=\"host\"") == "65536");
    CHECK(text.find("function=\"(anonymous namespace)::allocate_weights()\"") != std::string::npos);
    // Nothing else of the textfile's is left (the crash snapshot sits beside it).
    for (const std::string &name : list_dir(dir)) CHECK((name == "vt.prom" || name == "snap.crash.json"));
    struct stat st {};
    REQUIRE(stat(textfile.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
}

TEST_CASE("prometheus lifecycle: VRAMTRACE_PROMETHEUS_SITES=0 writes no call-site series, a bad value warns") {
    std::string dir = make_temp_dir("prometheus-sites");
    RunResult r = run({bin_dir() + "/standin_prog_trigger_watch", "prometheus", dir + "/vt-%p.prom"},
                      {true,
                       {{"STANDIN_CUDA_DEVICE_BYTES", "67108864"},
                        {"VRAMTRACE_PROMETHEUS_TEXTFILE", dir + "/vt-%p.prom"},
                        {"VRAMTRACE_PROMETHEUS_PERIOD", "0.1"},
                        {"VRAMTRACE_PROMETHEUS_SITES", "0"},
                        {"VRAMTRACE_OUTPUT", dir + "/snap.json"},
                        {"VRAMTRACE_SUMMARY", "0"}},
                       dir});
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("vramtrace_device_current_bytes{device=\"1\"") != std::string::npos);
    CHECK(r.out.find("vramtrace_call_site") == std::string::npos);
    RunResult bad = run({bin_dir() + "/standin_prog_trigger_watch", "prometheus", dir + "/b-%p.prom"},
                        {true,
                         {{"STANDIN_CUDA_DEVICE_BYTES", "67108864"},
                          {"VRAMTRACE_PROMETHEUS_TEXTFILE", dir + "/b-%p.prom"},
                          {"VRAMTRACE_PROMETHEUS_PERIOD", "0.1"},
                          {"VRAMTRACE_PROMETHEUS_SITES", "ten"},
                          {"VRAMTRACE_PROMETHEUS_KEEP", "-1"},
                          {"VRAMTRACE_OUTPUT", dir + "/snap2.json"},
                          {"VRAMTRACE_SUMMARY", "0"}},
                         dir});
    CHECK(bad.exit_code == 0);
    CHECK(bad.err.find("vramtrace: warning: VRAMTRACE_PROMETHEUS_SITES=\"ten\" is not a whole number from 0 to 1000; using the default 10") !=
          std::string::npos);
    CHECK(bad.err.find("vramtrace: warning: VRAMTRACE_PROMETHEUS_KEEP=\"-1\" is not a number of seconds from 0 to 86400; using the default 900") !=
          std::string::npos);
    CHECK(bad.out.find("\nvramtrace_call_site_live_bytes{device=\"1\"") != std::string::npos);
}

TEST_CASE("prometheus lifecycle: 2,000 names planted by another user cost the exit no time, whatever the pattern") {
    if (geteuid() != 0) {
        WARN("needs root to plant files as nobody; skipped");
        return;
    }
    // As root, the README's test set-up has both: a missing one fails rather than skips.
    REQUIRE(access("/usr/bin/setpriv", X_OK) == 0);
    REQUIRE(access("/usr/bin/perl", X_OK) == 0);
    // A shared textfile directory (sticky, as the collector's often is), staged where nobody can
    // reach it; nobody plants names that a backtracking matcher takes exponential time to refuse.
    OtherUserStage stage(std::vector<std::string>{});
    REQUIRE(stage.error() == "");
    const std::string dir = stage.path() + "/textfiles";
    REQUIRE(mkdir(dir.c_str(), 01777) == 0);
    REQUIRE(chmod(dir.c_str(), 01777) == 0);
    RunResult planted = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/perl",
                             "-e",
                             "for my $i (1..2000) { my $n = \"$ARGV[0]/vt-\" . ('-' x 240) . $i;"
                             " open(my $f, '>', $n) or die \"$n: $!\"; close $f }",
                             dir},
                            {false, {}, "/"});
    REQUIRE(planted.exit_code == 0);
    REQUIRE(list_dir(dir).size() == 2000);
    char host[256] = {};
    REQUIRE(gethostname(host, sizeof host - 1) == 0);
    for (const char *pattern :
         {"vt-%p.prom", "vt-%h-%p.prom", "vt-%h-%r-%p.prom", "vt-%h-%r-%p-%p.prom", "vt-%%-%r-%h-%p-%p-%p.prom"}) {
        INFO("pattern " << pattern);
        // The program waits for its first reading (the one the sweep follows), then exits.
        std::string file = dir + "/" + pattern;
        for (auto [from, to] : {std::pair<std::string, std::string>{"%h", host}, {"%r", "3"}, {"%%", "%"}})
            for (size_t at = file.find(from); at != std::string::npos; at = file.find(from, at + to.size()))
                file.replace(at, 2, to);
        RunResult r = run({bin_dir() + "/standin_prog_trigger_watch", "prometheus", file},
                          {true,
                           {{"VRAMTRACE_PROMETHEUS_TEXTFILE", dir + "/" + pattern},
                            {"VRAMTRACE_PROMETHEUS_PERIOD", "0.05"}, // a sweep after every reading
                            {"VRAMTRACE_OUTPUT", stage.path() + "/snap.json"},
                            {"VRAMTRACE_SUMMARY", "0"},
                            {"RANK", "3"}},
                           stage.path()});
        // From main's return to the parent seeing the exit: the exit report, the last reading, and
        // whatever the exit had to wait for (steady_clock is CLOCK_MONOTONIC, as the program's).
        const auto ended = std::chrono::steady_clock::now();
        const std::string returning = field_after(r.out, "returning-at-ns");
        REQUIRE(!returning.empty());
        double seconds = double(std::chrono::duration_cast<std::chrono::nanoseconds>(ended.time_since_epoch()).count() -
                                std::stoll(returning)) / 1e9;
        INFO("stderr:\n" << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("--- begin\n# vramtrace textfile v1") != std::string::npos);
        CHECK(seconds < 1.0);
        CHECK(seconds > 0.0);
        // The attacker's files stay as they were; ours is the one file added, with process_up 0.
        std::vector<std::string> names = list_dir(dir);
        CHECK(names.size() == 2001);
        std::string ours;
        for (const std::string &n : names)
            if (n.size() > 5 && n.compare(n.size() - 5, 5, ".prom") == 0) ours = n;
        REQUIRE(!ours.empty());
        CHECK(value_of(read_text(dir + "/" + ours), "vramtrace_process_up{") == "0");
        REQUIRE(unlink((dir + "/" + ours).c_str()) == 0);
    }
}
