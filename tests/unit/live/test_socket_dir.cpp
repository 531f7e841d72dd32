// The live socket's directory and the checks both ends make (lib/live/socket_dir.h), in a scratch
// directory of the test's own.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "live/socket_dir.h"

using namespace vramtrace::live;

namespace {

// A fresh directory under the test's working directory, removed when the test case ends.
struct Scratch {
    std::string path;
    Scratch() {
        char name[] = "live-unit.XXXXXX";
        REQUIRE(mkdtemp(name) != nullptr);
        char *full = realpath(name, nullptr);
        path = full;
        free(full);
    }
    ~Scratch() { std::filesystem::remove_all(path); }
};

struct Env {
    std::string saved;
    bool had;
    Env(const char *value) {
        const char *old = getenv("XDG_RUNTIME_DIR");
        had = old != nullptr;
        if (had) saved = old;
        if (value) setenv("XDG_RUNTIME_DIR", value, 1);
        else unsetenv("XDG_RUNTIME_DIR");
    }
    ~Env() {
        if (had) setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
        else unsetenv("XDG_RUNTIME_DIR");
    }
};

} // namespace

TEST_CASE("the socket directory comes from XDG_RUNTIME_DIR when absolute and there, else /tmp/vramtrace-UID") {
    std::string fallback = "/tmp/vramtrace-" + std::to_string(getuid());
    Scratch scratch;
    {
        Env e((scratch.path + "/").c_str());
        CHECK(socket_directory() == scratch.path + "/vramtrace");
    }
    {
        Env e((scratch.path + "/missing").c_str());
        CHECK(socket_directory() == fallback);
    }
    {
        Env e("relative/dir");
        CHECK(socket_directory() == fallback);
    }
    {
        Env e(nullptr);
        CHECK(socket_directory() == fallback);
    }
    CHECK(socket_path("/d", 42) == "/d/42.sock");
}

TEST_CASE("socket names stand for pids, nothing else does") {
    CHECK(pid_of_socket_name("1234.sock") == 1234);
    CHECK(pid_of_socket_name("1.sock") == 1);
    CHECK(pid_of_socket_name("0.sock") == 0);
    CHECK(pid_of_socket_name("01.sock") == 0);
    CHECK(pid_of_socket_name(".sock") == 0);
    CHECK(pid_of_socket_name("12a.sock") == 0);
    CHECK(pid_of_socket_name("12.sock.tmp") == 0);
    CHECK(pid_of_socket_name("12.socket") == 0);
    CHECK(pid_of_socket_name("99999999999.sock") == 0);
}

TEST_CASE("the directory: made 0700, refused when a symlink, not a directory or open to others") {
    Scratch scratch;
    const std::string &base = scratch.path;
    std::string dir = base + "/vramtrace", why;
    REQUIRE(check_directory(dir, true, &why));
    struct stat st {};
    REQUIRE(lstat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(check_directory(dir, false, &why)); // there already: fine

    REQUIRE(chmod(dir.c_str(), 0755) == 0);
    CHECK_FALSE(check_directory(dir, true, &why));
    CHECK(why == dir + ": open to group or others (mode 755); not used");

    std::string link = base + "/link";
    REQUIRE(symlink(dir.c_str(), link.c_str()) == 0);
    REQUIRE(chmod(dir.c_str(), 0700) == 0);
    CHECK_FALSE(check_directory(link, true, &why));
    CHECK(why == link + ": is a symlink; not used");

    std::string file = base + "/file";
    FILE *f = fopen(file.c_str(), "w");
    REQUIRE(f != nullptr);
    fclose(f);
    CHECK_FALSE(check_directory(file, false, &why));
    CHECK(why == file + ": is not a directory; not used");

    CHECK_FALSE(check_directory(base + "/missing/vramtrace", true, &why));
    CHECK(why == base + "/missing/vramtrace: cannot create (No such file or directory); not used");
}

TEST_CASE("a socket path: only a socket of ours, never a symlink or another kind of file") {
    Scratch scratch;
    const std::string &base = scratch.path;
    std::string why;
    CHECK_FALSE(check_socket(base + "/1.sock", &why));
    CHECK(why.empty()); // not there: no complaint

    std::string sock = base + "/2.sock";
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(sock.size() < sizeof addr.sun_path);
    memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    close(fd);
    CHECK(check_socket(sock, &why));

    std::string link = base + "/3.sock";
    REQUIRE(symlink(sock.c_str(), link.c_str()) == 0);
    CHECK_FALSE(check_socket(link, &why));
    CHECK(why == link + ": is a symlink; not used");

    std::string file = base + "/4.sock";
    FILE *f = fopen(file.c_str(), "w");
    REQUIRE(f != nullptr);
    fclose(f);
    CHECK_FALSE(check_socket(file, &why));
    CHECK(why == file + ": is not a socket; not used");
}
