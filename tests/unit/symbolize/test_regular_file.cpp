// symbolize/regular_file.h: files opened to read without waiting, regular only, within the rules.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "symbolize/regular_file.h"

using namespace vramtrace::symbolize;

namespace {

// A fresh directory under the system's temporary directory, removed with its contents.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "vt-regular-file-XXXXXX").string();
        REQUIRE(mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~ScratchDir() { std::filesystem::remove_all(path); }
    std::string operator/(const char *name) const { return path + "/" + name; }
};

void write_file(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary) << text;
}

// open_regular_file's result: the errno it failed with, 0 when it opened (closed again here).
int open_errno(const std::string &path, const RegularFileRules &rules) {
    errno = 0;
    int fd = open_regular_file(AT_FDCWD, path.c_str(), rules);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno;
}

} // namespace

TEST_CASE("regular file: a FIFO, a directory and a socket are refused without waiting", "[regular_file]") {
    ScratchDir d;
    REQUIRE(mkfifo((d / "fifo").c_str(), 0600) == 0);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string sock_path = d / "sock";
    REQUIRE(sock_path.size() < sizeof addr.sun_path);
    memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
    REQUIRE(bind(sock, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    // A FIFO without a writer would block a plain open forever; this returns at once.
    CHECK(open_errno(d / "fifo", {}) == EINVAL);
    CHECK(open_errno(d.path, {}) == EINVAL);
    CHECK(open_errno(sock_path, {}) == EINVAL);
    CHECK(open_errno(d / "missing", {}) == ENOENT);
    close(sock);
}

TEST_CASE("regular file: a regular file opens blocking, with its stat, size bound and symlinks as asked",
          "[regular_file]") {
    ScratchDir d;
    write_file(d / "file", "twelve bytes");
    REQUIRE(symlink((d / "file").c_str(), (d / "link").c_str()) == 0);
    struct stat st {};
    int fd = open_regular_file(AT_FDCWD, (d / "file").c_str(), {}, &st);
    REQUIRE(fd >= 0);
    CHECK(st.st_size == 12);
    CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
    CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) == FD_CLOEXEC);
    close(fd);
    CHECK(open_errno(d / "file", {true, false, 12}) == 0);
    CHECK(open_errno(d / "file", {true, false, 11}) == EFBIG);
    CHECK(open_errno(d / "link", {true, false, 0}) == 0);
    CHECK(open_errno(d / "link", {false, false, 0}) == ELOOP);
    // Owned by this process's user: trusted.
    CHECK(open_errno(d / "file", {false, true, 0}) == 0);
    if (geteuid() == 0) {
        REQUIRE(chown((d / "file").c_str(), 65534, 65534) == 0);
        CHECK(open_errno(d / "file", {false, true, 0}) == EPERM);
        CHECK(open_errno(d / "file", {false, false, 0}) == 0);
    }
}

TEST_CASE("regular file: read whole or not at all", "[regular_file]") {
    ScratchDir d;
    write_file(d / "rules", "skip module=libfoo*\n");
    std::string text = "left over";
    REQUIRE(read_regular_file((d / "rules").c_str(), {true, false, 1 << 20}, &text));
    CHECK(text == "skip module=libfoo*\n");
    CHECK_FALSE(read_regular_file((d / "rules").c_str(), {true, false, 4}, &text));
    CHECK(errno == EFBIG);
    REQUIRE(mkfifo((d / "fifo").c_str(), 0600) == 0);
    CHECK_FALSE(read_regular_file((d / "fifo").c_str(), {}, &text));
    CHECK(errno == EINVAL);
}

TEST_CASE("regular file: a directory others can add names to", "[regular_file]") {
    struct stat st {};
    st.st_uid = geteuid();
    st.st_mode = S_IFDIR | 0755;
    CHECK_FALSE(others_can_write(st));
    st.st_mode = S_IFDIR | 0775;
    CHECK(others_can_write(st));
    st.st_mode = S_IFDIR | 01777;
    CHECK(others_can_write(st));
    st.st_mode = S_IFDIR | 0755;
    st.st_uid = 0;
    CHECK_FALSE(others_can_write(st));
    st.st_uid = geteuid() == 65534 ? 65533 : 65534;
    CHECK(others_can_write(st));
}
