// Memory for the tracker's own structures, taken straight from the kernel (mmap) so that the hot
// path never enters the host program's malloc (which may itself be interposed, or locked in a
// forked child) and so that nothing is freed by static destructors at exit.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace vramtrace {

// Zero-filled pages, or nullptr when the kernel refuses. Never freed by the tracker.
void *map_zeroed(size_t bytes);
void unmap(void *p, size_t bytes); // only for a mapping that lost a publication race
// Makes the pages of [p, p + bytes) resident now, so that the hot path that fills them takes no page
// faults: MADV_POPULATE_WRITE, or on a kernel without it (before 5.14) an atomic add of zero to the
// first word of each page, which leaves what other threads are writing there intact. p must be
// 8-byte aligned. A mapping the kernel cannot back (ENOMEM) is left as it is. errno is left as it was.
void make_resident(void *p, size_t bytes);
// For tests only: while on, make_resident takes the path of a kernel without MADV_POPULATE_WRITE.
void set_populate_fallback_for_testing(bool on);

// For tests only (unit tests, and VRAMTRACE_TEST_FAIL_MAPPINGS in the library): while on,
// map_zeroed refuses every request, as when the kernel has no memory left, so that the paths that
// count dropped records, stacks and peak sites can be exercised. Off by default.
void set_mapping_failure_for_testing(bool on);

// A lock-free bump allocator over mmap'd chunks, for small immutable objects (depot nodes).
class BumpArena {
public:
    explicit BumpArena(size_t chunk_bytes = 1u << 20) : chunk_bytes_(chunk_bytes) {}
    void *allocate(size_t bytes, size_t align = alignof(std::max_align_t)); // nullptr when out of memory
    uint64_t mapped_bytes() const { return mapped_.load(std::memory_order_relaxed); }

private:
    struct Chunk;
    size_t chunk_bytes_;
    std::atomic<Chunk *> current_{nullptr};
    std::atomic<uint64_t> mapped_{0};
};

} // namespace vramtrace
