// Where the report cannot be written (docs/reliability.md): a missing or unwritable directory, a
// full file size limit. One clear warning, no crash, the exit status unchanged, no file, partial or
// temporary, left behind. And the report file's own safety: mode 0600, a symlink at its name is
// replaced and not followed, a file already at the temporary name is not clobbered; setuid programs
// under `vramtrace run`.
#include <catch2/catch.hpp>

#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "dump/atomic_file.h"

using namespace e2e;

namespace {

size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

std::string read_all(const std::string &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

// Runs leaky_pipeline traced with the given output and checks the failure is handled as promised.
// `program`, `env`: the program to run and what its environment adds (a staged copy for another user).
void check_not_written(const std::vector<std::string> &argv_prefix, const std::string &output,
                       const std::string &reason, const std::string &program = bin_dir() + "/leaky_pipeline",
                       std::map<std::string, std::string> env = {}, std::string cwd = "") {
    std::vector<std::string> argv = argv_prefix;
    argv.push_back(program);
    RunResult plain = run({bin_dir() + "/leaky_pipeline"}, {false, {}, ""});
    if (cwd.empty()) cwd = make_temp_dir("cwd");
    env["VRAMTRACE_OUTPUT"] = output;
    RunResult traced = run(argv, {true, env, cwd});
    INFO("stderr:\n" << traced.err);
    CHECK(traced.exit_code == plain.exit_code);
    CHECK(traced.out == plain.out);
    // Exactly one warning, naming the problem; the summary is still printed.
    CHECK(count_of(traced.err, "warning") == 1);
    CHECK(count_of(traced.err, "vramtrace: warning: snapshot not written: ") == 1);
    CHECK(traced.err.find(reason) != std::string::npos);
    CHECK(traced.err.find("vramtrace: snapshot written to") == std::string::npos);
    CHECK(traced.err.find("vramtrace: ") == 0);
    CHECK(list_dir(cwd).empty());
}

} // namespace

TEST_CASE("output directory missing: one warning, exit status unchanged, nothing written") {
    std::string dir = make_temp_dir("missing-dir");
    check_not_written({}, dir + "/no/such/dir/snap-%p.json", "No such file or directory");
    CHECK(list_dir(dir).empty());
}

TEST_CASE("output directory not writable: one warning, exit status unchanged, nothing written") {
    if (geteuid() == 0) {
        // root writes through directory modes: the program runs as nobody (setpriv), for whom the
        // test's own 0555 directory is not writable. No system directory is named as the output.
        if (access("/usr/bin/setpriv", X_OK) != 0) {
            WARN("no /usr/bin/setpriv (util-linux): skipped as root");
            return;
        }
        // nobody runs copies of the program, the library and the stand-in driver, staged where it
        // can reach them: the build tree may lie under a 0700 directory.
        OtherUserStage stage({bin_dir() + "/leaky_pipeline", preload_library(), bin_dir() + "/../standin"});
        REQUIRE(stage.error() == "");
        const std::string dir = stage.path() + "/read-only-dir", cwd = stage.path() + "/cwd";
        REQUIRE(mkdir(dir.c_str(), 0555) == 0);
        REQUIRE(chmod(dir.c_str(), 0555) == 0);
        REQUIRE(mkdir(cwd.c_str(), 0777) == 0);
        REQUIRE(chmod(cwd.c_str(), 0777) == 0);
        const std::string preload = preload_list(stage.path() + "/libvramtrace.so");
        check_not_written({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"},
                          dir + "/snap-%p.json", "Permission denied", stage.path() + "/leaky_pipeline",
                          {{"LD_PRELOAD", preload}, {"LD_LIBRARY_PATH", stage.path() + "/standin"}}, cwd);
        CHECK(list_dir(dir).empty());
    } else {
        std::string dir = make_temp_dir("read-only-dir");
        chmod(dir.c_str(), 0555);
        check_not_written({}, dir + "/snap-%p.json", "Permission denied");
        CHECK(list_dir(dir).empty());
        chmod(dir.c_str(), 0700);
    }
}

TEST_CASE("file size limit (RLIMIT_FSIZE) reached while writing: no SIGXFSZ death, no partial file") {
    std::string dir = make_temp_dir("fsize");
    // 1 KiB: the snapshot is larger. bash's ulimit -f counts 1024-byte blocks.
    check_not_written({"/bin/bash", "-c", "ulimit -f 1 && exec \"$0\" \"$@\""}, dir + "/snap-%p.json",
                      "File too large");
    CHECK(list_dir(dir).empty());
}

TEST_CASE("the report is 0600 and a symlink at its name is replaced, not followed") {
    std::string dir = make_temp_dir("symlink");
    std::string victim = dir + "/victim.txt";
    write_text(victim, "precious\n");
    chmod(victim.c_str(), 0644);
    REQUIRE(symlink("victim.txt", (dir + "/snap.json").c_str()) == 0);
    RunResult traced = run({bin_dir() + "/leaky_pipeline"}, {true, {{"VRAMTRACE_OUTPUT", dir + "/snap.json"}}, dir});
    INFO(traced.err);
    REQUIRE(traced.exit_code == 0);
    struct stat st {};
    REQUIRE(lstat((dir + "/snap.json").c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(read_all(victim) == "precious\n");
    CHECK(list_dir(dir) == std::vector<std::string>{"snap.json", "victim.txt"});
    CHECK_FALSE(load_json(dir + "/snap.json").at("allocations").empty());
}

namespace {
bool fill_hello(int fd, void *, std::string *) { return write(fd, "hello\n", 6) == 6; }
bool fill_fail(int fd, void *, std::string *error) {
    if (write(fd, "half", 4) != 4) return false;
    *error = "simulated failure";
    return false;
}
} // namespace

TEST_CASE("a file or symlink already at the temporary name is neither opened nor clobbered") {
    std::string dir = make_temp_dir("squat");
    std::string target = dir + "/report.json";
    std::string first = vramtrace::temporary_name_for(target, getpid(), 0);
    CHECK(first == dir + "/.report.json.tmp." + std::to_string(getpid()));
    std::string victim = dir + "/victim.txt";
    write_text(victim, "precious\n");

    for (bool as_symlink : {false, true}) {
        INFO("squatter is a symlink: " << as_symlink);
        unlink(first.c_str());
        unlink(target.c_str());
        if (as_symlink) REQUIRE(symlink("victim.txt", first.c_str()) == 0);
        else write_text(first, "someone else's\n");
        std::string error;
        REQUIRE(vramtrace::write_file_atomically(target, &fill_hello, nullptr, &error));
        CHECK(read_all(target) == "hello\n");
        CHECK(read_all(victim) == "precious\n");
        struct stat st {};
        REQUIRE(lstat(first.c_str(), &st) == 0);
        CHECK(S_ISLNK(st.st_mode) == as_symlink);
        if (!as_symlink) CHECK(read_all(first) == "someone else's\n");
        REQUIRE(lstat(target.c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0600);
        // Nothing but the three names: no temporary file of ours left over.
        CHECK(list_dir(dir) == std::vector<std::string>{".report.json.tmp." + std::to_string(getpid()),
                                                        "report.json", "victim.txt"});
    }
}

TEST_CASE("a failed write leaves neither a partial file under the final name nor a temporary file") {
    std::string dir = make_temp_dir("failed-fill");
    std::string target = dir + "/report.json";
    write_text(target, "previous report\n");
    std::string error;
    CHECK_FALSE(vramtrace::write_file_atomically(target, &fill_fail, nullptr, &error));
    CHECK(error == "simulated failure");
    CHECK(read_all(target) == "previous report\n");
    CHECK(list_dir(dir) == std::vector<std::string>{"report.json"});
}

TEST_CASE("vramtrace run on a set-user-ID program says once that it cannot be traced") {
    if (geteuid() != 0) {
        WARN("needs root to make a set-user-ID file owned by someone else; skipped");
        return;
    }
    std::string dir = make_temp_dir("setuid");
    std::string prog = dir + "/suid_true";
    REQUIRE(system(("cp /bin/true '" + prog + "'").c_str()) == 0);
    REQUIRE(chown(prog.c_str(), 65534, 65534) == 0);
    REQUIRE(chmod(prog.c_str(), 04755) == 0);
    // Found through PATH, as the user would type it.
    RunResult r = run({cli(), "run", "--", "suid_true"}, {false, {{"PATH", dir + ":/usr/bin:/bin"}}, dir});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(count_of(r.err, "is set-user-ID or set-group-ID: the dynamic loader ignores LD_PRELOAD") == 1);
    CHECK(r.err.find(prog) != std::string::npos);
    // A plain program gets no such warning.
    RunResult plain = run({cli(), "run", "--", "true"}, {false, {{"PATH", "/usr/bin:/bin"}}, dir});
    CHECK(plain.exit_code == 0);
    CHECK(plain.err.find("set-user-ID") == std::string::npos);
}

TEST_CASE("no environment value reaches a report: exit and crash snapshots, summary and warnings") {
    // A value that only the environment holds (in a variable of the program's, and in the name of
    // another): it must appear in no file vramtrace writes and in nothing it prints. Only what
    // docs/snapshot-format.md lists is taken from the environment (the rank).
    const std::string secret = "vt-e2e-secret-7f3a9c";
    std::map<std::string, std::string> env = {{"VT_E2E_TOKEN", secret}, {"VT_E2E_" + std::string("N7f3a9c"), "1"},
                                              {"VRAMTRACE_SUMMARY", "1"}};
    struct Case {
        std::string program, mode;
    };
    for (const Case &c : {Case{bin_dir() + "/leaky_pipeline", ""}, Case{bin_dir() + "/standin_prog_crash", "segv"}}) {
        INFO(c.program << " " << c.mode);
        std::string dir = make_temp_dir("no-env");
        env["VRAMTRACE_OUTPUT"] = dir + "/snap-%p.json";
        std::vector<std::string> argv = {c.program};
        if (!c.mode.empty()) argv.push_back(c.mode);
        RunResult traced = run(argv, {true, env, dir});
        INFO("stderr:\n" << traced.err);
        std::vector<std::string> files = list_dir(dir);
        REQUIRE(files.size() == 1); // the exit snapshot, or the crash snapshot
        std::string report = read_all(dir + "/" + files[0]);
        CHECK(report.find("\"allocations\"") != std::string::npos);
        CHECK(report.find("7f3a9c") == std::string::npos);
        CHECK(traced.err.find("vramtrace: ") != std::string::npos); // it did print (summary or crash line)
        CHECK(traced.err.find("7f3a9c") == std::string::npos);
        RunResult summary = run({cli(), "summary", dir + "/" + files[0]}, {false, {}, dir});
        CHECK(summary.exit_code == 0);
        CHECK(summary.out.find("7f3a9c") == std::string::npos);
    }
}
