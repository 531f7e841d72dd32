// The snapshot model's lookups (snapshot/snapshot_model.h).
#include <catch2/catch.hpp>

#include "report_test_data.h"
#include "snapshot/snapshot_model.h"

using namespace vramtrace::snapshot;

TEST_CASE("path_basename", "[model]") {
    CHECK(path_basename("/usr/lib/libcudart.so.13") == "libcudart.so.13");
    CHECK(path_basename("train") == "train");
    CHECK(path_basename("/dir/") == "");
}

TEST_CASE("find_stack: binary search on sorted ids, linear fallback otherwise", "[model]") {
    Snapshot s = vt_test::golden_snapshot();
    CHECK(s.find_stack(0) == nullptr);
    CHECK(s.find_stack(99) == nullptr);
    for (uint32_t id = 1; id <= 6; ++id) {
        const Stack *st = s.find_stack(id);
        REQUIRE(st != nullptr);
        CHECK(st->id == id);
    }
    std::swap(s.stacks[0], s.stacks[5]); // ids 6,2,3,4,5,1
    for (uint32_t id = 1; id <= 6; ++id) {
        const Stack *st = s.find_stack(id);
        REQUIRE(st != nullptr);
        CHECK(st->id == id);
    }
    CHECK(Snapshot{}.find_stack(1) == nullptr);
}

TEST_CASE("call_site_frame and find_module guard every index", "[model]") {
    Snapshot s = vt_test::golden_snapshot();
    const Frame *f = s.call_site_frame(*s.find_stack(1));
    REQUIRE(f != nullptr);
    CHECK(f->function == "make_buffer(unsigned long)");
    CHECK(s.call_site_frame(*s.find_stack(4)) == nullptr); // call_site -1
    Stack bad{9, {0, 77}, 1};                               // frame index out of range
    CHECK(s.call_site_frame(bad) == nullptr);
    Stack bad_site{9, {0}, 3}; // call_site past the stack's end
    CHECK(s.call_site_frame(bad_site) == nullptr);
    CHECK(s.find_module(s.frames[5]) == nullptr);
    REQUIRE(s.find_module(s.frames[0]) != nullptr);
    CHECK(s.find_module(s.frames[0])->path == "/usr/lib/x86_64-linux-gnu/libcudart.so.13");
    Frame far{0x1, 12, 0, "", "", 0};
    CHECK(s.find_module(far) == nullptr);
}

TEST_CASE("model structs compare field by field", "[model]") {
    Snapshot a = vt_test::golden_snapshot(), b = vt_test::golden_snapshot();
    CHECK(a == b);
    b.allocations[3].thread_id += 1;
    CHECK_FALSE(a == b);
}
