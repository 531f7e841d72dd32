// How reports write a snapshot's figures (report/text_format.h).
#include <catch2/catch.hpp>

#include <sstream>

#include "report/text_format.h"
#include "report_test_data.h"

using namespace vramtrace::report;
using namespace vramtrace::snapshot;

TEST_CASE("format_bytes: binary units, two decimals, rounded half up", "[text_format]") {
    CHECK(format_bytes(0) == "0 B");
    CHECK(format_bytes(1023) == "1023 B");
    CHECK(format_bytes(1024) == "1.00 KiB");
    CHECK(format_bytes(1536) == "1.50 KiB");
    CHECK(format_bytes(1029) == "1.00 KiB");  // 1.0048828 -> 1.00
    CHECK(format_bytes(1030) == "1.01 KiB");  // 1.0058594 -> 1.01
    CHECK(format_bytes(3145728) == "3.00 MiB");
    CHECK(format_bytes(1048575) == "1.00 MiB"); // 1023.999 KiB rounds into the next unit
    CHECK(format_bytes(1073741824) == "1.00 GiB");
    CHECK(format_bytes(1099511627776ull) == "1.00 TiB");
    CHECK(format_bytes(1125899906842624ull) == "1.00 PiB");
    CHECK(format_bytes(UINT64_MAX) == "16.00 EiB");
}

// The cases the HTML viewer's fmtBytes is held to as well (tests/browser/viewer_test.cjs): the two
// round the same way.
TEST_CASE("format_bytes: the cases of data/format_bytes_cases.txt", "[text_format]") {
    std::istringstream cases(vt_test::read_file(std::string(VT_TEST_DATA_DIR) + "/format_bytes_cases.txt"));
    int checked = 0;
    for (std::string line; std::getline(cases, line);) {
        if (line.empty() || line[0] == '#') continue;
        size_t tab = line.find('\t');
        REQUIRE(tab != std::string::npos);
        uint64_t bytes = std::stoull(line.substr(0, tab));
        CHECK(format_bytes(bytes) == line.substr(tab + 1));
        ++checked;
    }
    CHECK(checked == 21);
}

TEST_CASE("format_bytes_exact adds the byte count above 1 KiB", "[text_format]") {
    CHECK(format_bytes_exact(512) == "512 B");
    CHECK(format_bytes_exact(3145728) == "3.00 MiB (3145728 B)");
    CHECK(format_bytes_exact(4194816) == "4.00 MiB (4194816 B)");
}

TEST_CASE("format_duration", "[text_format]") {
    CHECK(format_duration(0) == "0 ms");
    CHECK(format_duration(849600000) == "850 ms");
    CHECK(format_duration(5250000000ull) == "5.25 s");
    CHECK(format_duration(59994000000ull) == "59.99 s");
    CHECK(format_duration(59996000000ull) == "1 min 00 s");
    CHECK(format_duration(725000000000ull) == "12 min 05 s");
    CHECK(format_duration(11220000000000ull) == "3 h 07 min");
}

TEST_CASE("device labels and hex", "[text_format]") {
    CHECK(device_label(0) == "cuda:0");
    CHECK(device_label(7) == "cuda:7");
    CHECK(device_label(-1) == "host");
    CHECK(device_label(-2) == "unknown");
    CHECK(device_label(-5) == "device -5");
    CHECK(hex_u64(0) == "0x0");
    CHECK(hex_u64(0x7f3a00000000) == "0x7f3a00000000");
    CHECK(hex_u64(UINT64_MAX) == "0xffffffffffffffff");
}

TEST_CASE("describe_frame", "[text_format]") {
    Snapshot s = vt_test::golden_snapshot();
    CHECK(describe_frame(s, s.frames[1]) == "make_buffer(unsigned long) at /src/train.cpp:42 (train)");
    CHECK(describe_frame(s, s.frames[4]) == "worker_thread() (train+0x3000)");
    CHECK(describe_frame(s, s.frames[0]) == "cudaMalloc (libcudart.so.13+0x12345)");
    CHECK(describe_frame(s, s.frames[5]) == "?? (0x7fffe0001000)");
    Frame file_no_line{0x10, -1, 0, "f", "/a.c", 0};
    CHECK(describe_frame(s, file_no_line) == "f at /a.c");
}
