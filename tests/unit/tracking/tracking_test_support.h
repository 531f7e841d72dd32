// Helpers shared by the tracking unit tests (not a test file itself: the glob takes test_*.cpp).
#pragma once

#include <cstdint>
#include <cstdlib>

#include "tracking/allocation_record.h"

namespace vramtrace::test {

// Small, fast, seedable generator (tests only).
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 0x1234567ull) {}
    uint64_t next() {
        s += 0x9e3779b97f4a7c15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint64_t below(uint64_t n) { return next() % n; }
};

inline uint64_t scramble(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

// A record whose every field is a function of (address, serial, thread): a reader can tell a torn
// or foreign record from a complete one with consistent().
inline AllocationRecord make_record(uint64_t address, uint64_t serial, uint32_t thread) {
    AllocationRecord r;
    r.address = address;
    r.time_ns = serial;
    r.size = scramble(address ^ serial) & 0xffffffffffull;
    r.stream = scramble(r.size + thread);
    r.stack_id = static_cast<uint32_t>(scramble(serial) >> 7);
    r.thread_id = thread;
    r.device = static_cast<int16_t>(static_cast<int>(serial % 11) - 2);
    r.kind = static_cast<MemoryKind>(serial % 3);
    r.api = static_cast<uint8_t>(scramble(address + serial) >> 56);
    return r;
}

inline bool same(const AllocationRecord &a, const AllocationRecord &b) {
    return a.address == b.address && a.size == b.size && a.stream == b.stream && a.time_ns == b.time_ns &&
           a.stack_id == b.stack_id && a.thread_id == b.thread_id && a.device == b.device && a.kind == b.kind &&
           a.api == b.api;
}

inline bool consistent(const AllocationRecord &r) { return same(r, make_record(r.address, r.time_ns, r.thread_id)); }

// CUDA-like addresses: 512-byte aligned inside one big virtual range.
inline uint64_t device_address(uint64_t i) { return 0x7f2a00000000ull + i * 512; }

// An integer from the environment, or `fallback`.
inline uint64_t env_u64(const char *name, uint64_t fallback) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0')
        return fallback;
    return std::strtoull(v, nullptr, 10);
}

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif
#else
inline constexpr bool kUnderTsan = false;
#endif

// Sanitizers that reserve huge shadow mappings (an address-space limit would break them).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderShadowSanitizer = true;
#else
inline constexpr bool kUnderShadowSanitizer = false;
#endif

} // namespace vramtrace::test
