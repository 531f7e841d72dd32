// NVTX category names (lib/nvtx/categories.h): per domain, renamed by a later call, the number as
// text when unnamed, bounded; and categories as part of a range frame (range_table.h).
#include <catch2/catch.hpp>

#include <string>

#include "nvtx/categories.h"
#include "nvtx/range_table.h"

using namespace vramtrace::nvtx;

namespace {
std::string text(uint16_t domain, uint32_t category) {
    char out[kMaxNameBytes];
    size_t n = category_text(domain, category, out);
    CHECK(n == std::string(out).size());
    return out;
}
} // namespace

TEST_CASE("nvtx categories: named per domain, renamed, the number when unnamed, bounded") {
    reset_tables_for_testing();
    reset_categories_for_testing();
    uint16_t ml = create_domain("ml");
    name_category(ml, 7, "phase");
    CHECK(text(ml, 7) == "phase");
    CHECK(text(0, 7) == "7");      // the default domain's 7 is another category
    CHECK(text(ml, 0) == "");      // 0: none
    CHECK(category_name(0, 7) == nullptr);
    name_category(ml, 7, "stage, seq = 3"); // a later name replaces it, normalised like a range name
    CHECK(text(ml, 7) == "stage");
    name_category(0, 4294967295u, "");      // an empty name names nothing
    CHECK(text(0, 4294967295u) == "4294967295");
    name_category(0, 0, "none");            // category 0 cannot be named
    CHECK(text(0, 0) == "");
    for (uint32_t c = 100; c < 100 + kMaxCategoryNames; ++c) name_category(0, c, "many");
    // Two pairs were named before the loop: the table holds kMaxCategoryNames, later ones are numbers.
    CHECK(text(0, 100 + kMaxCategoryNames - 3) == "many");
    CHECK(text(0, 100 + kMaxCategoryNames - 2) == std::to_string(100 + kMaxCategoryNames - 2));
    CHECK(text(ml, 7) == "stage");
}

TEST_CASE("nvtx range frames: the same name with another category is another stack") {
    reset_tables_for_testing();
    uint32_t fwd = intern_name("forward");
    uint16_t plain = push_stack(0, 0, fwd);
    uint16_t seven = push_stack(0, 0, fwd, 7);
    uint16_t big = push_stack(0, 0, fwd, 1u << 31);
    CHECK(plain != seven);
    CHECK(seven != big);
    CHECK(push_stack(0, 0, fwd, 7) == seven);
    StackNode n;
    REQUIRE(stack_node(big, &n));
    CHECK(n.category == 1u << 31);
    CHECK(n.name == fwd);
    CHECK(stack_count() == 4);
}
