// The lock-free table of live allocations, keyed by address.
//
// Shape: a chain of open-addressing tables ("levels"), each twice the size of the previous one.
// Inserts go to the newest level; when it is more than half full (or a probe runs too long) a new
// level is mapped and published with one CAS. Erase and lookup search the levels from newest to
// oldest, each for at most that level's longest insert probe, so no entry ever has to move and no
// thread ever waits for another. Memory comes from mmap and is never returned: the table must
// outlive static destructors (cudart frees memory in its own late exit handlers).
//
// Contract relied upon: an address is live at most once at a time. The interceptors guarantee it by
// erasing before forwarding a free and re-inserting when the real free fails.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "allocation_record.h"

namespace vramtrace {

class LiveTable {
public:
    // initial_capacity_log2: slots in the first level (2^n). Later levels double.
    explicit LiveTable(unsigned initial_capacity_log2 = 16);
    LiveTable(const LiveTable &) = delete;
    LiveTable &operator=(const LiveTable &) = delete;

    // Adds a record (record.address must not be 0). Returns false only when no memory could be
    // mapped for a new level; the record is then dropped and counted in dropped(). (An address that
    // no pointer can have, 0 or one of the three highest values, is refused the same way.)
    bool insert(const AllocationRecord &record);

    // Removes the record for address and copies it to *out (when out is not null).
    // Returns false when the address is not live.
    bool erase(uint64_t address, AllocationRecord *out);

    // Copies the record for address without removing it. Returns false when not live.
    bool find(uint64_t address, AllocationRecord *out) const;

    // Calls fn(const AllocationRecord&) for each live record. Safe while other threads insert and
    // erase: a record inserted or erased during the walk may or may not be visited; a visited
    // record is always complete.
    template <class Fn> void for_each(Fn &&fn) const;

    // Exact when no insert or erase is in flight (a sum of per-level counters).
    uint64_t live_count() const;
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
    // Bytes mapped for the table itself (for the performance docs: tracker memory per allocation).
    uint64_t mapped_bytes() const;

    // Diagnostics (tests, performance docs): levels published so far, and the longest insert probe
    // (in slots, 1 = home slot) recorded by any level. An erase or find reads at most
    // longest_probe() keys per level (usually far fewer: each group of 8 home slots has its own bound).
    unsigned levels() const;
    uint32_t longest_probe() const;

    static constexpr unsigned kMaxLevels = 40;
    // Each level counts its live entries in this many cache lines, a thread always in the same one
    // (see live_table.cpp, "Counting").
    static constexpr unsigned kStripes = 16;
    // An insert that would probe further than this in the newest level goes to a new level instead.
    static constexpr uint32_t kProbeLimit = 128;

    struct Slot;
    struct Level;

private:
    unsigned published_levels() const;
    Level *newest_level() const;
    Level *add_level(Level *after);
    bool insert_into(Level *level, const AllocationRecord &record, uint64_t hash);
    void visit_level(const Level *level, void (*cb)(const AllocationRecord &, void *), void *ctx) const;
    void for_each_impl(void (*cb)(const AllocationRecord &, void *), void *ctx) const;

    // Level i (2^(initial_log2_ + i) slots) is published once, by CAS, and never removed; published
    // levels always form a prefix of this array. level_count_ is a hint (it may lag by a level).
    std::atomic<Level *> levels_[kMaxLevels] = {};
    std::atomic<unsigned> level_count_{0};
    unsigned initial_log2_;
    std::atomic<uint64_t> dropped_{0};
};

template <class Fn> void LiveTable::for_each(Fn &&fn) const {
    for_each_impl([](const AllocationRecord &r, void *ctx) { (*static_cast<Fn *>(ctx))(r); },
                  const_cast<void *>(static_cast<const void *>(&fn)));
}

} // namespace vramtrace
