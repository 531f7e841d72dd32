// CUDA contexts as owners of allocations: a dense id per context generation, so that a record can
// say which context's teardown ends it in the 12 bits it has left (AllocationRecord::context).
//
// A context handle (CUcontext) is registered the first time a thread allocates in it, or when
// cuCtxCreate* returns it (then it is known as created; every other context is taken for its
// device's primary context). A teardown supersedes the handle's id before the teardown call runs:
// what is allocated from then on gets a fresh id, while the old id still names its records for the
// teardown (and for a later one, should this one fail or turn out not to end the context). After a
// teardown that ended the context the old ids are retired. The driver may hand out the same handle
// value again (a primary context keeps its handle across a reset): the fresh id keeps the new
// generation's records apart. Superseding and retiring bump epoch(), which the per-thread caches
// of the hot path compare against.
//
// Lock-free: ids are handed out with one fetch_add and never reused. Two threads registering the
// same new handle at once may get two ids for it; a teardown ends every live id of its handle.
// Capacity: kCapacity generations over the life of the process; past that a context gets id 0 and
// its records are not ended by a teardown (full() says so, for the one warning).
#pragma once

#include <atomic>
#include <cstdint>

namespace vramtrace {

class ContextRegistry {
public:
    static constexpr uint32_t kCapacity = 4095; // ids 1..4095: 12 bits of the live table's slot

    ContextRegistry();
    ContextRegistry(const ContextRegistry &) = delete;
    ContextRegistry &operator=(const ContextRegistry &) = delete;

    // The current id of `handle` (not 0), registering it on `device` when it has none. 0 when the
    // registry is full or handle is 0.
    uint16_t id_for(uint64_t handle, int device, bool created = false);
    // A context returned by cuCtxCreate*: a new id, marked created.
    uint16_t note_created(uint64_t handle, int device) { return id_for(handle, device, true); }

    // Calls fn(uint16_t id) for every id of `handle` whose records a teardown of it ends (the
    // current one and those superseded but not retired).
    template <class Fn> void for_each_live_id(uint64_t handle, Fn &&fn) const {
        uint32_t n = used();
        for (uint32_t i = 0; i < n; ++i)
            if (owns_records(i) && entries_[i].handle.load(std::memory_order_relaxed) == handle) fn(uint16_t(i + 1));
    }
    // The same for the primary context of `device`: every such id not created by cuCtxCreate*.
    template <class Fn> void for_each_live_primary(int device, Fn &&fn) const {
        uint32_t n = used();
        for (uint32_t i = 0; i < n; ++i)
            if (owns_records(i) && !entries_[i].created.load(std::memory_order_relaxed) &&
                entries_[i].device.load(std::memory_order_relaxed) == device)
                fn(uint16_t(i + 1));
    }

    // Before a teardown call: every current id among `ids` stops being handed out (its handle gets a
    // fresh id, same device and kind, at its next use) but keeps naming its records.
    void supersede(const uint16_t *ids, uint32_t count);
    // After a teardown that ended the context: the ids name nothing any more.
    void retire(uint16_t id);
    // Bumped by supersede and retire; a cached (handle -> id) taken at an older epoch must be looked
    // up again.
    uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

    int device_of(uint16_t id) const;  // -2 for id 0 or an id never handed out
    uint64_t handle_of(uint16_t id) const;
    bool is_created(uint16_t id) const;
    uint32_t used() const {
        uint32_t n = used_.load(std::memory_order_acquire);
        return n < kCapacity ? n : kCapacity;
    }
    bool full() const { return used_.load(std::memory_order_relaxed) >= kCapacity; }

private:
    enum : uint8_t { kClaimed = 0, kCurrent = 1, kSuperseded = 2, kRetired = 3 };
    struct Entry {
        std::atomic<uint64_t> handle{0};
        std::atomic<int16_t> device{-2};
        std::atomic<uint8_t> created{0};
        std::atomic<uint8_t> state{kClaimed};
    };
    uint8_t state(uint32_t i) const { return entries_[i].state.load(std::memory_order_acquire); }
    bool owns_records(uint32_t i) const { return state(i) == kCurrent || state(i) == kSuperseded; }
    uint16_t add(uint64_t handle, int device, bool created);

    Entry entries_[kCapacity];
    std::atomic<uint32_t> used_{0};
    std::atomic<uint64_t> epoch_;  // starts apart from every earlier registry's (a forked child's)
};

} // namespace vramtrace
