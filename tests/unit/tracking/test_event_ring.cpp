// The event history ring: order, wrap-around, capacity 0, labels, and no torn event under writers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tracking/event_ring.h"

using vramtrace::EventRecord;
using vramtrace::EventRing;
using vramtrace::EventType;

namespace {

EventRecord alloc_event(uint64_t i) {
    EventRecord e;
    e.type = EventType::Alloc;
    e.time_ns = 1000 + i;
    e.address = 0x7f0000000000 + i * 0x100;
    e.size = i * 3;
    e.stack = uint32_t(i % 7);
    e.thread_id = 42;
    e.device = int16_t(i % 2);
    e.kind = 1;
    e.api = 5;
    e.range = uint16_t(i == 3 ? 0xffff : i); // the widest range stack id too
    return e;
}

std::vector<EventRecord> all(const EventRing &r) {
    std::vector<EventRecord> out;
    r.for_each([&](const EventRecord &e) { out.push_back(e); });
    return out;
}

} // namespace

TEST_CASE("event ring: keeps every event in order until it wraps", "[events]") {
    EventRing r;
    REQUIRE(r.init(8, 500));
    for (uint64_t i = 0; i < 5; ++i) r.push(alloc_event(i));
    auto ev = all(r);
    REQUIRE(ev.size() == 5);
    CHECK(r.recorded() == 5);
    CHECK(r.start_ns() == 500);
    for (uint64_t i = 0; i < 5; ++i) {
        CHECK(ev[i].time_ns == 1000 + i);
        CHECK(ev[i].address == 0x7f0000000000 + i * 0x100);
        CHECK(ev[i].size == i * 3);
        CHECK(ev[i].stack == i % 7);
        CHECK(ev[i].device == int16_t(i % 2));
        CHECK(ev[i].kind == 1);
        CHECK(ev[i].api == 5);
        CHECK(ev[i].range == (i == 3 ? 0xffff : i));
        CHECK(ev[i].device == int16_t(i % 2)); // next to range in the slot's word
        CHECK(ev[i].thread_id == 42);
        CHECK(ev[i].type == EventType::Alloc);
    }
}

TEST_CASE("event ring: after wrapping, the newest capacity events, oldest first", "[events]") {
    EventRing r;
    REQUIRE(r.init(8, 0));
    for (uint64_t i = 0; i < 21; ++i) r.push(alloc_event(i));
    auto ev = all(r);
    CHECK(r.recorded() == 21);
    REQUIRE(ev.size() == 8);
    for (uint64_t k = 0; k < 8; ++k) CHECK(ev[k].time_ns == 1000 + 13 + k);
    CHECK(r.lost() == 0);
}

TEST_CASE("event ring: capacity 0 keeps nothing", "[events]") {
    EventRing r;
    REQUIRE(r.init(0, 7));
    r.push(alloc_event(1));
    CHECK(r.capacity() == 0);
    CHECK(r.recorded() == 0);
    CHECK(all(r).empty());
}

TEST_CASE("event ring: mark labels are copied and cut at 63 bytes on a character boundary", "[events]") {
    EventRing r;
    REQUIRE(r.init(4, 0));
    EventRecord m;
    m.type = EventType::Mark;
    m.time_ns = 9;
    EventRing::set_label(m, "epoch 1");
    r.push(m);
    std::string longer(62, 'x');
    longer += "\xc3\xa9tail"; // a 2-byte character at bytes 62..63: cut before it
    EventRing::set_label(m, longer.c_str());
    r.push(m);
    EventRing::set_label(m, std::string(100, 'y').c_str());
    r.push(m);
    auto ev = all(r);
    REQUIRE(ev.size() == 3);
    CHECK(ev[0].type == EventType::Mark);
    CHECK(std::string(ev[0].label) == "epoch 1");
    CHECK(std::string(ev[1].label) == std::string(62, 'x'));
    CHECK(std::string(ev[2].label) == std::string(63, 'y'));
    CHECK(ev[2].device == -2);
}

TEST_CASE("event ring: a reader racing writers never sees a torn event", "[events]") {
    EventRing r;
    REQUIRE(r.init(64, 0)); // small: writers lap the reader constantly
    constexpr int kThreads = 3;
    constexpr uint64_t kPerThread = 200000;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> torn{0}, seen{0};
    std::thread reader([&] {
        while (!stop.load()) {
            r.for_each([&](const EventRecord &e) {
                // Every field is a function of (thread, i): a mix of two events would not match.
                uint64_t i = e.time_ns & 0xffffffff, t = e.time_ns >> 32;
                bool ok = e.address == (t << 40 | i) && e.size == i * 5 + t && e.stack == uint32_t(i ^ t) &&
                          e.thread_id == uint32_t(t) && e.device == int16_t(i & 0x7f);
                if (!ok) torn.fetch_add(1);
                seen.fetch_add(1);
            });
        }
    });
    std::vector<std::thread> writers;
    for (uint64_t t = 1; t <= kThreads; ++t) {
        writers.emplace_back([&, t] {
            for (uint64_t i = 0; i < kPerThread; ++i) {
                EventRecord e;
                e.time_ns = t << 32 | i;
                e.address = t << 40 | i;
                e.size = i * 5 + t;
                e.stack = uint32_t(i ^ t);
                e.thread_id = uint32_t(t);
                e.device = int16_t(i & 0x7f);
                r.push(e);
            }
        });
    }
    for (auto &w : writers) w.join();
    stop.store(true);
    reader.join();
    CHECK(torn.load() == 0);
    CHECK(r.recorded() == kThreads * kPerThread);
    // Quiet now: exactly the 64 newest tickets that were not lost are readable.
    auto ev = all(r);
    CHECK(ev.size() <= 64);
    CHECK(ev.size() + std::min<uint64_t>(r.lost(), 64) >= 64);
}

TEST_CASE("event ring: threads write blocks of tickets, and every event pushed is kept while they fit", "[events]") {
    // 8 threads x 400 events into 8,192 slots: with blocks of kBlock tickets the tickets taken are
    // at most 3,200 + 8 x kBlock, so nothing is overwritten and every event must be read back.
    EventRing r;
    REQUIRE(r.init(8192, 0));
    constexpr uint64_t kThreads = 8, kPerThread = 400;
    std::vector<std::thread> writers;
    for (uint64_t t = 1; t <= kThreads; ++t)
        writers.emplace_back([&, t] {
            for (uint64_t i = 0; i < kPerThread; ++i) {
                EventRecord e = alloc_event(i);
                e.thread_id = uint32_t(t);
                e.time_ns = t << 32 | i;
                r.push(e);
            }
        });
    for (auto &w : writers) w.join();
    CHECK(r.recorded() == kThreads * kPerThread);
    CHECK(r.lost() == 0);
    std::vector<uint64_t> next(kThreads + 1, 0);
    uint64_t kept = 0;
    bool in_order = true;
    r.for_each([&](const EventRecord &e) {
        // Within one thread the tickets follow its pushes.
        in_order &= (e.time_ns & 0xffffffff) == next[e.thread_id];
        next[e.thread_id] = (e.time_ns & 0xffffffff) + 1;
        ++kept;
    });
    CHECK(kept == kThreads * kPerThread);
    CHECK(in_order);
}

TEST_CASE("event ring: a thread's block the ring has come round to is replaced, so its next event is kept", "[events]") {
    // Thread A takes a block and pushes one event; thread B then pushes a lap and two blocks more.
    // A's next ticket in its old block would land in a slot already holding a newer lap (dropped as
    // lost): A must take a fresh block instead, and its event is read back. First, a thread C moves
    // the head past the first lap (`ahead` events), so that A's block is not in lap 0, where every
    // check reads the head; then B's pushes bring the head just into the lap from which A's block
    // can be overtaken, not beyond it, so a check that waited one lap longer fails here.
    const uint64_t ahead = GENERATE(uint64_t{0}, EventRing::kMinBlockedCapacity + 100);
    constexpr uint64_t kFromB = EventRing::kMinBlockedCapacity + 2 * EventRing::kBlock;
    EventRing r;
    REQUIRE(r.init(EventRing::kMinBlockedCapacity, 0));
    auto push_one = [&](uint32_t thread, uint64_t i) {
        EventRecord e = alloc_event(i);
        e.thread_id = thread;
        r.push(e);
    };
    std::thread([&] {
        for (uint64_t i = 0; i < ahead; ++i) push_one(3, i);
    }).join();
    std::thread([&] {
        push_one(1, 0);
        std::thread([&] {
            for (uint64_t i = 0; i < kFromB; ++i) push_one(2, i);
        }).join();
        push_one(1, 1);
    }).join();
    CHECK(r.lost() == 0);
    CHECK(r.recorded() == ahead + kFromB + 2);
    uint64_t from_a = 0;
    r.for_each([&](const EventRecord &e) { from_a += e.thread_id == 1 && e.size == 3; });
    CHECK(from_a == 1);
}
