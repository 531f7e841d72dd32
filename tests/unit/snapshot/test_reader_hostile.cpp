// The snapshot reader against hostile files: bytes after a valid snapshot (a NUL and garbage, which
// the JSON parser takes for the end of its input), device ordinals outside the documented range
// (-2 to 1023), and inputs that are not regular files (refused at once, or a FIFO read once).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

#include "snapshot/reader/snapshot_reader.h"
#include "report_test_data.h"
#include "snapshot/snapshot_writer.h"

using namespace vramtrace::snapshot;
using vramtrace::snapshot::read_snapshot_file;

namespace {

// "" on success, else the one-line error.
std::string read_error(const std::string &content) {
    vt_test::TempDir dir;
    std::string path = dir.write("in.json", content);
    Snapshot out;
    std::string error;
    if (read_snapshot_file(path, &out, &error)) return "";
    CHECK(error.rfind(path + ": ", 0) == 0);
    CHECK(error.find('\n') == std::string::npos);
    return error.substr(path.size() + 2);
}

} // namespace

TEST_CASE("reader: bytes after a valid snapshot are an error, whitespace is not") {
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    const std::string kTrailing = "bytes after the end of the snapshot (a NUL byte or other data)";
    CHECK(read_error(json + std::string("\0garbage", 8)) == kTrailing);
    CHECK(read_error(json + std::string("\0", 1)) == kTrailing);
    CHECK(read_error(json + std::string(100000, ' ') + std::string("\0{}", 3)) == kTrailing);
    CHECK(read_error(json + " \n\t\r\n") == "");
    CHECK(read_error(json + "{}").find("malformed JSON") != std::string::npos);
}

TEST_CASE("reader: device ordinals outside -2..1023 are refused where they are read") {
    for (int device : {1024, 100000000, 2147483647, -3}) {
        INFO("device " << device);
        std::string d = std::to_string(device);
        const std::string why = ".device: " + d + " is not a device ordinal (-2 to 1023)";
        Snapshot s = vt_test::golden_snapshot();
        REQUIRE(s.allocations.size() >= 1);
        s.allocations[0].device = device;
        CHECK(read_error(vt_test::snapshot_json(s)) == "allocations[0]" + why);
        s = vt_test::golden_snapshot();
        s.devices[0].device = device;
        CHECK(read_error(vt_test::snapshot_json(s)) == "devices[0]" + why);
    }
    Snapshot s = vt_test::golden_snapshot();
    s.allocations[0].device = 1023;
    CHECK(read_error(vt_test::snapshot_json(s)) == "");
}

TEST_CASE("reader: a socket is refused at once, a FIFO is read once") {
    vt_test::TempDir dir;
    std::string sock_path = dir.file("sock.json");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(s >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock_path.c_str());
    REQUIRE(bind(s, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    Snapshot out;
    std::string error;
    CHECK_FALSE(read_snapshot_file(sock_path, &out, &error));
    CHECK(error == sock_path + ": is a socket, not a snapshot file (only regular files and FIFOs are read)");
    close(s);

    std::string fifo = dir.file("fifo.json");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    std::string json = vt_test::snapshot_json(vt_test::golden_snapshot());
    std::thread writer([&] {
        int fd = open(fifo.c_str(), O_WRONLY);
        REQUIRE(fd >= 0);
        CHECK(write(fd, json.data(), json.size()) == ssize_t(json.size()));
        close(fd);
    });
    bool ok = read_snapshot_file(fifo, &out, &error);
    writer.join();
    INFO(error);
    CHECK(ok);
    CHECK(out == vt_test::golden_snapshot());
}
