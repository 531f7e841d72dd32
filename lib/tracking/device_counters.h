// Per-device counters (current, peak, totals) and the exact composition of each device's peak: for
// every call site (stack id), the bytes and allocations it had live at the moment the device's
// tracked bytes were highest.
//
// How the peak composition stays exact and O(1) per alloc/free: each (device, stack) site keeps
// its live bytes/count, a copy "at the peak" and the peak epoch that copy belongs to. A device's
// epoch is bumped whenever a new peak is set; at that moment every site's live values ARE its
// at-peak values, so nothing is copied. Before a site's live values change, a site whose epoch is
// older than the device's saves live into at-peak first (a lazy copy-on-write of the peak state).
// At-peak of a site is therefore `epoch == device epoch ? at_peak : live`.
//
// The counter update, the site update and the peak check form one short critical section per
// device under a tiny spinlock. It is never held while a CUDA function runs, only around a few
// loads and stores, so sum(at-peak bytes of the sites) == peak_bytes holds exactly even with many
// threads (a reader takes the same lock: a consistent cut). The counters are still atomics so that
// vramtrace_stats reads them without the lock.
//
// Site storage: per device, a directory indexed by stack id (the depot's ids are dense, 1, 2, ...)
// of lazily mapped chunks (lib/tracking/raw_memory.h, never freed). A chunk that cannot be mapped is
// marked failed for good, and its stacks are counted under stack 0 (so the sum stays exact), each
// such allocation counted in dropped_sites().
#pragma once

#include <atomic>
#include <cstdint>

namespace vramtrace {

struct DeviceTotalsView {
    int device;
    uint64_t current_bytes, peak_bytes, allocation_count, free_count, total_allocated_bytes,
        total_freed_bytes;
};

// The peak of one device as read under its lock by DeviceCounters::read_peak.
struct DevicePeakView {
    uint64_t peak_bytes = 0;
    uint64_t time_ns = 0; // CLOCK_MONOTONIC time of the allocation that set the peak
};

class DeviceCounters {
public:
    static constexpr int kMinDevice = -2; // unknown
    static constexpr int kMaxDevice = 127;
    // Sites per chunk (2^kChunkLog2) and chunks per device: covers every 32-bit stack id.
    static constexpr unsigned kChunkLog2 = 12;
    static constexpr uint64_t kChunks = uint64_t{1} << (32 - kChunkLog2);

    DeviceCounters() = default;
    DeviceCounters(const DeviceCounters &) = delete;
    DeviceCounters &operator=(const DeviceCounters &) = delete;

    // stack: StackDepot id of the call (0: none); time_ns: CLOCK_MONOTONIC of the allocation.
    void on_alloc(int device, uint64_t bytes, uint32_t stack = 0, uint64_t time_ns = 0);
    // stack: the id recorded with the allocation being freed.
    void on_free(int device, uint64_t bytes, uint32_t stack = 0);

    // Calls fn(const DeviceTotalsView&) for each device that saw an allocation, ascending ordinal.
    template <class Fn> void for_each_seen(Fn &&fn) const {
        for (int d = kMinDevice; d <= kMaxDevice; ++d) {
            const Slot &s = slots_[d - kMinDevice];
            if (!s.seen.load(std::memory_order_relaxed)) continue;
            fn(DeviceTotalsView{d, s.current.load(std::memory_order_relaxed),
                                s.peak.load(std::memory_order_relaxed),
                                s.allocations.load(std::memory_order_relaxed),
                                s.frees.load(std::memory_order_relaxed),
                                s.allocated.load(std::memory_order_relaxed),
                                s.freed.load(std::memory_order_relaxed)});
        }
    }

    // The peak of `device` and, through site(stack, bytes, count, ctx), every site that had bytes or
    // allocations live at that moment, in ascending stack order; the bytes sum to peak_bytes. Holds
    // the device's lock for the walk (O(stack ids in use)), so allocations on that device wait;
    // call it at dump time only. Never calls malloc.
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

    struct Site {
        uint64_t live_bytes, live_count;
        uint64_t peak_bytes, peak_count; // at the device's peak of `epoch`
        uint64_t epoch;
    };

private:
    struct alignas(64) Slot {
        std::atomic<uint64_t> current{0}, peak{0}, allocations{0}, frees{0}, allocated{0}, freed{0};
        std::atomic<bool> seen{false};
        std::atomic<uint32_t> lock{0};
        uint64_t epoch = 1;       // bumped at each new peak (guarded by lock)
        uint64_t peak_time_ns = 0; // guarded by lock
        uint32_t max_stack = 0;   // highest stack id with a site (guarded by lock)
        Site none{};              // stack 0, and stacks whose chunk could not be mapped
        std::atomic<std::atomic<Site *> *> directory{nullptr};
    };
    static int index(int device) {
        return (device < kMinDevice || device > kMaxDevice ? kMinDevice : device) - kMinDevice;
    }
    Site *site_for(Slot &s, uint32_t stack);         // outside the lock; maps on first use
    static void lock(const Slot &s);
    static void unlock(const Slot &s);

    Slot slots_[kMaxDevice - kMinDevice + 1];
    std::atomic<uint64_t> dropped_sites_{0};
};

} // namespace vramtrace
