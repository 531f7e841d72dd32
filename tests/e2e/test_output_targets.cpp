// Non-regular output targets of the library (docs/reliability.md, "Files vramtrace writes"): a
// character device or FIFO at VRAMTRACE_OUTPUT or VRAMTRACE_PROMETHEUS_TEXTFILE is written in place
// and never replaced or removed; a directory is refused with one warning. Every device node and FIFO
// is made inside the test's own temporary directory (a character device with /dev/null's numbers,
// made with mknod, which needs root).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>

#include "harness.h"

using namespace e2e;

namespace {

std::string program(const std::string &name) { return bin_dir() + "/" + name; }

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

bool make_null_device(const std::string &path) { return mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0; }

void check_still_null_device(const std::string &path, const struct stat &before) {
    struct stat st {};
    REQUIRE(lstat(path.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
    CHECK(st.st_rdev == before.st_rdev);
    CHECK(st.st_ino == before.st_ino);
    CHECK(st.st_mode == before.st_mode);
}

} // namespace

TEST_CASE("output targets: VRAMTRACE_OUTPUT at a character device writes in place, triggers too") {
    std::string dir = make_temp_dir("target-chardev");
    std::string dev = dir + "/null";
    if (!make_null_device(dev)) {
        WARN("mknod needs root: skipped");
        return;
    }
    struct stat before {};
    REQUIRE(lstat(dev.c_str(), &before) == 0);
    // Three out-of-memory snapshots and the exit snapshot, all to the device.
    std::map<std::string, std::string> env = {{"STANDIN_CUDA_DEVICE_BYTES", "67108864"},
                                              {"VRAMTRACE_OUTPUT", dev},
                                              {"VRAMTRACE_OOM_INTERVAL", "0"},
                                              {"VRAMTRACE_PROMETHEUS_TEXTFILE", dev},
                                              {"VRAMTRACE_PROMETHEUS_PERIOD", "0.05"}};
    RunResult plain = run({program("standin_prog_trigger_oom"), "3"}, {false, env, ""});
    RunResult traced = run({program("standin_prog_trigger_oom"), "3"}, {true, env, dir});
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == plain.exit_code);
    CHECK(count_of(traced.err, "warning") == 0);
    CHECK(count_of(traced.err, "vramtrace: snapshot written to " + dev + "\n") == 1);
    check_still_null_device(dev, before);
    CHECK(list_dir(dir) == std::vector<std::string>{"null"}); // no NAME.oom-N.json, no temporary file
}

TEST_CASE("output targets: VRAMTRACE_OUTPUT at a FIFO gives the reader the whole snapshot") {
    std::string dir = make_temp_dir("target-fifo");
    std::string fifo = dir + "/snap.fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // Opened without waiting for a writer, so that a run that never writes to the FIFO (replaces
    // it, say) fails the test instead of hanging it.
    int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(fd >= 0);
    std::string got;
    std::thread reader([&] {
        char buf[4096];
        for (int waited_ms = 0; waited_ms < 30000;) {
            pollfd p{fd, POLLIN, 0};
            int n = poll(&p, 1, 100);
            if (n == 0) {
                waited_ms += 100;
                continue;
            }
            ssize_t r = read(fd, buf, sizeof buf);
            if (r > 0) got.append(buf, size_t(r));
            else if (r == 0 && (p.revents & POLLHUP)) break;
        }
        close(fd);
    });
    RunResult traced = run({bin_dir() + "/leaky_pipeline"}, {true, {{"VRAMTRACE_OUTPUT", fifo}}, dir});
    reader.join();
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == 0);
    CHECK(count_of(traced.err, "vramtrace: snapshot written to " + fifo + "\n") == 1);
    nlohmann::json s = nlohmann::json::parse(got);
    CHECK(s.at("format") == "vramtrace-snapshot");
    CHECK(s.at("process").at("reason") == "exit");
    struct stat st {};
    REQUIRE(lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK(list_dir(dir) == std::vector<std::string>{"snap.fifo"});
}

TEST_CASE("output targets: a FIFO without a reader: one warning, the program neither blocks nor changes") {
    std::string dir = make_temp_dir("target-fifo-no-reader");
    std::string fifo = dir + "/snap.fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    RunResult plain = run({bin_dir() + "/leaky_pipeline"}, {false, {}, ""});
    RunResult traced = run({bin_dir() + "/leaky_pipeline"}, {true, {{"VRAMTRACE_OUTPUT", fifo}}, dir});
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == plain.exit_code);
    CHECK(traced.out == plain.out);
    CHECK(count_of(traced.err, "warning") == 1);
    CHECK(count_of(traced.err, "vramtrace: warning: snapshot not written: " + fifo +
                                   ": a FIFO with no reader: not written\n") == 1);
    CHECK(list_dir(dir) == std::vector<std::string>{"snap.fifo"});
}

TEST_CASE("output targets: a directory at VRAMTRACE_OUTPUT is refused with one warning") {
    std::string dir = make_temp_dir("target-dir");
    std::string sub = dir + "/snap.json";
    REQUIRE(mkdir(sub.c_str(), 0700) == 0);
    RunResult traced = run({bin_dir() + "/leaky_pipeline"}, {true, {{"VRAMTRACE_OUTPUT", sub}}, dir});
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == 0);
    CHECK(count_of(traced.err, "warning") == 1);
    CHECK(count_of(traced.err, "vramtrace: warning: snapshot not written: " + sub + " is a directory: not written\n") == 1);
    CHECK(list_dir(dir) == std::vector<std::string>{"snap.json"});
    CHECK(list_dir(sub).empty());
}

TEST_CASE("output targets: a Prometheus textfile at a FIFO is written in place and kept at exit") {
    std::string dir = make_temp_dir("target-prom-fifo");
    std::string fifo = dir + "/vt.prom";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // The program reads the FIFO until it shows device 1 (standin_prog_trigger_watch prometheus).
    RunResult r = run({program("standin_prog_trigger_watch"), "prometheus", fifo},
                      {true,
                       {{"STANDIN_CUDA_DEVICE_BYTES", "67108864"},
                        {"VRAMTRACE_PROMETHEUS_TEXTFILE", fifo},
                        {"VRAMTRACE_PROMETHEUS_PERIOD", "0.05"},
                        {"VRAMTRACE_OUTPUT", dir + "/snap.json"},
                        {"VRAMTRACE_SUMMARY", "0"}},
                       dir});
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("vramtrace_device_current_bytes{device=\"1\"") != std::string::npos);
    CHECK(r.out.find("mode 600\n") != std::string::npos); // the FIFO's own mode, never chmod'ed
    struct stat st {};
    REQUIRE(lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK(list_dir(dir) == std::vector<std::string>{"snap.json", "vt.prom"});
}

TEST_CASE("output targets: a crash snapshot goes to the character device at VRAMTRACE_OUTPUT, in place") {
    std::string dir = make_temp_dir("target-crash");
    std::string dev = dir + "/null";
    if (!make_null_device(dev)) {
        WARN("mknod needs root: skipped");
        return;
    }
    struct stat before {};
    REQUIRE(lstat(dev.c_str(), &before) == 0);
    RunResult plain = run({program("standin_prog_crash"), "segv"}, {false, {}, ""});
    RunResult traced = run({program("standin_prog_crash"), "segv"},
                           {true, {{"VRAMTRACE_OUTPUT", dev}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == plain.exit_code);
    CHECK(count_of(traced.err, "vramtrace: SIGSEGV: crash snapshot written to " + dev + " (") == 1);
    check_still_null_device(dev, before);
    CHECK(list_dir(dir) == std::vector<std::string>{"null"}); // no null.crash.json, no temporary file
}

TEST_CASE("output targets: VRAMTRACE_OUTPUT=- writes the snapshot to the program's standard output") {
    std::string dir = make_temp_dir("target-dash");
    RunResult plain = run({bin_dir() + "/leaky_pipeline"}, {false, {}, ""});
    RunResult traced = run({bin_dir() + "/leaky_pipeline"}, {true, {{"VRAMTRACE_OUTPUT", "-"}}, dir});
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == plain.exit_code);
    // The snapshot is written at exit, before stdio flushes what the program printed.
    REQUIRE(traced.out.size() > plain.out.size());
    size_t split = traced.out.size() - plain.out.size();
    CHECK(traced.out.substr(split) == plain.out);
    nlohmann::json s = nlohmann::json::parse(traced.out.substr(0, split));
    CHECK(s.at("format") == "vramtrace-snapshot");
    CHECK(count_of(traced.err, "vramtrace: snapshot written to -\n") == 1);
    CHECK(list_dir(dir).empty()); // no file named "-"
}
