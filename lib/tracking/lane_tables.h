// One table per thread lane (thread_lanes.h), mapped from the kernel at the lane's first use
// (raw_memory.h) and never freed: the shape shared by the recent walks and the Python stack memo.
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

} // namespace vramtrace
