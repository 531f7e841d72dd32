// The NVTX memory API (nvToolsExtMem.h): heaps that a pool registers (nvtxMemHeapRegister) and the
// regions it hands out inside them (nvtxMemRegionsRegister / Unregister, nvtxMemHeapReset /
// Unregister). Recorded as they come, in bounded tables (kMaxHeaps, kMaxRegions; more are counted);
// nothing is trusted: the snapshot builder keeps a region only when it lies inside a tracked
// allocation (the pool's segment), and counts the others.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vramtrace::nvtx {

constexpr uint32_t kMaxHeaps = 1024;
constexpr uint32_t kMaxRegions = 65536;

struct Region {
    uint64_t address = 0;
    uint64_t size = 0;
    uint64_t heap = 0;        // the heap's base address; 0: process-wide (no heap)
    uint16_t range = 0;       // the registering thread's range stack (thread_ranges.h)
    uint32_t thread_id = 0;
    uint64_t time_ns = 0;
};

// A heap [address, address + size); the handle NVTX hands back (heap index + 1), 0 when full.
uint64_t register_heap(uint64_t address, uint64_t size);
void unregister_heap(uint64_t handle); // ends its regions too
void reset_heap(uint64_t handle);      // ends its regions
// A region in heap `handle` (0: process-wide); its handle (region index + 1), 0 when full.
uint64_t register_region(uint64_t heap_handle, uint64_t address, uint64_t size);
// Ends the live region at `address` / with `handle`; an unknown one is counted (double unregister).
void unregister_region_at(uint64_t address);
void unregister_region_handle(uint64_t handle);

// Calls fn(const Region &) for every live region. Takes the tables' lock: dump time only.
template <class Fn> void for_each_region(Fn &&fn);

uint64_t regions_dropped();            // registrations refused: a table was full
uint64_t unknown_unregisters();        // unregisters of a region that is not live

namespace detail {
void lock();
void unlock();
uint32_t region_slots();
bool region_at(uint32_t index, Region *out);
} // namespace detail

template <class Fn> void for_each_region(Fn &&fn) {
    detail::lock();
    Region r;
    for (uint32_t i = 0, n = detail::region_slots(); i < n; ++i)
        if (detail::region_at(i, &r)) fn(r);
    detail::unlock();
}

} // namespace vramtrace::nvtx
