// One table per thread lane (thread_lanes.h), mapped from the kernel at the lane's first use
// (raw_memory.h) and never freed, and the parts that such a table of recent stacks has: its use
// flag and each set's prints of recent misses. Shared by the recent walks and the Python stack memo.
// Only the lane's owner maps or reads its table; the lane's hand-over (a release/acquire pair)
// orders the pointer for the next owner. No thread-local storage.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "tracking/raw_memory.h"
#include "tracking/thread_lanes.h"

namespace vramtrace {

template <class T> class LaneTables {
public:
    // This thread's lane's table, default-constructed in zeroed pages at its first use, and
    // `lane` its lane; nullptr on the shared lane, or for good once the lane's mapping failed.
    T *mine(unsigned *lane = nullptr) {
        const unsigned l = lanes::this_thread_lane();
        if (lane != nullptr) *lane = l;
        if (l >= lanes::kLanes) return nullptr;
        T *t = tables_[l].load(std::memory_order_relaxed);
        if (t == nullptr) {
            void *m = map_zeroed(sizeof(T));
            t = m != nullptr ? new (m) T : refused();
            tables_[l].store(t, std::memory_order_release);
        }
        return t == refused() ? nullptr : t;
    }
    // fn(const T&) for each lane's table mapped so far.
    template <class Fn> void for_each(Fn &&fn) const {
        for (const auto &slot : tables_) {
            const T *t = slot.load(std::memory_order_acquire);
            if (t != nullptr && t != refused()) fn(*t);
        }
    }

private:
    static T *refused() { return reinterpret_cast<T *>(uintptr_t{1}); }
    std::atomic<T *> tables_[lanes::kLanes] = {};
};

// The lane owner's use of its table. A capture that interrupts another on the same thread (a
// signal handler that allocates) finds the table in use and goes without it.
class LaneUse {
public:
    bool try_enter() {
        if (busy_) return false;
        busy_ = true;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        return true;
    }
    void leave() {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        busy_ = false;
    }

private:
    volatile bool busy_ = false;
};

// Fingerprints of a set's last N misses. A table keeps an entry only on its second sight, so that
// paths taking turns faster than a set holds them do not pay for entries never used.
template <unsigned N> struct RecentPrints {
    uint32_t prints[N] = {}; // 0: empty
    uint8_t next = 0;
    // Whether `print` (never 0) is among the last N noted; when not, notes it.
    bool seen_or_note(uint32_t print) {
        bool seen = false;
        for (unsigned i = 0; i < N; ++i) seen |= prints[i] == print;
        if (!seen) {
            prints[next] = print;
            next = static_cast<uint8_t>((next + 1) % N);
        }
        return seen;
    }
};

} // namespace vramtrace
