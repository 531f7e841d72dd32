// Crash snapshots (docs/crash-dumps.md): a program that dies by a fatal signal under the preload
// library writes one snapshot of exactly what it had live, ends by the same signal as without the
// library, and `vramtrace summary` names the call sites from the module files on disk.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

#include "harness.h"

using namespace e2e;

namespace {

const char *const kProgram = "standin_prog_crash";

struct CrashRun {
    RunResult plain, traced;
    std::string dir;
    std::vector<std::string> files; // what the traced run left in dir
};

CrashRun run_crash(const std::string &mode, std::map<std::string, std::string> env = {},
                   const std::string &program = bin_dir() + "/" + kProgram) {
    CrashRun r;
    r.plain = run({program, mode}, {false, env, ""});
    r.dir = make_temp_dir("crash-" + mode);
    env["VRAMTRACE_OUTPUT"] = r.dir + "/snap-%p.json";
    env["VRAMTRACE_SUMMARY"] = "0";
    r.traced = run({program, mode}, {true, env, r.dir});
    r.files = list_dir(r.dir);
    return r;
}

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The single file of the traced run, which must be a crash snapshot (no temporary file left, no
// exit snapshot: the process died).
std::string crash_file(const CrashRun &r) {
    INFO("files: " << r.files.size() << "\nstderr of the traced run:\n" << r.traced.err);
    REQUIRE(r.files.size() == 1);
    REQUIRE(ends_with(r.files[0], ".crash.json"));
    return r.dir + "/" + r.files[0];
}

// (bytes, api, device) of each allocation, sorted: compared with the program's expect-live lines.
std::vector<std::tuple<uint64_t, std::string, int>> allocation_keys(const nlohmann::json &snapshot) {
    std::vector<std::tuple<uint64_t, std::string, int>> out;
    for (const auto &a : snapshot.at("allocations"))
        out.emplace_back(a.at("size").get<uint64_t>(), a.at("api").get<std::string>(), a.at("device").get<int>());
    std::sort(out.begin(), out.end());
    return out;
}
std::vector<std::tuple<uint64_t, std::string, int>> expected_keys(const std::vector<ExpectedLive> &expected) {
    std::vector<std::tuple<uint64_t, std::string, int>> out;
    for (const ExpectedLive &e : expected) out.emplace_back(e.bytes, e.api, e.device);
    std::sort(out.begin(), out.end());
    return out;
}

void check_same_ending(const CrashRun &r, int signal) {
    INFO("stderr of the traced run:\n" << r.traced.err);
    CHECK(r.plain.exit_code == 128 + signal);
    CHECK(r.traced.exit_code == r.plain.exit_code);
    CHECK(r.traced.out == r.plain.out);
}

// The summary line of each expected allocation's call site: "...::FUNCTION() at DIRS/FILE:LINE (", the
// directories absolute or relative as the build recorded them (ccache's base_dir, a prefix map).
void check_summary_names_call_sites(const std::string &summary, const std::vector<ExpectedLive> &expected) {
    for (const ExpectedLive &e : expected) {
        std::string function = "::" + e.function + "() at ";
        std::string where = "/" + e.file + ":" + std::to_string(e.line) + " (" + kProgram + ")";
        bool found = false;
        std::istringstream lines(summary);
        for (std::string line; std::getline(lines, line);)
            if (line.find(function) != std::string::npos && line.find(where) != std::string::npos) found = true;
        INFO("looking for " << function << " ... " << where << " in:\n" << summary);
        CHECK(found);
    }
}

} // namespace

TEST_CASE("crash: a NULL dereference writes a snapshot of exactly the live allocations, then ends by SIGSEGV") {
    CrashRun r = run_crash("segv");
    check_same_ending(r, SIGSEGV);
    std::string path = crash_file(r);
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(r.traced.err.find("vramtrace: SIGSEGV: crash snapshot written to " + path + " (3 live allocations)") !=
          std::string::npos);

    nlohmann::json snapshot = load_json(path);
    CHECK(snapshot.at("process").at("reason") == "crash");
    CHECK(snapshot.at("process").at("signal") == "SIGSEGV");
    CHECK(snapshot.at("process").at("symbolized") == false);
    for (const auto &f : snapshot.at("frames")) {
        CHECK(f.at("function") == "");
        CHECK(f.at("module").get<int>() >= 0); // every frame is in a module with a known base
    }
    auto expected = parse_expectations(r.plain.out);
    REQUIRE(expected.size() == 3);
    CHECK(allocation_keys(snapshot) == expected_keys(expected));
    // Device 0: 9 MiB allocated in 3 calls, 5 MiB freed in 1; host: the pinned 64 KiB.
    const auto &devices = snapshot.at("devices");
    REQUIRE(devices.size() == 2);
    CHECK(devices[1].at("device") == 0);
    CHECK(devices[1].at("current_bytes") == 4194304);
    CHECK(devices[1].at("allocation_count") == 3);
    CHECK(devices[1].at("free_count") == 1);

    RunResult summary = run({cli(), "summary", path}, {false, {}, r.dir});
    INFO(summary.err);
    CHECK(summary.exit_code == 0);
    CHECK(summary.err.empty()); // every module is on disk with its build id: no warning
    CHECK(summary.out.find("still live at the snapshot: 3 allocations, 4.06 MiB (4259840 B), from 3 call sites") !=
          std::string::npos);
    check_summary_names_call_sites(summary.out, expected);
}

TEST_CASE("crash: abort() and a division by zero end by SIGABRT and SIGFPE, each after its snapshot") {
    for (auto [mode, signal, name] : {std::tuple{"abort", SIGABRT, "SIGABRT"}, std::tuple{"fpe", SIGFPE, "SIGFPE"}}) {
        INFO(mode);
        CrashRun r = run_crash(mode);
        check_same_ending(r, signal);
        nlohmann::json snapshot = load_json(crash_file(r));
        CHECK(snapshot.at("process").at("signal") == name);
        CHECK(allocation_keys(snapshot) == expected_keys(parse_expectations(r.plain.out)));
    }
}

TEST_CASE("crash: a handler installed before vramtrace's still runs after the snapshot") {
    // crash_early_handler.c's constructor runs before the preloaded library's: vramtrace keeps its
    // handler as the previous action and calls it; it prints, puts SIG_DFL back and returns.
    CrashRun r = run_crash("segv", {{"CRASH_EARLY_HANDLER", "1"}});
    check_same_ending(r, SIGSEGV);
    CHECK(r.plain.out.find("early-handler ran\n") != std::string::npos);
    nlohmann::json snapshot = load_json(crash_file(r));
    CHECK(snapshot.at("allocations").size() == 3);
}

TEST_CASE("crash: a handler the program installs later replaces ours, chaining to it still writes the snapshot") {
    CrashRun r = run_crash("chain-in-main");
    check_same_ending(r, SIGSEGV);
    CHECK(r.plain.out.find("program-handler ran\n") != std::string::npos);
    nlohmann::json snapshot = load_json(crash_file(r));
    CHECK(snapshot.at("allocations").size() == 3);
}

TEST_CASE("crash: VRAMTRACE_CRASH_DUMP=0 installs no handler and writes nothing") {
    CrashRun on = run_crash("disposition");
    CHECK(on.plain.out.find("sigsegv-disposition default\n") != std::string::npos);
    CHECK(on.traced.out.find("sigsegv-disposition handler\n") != std::string::npos);
    CHECK(on.traced.exit_code == 128 + SIGSEGV);
    CHECK(on.files.size() == 1);

    CrashRun off = run_crash("disposition", {{"VRAMTRACE_CRASH_DUMP", "0"}});
    check_same_ending(off, SIGSEGV); // same stdout: the disposition is the default again
    CHECK(off.traced.out.find("sigsegv-disposition default\n") != std::string::npos);
    CHECK(off.files.empty());
    CHECK(off.traced.err.empty());
}

TEST_CASE("crash: a module whose file changed since the crash is named by one warning and not symbolized") {
    // Run a copy of the program, so that the copy can be altered afterwards.
    std::string dir = make_temp_dir("crash-build-id");
    std::string copy = dir + "/crash_copy";
    {
        std::ifstream in(bin_dir() + "/" + kProgram, std::ios::binary);
        std::ofstream out(copy, std::ios::binary);
        out << in.rdbuf();
    }
    REQUIRE(chmod(copy.c_str(), 0755) == 0);
    CrashRun r = run_crash("segv", {}, copy);
    REQUIRE(r.traced.exit_code == 128 + SIGSEGV);
    std::string path = crash_file(r);
    nlohmann::json snapshot = load_json(path);
    std::string build_id;
    for (const auto &m : snapshot.at("modules"))
        if (m.at("path") == copy) build_id = m.at("build_id");
    REQUIRE(build_id.size() == 40);

    // Alter one byte of the copy's build id note.
    std::string bytes;
    {
        std::ifstream in(copy, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::string raw;
    for (size_t i = 0; i < build_id.size(); i += 2) raw.push_back(char(std::stoi(build_id.substr(i, 2), nullptr, 16)));
    size_t at = bytes.find(raw);
    REQUIRE(at != std::string::npos);
    bytes[at] = char(bytes[at] ^ 0xff);
    {
        std::ofstream out(copy, std::ios::binary | std::ios::trunc);
        out << bytes;
    }

    RunResult changed = run({cli(), "summary", path}, {false, {}, dir});
    CHECK(changed.exit_code == 0);
    INFO(changed.err);
    // One line, for the copy only (libc and the others still match).
    CHECK(std::count(changed.err.begin(), changed.err.end(), '\n') == 1);
    CHECK(changed.err.find("vramtrace: warning: " + path + ": module " + copy + ": build id " + build_id +
                           " recorded, the file on disk has ") != std::string::npos);
    CHECK(changed.err.find("; its frames are not named") != std::string::npos);
    CHECK(changed.out.find("crash_program.cpp") == std::string::npos); // nothing named from it
    CHECK(changed.out.find("(crash_copy+0x") != std::string::npos);    // module + offset instead

    REQUIRE(unlink(copy.c_str()) == 0);
    RunResult missing = run({cli(), "summary", path}, {false, {}, dir});
    CHECK(missing.exit_code == 0);
    CHECK(missing.err.find("module " + copy + ": file not found; its frames are not named") != std::string::npos);
    CHECK(std::count(missing.err.begin(), missing.err.end(), '\n') == 1);
}


TEST_CASE("crash: a library dlclose'd before the crash is still named (module registry in the crash snapshot)") {
    // vt_dlclose_program: the plugin cudaMallocs 6 MiB from plugin_allocate(), is dlclose'd (gone
    // from /proc/self/maps), then the program abort()s with the buffer still live.
    std::string plugin = bin_dir() + "/libvt_dlclose_plugin.so";
    std::string dir = make_temp_dir("crash-dlclose");
    RunResult traced = run({bin_dir() + "/vt_dlclose_program", plugin, "abort"},
                           {true, {{"VRAMTRACE_OUTPUT", dir + "/snap-%p.json"}, {"VRAMTRACE_SUMMARY", "0"}}, dir});
    INFO("stdout:\n" << traced.out << "stderr:\n" << traced.err);
    REQUIRE(traced.exit_code == 128 + SIGABRT);
    REQUIRE(field_after(traced.out, "unloaded") == "1"); // really unloaded before the crash
    std::vector<std::string> files = list_dir(dir);
    REQUIRE(files.size() == 1);
    REQUIRE(ends_with(files[0], ".crash.json"));
    std::string path = dir + "/" + files[0];
    nlohmann::json snapshot = load_json(path);
    CHECK(snapshot.at("process").at("reason") == "crash");
    CHECK(snapshot.at("process").at("signal") == "SIGABRT");

    auto expected = parse_expectations(traced.out);
    REQUIRE(expected.size() == 1);
    CHECK(allocation_keys(snapshot) == expected_keys(expected));

    // The plugin in modules[], as it was loaded: path, base (l_addr) and build id.
    std::string build_id = readelf_build_id(plugin);
    REQUIRE(build_id.size() == 40);
    int plugin_index = -1, listed = 0;
    const auto &modules = snapshot.at("modules");
    for (size_t i = 0; i < modules.size(); ++i) {
        if (modules[i].at("path") != plugin) continue;
        ++listed;
        plugin_index = int(i);
        CHECK(modules[i].at("base") == field_after(traced.out, "plugin-base"));
        CHECK(modules[i].at("build_id") == build_id);
    }
    REQUIRE(listed == 1);
    // The allocation's stack has a frame in the plugin (module index and offset, not -1).
    const auto &allocation = snapshot.at("allocations").at(0);
    bool in_plugin = false;
    for (const auto &stack : snapshot.at("stacks")) {
        if (stack.at("id") != allocation.at("stack")) continue;
        for (const auto &index : stack.at("frames"))
            if (snapshot.at("frames").at(index.get<size_t>()).at("module") == plugin_index) in_plugin = true;
    }
    CHECK(in_plugin);

    // `vramtrace summary` names the call site in the unloaded plugin from its file on disk.
    RunResult summary = run({cli(), "summary", path}, {false, {}, dir});
    INFO(summary.out << summary.err);
    CHECK(summary.exit_code == 0);
    CHECK(summary.err.empty()); // every module found on disk with its build id
    // "vramtrace:   plugin_allocate at DIRS/dlclose_plugin.c:LINE (libvt_dlclose_plugin.so)", once,
    // in the top call sites, which the live section of a snapshot taken before exit points to
    // (DIRS absolute or relative, as the build recorded them).
    const std::string suffix = "/dlclose_plugin.c:" + std::to_string(expected[0].line) + " (libvt_dlclose_plugin.so)";
    int named = 0;
    std::istringstream lines(summary.out);
    for (std::string line; std::getline(lines, line);) {
        size_t at = line.find_first_not_of(' ', line.find(':') + 1);
        if (line.rfind("vramtrace:", 0) == 0 && at != std::string::npos &&
            line.compare(at, 19, "plugin_allocate at ") == 0 && ends_with(line, suffix))
            ++named;
    }
    CHECK(named == 1);
}
