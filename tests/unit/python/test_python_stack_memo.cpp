// The lane's memo of Python stacks (lib/python/python_stack_memo.h): which pairs it writes down,
// what a hit needs, and that a ticket of a reused entry is ignored.
#include <catch2/catch.hpp>

#include <vector>

#include "python/python_stack_memo.h"

using namespace vramtrace::python;

namespace {

struct Pair {
    std::vector<uintptr_t> native{0x401000, 0x402000, 0x403000};
    std::vector<FrameKey> keys;
    MemoQuery query() const {
        MemoQuery q;
        q.native = native.data(), q.native_depth = uint32_t(native.size());
        q.keys = keys.data(), q.count = uint32_t(keys.size());
        q.run_ends = 0b10, q.owner = 7, q.epoch = 1;
        return q;
    }
    Pair() {
        for (uint64_t i = 0; i < 2; ++i) {
            FrameKey k;
            k.code = 0x7f0000001000 + 0x100 * i, k.instr = 40 + i, k.file = 0x7f0000002000, k.name = 0x7f0000003000 + i;
            k.meta = 17 | uint64_t{300} << 32;
            keys.push_back(k);
        }
    }
};

// One find with the lane's memo held for it, as the hook does.
uint32_t find(const MemoQuery &q, MemoTicket *ticket) {
    LaneStackMemo *m = LaneStackMemo::acquire();
    REQUIRE(m != nullptr);
    uint32_t id = m->find(q, ticket);
    m->release();
    return id;
}

void remember(const MemoTicket &ticket, uint32_t id) {
    LaneStackMemo *m = LaneStackMemo::acquire();
    REQUIRE(m != nullptr);
    m->remember(ticket, id);
    m->release();
}

} // namespace

TEST_CASE("python stack memo: written down on the second sight, found once its id is remembered") {
    Pair p;
    p.native[0] += 0x10; // a pair of its own: the memo is the process's, shared by the test cases
    MemoTicket t;
    CHECK(find(p.query(), &t) == 0);
    CHECK(t.serial == 0); // first sight: only noted
    CHECK(find(p.query(), &t) == 0);
    REQUIRE(t.serial != 0); // second sight: written down, no id yet
    CHECK(find(p.query(), &t) == 0);
    MemoTicket latest = t;
    REQUIRE(latest.serial != 0);
    remember(latest, 42);
    MemoTicket none;
    CHECK(find(p.query(), &none) == 42);
    CHECK(none.serial == 0);
}

TEST_CASE("python stack memo: a hit needs every part of the pair") {
    Pair p;
    p.native[0] += 0x20;
    MemoTicket t;
    find(p.query(), &t);
    find(p.query(), &t);
    REQUIRE(t.serial != 0);
    remember(t, 77);
    REQUIRE(find(p.query(), &t) == 77);
    for (int part = 0; part < 10; ++part) {
        INFO("part " << part);
        Pair o = p;
        MemoQuery q = o.query();
        switch (part) {
        case 0: o.native[2] += 1; break;
        case 1: o.native.pop_back(); break;
        case 2: o.keys[1].code += 8; break;
        case 3: o.keys[0].instr += 1; break;
        case 4: o.keys[1].file += 8; break;
        case 5: o.keys[0].name += 8; break;
        case 6: o.keys[1].meta += 1; break;
        case 7: o.keys.pop_back(); break;
        }
        q = o.query();
        if (part == 8) q.owner = 8;       // a forked child's depot
        if (part == 9) q.run_ends = 0b01; // the same frames in other runs of the evaluation loop
        MemoTicket ignored;
        CHECK(find(q, &ignored) == 0);
    }
    MemoQuery other_epoch = p.query();
    other_epoch.epoch = 2; // a replaced frame table
    MemoTicket ignored;
    CHECK(find(other_epoch, &ignored) == 0);
    CHECK(find(p.query(), &ignored) == 77);
}

TEST_CASE("python stack memo: a ticket whose entry was written again is ignored") {
    Pair p;
    p.native[0] += 0x30;
    MemoTicket first, second, third;
    find(p.query(), &first);
    find(p.query(), &first); // written down, no id yet
    find(p.query(), &second); // written down again, in the set's other way
    find(p.query(), &third);  // and again, in place of the first
    REQUIRE(first.serial != 0);
    REQUIRE(second.serial != 0);
    REQUIRE(third.serial != 0);
    CHECK(third.way == first.way);
    CHECK(second.way != first.way);
    remember(first, 5);
    MemoTicket t;
    CHECK(find(p.query(), &t) == 0);
    remember(third, 6);
    CHECK(find(p.query(), &t) == 6);
}

TEST_CASE("python stack memo: limits, and one user at a time per lane") {
    Pair p;
    p.native.assign(LaneStackMemo::kMaxNative + 1, 0x401000);
    CHECK_FALSE(LaneStackMemo::fits(p.query()));
    p.native.resize(LaneStackMemo::kMaxNative);
    CHECK(LaneStackMemo::fits(p.query()));
    LaneStackMemo *m = LaneStackMemo::acquire();
    REQUIRE(m != nullptr);
    CHECK(LaneStackMemo::acquire() == nullptr); // a signal handler's capture inside this one
    m->release();
    LaneStackMemo *again = LaneStackMemo::acquire();
    CHECK(again == m);
    again->release();
}
