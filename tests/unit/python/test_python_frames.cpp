// The pure part of Python frames (lib/python/python_frame_table.h): interning by content, the
// rule that merges Python frames into a native stack, and the hot-path frame cache. The CPython side is tested end to end
// (tests/e2e/test_python_frames.cpp).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "python/python_frame_table.h"

using namespace vramtrace;
using namespace vramtrace::python;

namespace {

std::vector<uintptr_t> merge(const std::vector<uintptr_t> &native, const std::vector<uintptr_t> &py,
                             uint32_t capacity = 256) {
    // Eval frames are the native values 0xE0..0xEF.
    auto is_eval = [](uintptr_t a, const void *) { return a >= 0xE0 && a <= 0xEF; };
    std::vector<uintptr_t> out(capacity);
    uint32_t n = merge_frames(native.data(), uint32_t(native.size()), py.data(), uint32_t(py.size()), is_eval,
                              nullptr, out.data(), capacity);
    out.resize(n);
    return out;
}

constexpr uintptr_t P(uint32_t id) { return kPythonFrameTag | id; }

// The same with the runs of the evaluation loop known (ends_group, as the struct reader gives).
std::vector<uintptr_t> merge_runs(const std::vector<uintptr_t> &native, const std::vector<uintptr_t> &py,
                                  const std::vector<uint8_t> &ends_group) {
    auto is_eval = [](uintptr_t a, const void *) { return a >= 0xE0 && a <= 0xEF; };
    std::vector<uintptr_t> out(256);
    uint32_t n = merge_frames(native.data(), uint32_t(native.size()), py.data(), uint32_t(py.size()), is_eval,
                              nullptr, out.data(), 256, ends_group.data());
    out.resize(n);
    return out;
}

} // namespace

TEST_CASE("python frames: interned by content, decoded back, tagged values are not addresses") {
    StackDepot table(8);
    uint32_t a = intern_frame(table, "/src/model.py", 13, "Net.forward", 11, 88);
    uint32_t b = intern_frame(table, "/src/model.py", 13, "Net.forward", 11, 89);
    uint32_t c = intern_frame(table, "/src/model.py", 13, "Net.forward", 11, 88);
    CHECK(a != 0);
    CHECK(b != a);
    CHECK(c == a);
    std::string file, function;
    uint32_t line = 0;
    REQUIRE(decode_frame(table, python_frame_value(b), &file, &function, &line));
    CHECK(file == "/src/model.py");
    CHECK(function == "Net.forward");
    CHECK(line == 89);
    CHECK(is_python_frame(python_frame_value(b)));
    CHECK(!is_python_frame(0x7f0012345678)); // a user-space address
    CHECK(!is_python_frame(0xffffffffff600000)); // the vsyscall page
    CHECK(!decode_frame(table, python_frame_value(999), &file, &function, &line));
    // Empty names and names longer than the limit (cut on a UTF-8 boundary).
    uint32_t e = intern_frame(table, "", 0, "", 0, 0);
    REQUIRE(decode_frame(table, python_frame_value(e), &file, &function, &line));
    CHECK(file.empty());
    CHECK(function.empty());
    std::string long_name = std::string(kMaxNameBytes - 1, 'x') + "\xc3\xa9" + "tail"; // é straddles the limit
    uint32_t l = intern_frame(table, long_name.data(), long_name.size(), "f", 1, 7);
    REQUIRE(decode_frame(table, python_frame_value(l), &file, &function, &line));
    CHECK(file == std::string(kMaxNameBytes - 1, 'x'));
    CHECK(function == "f");
}

TEST_CASE("python frames: merge rule") {
    // native, innermost first: 1 2 are the extension and the C call path, E? eval frames, 9 main.
    SECTION("one eval frame takes every Python frame (3.11+: one loop runs nested Python calls)") {
        CHECK(merge({1, 2, 0xE0, 3, 9}, {P(1), P(2), P(3)}) == std::vector<uintptr_t>{1, 2, P(1), P(2), P(3), 3, 9});
    }
    SECTION("as many eval frames as Python frames: one each (3.10)") {
        CHECK(merge({1, 0xE0, 4, 0xE1, 5, 0xE2, 9}, {P(1), P(2), P(3)}) ==
              std::vector<uintptr_t>{1, P(1), 4, P(2), 5, P(3), 9});
    }
    SECTION("more Python frames than eval frames: the outermost matched eval frame takes the rest") {
        CHECK(merge({1, 0xE0, 4, 0xE1, 9}, {P(1), P(2), P(3), P(4)}) ==
              std::vector<uintptr_t>{1, P(1), 4, P(2), P(3), P(4), 9});
    }
    SECTION("more eval frames than Python frames: the outer ones stay native") {
        CHECK(merge({1, 0xE0, 4, 0xE1, 9}, {P(1)}) == std::vector<uintptr_t>{1, P(1), 4, 0xE1, 9});
    }
    SECTION("no eval frame (native stack cut short): Python frames after the native ones") {
        CHECK(merge({1, 2, 3}, {P(1), P(2)}) == std::vector<uintptr_t>{1, 2, 3, P(1), P(2)});
    }
    SECTION("no Python frame: the native stack unchanged") {
        CHECK(merge({1, 0xE0, 9}, {}) == std::vector<uintptr_t>{1, 0xE0, 9});
    }
    SECTION("capacity cuts the outermost frames") {
        CHECK(merge({1, 0xE0, 9}, {P(1), P(2), P(3)}, 3) == std::vector<uintptr_t>{1, P(1), P(2)});
    }
    SECTION("runs known: each eval frame takes its own run (C between two runs, 3.11+)") {
        // Python 1-2 ran in the inner loop, 3-5 in the outer one, C (4) between them.
        CHECK(merge_runs({1, 0xE0, 4, 0xE1, 9}, {P(1), P(2), P(3), P(4), P(5)}, {0, 1, 0, 0, 1}) ==
              std::vector<uintptr_t>{1, P(1), P(2), 4, P(3), P(4), P(5), 9});
    }
    SECTION("runs known, fewer eval frames than runs: the outermost one takes the rest") {
        CHECK(merge_runs({1, 0xE0, 4}, {P(1), P(2), P(3), P(4)}, {1, 0, 1, 1}) ==
              std::vector<uintptr_t>{1, P(1), P(2), P(3), P(4), 4});
    }
    SECTION("runs known, more eval frames than runs: the outer ones stay native") {
        CHECK(merge_runs({1, 0xE0, 4, 0xE1, 9}, {P(1), P(2)}, {0, 1}) ==
              std::vector<uintptr_t>{1, P(1), P(2), 4, 0xE1, 9});
    }
}

TEST_CASE("python frames: the frame cache hits only on the whole key and the current epoch") {
    auto cache = std::make_unique<FrameCache>();
    FrameKey key;
    key.code = 0x7f0000001000, key.instr = 42, key.file = 0x7f0000002000, key.name = 0x7f0000003000;
    key.meta = 17 | uint64_t{300} << 32;
    uint32_t id = 0;
    CHECK_FALSE(cache->find(key, 0, &id));
    cache->put(key, 0, 9);
    REQUIRE(cache->find(key, 0, &id));
    CHECK(id == 9);
    CHECK_FALSE(cache->find(key, 1, &id)); // a replaced table
    // A reused code object address with other names, first line, size, or another instruction.
    for (int field = 0; field < 4; ++field) {
        FrameKey other = key;
        if (field == 0) other.file += 16;
        if (field == 1) other.name += 16;
        if (field == 2) other.meta += 1;
        if (field == 3) other.instr += 1;
        CHECK_FALSE(cache->find(other, 0, &id));
    }
    // A newer entry in the same slot replaces the older one.
    cache->put(key, 1, 11);
    REQUIRE(cache->find(key, 1, &id));
    CHECK(id == 11);
    CHECK_FALSE(cache->find(key, 0, &id));
}
