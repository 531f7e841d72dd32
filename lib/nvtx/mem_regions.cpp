// NVTX memory API heaps and regions (see mem_regions.h). Registrations are a pool's own operations,
// far rarer than allocations in the hot loop of a program that does not use a pool; one spin lock
// guards both tables.
#include "nvtx/mem_regions.h"

#include <atomic>

#include "core/clock.h"
#include "core/thread_state.h"
#include "nvtx/thread_ranges.h"

namespace vramtrace::nvtx {
namespace {

struct Heap {
    uint64_t address, size;
    bool live;
};
struct Slot {
    Region region;
    uint32_t heap_index; // heap index + 1; 0: process-wide
    bool live;
};

constexpr uint32_t kIndexSlots = kMaxRegions * 2; // address -> region index + 1, open addressing
constexpr uint32_t kTombstone = ~0u;

Heap g_heaps[kMaxHeaps];
uint32_t g_heap_count = 0;
Slot g_regions[kMaxRegions];
uint32_t g_region_count = 0;  // slots ever used
uint32_t g_free_head = 0;     // a freed slot's index + 1 (linked through heap_index), 0: none
uint32_t g_index[kIndexSlots];
uint64_t g_dropped = 0, g_unknown = 0;
std::atomic<bool> g_lock{false};

uint32_t home(uint64_t address) {
    uint64_t h = address * 0x9e3779b97f4a7c15ull;
    return static_cast<uint32_t>(h >> 40) % kIndexSlots;
}

// The index slot of the live region at `address`, or kIndexSlots.
uint32_t find(uint64_t address) {
    for (uint32_t i = home(address), n = 0; n < kIndexSlots; i = (i + 1) % kIndexSlots, ++n) {
        uint32_t v = g_index[i];
        if (v == 0) return kIndexSlots;
        if (v != kTombstone && g_regions[v - 1].live && g_regions[v - 1].region.address == address) return i;
    }
    return kIndexSlots;
}

void end_region(uint32_t index) {
    Slot &s = g_regions[index];
    uint32_t at = find(s.region.address);
    if (at != kIndexSlots && g_index[at] == index + 1) g_index[at] = kTombstone;
    s.live = false;
    s.heap_index = g_free_head; // the free list reuses the field
    g_free_head = index + 1;
}

void end_regions_of(uint32_t heap_index) {
    for (uint32_t i = 0; i < g_region_count; ++i)
        if (g_regions[i].live && g_regions[i].heap_index == heap_index) end_region(i);
}

} // namespace

namespace detail {
void lock() {
    while (g_lock.exchange(true, std::memory_order_acquire))
        while (g_lock.load(std::memory_order_relaxed)) __builtin_ia32_pause();
}
void unlock() { g_lock.store(false, std::memory_order_release); }
uint32_t region_slots() { return g_region_count; }
bool region_at(uint32_t index, Region *out) {
    if (!g_regions[index].live) return false;
    *out = g_regions[index].region;
    return true;
}
} // namespace detail

uint64_t register_heap(uint64_t address, uint64_t size) {
    detail::lock();
    uint64_t handle = 0;
    if (g_heap_count < kMaxHeaps) {
        g_heaps[g_heap_count] = Heap{address, size, true};
        handle = ++g_heap_count;
    } else {
        ++g_dropped;
    }
    detail::unlock();
    return handle;
}

void unregister_heap(uint64_t handle) {
    detail::lock();
    if (handle != 0 && handle <= g_heap_count && g_heaps[handle - 1].live) {
        g_heaps[handle - 1].live = false;
        end_regions_of(static_cast<uint32_t>(handle));
    } else {
        ++g_unknown;
    }
    detail::unlock();
}

void reset_heap(uint64_t handle) {
    detail::lock();
    if (handle != 0 && handle <= g_heap_count && g_heaps[handle - 1].live) end_regions_of(static_cast<uint32_t>(handle));
    else ++g_unknown;
    detail::unlock();
}

uint64_t register_region(uint64_t heap_handle, uint64_t address, uint64_t size) {
    Region r;
    r.address = address;
    r.size = size;
    r.range = current_range_stack();
    r.thread_id = current_tid();
    r.time_ns = monotonic_ns();
    detail::lock();
    uint64_t handle = 0;
    bool heap_ok = heap_handle == 0 || (heap_handle <= g_heap_count && g_heaps[heap_handle - 1].live);
    if (!heap_ok) {
        ++g_unknown;
    } else if (find(address) != kIndexSlots) {
        ++g_unknown; // a second region at a live region's address: the first is kept
    } else {
        uint32_t index = kMaxRegions;
        if (g_free_head != 0) {
            index = g_free_head - 1;
            g_free_head = g_regions[index].heap_index;
        } else if (g_region_count < kMaxRegions) {
            index = g_region_count++;
        }
        if (index == kMaxRegions) {
            ++g_dropped;
        } else {
            r.heap = heap_handle == 0 ? 0 : g_heaps[heap_handle - 1].address;
            g_regions[index] = Slot{r, static_cast<uint32_t>(heap_handle), true};
            uint32_t i = home(address);
            while (g_index[i] != 0 && g_index[i] != kTombstone) i = (i + 1) % kIndexSlots;
            g_index[i] = index + 1;
            handle = uint64_t{index} + 1;
        }
    }
    detail::unlock();
    return handle;
}

void unregister_region_at(uint64_t address) {
    detail::lock();
    uint32_t at = find(address);
    if (at == kIndexSlots) ++g_unknown;
    else end_region(g_index[at] - 1);
    detail::unlock();
}

void unregister_region_handle(uint64_t handle) {
    detail::lock();
    if (handle == 0 || handle > g_region_count || !g_regions[handle - 1].live) ++g_unknown;
    else end_region(static_cast<uint32_t>(handle - 1));
    detail::unlock();
}

uint64_t regions_dropped() { return __atomic_load_n(&g_dropped, __ATOMIC_RELAXED); }
uint64_t unknown_unregisters() { return __atomic_load_n(&g_unknown, __ATOMIC_RELAXED); }

} // namespace vramtrace::nvtx
