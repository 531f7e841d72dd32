// The library never changes the program's umask (a preload library must not change what the
// program sees): tests/e2e/programs/umask_program.cpp creates files from a thread of its own
// while the library starts its reporter and live socket, 200 times, and reads the umask around
// every start-up path.
#include <catch2/catch.hpp>

#include <string>

#include <sys/stat.h>

#include "harness.h"

using namespace e2e;

TEST_CASE("umask: unchanged around every start-up path, while a host thread creates files of the modes its umask gives") {
    std::string dir = make_temp_dir("umask");
    std::string xdg = dir + "/xdg", files = dir + "/files", prom = dir + "/prom";
    for (const std::string &d : {xdg, files, prom}) REQUIRE(mkdir(d.c_str(), 0700) == 0);
    RunResult r = run({"sh", "-c", "umask 022 && exec \"$0\" \"$@\"", bin_dir() + "/vt_umask_program",
                       xdg + "/vramtrace", files, "200"},
                      {true,
                       {{"XDG_RUNTIME_DIR", xdg},
                        {"VRAMTRACE_OUTPUT", dir + "/exit.json"},
                        {"VRAMTRACE_SUMMARY", "0"},
                        {"OOM_SNAPSHOT", dir + "/exit.oom-1.json"},
                        {"VRAMTRACE_PROMETHEUS_TEXTFILE", prom + "/vt.prom"},
                        {"VRAMTRACE_PROMETHEUS_PERIOD", "0.05"}},
                       dir});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "umask-at-main 0022\n"
                   "rounds 200 wrong-modes 0 umask-changed 0 no-socket 0 failed 0\n"
                   "umask-after-first-allocation 0022, socket 0600\n"
                   "umask-after-oom-snapshot 0022\n"
                   "umask-after-dump 0022\n"
                   "umask-after-prometheus 0022\n");
    // The files the library wrote meanwhile have their documented modes.
    struct stat st {};
    REQUIRE(stat((dir + "/files/dump.json").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    REQUIRE(stat((prom + "/vt.prom").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
}
