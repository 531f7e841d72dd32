// The sweep of the textfile directory (lib/triggers/prometheus_sweep.h) in a temporary directory,
// with the question "does this process still run" answered by the test.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "triggers/prometheus_sweep.h"
#include "triggers/prometheus_text.h"

using namespace vramtrace::triggers;

namespace {

std::string temp_dir() {
    const char *tmp = getenv("TMPDIR");
    std::string base = std::string(tmp && *tmp ? tmp : "/tmp") + "/vt-sweep-XXXXXX";
    std::vector<char> buf(base.begin(), base.end());
    buf.push_back(0);
    const char *made = mkdtemp(buf.data());
    REQUIRE(made != nullptr);
    return made;
}

std::string read(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write(const std::string &path, const std::string &text) {
    std::ofstream out(path);
    out << text;
}

bool exists(const std::string &path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

PrometheusSample sample(long pid, uint64_t updated_ms) {
    PrometheusSample s;
    s.pid = pid;
    s.host = "node1";
    s.command = "prog";
    s.start_ticks = 100 + uint64_t(pid);
    s.boot_id = "boot";
    s.start_time_ms = 1000;
    s.update_time_ms = updated_ms;
    s.devices = {{0, "GPU-0", 1048576, 1048576}};
    return s;
}

// Running: pid 10 with its own start time only (pid 11 was reused by another process).
bool fake_running(long pid, uint64_t start_ticks, const std::string &boot_id) {
    return boot_id == "boot" && pid == 10 && start_ticks == 110;
}

} // namespace

TEST_CASE("sweep: a dead process's file is marked ended at its last update, then removed after the keep time") {
    std::string dir = temp_dir();
    write(dir + "/vt-10.prom", format_prometheus(sample(10, 5000)));  // running
    write(dir + "/vt-11.prom", format_prometheus(sample(11, 6000)));  // gone
    write(dir + "/vt-12.prom", assemble_prometheus(format_prometheus_parts(sample(12, 7000)), 7500)); // exited
    SweepOptions o{dir, "vt-%p.prom", "node1", 7999, 2000};
    SweepResult r = sweep_textfile_directory(o, &fake_running);
    CHECK(r.marked == 1);
    CHECK(r.removed == 0);
    CHECK(read(dir + "/vt-10.prom") == format_prometheus(sample(10, 5000)));
    CHECK(read(dir + "/vt-11.prom") == assemble_prometheus(format_prometheus_parts(sample(11, 6000)), 6000));
    struct stat st;
    REQUIRE(stat((dir + "/vt-11.prom").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    // 9499 ms: vt-12 ended 1999 ms ago, vt-11 3499 ms ago.
    o.now_ms = 9499;
    r = sweep_textfile_directory(o, &fake_running);
    CHECK(r.marked == 0);
    CHECK(r.removed == 1);
    CHECK_FALSE(exists(dir + "/vt-11.prom"));
    CHECK(exists(dir + "/vt-12.prom"));
    o.now_ms = 9500;
    CHECK(sweep_textfile_directory(o, &fake_running).removed == 1);
    CHECK_FALSE(exists(dir + "/vt-12.prom"));
    CHECK(exists(dir + "/vt-10.prom"));
    // Keep 0: a file found gone is marked and removed in the same sweep.
    write(dir + "/vt-13.prom", format_prometheus(sample(13, 9000)));
    o.keep_ms = 0;
    r = sweep_textfile_directory(o, &fake_running);
    CHECK((r.marked == 1 && r.removed == 1));
    CHECK_FALSE(exists(dir + "/vt-13.prom"));
    unlink((dir + "/vt-10.prom").c_str());
    rmdir(dir.c_str());
}

TEST_CASE("sweep: files that are not vramtrace's own stay, whatever their name or content") {
    std::string dir = temp_dir();
    const std::string dead = format_prometheus(sample(11, 6000));
    write(dir + "/other.prom", dead);                    // another name
    write(dir + "/vt-x.txt", dead);                      // another name
    write(dir + "/vt-20.prom", "# HELP foo bar\nfoo 1\n"); // not our header
    write(dir + "/target", dead);
    REQUIRE(symlink("target", (dir + "/vt-21.prom").c_str()) == 0); // a symlink is never followed
    PrometheusSample elsewhere = sample(11, 6000);
    elsewhere.host = "node2";
    write(dir + "/vt-22.prom", format_prometheus(elsewhere)); // another host's (a shared directory)
    REQUIRE(mkfifo((dir + "/vt-23.prom").c_str(), 0600) == 0);
    SweepOptions o{dir, "vt-%p.prom", "node1", 100000, 0};
    SweepResult r = sweep_textfile_directory(o, &fake_running);
    CHECK(r.marked == 0);
    CHECK(r.removed == 0);
    CHECK(read(dir + "/other.prom") == dead);
    CHECK(read(dir + "/vt-x.txt") == dead);
    CHECK(read(dir + "/target") == dead);
    CHECK(read(dir + "/vt-20.prom") == "# HELP foo bar\nfoo 1\n");
    CHECK(exists(dir + "/vt-21.prom"));
    CHECK(exists(dir + "/vt-22.prom"));
    CHECK(exists(dir + "/vt-23.prom"));
    for (const char *n : {"other.prom", "vt-x.txt", "vt-20.prom", "target", "vt-21.prom", "vt-22.prom", "vt-23.prom"})
        unlink((dir + "/" + n).c_str());
    rmdir(dir.c_str());
}

TEST_CASE("sweep: the name pattern's placeholders") {
    CHECK(textfile_name_matches("vt-123.prom", "vt-%p.prom"));
    CHECK_FALSE(textfile_name_matches("vt-.prom", "vt-%p.prom")); // a placeholder is never empty
    CHECK(textfile_name_matches("vt-n1-0-9.prom", "vt-%h-%r-%p.prom"));
    CHECK(textfile_name_matches("vt-a-b-c-d.prom", "vt-%h-%p.prom"));
    CHECK_FALSE(textfile_name_matches("vt-1.prom.tmp", "vt-%p.prom"));
    CHECK(textfile_name_matches("100%-1.prom", "100%%-%p.prom"));
    CHECK_FALSE(textfile_name_matches("100x-1.prom", "100%%-%p.prom"));
    CHECK(textfile_name_matches("fixed.prom", "fixed.prom"));
    CHECK_FALSE(textfile_name_matches("fixed.prom", "%p%p%p%p%p%p%p.prom")); // 7 placeholders need 7 characters
    CHECK(textfile_name_matches("abcdefg.prom", "%p%p%p%p%p%p%p.prom"));
    CHECK(textfile_name_matches("a-b-c.prom", "%p-%p.prom"));   // the last '-' may be the pattern's
    CHECK_FALSE(textfile_name_matches("a/b.prom", "%p.prom"));  // never across a '/'
    CHECK_FALSE(textfile_name_matches("vt-1.prom", "vt-%p.pro"));
    CHECK(textfile_name_matches("%p", "%%p"));
    // A planted name that makes a backtracking matcher try every split (2^n for n placeholders)
    // is refused at once; and a matching name after it still matches.
    const std::string dashes = "vt-" + std::string(240, '-') + "7";
    for (const char *pattern : {"vt-%h-%r-%p.prom", "vt-%h-%r-%p-%p.prom", "%p-%p-%p-%p-%p-%p-%p-%p-%p-%p.prom"})
        CHECK_FALSE(textfile_name_matches(dashes, pattern));
    CHECK(textfile_name_matches(dashes + ".prom", "vt-%h-%r-%p-%p.prom"));
    CHECK_FALSE(textfile_name_matches(std::string(256, 'a'), "%p")); // longer than any file name
}

TEST_CASE("sweep: this process runs, a pid with another start time or boot id does not") {
    uint64_t ticks = own_start_ticks();
    std::string boot = own_boot_id();
    REQUIRE(ticks != 0);
    REQUIRE(boot.size() == 36);
    CHECK(process_running(getpid(), ticks, boot));
    CHECK_FALSE(process_running(getpid(), ticks + 1, boot));
    CHECK_FALSE(process_running(getpid(), ticks, "another-boot"));
    // A pid above the kernel's pid_max exists nowhere.
    CHECK_FALSE(process_running(4194305, 1, boot));
}
