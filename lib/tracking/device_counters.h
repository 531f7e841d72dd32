// Per-device counters (current, peak, totals), updated with atomics on every tracked alloc/free.
// The peak is raised with a CAS loop that only retries while it is still below the new value.
#pragma once

#include <atomic>
#include <cstdint>

namespace vramtrace {

struct DeviceTotalsView {
    int device;
    uint64_t current_bytes, peak_bytes, allocation_count, free_count, total_allocated_bytes,
        total_freed_bytes;
};

class DeviceCounters {
public:
    static constexpr int kMinDevice = -2; // unknown
    static constexpr int kMaxDevice = 127;

    void on_alloc(int device, uint64_t bytes) {
        Slot &s = slot(device);
        if (!s.seen.load(std::memory_order_relaxed)) s.seen.store(true, std::memory_order_relaxed);
        s.allocations.fetch_add(1, std::memory_order_relaxed);
        s.allocated.fetch_add(bytes, std::memory_order_relaxed);
        uint64_t now = s.current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
        uint64_t peak = s.peak.load(std::memory_order_relaxed);
        while (now > peak && !s.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
        }
    }

    void on_free(int device, uint64_t bytes) {
        Slot &s = slot(device);
        s.frees.fetch_add(1, std::memory_order_relaxed);
        s.freed.fetch_add(bytes, std::memory_order_relaxed);
        s.current.fetch_sub(bytes, std::memory_order_relaxed);
    }

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

private:
    struct alignas(64) Slot {
        std::atomic<uint64_t> current{0}, peak{0}, allocations{0}, frees{0}, allocated{0}, freed{0};
        std::atomic<bool> seen{false};
    };
    Slot &slot(int device) {
        if (device < kMinDevice || device > kMaxDevice) device = kMinDevice;
        return slots_[device - kMinDevice];
    }
    Slot slots_[kMaxDevice - kMinDevice + 1];
};

} // namespace vramtrace
