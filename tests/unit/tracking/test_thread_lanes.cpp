// Thread lanes: one per live thread, given back at thread exit and taken again by the next thread.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "tracking/thread_lanes.h"

namespace lanes = vramtrace::lanes;

TEST_CASE("thread lanes: a thread keeps its lane, and an exited thread's lane is reused", "[lanes]") {
    unsigned mine = lanes::this_thread_lane();
    REQUIRE(mine < lanes::kLanes);
    CHECK(lanes::this_thread_lane() == mine);
    CHECK(lanes::held_lane() == mine);
    const unsigned before = lanes::lanes_in_use();
    unsigned first = lanes::kSharedLane, second = lanes::kSharedLane, in_use_inside = 0;
    std::thread([&] {
        CHECK(lanes::held_lane() == lanes::kSharedLane); // none taken yet
        first = lanes::this_thread_lane();
        in_use_inside = lanes::lanes_in_use();
    }).join();
    std::thread([&] { second = lanes::this_thread_lane(); }).join();
    CHECK(first != mine);
    CHECK(first < lanes::kLanes);
    CHECK(in_use_inside == before + 1);
    CHECK(second == first); // the lowest free lane, given back when the first thread exited
    CHECK(lanes::lanes_in_use() == before);
}

TEST_CASE("thread lanes: threads alive together hold distinct lanes", "[lanes]") {
    constexpr unsigned kThreads = 12;
    std::vector<unsigned> got(kThreads);
    std::atomic<unsigned> arrived{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            got[t] = lanes::this_thread_lane();
            arrived.fetch_add(1);
            while (arrived.load() < kThreads) std::this_thread::yield();
        });
    for (auto &th : threads) th.join();
    std::vector<bool> seen(lanes::kAllLanes, false);
    bool distinct = true;
    for (unsigned g : got) {
        distinct &= g < lanes::kLanes && !seen[g];
        seen[g] = true;
    }
    CHECK(distinct);
}
