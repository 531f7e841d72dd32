// StackDepot: interning, ids, round trips, forced collisions, concurrent interning.
#include <catch2/catch.hpp>

#include <new>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "tracking/stack_depot.h"
#include "tracking_test_support.h"

using vramtrace::StackDepot;
using vramtrace::StackView;
using namespace vramtrace::test;

namespace {

using Stack = std::vector<uintptr_t>;

bool view_equals(StackView v, const Stack &s) {
    if (v.depth != s.size() || (v.depth != 0 && v.frames == nullptr))
        return false;
    return std::equal(s.begin(), s.end(), v.frames);
}

uint32_t intern(StackDepot &d, const Stack &s) { return d.intern(s.data(), static_cast<uint32_t>(s.size())); }

uint64_t constant_hash(const uintptr_t *, uint32_t) { return 0x5555; }

// A family of realistic-looking stacks: shared outer frames (main, library code), differing leaves,
// varying depths, some that are prefixes of others and some that differ in one middle frame only.
std::vector<Stack> make_stacks(size_t count, uint64_t seed) {
    Rng rng(seed);
    std::vector<Stack> out;
    std::set<Stack> unique;
    while (out.size() < count) {
        const uint32_t depth = 1 + static_cast<uint32_t>(rng.below(40));
        Stack s(depth);
        for (uint32_t i = 0; i < depth; ++i) {
            const uint64_t module = 0x7f1200000000ull + (i % 4) * 0x1000000ull;
            s[i] = module + rng.below(i < depth / 2 ? 4096 : 16) * 16 + 5;
        }
        if (unique.insert(s).second)
            out.push_back(s);
        // A prefix and a one-frame variant of the same stack.
        if (depth > 2 && out.size() < count) {
            Stack prefix(s.begin(), s.end() - 1);
            if (unique.insert(prefix).second)
                out.push_back(prefix);
        }
        if (depth > 3 && out.size() < count) {
            Stack variant = s;
            variant[depth / 2] += 16;
            if (unique.insert(variant).second)
                out.push_back(variant);
        }
    }
    return out;
}

} // namespace

TEST_CASE("StackDepot: same stack gives the same id, different stacks different ids", "[stack_depot]") {
    StackDepot d(10);
    CHECK(d.size() == 0);
    const Stack a = {0x401000, 0x402000, 0x403000};
    const Stack b = {0x401000, 0x402000, 0x403008};       // last frame differs
    const Stack c = {0x401000, 0x402000};                 // prefix of a
    const Stack e = {0x403000, 0x402000, 0x401000};       // a reversed
    const Stack f = {0x401000, 0x402000, 0x403000, 0x0};  // a plus a zero frame

    const uint32_t ia = intern(d, a);
    CHECK(ia == 1);
    CHECK(intern(d, a) == 1);
    CHECK(intern(d, b) == 2);
    CHECK(intern(d, c) == 3);
    CHECK(intern(d, e) == 4);
    CHECK(intern(d, f) == 5);
    CHECK(intern(d, a) == 1);
    CHECK(intern(d, c) == 3);
    CHECK(d.size() == 5);
    CHECK(d.dropped() == 0);

    CHECK(view_equals(d.get(1), a));
    CHECK(view_equals(d.get(2), b));
    CHECK(view_equals(d.get(3), c));
    CHECK(view_equals(d.get(4), e));
    CHECK(view_equals(d.get(5), f));

    // A copy of the frames (different buffer, same content) finds the same id.
    Stack copy = a;
    CHECK(intern(d, copy) == 1);
}

TEST_CASE("StackDepot: empty stack, unknown ids and depth clamping", "[stack_depot]") {
    StackDepot d(4);
    const uintptr_t one = 0x1234;
    CHECK(d.intern(&one, 0) == 0);
    CHECK(d.intern(nullptr, 0) == 0);
    CHECK(d.size() == 0);

    StackView v = d.get(0);
    CHECK(v.depth == 0);
    CHECK(v.frames == nullptr);
    CHECK(d.get(1).depth == 0); // not interned yet
    CHECK(d.get(70000).depth == 0);
    CHECK(d.get(~uint32_t{0}).depth == 0);

    CHECK(d.intern(&one, 1) == 1);
    CHECK(view_equals(d.get(1), Stack{0x1234}));
    CHECK(d.get(2).depth == 0);

    // Deeper than kMaxDepth: stored clamped; the same first kMaxDepth frames give the same id.
    Stack deep(StackDepot::kMaxDepth + 44);
    for (size_t i = 0; i < deep.size(); ++i)
        deep[i] = 0x500000 + i * 8;
    const uint32_t id = intern(d, deep);
    CHECK(id == 2);
    CHECK(d.get(2).depth == StackDepot::kMaxDepth);
    CHECK(view_equals(d.get(2), Stack(deep.begin(), deep.begin() + StackDepot::kMaxDepth)));
    Stack exact(deep.begin(), deep.begin() + StackDepot::kMaxDepth);
    CHECK(intern(d, exact) == 2);
    CHECK(d.size() == 2);
}

TEST_CASE("StackDepot: many stacks get dense ids and round-trip", "[stack_depot]") {
    StackDepot d(8); // 256 buckets for 20000 stacks: long lists
    const auto stacks = make_stacks(20000, 7);
    std::vector<uint32_t> ids;
    for (const auto &s : stacks)
        ids.push_back(intern(d, s));
    for (size_t i = 0; i < stacks.size(); ++i)
        CHECK(ids[i] == i + 1); // single-threaded: ids in first-intern order
    CHECK(d.size() == stacks.size());
    uint64_t bad = 0;
    for (size_t i = 0; i < stacks.size(); ++i) {
        if (!view_equals(d.get(ids[i]), stacks[i]))
            ++bad;
        if (intern(d, stacks[i]) != ids[i])
            ++bad;
    }
    CHECK(bad == 0);
    CHECK(d.size() == stacks.size());
    CHECK(d.dropped() == 0);
}

TEST_CASE("StackDepot: a constant hash makes every stack collide, ids stay distinct", "[stack_depot]") {
    StackDepot d(12, &constant_hash);
    const auto stacks = make_stacks(3000, 11);
    for (size_t i = 0; i < stacks.size(); ++i)
        REQUIRE(intern(d, stacks[i]) == i + 1);
    CHECK(d.size() == 3000);
    uint64_t bad = 0;
    for (size_t i = 0; i < stacks.size(); ++i) {
        if (intern(d, stacks[i]) != i + 1)
            ++bad;
        if (!view_equals(d.get(static_cast<uint32_t>(i + 1)), stacks[i]))
            ++bad;
    }
    CHECK(bad == 0);
    CHECK(d.size() == 3000);

    // Same hash, same depth, frames equal except the last: still two stacks.
    const Stack x = {1, 2, 3, 4};
    const Stack y = {1, 2, 3, 5};
    const uint32_t ix = intern(d, x);
    const uint32_t iy = intern(d, y);
    CHECK(ix == 3001);
    CHECK(iy == 3002);
    CHECK(view_equals(d.get(ix), x));
    CHECK(view_equals(d.get(iy), y));
}

TEST_CASE("StackDepot: default_hash mixes frames and their order", "[stack_depot]") {
    const Stack a = {0x401000, 0x402000, 0x403000};
    const Stack r = {0x403000, 0x402000, 0x401000};
    const Stack p = {0x401000, 0x402000};
    CHECK(StackDepot::default_hash(a.data(), 3) != StackDepot::default_hash(r.data(), 3));
    CHECK(StackDepot::default_hash(a.data(), 3) != StackDepot::default_hash(p.data(), 2));
    CHECK(StackDepot::default_hash(a.data(), 3) == StackDepot::default_hash(Stack(a).data(), 3));

    // Flipping any single bit of any frame flips about half of the hash bits.
    uint64_t weak = 0;
    Stack s = {0x7f0012345670, 0x7f0012345a10, 0x55aa00001234, 0x55aa00004444};
    const uint64_t base = StackDepot::default_hash(s.data(), 4);
    for (size_t f = 0; f < s.size(); ++f)
        for (unsigned bit = 0; bit < 64; ++bit) {
            Stack t = s;
            t[f] ^= uintptr_t{1} << bit;
            const int changed = __builtin_popcountll(base ^ StackDepot::default_hash(t.data(), 4));
            if (changed < 12 || changed > 52)
                ++weak;
        }
    CHECK(weak == 0);

    // Stacks differing only in a 16-byte-aligned leaf spread evenly over 4096 buckets (low bits).
    std::vector<uint32_t> buckets(4096);
    for (uint64_t i = 0; i < 65536; ++i) {
        const Stack t = {0x7f0000000000 + i * 16, 0x401000, 0x402000};
        ++buckets[StackDepot::default_hash(t.data(), 3) & 4095];
    }
    const uint32_t fullest = *std::max_element(buckets.begin(), buckets.end());
    const uint32_t emptiest = *std::min_element(buckets.begin(), buckets.end());
    INFO("bucket loads " << emptiest << " .. " << fullest << " (mean 16)");
    CHECK(fullest <= 40);
    CHECK(emptiest >= 2);
}

namespace {

// Threads intern the same set of stacks (overlapping, in different or identical orders), then
// every thread's view must agree, and ids must be exactly 1..N.
void concurrent_intern(StackDepot &d, const std::vector<Stack> &stacks, uint32_t threads, bool same_order,
                       unsigned rounds) {
    std::vector<std::vector<uint32_t>> ids(threads, std::vector<uint32_t>(stacks.size()));
    std::atomic<uint32_t> ready{0};
    std::vector<std::thread> pool;
    for (uint32_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            std::vector<size_t> order(stacks.size());
            for (size_t i = 0; i < order.size(); ++i)
                order[i] = i;
            if (!same_order) {
                Rng rng(t + 100);
                for (size_t i = order.size(); i > 1; --i)
                    std::swap(order[i - 1], order[rng.below(i)]);
            }
            // Start together so that the same new stack is interned by several threads at once.
            ready.fetch_add(1);
            while (ready.load() < threads)
                std::this_thread::yield();
            for (unsigned round = 0; round < rounds; ++round)
                for (size_t k : order) {
                    const uint32_t id = intern(d, stacks[k]);
                    if (round == 0)
                        ids[t][k] = id;
                    else if (ids[t][k] != id)
                        ids[t][k] = 0; // unstable id: reported below
                }
        });
    for (auto &th : pool)
        th.join();

    uint64_t disagreements = 0;
    for (uint32_t t = 1; t < threads; ++t)
        for (size_t k = 0; k < stacks.size(); ++k)
            if (ids[t][k] != ids[0][k])
                ++disagreements;
    CHECK(disagreements == 0);
    CHECK(d.size() == stacks.size());
    CHECK(d.dropped() == 0);

    // The ids are a permutation of 1..N and resolve to the right frames.
    std::vector<uint32_t> sorted = ids[0];
    std::sort(sorted.begin(), sorted.end());
    uint64_t not_dense = 0;
    for (size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != i + 1)
            ++not_dense;
    CHECK(not_dense == 0);
    uint64_t bad = 0;
    for (size_t k = 0; k < stacks.size(); ++k)
        if (!view_equals(d.get(ids[0][k]), stacks[k]))
            ++bad;
    CHECK(bad == 0);
}

} // namespace

TEST_CASE("StackDepot: concurrent interning of overlapping sets is consistent", "[stack_depot][stress]") {
    const size_t n = kUnderTsan ? 4000 : 20000;
    const auto stacks = make_stacks(n, 21);
    SECTION("shuffled orders, default hash") {
        StackDepot d(16);
        concurrent_intern(d, stacks, 8, false, 3);
    }
    SECTION("identical order, default hash, few buckets") {
        StackDepot d(6);
        concurrent_intern(d, stacks, 8, true, 2);
    }
}

TEST_CASE("StackDepot: concurrent interning with every stack colliding", "[stack_depot][stress]") {
    // One bucket list for all: every push races with every other thread's push, so the re-scan of
    // newly pushed nodes after a failed CAS decides every outcome.
    const auto stacks = make_stacks(kUnderTsan ? 400 : 1500, 33);
    SECTION("identical order") {
        StackDepot d(4, &constant_hash);
        concurrent_intern(d, stacks, 8, true, 2);
    }
    SECTION("shuffled orders") {
        StackDepot d(4, &constant_hash);
        concurrent_intern(d, stacks, 8, false, 2);
    }
}

TEST_CASE("StackDepot: get() is safe while other threads intern", "[stack_depot][stress]") {
    StackDepot d(12);
    const auto stacks = make_stacks(kUnderTsan ? 3000 : 15000, 5);
    std::vector<std::atomic<uint32_t>> published(stacks.size());
    std::atomic<bool> done{false};
    std::atomic<uint64_t> bad{0};
    std::vector<std::thread> writers;
    for (uint32_t t = 0; t < 4; ++t)
        writers.emplace_back([&, t] {
            for (size_t i = t; i < stacks.size(); i += 2) // threads overlap pairwise
                published[i].store(intern(d, stacks[i]), std::memory_order_release);
        });
    std::thread reader([&] {
        Rng rng(3);
        while (!done.load()) {
            const size_t k = rng.below(stacks.size());
            const uint32_t id = published[k].load(std::memory_order_acquire);
            if (id != 0 && !view_equals(d.get(id), stacks[k]))
                bad.fetch_add(1);
            // Any id up to size() resolves to a complete stack.
            const uint32_t size = d.size();
            if (size != 0 && d.get(1 + static_cast<uint32_t>(rng.below(size))).depth == 0)
                bad.fetch_add(1);
        }
    });
    for (auto &th : writers)
        th.join();
    done.store(true);
    reader.join();
    CHECK(bad.load() == 0);
    CHECK(d.size() == stacks.size());
}

TEST_CASE("StackDepot: a depot constructed again in the same storage is another instance", "[stack_depot]") {
    // A forked child's tracker is built in the parent's storage: ids that walks keep under the
    // parent's depot must not be taken for the child's (recent_walks.h, attach_id).
    alignas(StackDepot) static unsigned char storage[sizeof(StackDepot)];
    auto *first = new (storage) StackDepot(4);
    const uint64_t first_instance = first->instance();
    first->~StackDepot();
    auto *second = new (storage) StackDepot(4);
    CHECK(first_instance != 0);
    CHECK(second->instance() != first_instance);
    CHECK(StackDepot(4).instance() != second->instance());
}
