// The file writer every report goes through (lib/dump/atomic_file.h): character devices and
// FIFOs written in place, sockets and directories refused, nothing renamed over a non-regular file,
// "-" as standard output, SIGPIPE from a FIFO's reader gone turned into an error, and removal only
// of the file this process created. Every device node, FIFO and symlink is made inside a temporary
// directory of the test's own (a character device with /dev/null's numbers, made with mknod).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <algorithm>
#include <fstream>
#include <thread>
#include <memory>
#include <vector>

#include "report_test_data.h"
#include "dump/atomic_file.h"

using namespace vramtrace;

namespace {

// A fresh directory, removed with everything in it when the test program ends.
std::string temp_dir() {
    static std::vector<std::unique_ptr<vt_test::TempDir>> dirs;
    dirs.push_back(std::make_unique<vt_test::TempDir>());
    std::string file = dirs.back()->file("x");
    return file.substr(0, file.size() - 2);
}

std::vector<std::string> names_in(const std::string &dir) {
    std::vector<std::string> names;
    DIR *d = opendir(dir.c_str());
    REQUIRE(d != nullptr);
    while (dirent *e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

std::string read_all(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool fill_hello(int fd, void *, std::string *) { return write(fd, "hello\n", 6) == 6; }

// A character device with the numbers of /dev/null (1, 3), made inside `dir`: needs CAP_MKNOD.
bool make_null_device(const std::string &path) { return mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0; }

OutputFileOptions library_options() {
    OutputFileOptions o;
    o.fifo_without_waiting = true;
    return o;
}

} // namespace

TEST_CASE("output file: a character device at the target is written in place, never replaced") {
    std::string dir = temp_dir();
    std::string dev = dir + "/null";
    if (!make_null_device(dev)) {
        WARN("mknod needs CAP_MKNOD (run as root): skipped");
        return;
    }
    struct stat before {};
    REQUIRE(lstat(dev.c_str(), &before) == 0);
    for (unsigned mode : {0600u, 0644u}) {
        OutputFileOptions options = library_options();
        options.mode = mode;
        std::string error;
        WrittenFile written;
        written.created = true;
        REQUIRE(write_output_file(dev, &fill_hello, nullptr, &error, options, &written));
        CHECK_FALSE(written.created);
        struct stat after {};
        REQUIRE(lstat(dev.c_str(), &after) == 0);
        CHECK(S_ISCHR(after.st_mode));
        CHECK(after.st_rdev == before.st_rdev);
        CHECK(after.st_ino == before.st_ino);
        CHECK(after.st_mode == before.st_mode); // never chmod'ed
        CHECK(names_in(dir) == std::vector<std::string>{"null"});
        // At exit only a file we created is removed: never the device.
        CHECK_FALSE(remove_written_file(dev, written));
        CHECK(lstat(dev.c_str(), &after) == 0);
    }
    // The trigger snapshots of an exit snapshot written in place go to the same device.
    CHECK(output_written_in_place(dev));
}

TEST_CASE("output file: a FIFO is written in place, with no reader the library's write fails at once") {
    std::string dir = temp_dir();
    std::string fifo = dir + "/fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    std::string error;
    CHECK_FALSE(write_output_file(fifo, &fill_hello, nullptr, &error, library_options()));
    CHECK(error == fifo + ": a FIFO with no reader: not written");
    CHECK(names_in(dir) == std::vector<std::string>{"fifo"});

    std::string got;
    std::thread reader([&] {
        int fd = open(fifo.c_str(), O_RDONLY);
        char buf[64];
        for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
        close(fd);
    });
    OutputFileOptions waiting; // the CLI's: the open waits for the reader
    REQUIRE(write_output_file(fifo, &fill_hello, nullptr, &error, waiting));
    reader.join();
    CHECK(got == "hello\n");
    struct stat st {};
    REQUIRE(lstat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK(names_in(dir) == std::vector<std::string>{"fifo"});
}

namespace {
bool fill_4_mib(int fd, void *, std::string *error) {
    std::string chunk(1 << 16, 'x');
    for (int i = 0; i < 64; ++i) {
        if (write(fd, chunk.data(), chunk.size()) != ssize_t(chunk.size())) {
            *error = std::string("write: ") + strerror(errno);
            return false;
        }
    }
    return true;
}
} // namespace

TEST_CASE("output file: a FIFO whose reader goes away gives EPIPE, not a SIGPIPE death") {
    std::string dir = temp_dir();
    std::string fifo = dir + "/fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // In a child, with SIGPIPE at its default action (terminate), as in most programs.
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        std::thread reader([&] {
            int fd = open(fifo.c_str(), O_RDONLY);
            char c;
            (void)!read(fd, &c, 1);
            close(fd);
        });
        OutputFileOptions waiting;
        std::string error;
        bool ok = write_output_file(fifo, &fill_4_mib, nullptr, &error, waiting);
        reader.join();
        sigset_t pending;
        sigpending(&pending);
        _exit(!ok && error == "write: Broken pipe" && sigismember(&pending, SIGPIPE) == 0 ? 0 : 3);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("output file: a directory or a socket at the target is refused with one line") {
    std::string dir = temp_dir();
    std::string sub = dir + "/sub";
    REQUIRE(mkdir(sub.c_str(), 0700) == 0);
    std::string error;
    CHECK_FALSE(write_output_file(sub, &fill_hello, nullptr, &error, library_options()));
    CHECK(error == sub + " is a directory: not written");

    std::string sock_path = dir + "/sock";
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(s >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock_path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(bind(s, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    CHECK_FALSE(write_output_file(sock_path, &fill_hello, nullptr, &error, library_options()));
    CHECK(error == sock_path + " is a socket: not written");
    close(s);
    struct stat st {};
    REQUIRE(lstat(sock_path.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK(names_in(dir) == std::vector<std::string>{"sock", "sub"});
    CHECK(names_in(sub).empty());
}

TEST_CASE("output file: a trusted symlink to a device is followed, anyone else's is replaced") {
    std::string dir = temp_dir(); // 0700, ours: a symlink we make here is trusted
    std::string dev = dir + "/null";
    if (!make_null_device(dev)) {
        WARN("mknod needs CAP_MKNOD (run as root): skipped");
        return;
    }
    std::string link = dir + "/out.json";
    REQUIRE(symlink("null", link.c_str()) == 0);
    std::string error;
    REQUIRE(write_output_file(link, &fill_hello, nullptr, &error, library_options()));
    struct stat st {};
    REQUIRE(lstat(link.c_str(), &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    REQUIRE(lstat(dev.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));

    // The same symlink owned by another user (nobody): not followed, replaced by the report.
    REQUIRE(lchown(link.c_str(), 65534, 65534) == 0);
    CHECK_FALSE(output_written_in_place(link));
    WrittenFile written;
    REQUIRE(write_output_file(link, &fill_hello, nullptr, &error, library_options(), &written));
    CHECK(written.created);
    REQUIRE(lstat(link.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(read_all(link) == "hello\n");
    REQUIRE(lstat(dev.c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));

    // In a directory others can write to (not sticky), even our own symlink is not followed.
    std::string shared = dir + "/shared";
    REQUIRE(mkdir(shared.c_str(), 0777) == 0);
    REQUIRE(chmod(shared.c_str(), 0777) == 0);
    std::string link2 = shared + "/out.json";
    REQUIRE(symlink("../null", link2.c_str()) == 0);
    CHECK_FALSE(output_written_in_place(link2));
    REQUIRE(write_output_file(link2, &fill_hello, nullptr, &error, library_options()));
    REQUIRE(lstat(link2.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
}

TEST_CASE("output file: nothing is renamed over a FIFO that appears at the target while writing") {
    std::string dir = temp_dir();
    std::string target = dir + "/report.json";
    struct Ctx {
        std::string target;
    } ctx{target};
    auto fill = [](int fd, void *c, std::string *) {
        mkfifo(static_cast<Ctx *>(c)->target.c_str(), 0600);
        return write(fd, "x", 1) == 1;
    };
    std::string error;
    CHECK_FALSE(write_output_file(target, fill, &ctx, &error, library_options()));
    CHECK(error == target + " is a FIFO now: not replaced");
    struct stat st {};
    REQUIRE(lstat(target.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK(names_in(dir) == std::vector<std::string>{"report.json"}); // the temporary file is gone
}

TEST_CASE("output file: \"-\" is standard output only where asked for") {
    std::string dir = temp_dir();
    std::string captured = dir + "/captured";
    int fd = open(captured.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    int saved = dup(STDOUT_FILENO);
    REQUIRE(saved >= 0);
    REQUIRE(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
    OutputFileOptions cli;
    cli.dash_is_stdout = true;
    std::string error;
    bool ok = write_output_file("-", &fill_hello, nullptr, &error, cli);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(fd);
    REQUIRE(ok);
    CHECK(read_all(captured) == "hello\n");

    // Without dash_is_stdout "-" is a file name (relative to the working directory).
    char cwd[4096];
    REQUIRE(getcwd(cwd, sizeof cwd) != nullptr);
    REQUIRE(chdir(dir.c_str()) == 0);
    ok = write_output_file("-", &fill_hello, nullptr, &error, library_options());
    REQUIRE(chdir(cwd) == 0);
    REQUIRE(ok);
    CHECK(read_all(dir + "/-") == "hello\n");
}

TEST_CASE("output file: only the file this process created is removed (same inode)") {
    std::string dir = temp_dir();
    std::string target = dir + "/metrics.prom";
    OutputFileOptions options = library_options();
    options.mode = 0644;
    WrittenFile first, second;
    std::string error;
    REQUIRE(write_output_file(target, &fill_hello, nullptr, &error, options, &first));
    REQUIRE(first.created);
    struct stat st {};
    REQUIRE(lstat(target.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    CHECK(uint64_t(st.st_ino) == first.ino);
    // Someone else's file at the name since: kept.
    REQUIRE(write_output_file(target, &fill_hello, nullptr, &error, options, &second));
    CHECK(second.ino != first.ino);
    CHECK_FALSE(remove_written_file(target, first));
    CHECK(lstat(target.c_str(), &st) == 0);
    CHECK(remove_written_file(target, second));
    CHECK(names_in(dir).empty());
}
