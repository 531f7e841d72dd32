// The NVTX tables (lib/nvtx/range_table.h, thread_ranges.h): normalisation of counter-bearing
// messages, interning, the capped tables with their counted overflow, and each thread's stack id
// across two domains pushed and popped out of order.
#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "nvtx/range_table.h"
#include "nvtx/thread_ranges.h"

using namespace vramtrace::nvtx;

namespace {
std::string chain(uint16_t id) {
    std::string out;
    StackNode n;
    for (uint16_t at = id; stack_node(at, &n); at = n.parent)
        out = std::string(domain_name(n.domain)) + ":" + name_text(n.name) + (out.empty() ? "" : " > " + out);
    return out;
}
} // namespace

TEST_CASE("nvtx names: PyTorch's counters are cut, one operator is one name") {
    reset_tables_for_testing();
    char out[kMaxNameBytes];
    CHECK(normalise_message("aten::add, seq = 12, op_id = 3, sizes = [[2, 3]]", out) == 9);
    CHECK(std::string(out) == "aten::add");
    CHECK(normalise_message("aten::mm, sizes = [[1]]", out) == 8);
    CHECK(normalise_message("layer 3, block 4", out) == 16); // no counter tail: digits stay
    uint32_t a = intern_name("aten::add, seq = 12, op_id = 3");
    uint32_t b = intern_name("aten::add, seq = 13, op_id = 9");
    CHECK(a == b);
    CHECK(std::string(name_text(a)) == "aten::add");
    CHECK(intern_name("") == 0);
    CHECK(intern_name(nullptr) == 0);
    CHECK(intern_name("forward") == intern_normalised("forward", 7));
    std::string longer(300, 'x');
    CHECK(std::string(name_text(intern_name(longer.c_str()))) == std::string(kMaxNameBytes - 1, 'x'));
}

TEST_CASE("nvtx tables are capped: the overflow is one counted entry") {
    reset_tables_for_testing();
    for (uint32_t i = 0; i < kMaxNames + 10; ++i) intern_name(("n" + std::to_string(i)).c_str());
    CHECK(name_count() == kOverflowName);
    CHECK(names_overflowed() == kMaxNames + 10 - (kOverflowName - 1));
    CHECK(intern_name("n999999") == kOverflowName);
    CHECK(std::string(name_text(kOverflowName)) == "(more range names than vramtrace keeps)");

    reset_tables_for_testing();
    uint32_t name = intern_name("r");
    uint16_t id = 0;
    for (uint32_t i = 0; i < kMaxStacks + 5; ++i) id = push_stack(id, 0, name);
    CHECK(id == kOverflowStack);
    CHECK(stack_count() == kOverflowStack);
    CHECK(stacks_overflowed() == 1); // the first refused push; its children are the overflow itself
    CHECK(push_stack(kOverflowStack, 0, name) == kOverflowStack);
}

TEST_CASE("nvtx thread stacks: two domains, pushed and popped out of order, give the same ids") {
    reset_tables_for_testing();
    std::thread([] {
        reset_thread_for_testing();
        uint16_t ml = create_domain("ml");
        CHECK(create_domain("ml") == ml);
        uint32_t step = intern_name("step"), fwd = intern_name("forward"), mm = intern_name("mm");
        CHECK(push_range(0, step) == 0);
        CHECK(chain(current_range_stack()) == ":step");
        CHECK(push_range(ml, fwd) == 0);
        uint16_t step_fwd = current_range_stack();
        CHECK(chain(step_fwd) == ":step > ml:forward");
        // A push in the earlier domain while the later one is open: the chain is rebuilt in order.
        CHECK(push_range(0, mm) == 1);
        CHECK(chain(current_range_stack()) == ":step > :mm > ml:forward");
        CHECK(pop_range(0) == 1);
        CHECK(current_range_stack() == step_fwd);
        CHECK(pop_range(0) == 0); // step ends before forward
        CHECK(chain(current_range_stack()) == "ml:forward");
        CHECK(pop_range(ml) == 0);
        CHECK(current_range_stack() == 0);
        CHECK(pop_range(ml) == -1);
        CHECK(pop_range(0) == -1);
    }).join();
}
