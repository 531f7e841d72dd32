// Per-device counters and peak composition (see device_counters.h for the scheme).
#include "tracking/device_counters.h"

#include <sched.h>

#include "tracking/raw_memory.h"

namespace vramtrace {
namespace {

// A directory cell or directory pointer that could not be mapped: never retried, so that the
// allocation and the free of one stack always reach the same site.
template <class T> T *failed_marker() { return reinterpret_cast<T *>(uintptr_t{1}); }

constexpr size_t kChunkBytes = sizeof(DeviceCounters::Site) << DeviceCounters::kChunkLog2;
constexpr size_t kDirectoryBytes = sizeof(std::atomic<DeviceCounters::Site *>) * DeviceCounters::kChunks;

// Publishes a freshly mapped block into `cell` unless another thread did first (then unmaps ours).
// A failed mapping publishes the failed marker.
template <class T> T *publish(std::atomic<T *> &cell, size_t bytes) {
    T *cur = cell.load(std::memory_order_acquire);
    if (cur != nullptr) return cur;
    void *m = map_zeroed(bytes);
    T *fresh = m ? static_cast<T *>(m) : failed_marker<T>();
    if (cell.compare_exchange_strong(cur, fresh, std::memory_order_acq_rel, std::memory_order_acquire))
        return fresh;
    if (m) unmap(m, bytes);
    return cur;
}

// Before a site's live values change: keep what it had at the current peak.
inline void save_peak_state(DeviceCounters::Site &site, uint64_t epoch) {
    if (site.epoch != epoch) {
        site.peak_bytes = site.live_bytes;
        site.peak_count = site.live_count;
        site.epoch = epoch;
    }
}

} // namespace

void DeviceCounters::lock(const Slot &s) {
    auto &l = const_cast<std::atomic<uint32_t> &>(s.lock);
    for (unsigned spins = 0;; ++spins) {
        if (l.load(std::memory_order_relaxed) == 0 && l.exchange(1, std::memory_order_acquire) == 0) return;
        if (spins >= 64) sched_yield(); // the holder may be descheduled (or a dump is walking)
#if defined(__x86_64__) || defined(__i386__)
        else __builtin_ia32_pause();
#endif
    }
}

void DeviceCounters::unlock(const Slot &s) {
    const_cast<std::atomic<uint32_t> &>(s.lock).store(0, std::memory_order_release);
}

DeviceCounters::Site *DeviceCounters::site_for(Slot &s, uint32_t stack) {
    if (stack == 0) return &s.none;
    std::atomic<Site *> *dir = publish(s.directory, kDirectoryBytes);
    if (dir == failed_marker<std::atomic<Site *>>()) return nullptr;
    Site *chunk = publish(dir[stack >> kChunkLog2], kChunkBytes);
    if (chunk == failed_marker<Site>()) return nullptr;
    return &chunk[stack & ((1u << kChunkLog2) - 1)];
}

void DeviceCounters::on_alloc(int device, uint64_t bytes, uint32_t stack, uint64_t time_ns) {
    Slot &s = slots_[index(device)];
    if (!s.seen.load(std::memory_order_relaxed)) s.seen.store(true, std::memory_order_relaxed);
    Site *site = site_for(s, stack);
    if (site == nullptr) {
        site = &s.none;
        dropped_sites_.fetch_add(1, std::memory_order_relaxed);
    }
    lock(s);
    // Plain load + store: every writer holds the lock; readers without it only need atomicity.
    s.allocations.store(s.allocations.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.allocated.store(s.allocated.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    uint64_t now = s.current.load(std::memory_order_relaxed) + bytes;
    s.current.store(now, std::memory_order_relaxed);
    save_peak_state(*site, s.epoch);
    site->live_bytes += bytes;
    site->live_count += 1;
    if (stack > s.max_stack && site != &s.none) s.max_stack = stack;
    // A new peak (the first moment the highest value is reached): every site's live values are now
    // its at-peak values.
    if (now > s.peak.load(std::memory_order_relaxed)) {
        s.peak.store(now, std::memory_order_relaxed);
        s.peak_time_ns = time_ns;
        ++s.epoch;
    }
    unlock(s);
}

void DeviceCounters::on_free(int device, uint64_t bytes, uint32_t stack) {
    Slot &s = slots_[index(device)];
    Site *site = site_for(s, stack);
    if (site == nullptr) site = &s.none; // the allocation was counted there too (marker is sticky)
    lock(s);
    s.frees.store(s.frees.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.freed.store(s.freed.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    s.current.store(s.current.load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
    save_peak_state(*site, s.epoch);
    site->live_bytes -= bytes;
    site->live_count -= 1;
    unlock(s);
}

DevicePeakView DeviceCounters::read_peak(int device,
                                         void (*site_fn)(uint32_t, uint64_t, uint64_t, void *),
                                         void *ctx) const {
    const Slot &s = slots_[index(device)];
    DevicePeakView view;
    lock(s);
    view.peak_bytes = s.peak.load(std::memory_order_relaxed);
    view.time_ns = s.peak_time_ns;
    auto emit = [&](uint32_t stack, const Site &site) {
        uint64_t bytes = site.epoch == s.epoch ? site.peak_bytes : site.live_bytes;
        uint64_t count = site.epoch == s.epoch ? site.peak_count : site.live_count;
        if (bytes != 0 || count != 0) site_fn(stack, bytes, count, ctx);
    };
    emit(0, s.none);
    std::atomic<Site *> *dir = s.directory.load(std::memory_order_acquire);
    if (dir != nullptr && dir != failed_marker<std::atomic<Site *>>()) {
        for (uint64_t c = 0; c <= (s.max_stack >> kChunkLog2); ++c) {
            Site *chunk = dir[c].load(std::memory_order_acquire);
            if (chunk == nullptr || chunk == failed_marker<Site>()) continue;
            for (uint32_t i = 0; i < (1u << kChunkLog2); ++i) {
                uint64_t stack = (c << kChunkLog2) | i;
                if (stack == 0 || stack > s.max_stack) continue;
                emit(static_cast<uint32_t>(stack), chunk[i]);
            }
        }
    }
    unlock(s);
    return view;
}

} // namespace vramtrace
