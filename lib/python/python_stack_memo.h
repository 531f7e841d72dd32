// Each lane's recent Python stacks: the depot id that a (native stack, Python frame chain) pair was
// interned under, so that a thread allocating again from the same Python line through the same
// native path gets the id without looking up each frame, merging the two stacks and interning.
//
// A hit is exact. It needs the same native frames, the same FrameKey for every Python frame (the
// code object's address and instruction, and its file, name, first line and size, as the frame
// cache checks them: code objects die and their addresses are reused), the same run ends, and the
// same depot instance and frame-table epoch (a forked child's tracker is new). The merged stack is
// a function of exactly these: the merge rule, the extent of the evaluation loop and the depth
// limits are fixed for the process. So an entry is valid for every thread; it is kept per lane
// (thread_lanes.h) only so that no two threads write the same lines.
//
// A pair is written down on its second miss among its set's recent misses, so that paths that
// take turns faster than a set holds them do not pay for entries that are never hit. Memory:
// 128 sets x 2 ways of 1.6 KiB, 400 KiB per lane that reads Python frames, mapped at its first use
// (raw_memory.h), never freed; only the pages of ways in use are touched. A lane whose mapping
// fails goes without; the shared lane keeps none; a capture that interrupts another on the same
// thread (a signal handler that allocates) neither finds nor notes.
#pragma once

#include <atomic>
#include <cstdint>

#include "python/python_frame_table.h"
#include "tracking/lane_tables.h"

namespace vramtrace::python {

// What a merged stack is made of (see above). run_ends: bit i set when Python frame i is the
// outermost of its run of the evaluation loop.
struct MemoQuery {
    const uintptr_t *native = nullptr;
    uint32_t native_depth = 0;
    const FrameKey *keys = nullptr;
    uint32_t count = 0;
    uint64_t run_ends = 0;
    uint64_t owner = 0;  // StackDepot::instance() of the depot the ids are in
    uint32_t epoch = 0;  // the Python frame table's (cache_epoch)
};

// Names the entry a miss was written to, for remember(); serial 0 names none.
struct MemoTicket {
    uint32_t set = 0, way = 0, serial = 0;
};

class LaneStackMemo {
public:
    static constexpr uint32_t kMaxNative = 32; // deeper native stacks are not memoized
    static constexpr uint32_t kMaxPython = 32; // nor longer Python chains
    static constexpr uint32_t kSetsLog2 = 7;
    static constexpr uint32_t kSets = 1u << kSetsLog2;
    static constexpr uint32_t kWays = 2;

    // This thread's lane's memo, or nullptr (shared lane, mapping refused, or already in use by a
    // capture of this thread). Held until release().
    static LaneStackMemo *acquire();
    void release();

    // Whether q fits (depths within the limits above).
    static bool fits(const MemoQuery &q) { return q.native_depth <= kMaxNative && q.count <= kMaxPython; }
    // The id remembered for q (which must fit), or 0. On 0, q may have been written down: *ticket
    // then names its entry (serial != 0), for remember() once the stack is interned.
    uint32_t find(const MemoQuery &q, MemoTicket *ticket);
    // The id of the stack that ticket's query was interned as; ignored when the entry has been
    // reused since.
    void remember(const MemoTicket &ticket, uint32_t id);

    // Written by the owner only; read by memo_stats().
    std::atomic<uint64_t> found{0}, stored{0};

private:
    static constexpr uint32_t kSeen = 6;
    struct Entry {
        uint64_t hash; // of the query; 0: empty
        uint64_t owner;
        uint64_t run_ends;
        uint32_t epoch, serial, id, native_depth, count, pad;
        uintptr_t native[kMaxNative];
        FrameKey keys[kMaxPython];
    };
    struct alignas(64) SetHead {
        RecentPrints<kSeen> seen; // of the set's last misses not written down
        uint8_t next_way;     // the way the next entry replaces
    };
    bool matches(const Entry &e, const MemoQuery &q, uint64_t hash) const;

    uint32_t stores_ = 0;
    LaneUse use_;
    SetHead heads_[kSets] = {};
    Entry entries_[kSets][kWays];
};

// The hash a query is filed under (never 0).
uint64_t memo_hash(const MemoQuery &q);

// Counters since start, over all lanes (the exit's debug line): pairs written down, and finds that
// returned an id.
struct MemoStats {
    uint64_t stored;
    uint64_t found;
};
MemoStats memo_stats();

} // namespace vramtrace::python
