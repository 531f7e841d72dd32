// The JSON writer: exact layout (the example of docs/snapshot-format.md), escaping, write errors,
// interrupted and short writes, and output size independent of the buffer.
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include "report_test_data.h"
#include "snapshot/snapshot_writer.h"

using namespace vramtrace::snapshot;

namespace {

// Writes through a pipe and returns what came out.
std::string write_to_string(const Snapshot &s, bool *ok = nullptr, std::string *error = nullptr) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::string out;
    std::thread reader([&] {
        char buf[4096];
        ssize_t n;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, size_t(n));
    });
    std::string err;
    bool result = write_snapshot_json(s, fds[1], &err);
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    if (ok) *ok = result;
    if (error) *error = err;
    return out;
}

// The ```json block of the snapshot format document.
std::string doc_example() {
    std::string doc = vt_test::read_file(std::string(VT_TEST_DATA_DIR) + "/../../../../docs/snapshot-format.md");
    size_t start = doc.find("```json\n");
    REQUIRE(start != std::string::npos);
    start += 8;
    size_t end = doc.find("```", start);
    REQUIRE(end != std::string::npos);
    return doc.substr(start, end - start);
}

} // namespace

TEST_CASE("writer output is exactly the example of docs/snapshot-format.md", "[writer]") {
    bool ok = false;
    std::string json = write_to_string(vt_test::doc_example_snapshot(), &ok);
    CHECK(ok);
    CHECK(json == doc_example());
}

TEST_CASE("writer layout of an empty snapshot", "[writer]") {
    Snapshot s;
    std::string json = write_to_string(s);
    CHECK(json ==
          "{\n"
          "  \"format\": \"vramtrace-snapshot\",\n"
          "  \"schema_version\": 1,\n"
          "  \"process\": {\n"
          "    \"pid\": 0,\n"
          "    \"ppid\": 0,\n"
          "    \"command_line\": [],\n"
          "    \"executable\": \"\",\n"
          "    \"host\": \"\",\n"
          "    \"start_time_ns\": 0,\n"
          "    \"dump_time_ns\": 0,\n"
          "    \"driver_version\": 0,\n"
          "    \"reason\": \"\",\n"
          "    \"vramtrace_version\": \"\",\n"
          "    \"stack_depth\": 0,\n"
          "    \"dump_monotonic_ns\": 0,\n"
          "    \"rank\": \"\",\n"
          "    \"symbolized\": true\n"
          "  },\n"
          "  \"devices\": [],\n"
          "  \"dropped\": {\"allocations\": 0, \"stacks\": 0, \"peak_sites\": 0},\n"
          "  \"oom_count\": 0,\n"
          "  \"peaks\": [],\n"
          "  \"ooms\": [],\n"
          "  \"pools\": [],\n"
          "  \"event_history\": {\"capacity\": 0, \"recorded\": 0, \"wrapped\": false, \"complete_from_ns\": 0},\n"
          "  \"modules\": [],\n"
          "  \"frames\": [],\n"
          "  \"stacks\": [],\n"
          "  \"allocations\": [],\n"
          "  \"events\": []\n"
          "}\n");
}

TEST_CASE("writer escapes strings and replaces invalid UTF-8", "[writer]") {
    auto escaped = [](const std::string &text) {
        Snapshot s;
        s.process.host = text;
        std::string json = write_to_string(s);
        size_t at = json.find("\"host\": ");
        REQUIRE(at != std::string::npos);
        at += 8;
        return json.substr(at, json.find(",\n", at) - at);
    };
    CHECK(escaped("plain") == "\"plain\"");
    CHECK(escaped("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(escaped("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
    CHECK(escaped(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\x7f\"");
    CHECK(escaped(std::string("nul\0here", 8)) == "\"nul\\u0000here\"");
    CHECK(escaped("/path/é/日本/😀") == "\"/path/é/日本/😀\""); // valid UTF-8 passes as is
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(escaped("a\xff" "b") == "\"a" + fffd + "b\"");           // invalid byte
    CHECK(escaped("\xc3") == "\"" + fffd + "\"");                  // truncated sequence at the end
    CHECK(escaped("\xc3(") == "\"" + fffd + "(\"");                // bad continuation
    CHECK(escaped("\xc0\xaf") == "\"" + fffd + fffd + "\"");       // overlong '/'
    CHECK(escaped("\xed\xa0\x80") == "\"" + fffd + fffd + fffd + "\""); // UTF-16 surrogate
    CHECK(escaped("\xf4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\""); // > U+10FFFF
    CHECK(escaped("\xe6\x97" "x") == "\"" + fffd + "x\"");         // maximal subpart: one U+FFFD
}

TEST_CASE("writer reports a full disk", "[writer]") {
    int fd = ::open("/dev/full", O_WRONLY);
    if (fd < 0) {
        WARN("no /dev/full here");
        return;
    }
    std::string error;
    CHECK_FALSE(write_snapshot_json(vt_test::golden_snapshot(), fd, &error));
    CHECK(error == "write failed: No space left on device");
    ::close(fd);
}

TEST_CASE("writer reports a bad fd and a closed pipe without dying of SIGPIPE", "[writer]") {
    std::string error;
    CHECK_FALSE(write_snapshot_json(Snapshot{}, -1, &error));
    CHECK(error == "write failed: invalid file descriptor");
    CHECK_FALSE(write_snapshot_json(Snapshot{}, 1000000, &error));
    CHECK(error == "write failed: Bad file descriptor");
    CHECK_FALSE(write_snapshot_json(Snapshot{}, 1000000, nullptr)); // no error string wanted

    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::close(fds[0]);
    CHECK_FALSE(write_snapshot_json(Snapshot{}, fds[1], &error)); // SIGPIPE would end this test
    CHECK(error == "write failed: Broken pipe");
    ::close(fds[1]);
    sigset_t pending;
    sigpending(&pending);
    CHECK_FALSE(sigismember(&pending, SIGPIPE)); // consumed, not left pending
}

namespace {
std::atomic<int> g_alarms{0};
extern "C" void count_alarm(int) { g_alarms.fetch_add(1, std::memory_order_relaxed); }
} // namespace

TEST_CASE("writer resumes interrupted and short writes (200k allocations through a slow pipe)", "[writer]") {
    Snapshot s = vt_test::golden_snapshot();
    const Allocation proto = s.allocations[0];
    s.allocations.clear();
    for (uint64_t i = 0; i < 200000; ++i) {
        Allocation a = proto;
        a.address = 0x7f0000000000 + i * 0x1000;
        a.size = 1 + i % 5000;
        a.time_ns = i;
        s.allocations.push_back(a);
    }

    // SIGALRM every 200 us without SA_RESTART: the writer's write() calls get EINTR (nothing written)
    // or return short counts (part written). The reader drains the pipe slowly in small reads.
    struct sigaction sa {}, old {};
    sa.sa_handler = count_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    REQUIRE(::sigaction(SIGALRM, &sa, &old) == 0);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::string out;
    std::thread reader([&] {
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGALRM);
        pthread_sigmask(SIG_BLOCK, &block, nullptr); // the alarms go to the writing thread
        char buf[1000];
        ssize_t n;
        size_t reads = 0;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
            out.append(buf, size_t(n));
            if (++reads % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    });
    itimerval timer{{0, 200}, {0, 200}};
    ::setitimer(ITIMER_REAL, &timer, nullptr);
    std::string error;
    bool ok = write_snapshot_json(s, fds[1], &error);
    itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    ::sigaction(SIGALRM, &old, nullptr);

    CHECK(ok);
    CHECK(error.empty());
    CHECK(g_alarms.load() > 0);
    // The same bytes as an uninterrupted write.
    std::string expected = write_to_string(s);
    CHECK(out.size() == expected.size());
    CHECK(out == expected);
    CHECK(out.size() > 10 * kSnapshotWriteBuffer);
}

TEST_CASE("writer streams into a non-blocking pipe", "[writer]") {
    Snapshot s = vt_test::golden_snapshot();
    for (int i = 0; i < 20000; ++i) s.allocations.push_back(s.allocations[size_t(i % 9)]);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK); // writes hit EAGAIN
    std::string out;
    std::thread reader([&] {
        char buf[512];
        ssize_t n;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
            out.append(buf, size_t(n));
            std::this_thread::yield();
        }
    });
    std::string error;
    bool ok = write_snapshot_json(s, fds[1], &error);
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    CHECK(ok);
    CHECK(out == write_to_string(s));
}
