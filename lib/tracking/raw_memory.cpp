// Kernel-backed memory for the tracker: anonymous private mappings and a lock-free bump arena.
//
// Nothing here calls malloc, throws, or takes a lock. Mappings use MAP_NORESERVE so that large,
// mostly untouched tables cost address space but neither commit charge nor resident pages.
#include "tracking/raw_memory.h"

#include <cerrno>
#include <sys/mman.h>

namespace vramtrace {

namespace {
std::atomic<bool> g_fail_mappings{false};
constexpr size_t kPageBytes = 4096; // the smallest page: touching each reaches every page
std::atomic<bool> g_populate_fallback{false};
} // namespace

void set_mapping_failure_for_testing(bool on) { g_fail_mappings.store(on, std::memory_order_relaxed); }

void *map_zeroed(size_t bytes) {
    if (bytes == 0 || g_fail_mappings.load(std::memory_order_relaxed))
        return nullptr;
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

void make_resident(void *p, size_t bytes) {
    if (p == nullptr || bytes == 0) return;
    const int saved_errno = errno;
#ifndef MADV_POPULATE_WRITE
    constexpr int MADV_POPULATE_WRITE = 23; // Linux 5.14 (older headers lack it)
#endif
    if (g_populate_fallback.load(std::memory_order_relaxed) || ::madvise(p, bytes, MADV_POPULATE_WRITE) != 0) {
        // A kernel before 5.14 (EINVAL): an atomic add of zero to each page's first word makes the
        // page resident without changing it, even while other threads write the same word.
        if (g_populate_fallback.load(std::memory_order_relaxed) || errno == EINVAL)
            for (size_t off = 0; off < bytes; off += kPageBytes)
                __atomic_fetch_add(reinterpret_cast<uint64_t *>(static_cast<unsigned char *>(p) + off), uint64_t{0},
                                   __ATOMIC_RELAXED);
    }
    errno = saved_errno;
}

void set_populate_fallback_for_testing(bool on) { g_populate_fallback.store(on, std::memory_order_relaxed); }

void unmap(void *p, size_t bytes) {
    if (p != nullptr && bytes != 0)
        ::munmap(p, bytes);
}

// A chunk is one mapping: this header, then the bytes handed out. `used` counts bytes from the
// start of the mapping (header included), so an offset is also a distance from `this`.
struct BumpArena::Chunk {
    std::atomic<size_t> used;
    size_t size; // bytes in the mapping
};

namespace {

constexpr size_t kPage = 4096;

size_t round_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

// Carves `bytes` at `align` out of `chunk` with a CAS loop. Each failed CAS means another thread
// carved its own block, so the loop always makes progress. nullptr when the chunk is too full.
void *carve(std::atomic<size_t> &used, size_t chunk_size, uintptr_t base, size_t bytes,
            size_t align) {
    size_t off = used.load(std::memory_order_relaxed);
    for (;;) {
        size_t start = round_up(base + off, align) - base;
        if (start > chunk_size || bytes > chunk_size - start)
            return nullptr;
        if (used.compare_exchange_weak(off, start + bytes, std::memory_order_relaxed,
                                       std::memory_order_relaxed))
            return reinterpret_cast<void *>(base + start);
    }
}

} // namespace

void *BumpArena::allocate(size_t bytes, size_t align) {
    if (align == 0 || (align & (align - 1)) != 0 || align > kPage)
        return nullptr;
    if (bytes == 0)
        bytes = 1;
    const size_t header = round_up(sizeof(Chunk), alignof(std::max_align_t));
    if (bytes > (size_t{1} << 40))
        return nullptr;

    // A block that would not leave room for other blocks in an ordinary chunk gets a mapping of its
    // own, which never becomes `current_` (so it does not strand the rest of the current chunk).
    if (header + bytes + align > chunk_bytes_ / 2) {
        size_t size = round_up(header + bytes + align, kPage);
        void *m = map_zeroed(size);
        if (m == nullptr)
            return nullptr;
        mapped_.fetch_add(size, std::memory_order_relaxed);
        auto *c = static_cast<Chunk *>(m);
        c->size = size;
        c->used.store(header, std::memory_order_relaxed);
        return carve(c->used, size, reinterpret_cast<uintptr_t>(c), bytes, align);
    }

    Chunk *c = current_.load(std::memory_order_acquire);
    for (;;) {
        if (c != nullptr) {
            if (void *p = carve(c->used, c->size, reinterpret_cast<uintptr_t>(c), bytes, align))
                return p;
        }
        // The current chunk is full (or there is none): map a fresh one and try to make it current.
        size_t size = round_up(chunk_bytes_ < kPage ? kPage : chunk_bytes_, kPage);
        void *m = map_zeroed(size);
        if (m == nullptr)
            return nullptr;
        auto *fresh = static_cast<Chunk *>(m);
        fresh->size = size;
        fresh->used.store(header, std::memory_order_relaxed);
        if (current_.compare_exchange_strong(c, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
            mapped_.fetch_add(size, std::memory_order_relaxed);
            c = fresh;
        } else {
            // Another thread installed a chunk first (c now holds it): ours was never visible.
            unmap(m, size);
        }
    }
}

} // namespace vramtrace
