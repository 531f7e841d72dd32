// The lock-free table of live allocations, keyed by address.
//
// Shape: kShards shards, a thread always inserting into the one of its thread lane (thread_lanes.h:
// lanes 0 to kShards - 2 have one each, held by one thread at a time; all other lanes share the
// last): a thread's inserts and its own frees touch cache lines no other thread writes, and the
// table scales with threads as far as the machine does. An erase or find looks in the calling
// thread's shard first, then in every other shard that has ever held an entry
// (a free from another thread, or of an address never inserted, costs one look-up per such shard).
// Each shard is a chain of open-addressing tables ("levels"), each twice the size of the previous one.
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

#include "tracking/allocation_record.h"

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

    // Takes every record for which keep(record) holds out of the table, appending each to *out
    // (a std::vector<AllocationRecord>). Safe while other threads insert and erase: a record
    // matching when the walk began and still live when its turn comes is taken exactly once; one
    // freed meanwhile is left to its free; an address freed and inserted again meanwhile whose new
    // record does not match is put back. Returns how many were taken.
    template <class Pred, class Vec> size_t take_matching(Pred &&keep, Vec *out);

    // Exact when no insert or erase is in flight (a sum of per-level counters); read while they run,
    // it may be off by the operations under way, never below 0.
    uint64_t live_count() const;
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
    // Bytes mapped for the table itself (for the performance docs: tracker memory per allocation).
    uint64_t mapped_bytes() const;

    // Diagnostics (tests, performance docs): levels published so far in all shards (the shard of the
    // thread that constructed the table has its first level from the start), and the longest insert probe
    // (in slots, 1 = home slot) recorded by any level. An erase or find reads at most
    // longest_probe() keys per level (usually far fewer: each group of 8 home slots has its own bound).
    unsigned levels() const;
    uint32_t longest_probe() const;
    // Shards that have published a level, and the shard the calling thread inserts into.
    unsigned shards_used() const;
    static unsigned this_thread_shard();

    static constexpr unsigned kMaxLevels = 40; // per shard
    static constexpr unsigned kShards = 16;
    // Each level counts its live entries in this many cache lines, a thread always in the same one
    // (see live_table.cpp, "Counting"): a level also takes frees from other threads.
    static constexpr unsigned kStripes = 16;
    // An insert that would probe further than this in the newest level goes to a new level instead.
    static constexpr uint32_t kProbeLimit = 128;

    struct Slot;
    struct Level;

private:
    // Level i of a shard (2^(initial_log2 + i) slots) is published once, by CAS, and never removed;
    // published levels always form a prefix of `levels`. level_count is a hint (it may lag by a level).
    struct alignas(64) Shard {
        std::atomic<Level *> levels[kMaxLevels] = {};
        std::atomic<unsigned> level_count{0};
        unsigned initial_log2 = 0;
        unsigned index = 0;
    };

    unsigned published_levels(const Shard &s) const;
    Level *newest_level(const Shard &s) const;
    Level *add_level(Shard &s, Level *after);
    // stripe: the calling thread's shard and count stripe (live_table.cpp, my_stripe); a thread
    // whose stripe is its own is the shard's only inserter.
    bool insert_into(Level *level, const AllocationRecord &record, uint64_t hash, unsigned stripe);
    bool erase_in(Shard &s, uint64_t address, uint64_t hash, AllocationRecord *out, unsigned stripe);
    // 1: found (copied to *out), 0: not in this shard, -1: erased while we looked (not live).
    int find_in(const Shard &s, uint64_t address, uint64_t hash, AllocationRecord *out) const;
    void visit_level(const Level *level, void (*cb)(const AllocationRecord &, void *), void *ctx) const;
    void for_each_impl(void (*cb)(const AllocationRecord &, void *), void *ctx) const;
    template <class Fn> void for_each_level(Fn &&fn) const;

    Shard shards_[kShards];
    std::atomic<uint32_t> used_shards_{0}; // bit i: shard i has published its first level
    std::atomic<uint64_t> dropped_{0};
};

template <class Fn> void LiveTable::for_each(Fn &&fn) const {
    for_each_impl([](const AllocationRecord &r, void *ctx) { (*static_cast<Fn *>(ctx))(r); },
                  const_cast<void *>(static_cast<const void *>(&fn)));
}

template <class Pred, class Vec> size_t LiveTable::take_matching(Pred &&keep, Vec *out) {
    Vec candidates; // records used as address holders: no allocation beyond the caller's vector type
    for_each([&](const AllocationRecord &r) {
        if (keep(r)) candidates.push_back(r);
    });
    size_t taken = 0;
    for (const AllocationRecord &seen : candidates) {
        // Looked at again first: an address freed (and maybe allocated again) since the walk is
        // left alone without being taken out, so its owner's free always finds it.
        AllocationRecord now;
        if (!find(seen.address, &now) || !keep(now)) continue;
        AllocationRecord r;
        if (!erase(seen.address, &r)) continue; // freed meanwhile
        if (keep(r)) {
            out->push_back(r);
            ++taken;
        } else {
            insert(r); // freed and allocated again between the look and the erase: not ours
        }
    }
    return taken;
}

} // namespace vramtrace
