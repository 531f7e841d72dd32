// Separate debug files found by .gnu_debuglink beside a module (lib/symbolize/debug_files.h):
// used when they are real, never waited on when a FIFO stands at their name, and never taken from
// a directory others can write unless root or this user owns them.
//
// The module: a copy of the dlclose plugin, stripped whole (objcopy --strip-all: no .symtab, no
// DWARF), its debug file made by objcopy --only-keep-debug and linked with --add-gnu-debuglink.
// plugin_allocate stays in .dynsym, so its frame is named either way; only the debug file gives
// its file and line. Everything is made inside the test's temporary directory.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

using namespace e2e;

namespace {

const char *const kLink = "libplugin.so.debug";
constexpr uid_t kOtherUid = 65534; // nobody

// A stripped copy of the plugin at DIR/libplugin.so, its debug file at DIR/libplugin.so.debug.
std::string make_stripped_plugin(const std::string &dir) {
    std::string plugin = dir + "/libplugin.so", debug = dir + "/" + kLink;
    for (std::vector<std::string> argv :
         {std::vector<std::string>{"cp", bin_dir() + "/libvt_dlclose_plugin.so", plugin},
          {"objcopy", "--only-keep-debug", plugin, debug},
          {"objcopy", "--strip-all", plugin},
          {"objcopy", "--add-gnu-debuglink=" + debug, plugin}}) {
        RunResult r = run(argv, {false, {}, dir});
        INFO(argv[0] << " " << argv[1] << ": " << r.err);
        REQUIRE(r.exit_code == 0);
    }
    return plugin;
}

// Moves the debug file made beside the plugin to `to`, or removes it when to is empty.
void place_debug_file(const std::string &dir, const std::string &to) {
    std::string from = dir + "/" + kLink;
    if (to.empty()) REQUIRE(unlink(from.c_str()) == 0);
    else REQUIRE(rename(from.c_str(), to.c_str()) == 0);
}

struct PluginRun {
    RunResult result;
    LiveAllocation site; // the plugin's allocation and its call site
    int expected_line = 0;
};

// The plugin's program under the library, bounded to 20 s (timeout's status 124 when it hangs),
// and its exit snapshot's one live allocation.
PluginRun run_plugin(const std::string &dir, const std::string &plugin) {
    PluginRun p;
    std::string snapshot = dir + "/exit.json";
    std::remove(snapshot.c_str());
    p.result = run({"timeout", "20", bin_dir() + "/vt_dlclose_program", plugin},
                   {true, {{"VRAMTRACE_OUTPUT", snapshot}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO(p.result.out << p.result.err);
    REQUIRE(p.result.exit_code == 0);
    auto expected = parse_expectations(p.result.out);
    REQUIRE(expected.size() == 1);
    p.expected_line = expected[0].line;
    auto live = live_allocations(load_json(snapshot));
    REQUIRE(live.size() == 1);
    p.site = live[0];
    CHECK(p.site.function == "plugin_allocate");
    return p;
}

// Whether the run named the call site from the debug file (its file and line), or without it
// (nothing but the exported name).
bool named_from_debug_file(const PluginRun &p) {
    INFO("call site: " << p.site.function << " at " << p.site.file << ":" << p.site.line);
    if (p.site.file.empty()) {
        CHECK(p.site.line == 0);
        return false;
    }
    CHECK(p.site.file == "dlclose_plugin.c");
    CHECK(p.site.line == p.expected_line);
    return true;
}

// The one call site `vramtrace top --once --json` shows of the plugin's program while it holds the
// plugin's buffer (its own XDG_RUNTIME_DIR under dir), the viewer bounded to 20 s.
nlohmann::json top_site(const std::string &dir, const std::string &plugin) {
    std::string xdg = dir + "/xdg", reading = dir + "/top.json";
    mkdir(xdg.c_str(), 0700);
    std::remove((dir + "/ready").c_str());
    std::remove((dir + "/go").c_str());
    RunResult r = run(
        {"sh", "-c",
         "\"$0\" \"$1\" hold ready go >held.out & p=$!; i=0; while [ ! -e ready ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
         "env -u LD_PRELOAD timeout 20 \"$2\" top --once --json --pid $p >\"$3\"; echo \"top $?\"; touch go; wait $p; "
         "echo \"program $?\"",
         bin_dir() + "/vt_dlclose_program", plugin, cli(), reading},
        {true, {{"XDG_RUNTIME_DIR", xdg}, {"VRAMTRACE_OUTPUT", dir + "/held.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.out == "top 0\nprogram 0\n");
    nlohmann::json sites = load_json(reading).at("top_sites");
    REQUIRE(sites.size() == 1);
    CHECK(sites[0].at("bytes") == 6u << 20);
    return sites[0];
}

void make_fifo(const std::string &path, uid_t owner) {
    REQUIRE(mkfifo(path.c_str(), 0666) == 0);
    if (owner != geteuid()) REQUIRE(chown(path.c_str(), owner, owner) == 0);
}

bool is_fifo(const std::string &path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

} // namespace

TEST_CASE("debug files: a stripped module's debug file beside it or in .debug/ names its file and line") {
    std::string dir = make_temp_dir("debug-beside");
    std::string plugin = make_stripped_plugin(dir);
    CHECK(named_from_debug_file(run_plugin(dir, plugin)));
    REQUIRE(mkdir((dir + "/.debug").c_str(), 0755) == 0);
    place_debug_file(dir, dir + "/.debug/" + kLink);
    CHECK(named_from_debug_file(run_plugin(dir, plugin)));
}

TEST_CASE("debug files: a FIFO at DIR/LINK and DIR/.debug/LINK is never opened to wait: the program exits, "
          "summary and top name its frames") {
    std::string dir = make_temp_dir("debug-fifo");
    std::string plugin = make_stripped_plugin(dir);
    REQUIRE(mkdir((dir + "/.debug").c_str(), 0755) == 0);

    // A FIFO first, the real file in .debug/: the FIFO is passed over, the search goes on.
    place_debug_file(dir, dir + "/.debug/" + kLink);
    make_fifo(dir + "/" + kLink, geteuid());
    CHECK(named_from_debug_file(run_plugin(dir, plugin)));
    nlohmann::json named = top_site(dir, plugin);
    CHECK(named.at("function") == "plugin_allocate");
    std::string file = named.at("file");
    CHECK(file.substr(file.rfind('/') + 1) == "dlclose_plugin.c");

    // FIFOs at both names: the exit snapshot is written at once, without file and line.
    REQUIRE(unlink((dir + "/.debug/" + kLink).c_str()) == 0);
    make_fifo(dir + "/.debug/" + kLink, geteuid());
    CHECK_FALSE(named_from_debug_file(run_plugin(dir, plugin)));

    // A crash snapshot (frames not named) and `vramtrace summary` naming them from the files on
    // disk, FIFOs still in place.
    std::string crash_dir = dir + "/crash";
    REQUIRE(mkdir(crash_dir.c_str(), 0700) == 0);
    RunResult crashed = run({"timeout", "20", bin_dir() + "/vt_dlclose_program", plugin, "abort"},
                            {true, {{"VRAMTRACE_OUTPUT", crash_dir + "/snap.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO(crashed.out << crashed.err);
    REQUIRE(crashed.exit_code == 128 + SIGABRT);
    std::vector<std::string> files = list_dir(crash_dir);
    REQUIRE(files.size() == 1);
    REQUIRE(files[0] == "snap.crash.json");
    RunResult summary = run({"timeout", "20", cli(), "summary", crash_dir + "/" + files[0]}, {false, {}, dir});
    INFO(summary.out << summary.err);
    REQUIRE(summary.exit_code == 0);
    CHECK(summary.err.empty());
    CHECK(summary.out.find("plugin_allocate (libplugin.so+0x") != std::string::npos);
    CHECK(summary.out.find("dlclose_plugin.c") == std::string::npos);

    // `vramtrace top --once --json` names the frames of the running program from the files on disk.
    nlohmann::json site = top_site(dir, plugin);
    CHECK(site.at("function") == "plugin_allocate");
    CHECK(site.at("file") == "");

    CHECK(is_fifo(dir + "/" + kLink));
    CHECK(is_fifo(dir + "/.debug/" + kLink));
}

TEST_CASE("debug files: in a directory others can write, only root's or this user's own debug file is used") {
    if (geteuid() != 0) {
        WARN("needs root to make a file another user owns; skipped");
        return;
    }
    // A sticky world-writable directory (as /tmp) holding the module, root's.
    std::string dir = make_temp_dir("debug-shared") + "/shared";
    REQUIRE(mkdir(dir.c_str(), 0755) == 0);
    REQUIRE(chmod(dir.c_str(), 01777) == 0);
    std::string plugin = make_stripped_plugin(dir);
    std::string debug = dir + "/" + kLink;

    // The debug file ours (root's): used.
    CHECK(named_from_debug_file(run_plugin(dir, plugin)));
    // The same file owned by nobody, as if planted: not used, here or in .debug/ (nobody's too).
    REQUIRE(chown(debug.c_str(), kOtherUid, kOtherUid) == 0);
    CHECK_FALSE(named_from_debug_file(run_plugin(dir, plugin)));
    REQUIRE(mkdir((dir + "/.debug").c_str(), 0755) == 0);
    REQUIRE(chown((dir + "/.debug").c_str(), kOtherUid, kOtherUid) == 0);
    std::string in_debug_dir = dir + "/.debug/" + kLink;
    REQUIRE(rename(debug.c_str(), in_debug_dir.c_str()) == 0);
    CHECK_FALSE(named_from_debug_file(run_plugin(dir, plugin)));
    // A symlink (nobody's) in the shared directory to root's debug file elsewhere: not followed.
    std::string elsewhere = make_temp_dir("debug-shared-target") + "/" + kLink;
    REQUIRE(rename(in_debug_dir.c_str(), elsewhere.c_str()) == 0);
    REQUIRE(chown(elsewhere.c_str(), 0, 0) == 0);
    REQUIRE(symlink(elsewhere.c_str(), debug.c_str()) == 0);
    REQUIRE(lchown(debug.c_str(), kOtherUid, kOtherUid) == 0);
    CHECK_FALSE(named_from_debug_file(run_plugin(dir, plugin)));
    // A FIFO of nobody's at the name: the program still exits at once.
    REQUIRE(unlink(debug.c_str()) == 0);
    make_fifo(debug, kOtherUid);
    CHECK_FALSE(named_from_debug_file(run_plugin(dir, plugin)));

    // In a directory only root can write, the owner does not matter: nobody could have put it there.
    std::string trusted = make_temp_dir("debug-trusted");
    REQUIRE(chmod(trusted.c_str(), 0755) == 0);
    std::string trusted_plugin = make_stripped_plugin(trusted);
    REQUIRE(chown((trusted + "/" + kLink).c_str(), kOtherUid, kOtherUid) == 0);
    CHECK(named_from_debug_file(run_plugin(trusted, trusted_plugin)));
}
