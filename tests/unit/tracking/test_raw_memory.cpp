// raw_memory: zeroed mappings, making them resident, and the lock-free bump arena.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>
#include <sys/mman.h>
#include <vector>

#include "tracking/raw_memory.h"
#include "tracking_test_support.h"

using vramtrace::BumpArena;
using namespace vramtrace::test;

TEST_CASE("raw_memory: map_zeroed gives zero-filled writable pages", "[raw_memory]") {
    const size_t bytes = 3 * 4096 + 100;
    auto *p = static_cast<unsigned char *>(vramtrace::map_zeroed(bytes));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 4096 == 0);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; ++i)
        nonzero += p[i] != 0;
    CHECK(nonzero == 0);
    std::memset(p, 0xab, bytes);
    CHECK(p[bytes - 1] == 0xab);
    vramtrace::unmap(p, bytes);
    CHECK(vramtrace::map_zeroed(0) == nullptr);
}

namespace {

size_t resident_pages(void *p, size_t bytes) {
    const size_t pages = bytes / 4096;
    std::vector<unsigned char> in(pages);
    REQUIRE(mincore(p, bytes, in.data()) == 0);
    size_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return n;
}

} // namespace

TEST_CASE("raw_memory: a fresh mapping holds no resident page until make_resident, then all of them", "[raw_memory]") {
    constexpr size_t kBytes = size_t{3} << 20; // 768 pages
    void *p = vramtrace::map_zeroed(kBytes);
    REQUIRE(p != nullptr);
    CHECK(resident_pages(p, kBytes) == 0);
    errno = 1234;
    vramtrace::make_resident(p, kBytes);
    CHECK(errno == 1234);
    CHECK(resident_pages(p, kBytes) == kBytes / 4096);
    // Still zero-filled: the pages were made resident, not written with anything.
    const auto *bytes = static_cast<const unsigned char *>(p);
    size_t nonzero = 0;
    for (size_t i = 0; i < kBytes; ++i) nonzero += bytes[i] != 0;
    CHECK(nonzero == 0);
}

TEST_CASE("raw_memory: make_resident without MADV_POPULATE_WRITE keeps what the pages hold", "[raw_memory]") {
    // The path of a kernel before 5.14. The ring may hold events already (marks, other threads):
    // every page becomes resident and no word changes.
    constexpr size_t kPages = 256, kBytes = kPages * 4096;
    auto *p = static_cast<uint64_t *>(vramtrace::map_zeroed(kBytes));
    REQUIRE(p != nullptr);
    for (size_t page = 0; page < kPages; page += 2) p[page * 512] = 0x1000 + page; // its first word
    CHECK(resident_pages(p, kBytes) == kPages / 2);
    vramtrace::set_populate_fallback_for_testing(true);
    errno = 1234;
    vramtrace::make_resident(p, kBytes);
    vramtrace::set_populate_fallback_for_testing(false);
    CHECK(errno == 1234);
    CHECK(resident_pages(p, kBytes) == kPages);
    size_t changed = 0;
    for (size_t page = 0; page < kPages; ++page) changed += p[page * 512] != (page % 2 == 0 ? 0x1000 + page : 0);
    CHECK(changed == 0);
}

TEST_CASE("BumpArena: aligned, zeroed, non-overlapping blocks", "[raw_memory]") {
    BumpArena arena(64 * 1024);
    CHECK(arena.mapped_bytes() == 0); // maps lazily
    void *a = arena.allocate(10, 8);
    void *b = arena.allocate(10, 64);
    void *c = arena.allocate(1, 1);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    REQUIRE(c != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(a) % 8 == 0);
    CHECK(reinterpret_cast<uintptr_t>(b) % 64 == 0);
    CHECK(static_cast<char *>(b) >= static_cast<char *>(a) + 10);
    CHECK(static_cast<char *>(c) >= static_cast<char *>(b) + 10);
    CHECK(arena.mapped_bytes() == 64 * 1024);
    CHECK(arena.allocate(8, 3) == nullptr); // not a power of two

    // Filling the chunk moves to a new one.
    size_t blocks = 0;
    while (arena.mapped_bytes() == 64 * 1024) {
        REQUIRE(arena.allocate(1000, 8) != nullptr);
        ++blocks;
    }
    // The first chunk has 65536 - 80 bytes left after its header and the three blocks above: 65
    // blocks of 1000 fit, the 66th is the first one in the second chunk.
    CHECK(blocks == 66);
    CHECK(arena.mapped_bytes() == 2 * 64 * 1024);

    // A block larger than half a chunk gets its own mapping and does not retire the current chunk.
    auto *big = static_cast<unsigned char *>(arena.allocate(200 * 1024, 16));
    REQUIRE(big != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(big) % 16 == 0);
    CHECK(big[0] == 0);
    CHECK(big[200 * 1024 - 1] == 0);
    const uint64_t after_big = arena.mapped_bytes();
    CHECK(after_big > 2 * 64 * 1024 + 200 * 1024);
    CHECK(after_big <= 2 * 64 * 1024 + 200 * 1024 + 8192);
    REQUIRE(arena.allocate(100, 8) != nullptr);
    CHECK(arena.mapped_bytes() == after_big);
}

TEST_CASE("BumpArena: concurrent allocations never overlap", "[raw_memory][stress]") {
    BumpArena arena(256 * 1024);
    constexpr uint32_t kThreads = 8;
    const uint32_t per_thread = kUnderTsan ? 5000 : 40000;
    struct Block {
        uint32_t *p;
        uint32_t words;
    };
    std::vector<std::vector<Block>> blocks(kThreads);
    std::atomic<uint64_t> failures{0};
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            Rng rng(t + 1);
            for (uint32_t i = 0; i < per_thread; ++i) {
                const uint32_t words = 1 + static_cast<uint32_t>(rng.below(80));
                const size_t align = size_t{4} << rng.below(5); // 4 .. 64
                auto *p = static_cast<uint32_t *>(arena.allocate(words * 4, align));
                if (p == nullptr || reinterpret_cast<uintptr_t>(p) % align != 0) {
                    failures.fetch_add(1);
                    continue;
                }
                for (uint32_t w = 0; w < words; ++w) {
                    if (p[w] != 0)
                        failures.fetch_add(1); // someone else's block, or not zeroed
                    p[w] = (t << 24) | (i & 0xffffff);
                }
                blocks[t].push_back({p, words});
            }
        });
    for (auto &th : threads)
        th.join();
    CHECK(failures.load() == 0);
    uint64_t corrupted = 0;
    for (uint32_t t = 0; t < kThreads; ++t)
        for (uint32_t i = 0; i < blocks[t].size(); ++i)
            for (uint32_t w = 0; w < blocks[t][i].words; ++w)
                if (blocks[t][i].p[w] != ((t << 24) | (i & 0xffffff)))
                    ++corrupted;
    CHECK(corrupted == 0);
}
