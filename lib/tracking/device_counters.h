// Per-device counters (current, peak, totals) and the exact composition of each device's peak: for
// every call site (stack id), the bytes and allocations it had live at the moment the device's
// tracked bytes were highest.
//
// Writes per allocation or free, and who else writes there:
//  - the device's word {current bytes, peak bytes}: one 16-byte compare-and-swap, shared by every
//    thread that allocates on the device (the only shared line written);
//  - the calling thread's lane (thread_lanes.h): its totals, its per-site sums and its busy flag,
//    written by that thread alone.
// The peak time is written only when the peak rises.
//
// Why the composition is exact without a lock. The word's compare-and-swap puts every allocation
// and free of a device in one order, and each learns the peak as it was just before it (pre-peak).
// Peaks only rise, so the operations after the one that set the final peak P are exactly those
// whose pre-peak is P. Each lane's site keeps its live bytes/count and, tagged with the highest
// pre-peak it has seen, the sum of the operations with that pre-peak. At-peak of a site is then
// live minus that sum where the tag is P, summed over lanes; the sums are linear, so a site's
// allocation and free may come from different threads.
//
// A reader (read_peak) sets the freeze flag and waits until no lane is between its compare-and-swap
// and its site update; writers that see the flag wait before their compare-and-swap. So what it
// reads is a consistent cut: sum(at-peak bytes of the sites) == peak_bytes, exactly, even while
// other threads allocate (tests/unit/tracking/test_peak_sites.cpp, also under TSan). Writers do not
// wait for each other.
//
// Site storage: per lane and device, a three-level radix of lazily mapped blocks indexed by stack id
// (the depot's ids are dense: 1, 2, ...), raw_memory.h, never freed. A block that cannot be mapped
// is marked failed for good in that lane, and its stacks are counted under stack 0 (so the sum stays
// exact), each such allocation counted in dropped_sites().
#pragma once

#include <atomic>
#include <cstdint>

#include "tracking/thread_lanes.h"

namespace vramtrace {

struct DeviceTotalsView {
    int device;
    uint64_t current_bytes, peak_bytes, allocation_count, free_count, total_allocated_bytes,
        total_freed_bytes;
};

// The peak of one device as read by DeviceCounters::read_peak.
struct DevicePeakView {
    uint64_t peak_bytes = 0;
    uint64_t time_ns = 0; // CLOCK_MONOTONIC time of the allocation that set the peak
};

class DeviceCounters {
public:
    static constexpr int kMinDevice = -2; // unknown
    static constexpr int kMaxDevice = 127;
    static constexpr int kDevices = kMaxDevice - kMinDevice + 1;
    // Stack ids per leaf block (2^kChunkLog2), leaf blocks per middle block, middle blocks per root.
    static constexpr unsigned kChunkLog2 = 10;
    static constexpr unsigned kMiddleLog2 = 10;
    static constexpr unsigned kRootLog2 = 32 - kChunkLog2 - kMiddleLog2;

    DeviceCounters(); // enables the writers' light fence when it can (asymmetric_fence.h)
    DeviceCounters(const DeviceCounters &) = delete;
    DeviceCounters &operator=(const DeviceCounters &) = delete;

    // stack: StackDepot id of the call (0: none); time_ns: CLOCK_MONOTONIC of the allocation.
    // Returns the device's current bytes just after this allocation, in the order of the device's
    // word (the VRAMTRACE_WARN_BYTES crossing test reads it: one live counter per device).
    uint64_t on_alloc(int device, uint64_t bytes, uint32_t stack = 0, uint64_t time_ns = 0);
    // stack: the id recorded with the allocation being freed.
    void on_free(int device, uint64_t bytes, uint32_t stack = 0);

    // Calls fn(const DeviceTotalsView&) for each device that saw an allocation, ascending ordinal.
    // current and peak are one atomic read; the totals are summed over lanes without the freeze, so
    // while other threads allocate they may lag current by the operations in flight.
    template <class Fn> void for_each_seen(Fn &&fn) const {
        for (int d = kMinDevice; d <= kMaxDevice; ++d) {
            if (!slots_[d - kMinDevice].seen.load(std::memory_order_relaxed)) continue;
            fn(totals(d));
        }
    }
    DeviceTotalsView totals(int device) const;

    // The scoped peak: the highest current bytes of each device since the last reset_scope() (or
    // since the start). The reset stores each device's current bytes as its new scoped peak, so
    // it costs the allocation path nothing but one relaxed load of a line it already writes (and
    // a compare-and-swap when an allocation raises the scoped peak). An allocation whose word
    // update races the reset may count on either side of it; every allocation that returns after
    // reset_scope() returns, and before scope_peak() reads, is counted exactly.
    void reset_scope();
    uint64_t scope_peak(int device) const {
        return slots_[index(device)].scope_peak.load(std::memory_order_acquire);
    }

    // The peak of `device` and, through site(stack, bytes, count, ctx), every site that had bytes or
    // allocations live at that moment, in ascending stack order; the bytes sum to peak_bytes.
    // Freezes the counters for the walk (O(stack ids in use x lanes)), so allocations on every
    // device wait; call it at dump time only. Never calls malloc.
    DevicePeakView read_peak(int device, void (*site)(uint32_t stack, uint64_t bytes, uint64_t count, void *ctx),
                             void *ctx) const;
    template <class Fn> DevicePeakView for_each_peak_site(int device, Fn &&fn) const {
        return read_peak(device,
                         [](uint32_t stack, uint64_t bytes, uint64_t count, void *c) {
                             (*static_cast<Fn *>(c))(stack, bytes, count);
                         },
                         const_cast<void *>(static_cast<const void *>(&fn)));
    }

    // Allocations counted under stack 0 because no memory could be mapped for their site.
    uint64_t dropped_sites() const { return dropped_sites_.load(std::memory_order_relaxed); }

    // One lane's share of one (device, stack) site; written only by the lane's owner.
    struct Site {
        std::atomic<uint64_t> live_bytes, live_count;
        std::atomic<uint64_t> tag;                      // highest pre-peak seen by this lane's site
        std::atomic<uint64_t> after_bytes, after_count; // sums of the operations whose pre-peak == tag
    };
    // One lane's counters for one device.
    struct LaneDevice {
        std::atomic<uint64_t> allocations, frees, allocated, freed;
        std::atomic<uint32_t> max_stack; // highest stack id with a site in this lane
        Site none;                       // stack 0, and stacks whose block could not be mapped
        std::atomic<std::atomic<std::atomic<Site *> *> *> root;
        // The last site looked up (a loop allocates from one call site over and over): read and
        // written by the lane's writer alone, never by a reader of the counters.
        uint32_t last_stack;
        Site *last_site;
    };
    struct alignas(64) Lane {
        std::atomic<uint32_t> busy{0}; // 1 from before the word's update until the site's is done
        std::atomic<uint32_t> lock{0}; // the shared lane only: its writers take turns
        std::atomic<LaneDevice *> devices[kDevices] = {};
    };

private:
    struct alignas(64) Slot {
        alignas(16) unsigned __int128 word = 0; // current bytes (low 64 bits), peak bytes (high)
        alignas(16) unsigned __int128 peak_stamp = 0; // peak bytes (low), its CLOCK_MONOTONIC ns (high)
        std::atomic<uint64_t> scope_peak{0}; // highest current bytes since reset_scope()
        std::atomic<bool> seen{false};
    };
    static int index(int device) {
        return (device < kMinDevice || device > kMaxDevice ? kMinDevice : device) - kMinDevice;
    }
    Lane &lane_of(unsigned lane); // maps on first use; the shared lane when it cannot
    LaneDevice *lane_device(Lane &lane, int slot); // maps on first use; nullptr when it cannot
    Site *site_for(LaneDevice &ld, uint32_t stack); // nullptr when its block cannot be mapped
    uint64_t change(int device, uint32_t stack, uint64_t bytes, bool alloc, uint64_t time_ns);
    void freeze() const;
    void thaw() const;

    Slot slots_[kDevices];
    std::atomic<Lane *> lanes_[lanes::kLanes] = {};
    Lane shared_lane_; // lanes::kSharedLane, and any thread whose own lane could not be mapped
    LaneDevice shared_devices_[kDevices] = {};
    mutable std::atomic<uint32_t> freeze_{0};
    std::atomic<uint64_t> dropped_sites_{0};
};

} // namespace vramtrace
