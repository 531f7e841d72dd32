// The pickle export against hostile snapshots (docs/exports.md, "pickle"): every length and index
// checked against its opcode's width before anything is written (a string of 2^32 bytes and more is
// cut, never declared shorter than it is), only whitelisted opcodes, device ordinals bounded, and
// every pickle made here loaded with the restricted unpickler (tests/cli/restricted_unpickle.py).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "export/export.h"
#include "export/pickle_writer.h"
#include "export_fixture.h"
#include "snapshot/device_range.h"

using namespace vramtrace;
using exporter::PickleWriter;
using Op = PickleWriter::Op;

namespace {

// Loads the pickle with tests/cli/restricted_unpickle.py (python3); returns its output line.
std::string restricted_load(const std::string &bytes, bool *ok) {
    char path[] = "/tmp/vt-pickle-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    close(fd);
    std::string command = std::string("python3 ") + VT_RESTRICTED_UNPICKLE + " " + path + " 2>&1";
    std::string output;
    FILE *p = popen(command.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[512];
    while (fgets(buf, sizeof buf, p)) output += buf;
    *ok = pclose(p) == 0;
    unlink(path);
    return output;
}

void check_loads(const std::string &bytes) {
    bool ok = false;
    std::string output = restricted_load(bytes, &ok);
    INFO(output);
    CHECK(ok);
}

uint32_t le32(const std::string &s, size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + size_t(i)]);
    return v;
}

} // namespace

TEST_CASE("pickle safety: each length is checked against its opcode's width", "[export]") {
    CHECK(PickleWriter::fits_width(255, 1));
    CHECK_FALSE(PickleWriter::fits_width(256, 1));
    CHECK(PickleWriter::fits_width(0xffffffffull, 4));
    CHECK_FALSE(PickleWriter::fits_width(uint64_t(1) << 32, 4));
    CHECK(PickleWriter::string_opcode(255) == Op::ShortBinUnicode);
    CHECK(PickleWriter::string_opcode(256) == Op::BinUnicode);
    CHECK(PickleWriter::string_opcode(PickleWriter::kMaxStringBytes) == Op::BinUnicode);
    CHECK_FALSE(PickleWriter::string_opcode(PickleWriter::kMaxStringBytes + 1));
    // 2^32 + 8 bytes must never be declared as 8 (the rest would be read as opcodes): such a size
    // has no opcode, and str() keeps a bounded prefix decided from the size alone.
    for (uint64_t size : {uint64_t(1) << 32, (uint64_t(1) << 32) + 8, uint64_t(UINT64_MAX)}) {
        CHECK_FALSE(PickleWriter::string_opcode(size));
        CHECK(PickleWriter::kept_string_bytes(size) ==
              PickleWriter::kMaxStringBytes - PickleWriter::kTruncatedMarker.size());
    }
    CHECK(PickleWriter::kept_string_bytes(1000) == 1000);
}

TEST_CASE("pickle safety: a string of 2^32 + 8 bytes is cut and marked, its length declared exactly", "[export]") {
    // 4 GiB of zero pages reserved, not touched: str() reads only the prefix it keeps.
    const size_t size = (size_t(1) << 32) + 8;
    void *p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(p != MAP_FAILED);
    PickleWriter w(true);
    w.str(std::string_view(static_cast<const char *>(p), size));
    munmap(p, size);
    const std::string &out = w.fragment();
    REQUIRE(out.size() == 5 + PickleWriter::kMaxStringBytes);
    CHECK(out[0] == 'X'); // BINUNICODE
    CHECK(le32(out, 1) == PickleWriter::kMaxStringBytes);
    CHECK(out.substr(out.size() - PickleWriter::kTruncatedMarker.size()) == PickleWriter::kTruncatedMarker);

    // The same through a whole pickle, loaded by the restricted unpickler.
    PickleWriter whole;
    whole.begin_dict();
    whole.key("name");
    whole.str(std::string(PickleWriter::kMaxStringBytes + 3, 'a'));
    whole.end_dict();
    std::string bytes = whole.finish();
    check_loads(bytes);
    CHECK(bytes.find("a...[truncated]") != std::string::npos);
}

TEST_CASE("pickle safety: a string is cut on a UTF-8 boundary, invalid UTF-8 is replaced", "[export]") {
    // "é" (2 bytes) straddling the cut: kept whole or not at all.
    std::string text(PickleWriter::kMaxStringBytes - PickleWriter::kTruncatedMarker.size() - 1, 'a');
    text += "\xc3\xa9";
    text += std::string(100, 'b');
    PickleWriter w(true);
    w.str(text);
    std::string out = w.fragment();
    CHECK(le32(out, 1) == PickleWriter::kMaxStringBytes - 1);
    CHECK(out.substr(5, 3) == "aaa");
    CHECK(out.find("\xc3") == std::string::npos);

    PickleWriter bad(true);
    bad.str("a\xff" "b\xc3");
    CHECK(bad.fragment() == "\x8c\x08" "a\xef\xbf\xbd" "b\xef\xbf\xbd");
}

TEST_CASE("pickle safety: no memo index beyond LONG_BINGET's 4 bytes", "[export]") {
    PickleWriter w(false, 0xffffffffull);
    w.begin_dict();
    w.key("a"); // memoized as 0xffffffff, the last index there is
    w.integer(1);
    w.key("a"); // a reference to it
    w.integer(2);
    w.key("b"); // no index left: written in full, each time
    w.integer(3);
    w.key("b");
    w.integer(4);
    w.end_dict();
    CHECK_FALSE(w.memoize());
    std::string out = w.finish();
    CHECK(out == std::string("\x80\x04}(\x8c\x01" "a\x94K\x01j\xff\xff\xff\xffK\x02\x8c\x01" "bK\x03\x8c\x01" "bK\x04u.",
                             2 + 1 + 1 + 3 + 1 + 2 + 5 + 2 + 3 + 2 + 3 + 2 + 1 + 1));
}

TEST_CASE("pickle safety: device ordinals beyond the documented range are left out, output bounded", "[export]") {
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    std::string normal = exporter::export_pickle(s, {}, nullptr);
    for (int device : {snapshot::kMaxDeviceOrdinal + 1, 100000000, 2147483647}) {
        INFO("device " << device);
        snapshot::Snapshot hostile = s;
        hostile.allocations[1].device = device;
        for (snapshot::Event &e : hostile.events.events)
            if (e.device == 0) e.device = device;
        std::vector<std::string> notes;
        std::string out = exporter::export_pickle(hostile, {}, &notes);
        CHECK(out.size() < normal.size());
        check_loads(out);
    }
    // The highest ordinal allowed: one (empty) trace list per ordinal, 2 bytes each.
    snapshot::Snapshot highest = s;
    highest.allocations[2].device = snapshot::kMaxDeviceOrdinal;
    std::string out = exporter::export_pickle(highest, {}, nullptr);
    CHECK(out.size() < normal.size() + 2 * size_t(snapshot::kMaxDeviceOrdinal + 1) + 64);
    check_loads(out);
}

TEST_CASE("pickle safety: the fixture's pickle and hostile names load with the restricted unpickler", "[export]") {
    check_loads(exporter::export_pickle(vt_export_test::fixture_snapshot(), {}, nullptr));
    snapshot::Snapshot s = vt_export_test::fixture_snapshot();
    s.frames[1].function = std::string("\x00\x1b[2J\xff\xfe", 7) + "cos\nsystem\n(S'echo pwned'\ntR.";
    s.frames[1].file = std::string(300000, 'x');
    s.modules[0].path = "c__builtin__\neval\n";
    check_loads(exporter::export_pickle(s, {}, nullptr));
}
