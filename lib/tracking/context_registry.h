// CUDA contexts as owners of allocations: a dense id per context generation, so that a record can
// say which context's teardown ends it in the 16 bits it has left (AllocationRecord::context).
//
// A context handle (CUcontext) is registered the first time a thread allocates in it, or when
// cuCtxCreate* returns it (then it is known as created; every other context is taken for a primary
// context). A teardown retires the ids of the handle: the driver may hand out the same handle value
// again (a primary context keeps its handle across a reset), and what is allocated in it afterwards
// gets a new id, so it is never ended by the old generation's teardown. Retiring bumps epoch(),
// which the per-thread caches of the hot path compare against.
//
// Lock-free: ids are handed out with one fetch_add and never reused. Two threads registering the
// same new handle at once may get two ids for it; a teardown ends every live id of its handle.
// Capacity: kCapacity generations over the life of the process; past that a context gets id 0
// (its records are not ended by a teardown, which the report's untracked figures then show).
#pragma once

#include <atomic>
#include <cstdint>

namespace vramtrace {

class ContextRegistry {
public:
    static constexpr uint32_t kCapacity = 4096;

    ContextRegistry();
    ContextRegistry(const ContextRegistry &) = delete;
    ContextRegistry &operator=(const ContextRegistry &) = delete;

    // The live id of `handle` (not 0), registering it on `device` when it has none. 0 when the
    // registry is full or handle is 0.
    uint16_t id_for(uint64_t handle, int device, bool created = false);
    // A context returned by cuCtxCreate*: a new id, marked created.
    uint16_t note_created(uint64_t handle, int device) { return id_for(handle, device, true); }

    // Calls fn(uint16_t id) for every live id of `handle`.
    template <class Fn> void for_each_live_id(uint64_t handle, Fn &&fn) const {
        uint32_t n = used();
        for (uint32_t i = 0; i < n; ++i)
            if (live(i) && entries_[i].handle.load(std::memory_order_relaxed) == handle) fn(uint16_t(i + 1));
    }
    // Calls fn(uint16_t id) for every live id on `device` that was not created by cuCtxCreate*:
    // the device's primary context (one handle, possibly several ids).
    template <class Fn> void for_each_live_primary(int device, Fn &&fn) const {
        uint32_t n = used();
        for (uint32_t i = 0; i < n; ++i)
            if (live(i) && !entries_[i].created.load(std::memory_order_relaxed) &&
                entries_[i].device.load(std::memory_order_relaxed) == device)
                fn(uint16_t(i + 1));
    }

    // Ends the generation `id`: the handle gets a new id at its next use.
    void retire(uint16_t id);
    // Bumped by every retire; a cached (handle -> id) taken at an older epoch must be looked up again.
    uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

    int device_of(uint16_t id) const;  // -2 for id 0 or an id never handed out
    uint64_t handle_of(uint16_t id) const;
    bool is_created(uint16_t id) const;
    uint32_t used() const {
        uint32_t n = used_.load(std::memory_order_acquire);
        return n < kCapacity ? n : kCapacity;
    }
    uint64_t overflowed() const { return overflowed_.load(std::memory_order_relaxed); }

private:
    enum : uint8_t { kClaimed = 0, kLive = 1, kRetired = 2 };
    struct Entry {
        std::atomic<uint64_t> handle{0};
        std::atomic<int16_t> device{-2};
        std::atomic<uint8_t> created{0};
        std::atomic<uint8_t> state{kClaimed};
    };
    bool live(uint32_t i) const { return entries_[i].state.load(std::memory_order_acquire) == kLive; }

    Entry entries_[kCapacity];
    std::atomic<uint32_t> used_{0};
    std::atomic<uint64_t> epoch_;  // starts apart from every earlier registry's (a forked child's)
    std::atomic<uint64_t> overflowed_{0};
};

} // namespace vramtrace
