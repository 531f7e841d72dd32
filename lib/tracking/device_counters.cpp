// Per-device counters and peak composition (see device_counters.h for the scheme).
#include "tracking/device_counters.h"

#include <sched.h>

#include "tracking/asymmetric_fence.h"
#include "tracking/raw_memory.h"

namespace vramtrace {
namespace {

using u128 = unsigned __int128;
using Site = DeviceCounters::Site;
using Middle = std::atomic<Site *>;
using Root = std::atomic<Middle *>;

constexpr uint64_t lo(u128 v) { return static_cast<uint64_t>(v); }
constexpr uint64_t hi(u128 v) { return static_cast<uint64_t>(v >> 64); }
constexpr u128 pack(uint64_t low, uint64_t high) { return u128(high) << 64 | low; }

// The two halves, each read atomically: only a first guess for a compare-and-swap, which corrects it.
u128 guess(const u128 *p) {
    const uint64_t *w = reinterpret_cast<const uint64_t *>(p);
    return pack(__atomic_load_n(w, __ATOMIC_RELAXED), __atomic_load_n(w + 1, __ATOMIC_RELAXED));
}
bool cas(u128 *p, u128 &expected, u128 desired) {
    u128 prev = __sync_val_compare_and_swap(p, expected, desired);
    if (prev == expected) return true;
    expected = prev;
    return false;
}
// One atomic read of all 16 bytes (a compare-and-swap that writes back what is there).
u128 read(const u128 *p) { return __sync_val_compare_and_swap(const_cast<u128 *>(p), u128{0}, u128{0}); }

// A block that could not be mapped: never retried in that lane, so that the allocation and the free
// of one stack in one lane reach the same site.
template <class T> T *failed_marker() { return reinterpret_cast<T *>(uintptr_t{1}); }
template <class T> bool usable(T *p) { return p != nullptr && p != failed_marker<T>(); }

// Only the lane's writer publishes into its radix, so a plain release store suffices.
template <class T> T *child(std::atomic<T *> &cell, size_t count) {
    T *cur = cell.load(std::memory_order_acquire);
    if (cur != nullptr) return cur;
    void *m = map_zeroed(sizeof(T) * count);
    T *fresh = m ? static_cast<T *>(m) : failed_marker<T>();
    cell.store(fresh, std::memory_order_release);
    return fresh;
}

inline void add(std::atomic<uint64_t> &a, uint64_t d) {
    a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

inline void pause_or_yield(unsigned spins) {
    if (spins >= 64) sched_yield(); // the other side may be descheduled
#if defined(__x86_64__) || defined(__i386__)
    else __builtin_ia32_pause();
#endif
}

// A reader waits this many turns at most for a lane's operation in flight (about a second of
// sched_yield): one interrupted by a signal whose handler reads would otherwise never end.
constexpr unsigned kMaxWaitTurns = 1u << 20;

void raise_to(std::atomic<uint64_t> &peak, uint64_t value) {
    uint64_t seen = peak.load(std::memory_order_relaxed);
    while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_release, std::memory_order_relaxed)) {
    }
}

// delta, count_delta: two's-complement for a free.
inline void update_site(Site &site, uint64_t pre_peak, uint64_t delta, uint64_t count_delta) {
    uint64_t tag = site.tag.load(std::memory_order_relaxed);
    if (pre_peak > tag) {
        site.tag.store(pre_peak, std::memory_order_relaxed);
        site.after_bytes.store(0, std::memory_order_relaxed);
        site.after_count.store(0, std::memory_order_relaxed);
        tag = pre_peak;
    }
    if (pre_peak == tag) {
        add(site.after_bytes, delta);
        add(site.after_count, count_delta);
    }
    add(site.live_bytes, delta);
    add(site.live_count, count_delta);
}

const Site *leaf_of(const DeviceCounters::LaneDevice &ld, uint64_t chunk) {
    Root *root = ld.root.load(std::memory_order_acquire);
    if (!usable(root)) return nullptr;
    Middle *middle = root[chunk >> DeviceCounters::kMiddleLog2].load(std::memory_order_acquire);
    if (!usable(middle)) return nullptr;
    Site *leaf = middle[chunk & ((1u << DeviceCounters::kMiddleLog2) - 1)].load(std::memory_order_acquire);
    return usable(leaf) ? leaf : nullptr;
}

} // namespace

DeviceCounters::Lane &DeviceCounters::lane_of(unsigned lane) {
    if (lane >= lanes::kLanes) return shared_lane_;
    Lane *l = child(lanes_[lane], 1);
    return usable(l) ? *l : shared_lane_;
}

DeviceCounters::LaneDevice *DeviceCounters::lane_device(Lane &lane, int slot) {
    if (&lane == &shared_lane_) return &shared_devices_[slot];
    LaneDevice *ld = child(lane.devices[slot], 1);
    return usable(ld) ? ld : nullptr;
}

DeviceCounters::Site *DeviceCounters::site_for(LaneDevice &ld, uint32_t stack) {
    if (stack == 0) return &ld.none;
    if (stack == ld.last_stack && ld.last_site != nullptr) return ld.last_site;
    Root *root = child(ld.root, size_t{1} << kRootLog2);
    if (!usable(root)) return nullptr;
    Middle *middle = child(root[stack >> (kChunkLog2 + kMiddleLog2)], size_t{1} << kMiddleLog2);
    if (!usable(middle)) return nullptr;
    Site *leaf = child(middle[(stack >> kChunkLog2) & ((1u << kMiddleLog2) - 1)], size_t{1} << kChunkLog2);
    if (!usable(leaf)) return nullptr;
    if (stack > ld.max_stack.load(std::memory_order_relaxed)) ld.max_stack.store(stack, std::memory_order_relaxed);
    ld.last_stack = stack;
    ld.last_site = &leaf[stack & ((1u << kChunkLog2) - 1)];
    return ld.last_site;
}

uint64_t DeviceCounters::change(int device, uint32_t stack, uint64_t bytes, bool alloc, uint64_t time_ns) {
    const int si = index(device);
    Slot &s = slots_[si];
    // The device's word is fetched for writing now, while the lane's bookkeeping below runs: the
    // compare-and-swap then finds the line owned instead of loading it shared and upgrading it.
    // (prefetchw is a no-op on processors without it.)
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(s.word));
#endif
    if (alloc && !s.seen.load(std::memory_order_relaxed)) s.seen.store(true, std::memory_order_relaxed);

    // The own lane's blocks are mapped before the operation starts (only this thread writes them);
    // the shared lane's under its lock.
    Lane *lane = &lane_of(lanes::this_thread_lane());
    LaneDevice *ld = nullptr;
    Site *site = nullptr;
    if (lane != &shared_lane_) {
        ld = lane_device(*lane, si);
        if (ld == nullptr) lane = &shared_lane_;
        else site = site_for(*ld, stack);
    }
    const bool shared = lane == &shared_lane_;
    for (unsigned spins = 0;; ++spins) {
        if (shared) {
            while (lane->lock.load(std::memory_order_relaxed) != 0 || lane->lock.exchange(1, std::memory_order_acquire) != 0)
                pause_or_yield(spins++);
        }
        // Dekker with freeze(): a fence between our busy store and our load of the flag, and the
        // reader's between its flag store and its load of ours (asymmetric_fence.h), so it sees
        // us busy or we see it frozen.
        lane->busy.store(1, std::memory_order_relaxed);
        asym::writer_fence();
        if (freeze_.load(std::memory_order_relaxed) == 0) break;
        lane->busy.store(0, std::memory_order_release);
        if (shared) lane->lock.store(0, std::memory_order_release);
        while (freeze_.load(std::memory_order_acquire) != 0) pause_or_yield(spins++);
    }
    if (shared) {
        ld = lane_device(*lane, si);
        site = site_for(*ld, stack);
    }
    if (site == nullptr) {
        site = &ld->none;
        if (alloc && stack != 0) dropped_sites_.fetch_add(1, std::memory_order_relaxed);
    }

    u128 cur = guess(&s.word);
    uint64_t pre_peak, now;
    for (;;) {
        pre_peak = hi(cur);
        now = alloc ? lo(cur) + bytes : lo(cur) - bytes;
        if (cas(&s.word, cur, pack(now, alloc && now > pre_peak ? now : pre_peak))) break;
    }
    if (alloc) raise_to(s.scope_peak, now);
    if (alloc && now > pre_peak) {
        // The time of the highest peak: a later, higher peak may have stamped first.
        u128 stamp = guess(&s.peak_stamp);
        while (lo(stamp) < now && !cas(&s.peak_stamp, stamp, pack(now, time_ns))) {
        }
    }
    if (alloc) {
        add(ld->allocations, 1);
        add(ld->allocated, bytes);
        update_site(*site, pre_peak, bytes, 1);
    } else {
        add(ld->frees, 1);
        add(ld->freed, bytes);
        update_site(*site, pre_peak, uint64_t{0} - bytes, ~uint64_t{0});
    }
    lane->busy.store(0, std::memory_order_release);
    if (shared) lane->lock.store(0, std::memory_order_release);
    return now;
}

DeviceCounters::DeviceCounters() { asym::enable(); }

void DeviceCounters::reset_scope() {
    // Store the current bytes, then raise to what is current after the store: an allocation whose
    // raise landed between the read and the store is then not lost while it stays live.
    for (Slot &s : slots_) {
        s.scope_peak.store(lo(read(&s.word)), std::memory_order_release);
        raise_to(s.scope_peak, lo(read(&s.word)));
    }
}

uint64_t DeviceCounters::on_alloc(int device, uint64_t bytes, uint32_t stack, uint64_t time_ns) {
    return change(device, stack, bytes, true, time_ns);
}

void DeviceCounters::on_free(int device, uint64_t bytes, uint32_t stack) { change(device, stack, bytes, false, 0); }

void DeviceCounters::freeze() const {
    freeze_.fetch_add(1, std::memory_order_seq_cst);
    asym::reader_fence();
    const unsigned mine = lanes::held_lane();
    auto settle = [](const Lane &l) {
        for (unsigned spins = 0; l.busy.load(std::memory_order_acquire) != 0 && spins < kMaxWaitTurns; ++spins)
            pause_or_yield(spins);
    };
    for (unsigned i = 0; i < lanes::kLanes; ++i) {
        const Lane *l = lanes_[i].load(std::memory_order_acquire);
        if (usable(l) && i != mine) settle(*l); // our own operation, if any, is the one we interrupted
    }
    settle(shared_lane_);
}

void DeviceCounters::thaw() const { freeze_.fetch_sub(1, std::memory_order_release); }

DeviceTotalsView DeviceCounters::totals(int device) const {
    const int si = index(device);
    u128 w = read(&slots_[si].word);
    DeviceTotalsView v{device, lo(w), hi(w), 0, 0, 0, 0};
    auto sum = [&](const LaneDevice &ld) {
        v.allocation_count += ld.allocations.load(std::memory_order_relaxed);
        v.free_count += ld.frees.load(std::memory_order_relaxed);
        v.total_allocated_bytes += ld.allocated.load(std::memory_order_relaxed);
        v.total_freed_bytes += ld.freed.load(std::memory_order_relaxed);
    };
    for (unsigned i = 0; i < lanes::kLanes; ++i) {
        const Lane *l = lanes_[i].load(std::memory_order_acquire);
        if (!usable(l)) continue;
        const LaneDevice *ld = l->devices[si].load(std::memory_order_acquire);
        if (usable(ld)) sum(*ld);
    }
    sum(shared_devices_[si]);
    return v;
}

DevicePeakView DeviceCounters::read_peak(int device,
                                         void (*site_fn)(uint32_t, uint64_t, uint64_t, void *),
                                         void *ctx) const {
    const int si = index(device);
    const Slot &s = slots_[si];
    freeze();
    DevicePeakView view;
    const uint64_t peak = hi(read(&s.word));
    view.peak_bytes = peak;
    u128 stamp = read(&s.peak_stamp);
    view.time_ns = lo(stamp) == peak ? hi(stamp) : 0;

    const LaneDevice *lds[lanes::kAllLanes];
    unsigned n = 0;
    uint32_t max_stack = 0;
    auto take = [&](const LaneDevice *ld) {
        lds[n++] = ld;
        uint32_t m = ld->max_stack.load(std::memory_order_relaxed);
        if (m > max_stack) max_stack = m;
    };
    for (unsigned i = 0; i < lanes::kLanes; ++i) {
        const Lane *l = lanes_[i].load(std::memory_order_acquire);
        if (!usable(l)) continue;
        const LaneDevice *ld = l->devices[si].load(std::memory_order_acquire);
        if (usable(ld)) take(ld);
    }
    take(&shared_devices_[si]);

    auto at_peak = [peak](const Site &site, uint64_t &bytes, uint64_t &count) {
        bool after = site.tag.load(std::memory_order_relaxed) == peak;
        bytes += site.live_bytes.load(std::memory_order_relaxed) -
                 (after ? site.after_bytes.load(std::memory_order_relaxed) : 0);
        count += site.live_count.load(std::memory_order_relaxed) -
                 (after ? site.after_count.load(std::memory_order_relaxed) : 0);
    };
    uint64_t bytes = 0, count = 0;
    for (unsigned k = 0; k < n; ++k) at_peak(lds[k]->none, bytes, count);
    if (bytes != 0 || count != 0) site_fn(0, bytes, count, ctx);

    const Site *leaves[lanes::kAllLanes];
    for (uint64_t c = 0; c <= (max_stack >> kChunkLog2); ++c) {
        unsigned m = 0;
        for (unsigned k = 0; k < n; ++k)
            if (const Site *leaf = leaf_of(*lds[k], c)) leaves[m++] = leaf;
        if (m == 0) continue;
        for (uint32_t i = 0; i < (1u << kChunkLog2); ++i) {
            uint64_t stack = (c << kChunkLog2) | i;
            if (stack == 0 || stack > max_stack) continue;
            bytes = count = 0;
            for (unsigned k = 0; k < m; ++k) at_peak(leaves[k][i], bytes, count);
            if (bytes != 0 || count != 0) site_fn(static_cast<uint32_t>(stack), bytes, count, ctx);
        }
    }
    thaw();
    return view;
}

} // namespace vramtrace
