// `cmake --install` lays out bin/, lib/, include/, a CMake package and a pkg-config file, and the
// installed tree still works after it is moved: `vramtrace run` finds the library beside itself.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "harness.h"

using namespace e2e;

namespace {
std::string read_all(const std::string &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
} // namespace

TEST_CASE("an installed vramtrace, moved elsewhere, still finds its library, package files work") {
    std::string dir = make_temp_dir("install");
    std::string build = bin_dir() + "/..";
    RunResult install = run({"cmake", "--install", build, "--prefix", dir + "/prefix"}, {false, {}, dir});
    INFO(install.out << install.err);
    REQUIRE(install.exit_code == 0);
    for (const char *f : {"bin/vramtrace", "lib/libvramtrace.so", "include/vramtrace/vramtrace.h",
                          "lib/cmake/vramtrace/vramtraceConfig.cmake",
                          "lib/cmake/vramtrace/vramtraceConfigVersion.cmake",
                          "lib/cmake/vramtrace/vramtraceTargets.cmake", "lib/pkgconfig/vramtrace.pc"}) {
        INFO(f);
        CHECK(file_exists(dir + "/prefix/" + f));
    }

    // Moved as a whole: nothing in it may point back at the install prefix or the build tree.
    const std::string moved = dir + "/moved";
    REQUIRE(rename((dir + "/prefix").c_str(), moved.c_str()) == 0);
    RunResult r = run({moved + "/bin/vramtrace", "run", "-o", dir + "/snap-%p.json", "--",
                       bin_dir() + "/vt_lifecycle_program", "exec-child"},
                      {false, {}, dir});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    size_t at = r.out.find("ld_preload=");
    REQUIRE(at != std::string::npos);
    CHECK(r.out.substr(at + 11, r.out.find('\n', at) - at - 11) == moved + "/lib/libvramtrace.so");
    CHECK(r.err.find("vramtrace: snapshot written to " + dir + "/snap-") != std::string::npos);

    // The CMake package, found from the moved prefix.
    std::string consumer = dir + "/consumer";
    REQUIRE(system(("mkdir -p '" + consumer + "'").c_str()) == 0);
    std::ofstream(consumer + "/CMakeLists.txt")
        << "cmake_minimum_required(VERSION 3.25)\nproject(consumer LANGUAGES NONE)\n"
           "find_package(vramtrace 0.1 CONFIG REQUIRED)\n"
           "get_target_property(inc vramtrace::headers INTERFACE_INCLUDE_DIRECTORIES)\n"
           "file(WRITE ${CMAKE_BINARY_DIR}/found.txt \"${inc}\\n${vramtrace_PRELOAD_LIBRARY}\\n${vramtrace_EXECUTABLE}\\n\")\n";
    RunResult configure = run({"cmake", "-S", consumer, "-B", consumer + "/build", "-DCMAKE_PREFIX_PATH=" + moved},
                              {false, {}, consumer});
    INFO(configure.out << configure.err);
    REQUIRE(configure.exit_code == 0);
    CHECK(read_all(consumer + "/build/found.txt") ==
          moved + "/include\n" + moved + "/lib/libvramtrace.so\n" + moved + "/bin/vramtrace\n");

    // pkg-config, when the machine has it.
    if (system("command -v pkg-config >/dev/null 2>&1") == 0) {
        RunResult pc = run({"pkg-config", "--cflags", "--libs", "vramtrace"},
                           {false, {{"PKG_CONFIG_PATH", moved + "/lib/pkgconfig"}}, dir});
        INFO(pc.err);
        CHECK(pc.exit_code == 0);
        std::string flags = pc.out;
        while (!flags.empty() && (flags.back() == '\n' || flags.back() == ' ')) flags.pop_back();
        CHECK(flags == "-I" + moved + "/lib/pkgconfig/../../include -ldl");
    } else {
        WARN("pkg-config not installed: the .pc file was not exercised");
    }
}
