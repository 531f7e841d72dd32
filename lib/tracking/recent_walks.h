// Each thread's recent complete stack walks, replayed when the stack has not changed.
//
// A cached walk (stack_capture.cpp) is deterministic: given the registers it starts from and the
// words it reads (each return-address slot, each saved frame pointer a later frame address comes
// from, and the code word before each return address whose rule it used), it always yields the
// same frames. So a walk is recorded as one list of those reads, each an {offset from the starting
// stack pointer, value seen} pair (a code word's offset wraps around to its absolute address), and
// a later capture that starts from the same registers replays it: when every word still holds the
// value recorded, the frames are the recorded ones, exactly what a fresh walk would give. Code words
// inside the objects loaded with the process are left out of the list (startup_code.h): that code
// never changes. The replay's loads are independent of each other (their addresses are known up
// front), where a walk chains them frame by frame through the rule cache; a framework that
// allocates from hundreds of call paths in turn (PyTorch) finds its path here instead of walking
// through cold cache lines.
//
// Checks run in the order the walk read the words and stop at the first that differs, so a replay
// reads only words that the walk itself would read next. Entries belong to one lane
// (thread_lanes.h): a lane's next owner starts with none, so a replay only reads the stack of the
// thread that recorded it. The shared lane keeps none. A capture that interrupts another on the
// same thread (a signal handler that allocates) neither replays nor records.
//
// Memory: kSets * kWays = 256 walks of 2.2 KiB, 580 KiB per lane that captures (at most 256 lanes,
// each reused by the lane's next thread), mapped at its first capture (raw_memory.h), never freed;
// a lane whose mapping fails goes without. Pages of ways never used are never touched. No
// thread-local storage.
#pragma once

#include <atomic>
#include <cstdint>

#include "tracking/lane_tables.h"

namespace vramtrace::walks {

constexpr uint32_t kMaxChecks = 120; // walks that read more words are not recorded (40 frames)
constexpr uint32_t kMaxDepth = 32;   // captures under a larger limit neither replay nor record
constexpr uint32_t kSetsLog2 = 6;    // sets, by stack pointer
constexpr uint32_t kSets = 1u << kSetsLog2;
constexpr uint32_t kWays = 4;        // walks per set, most recent first

// One word a walk read: the word at sp0 + offset (modulo 2^64) held value.
struct Check {
    uint64_t offset;
    uint64_t value;
};

struct Walk {
    uint64_t ip0, sp0, bp0;
    uint64_t id_owner;    // whose id stack_id is (StackDepot::instance()); 0: none attached
    uint32_t stack_id;    // the id the caller interned these frames under (attach_id)
    uint32_t serial;      // the lane's count of stores when this walk was stored
    uint32_t epoch;       // the lane owner's; 0: empty
    uint32_t max_depth;   // the limit it was captured under
    uint32_t checks;      // entries of check[]
    uint32_t depth;       // entries of frame[]
    bool bp0_used;        // some frame address came from the starting frame pointer
    bool complete;        // the walk was written down to its end (add_check never ran out of room)
    uint64_t frame[kMaxDepth];
    Check check[kMaxChecks];

    // Appends the check that the word at `address` holds `value`; false (and the walk is not
    // complete) when there is no room left.
    bool add_check(uint64_t address, uint64_t value) {
        if (checks == kMaxChecks) return complete = false;
        check[checks++] = Check{address - sp0, value};
        return true;
    }
};

// Names a walk that replay() served, for attach_id(); serial 0 names none.
struct WalkToken {
    uint32_t set = 0, way = 0, serial = 0;
};

// The walks of this thread's lane, or nullptr (shared lane, mapping refused, or a capture of this
// thread already in progress). Holds the lane's table until release().
class LaneWalks {
public:
    static LaneWalks *acquire();
    void release() { use_.leave(); }

    // The frames of a recorded walk from registers (ip0, sp0, bp0) that still holds: copies them to
    // out and returns true.
    // *token names the walk, and *id is the id that `owner` attached to it (0: none). With
    // id_only, a walk that has such an id leaves out unwritten (*depth is still set).
    bool replay(uint64_t ip0, uint64_t sp0, uint64_t bp0, uint32_t max_depth, uintptr_t *out, uint32_t *depth,
                uint64_t owner, bool id_only, WalkToken *token, uint32_t *id);
    // Attaches `owner`'s id of the frames to the walk `token` names, unless another walk has been
    // stored in its place since.
    void attach_id(const WalkToken &token, uint64_t owner, uint32_t id);
    // Whether the same frames came from this stack pointer among the set's last kSeen walks that
    // were not replayed; when not, notes them. A walk is written down and stored only the second
    // time (walking again, which is cheap right after the first walk), so call paths that take
    // turns faster than a set can hold them (each evicted before it comes back) pay one cache line
    // per capture, not the writing of walks that are never replayed.
    bool seen_before(uint64_t sp0, const uintptr_t *frames, uint32_t depth);
    // Where the caller writes down a walk from these registers as it goes (its checks and frames
    // emptied), then store() keeps it, when complete, in its set in place of the least recent one.
    Walk &start_walk(uint64_t ip0, uint64_t sp0, uint64_t bp0, uint32_t max_depth);
    void store();

    // Written by the owner only; read by replay_stats().
    std::atomic<uint64_t> replayed{0}, stored{0}, with_id{0};

private:
    uint32_t set_of(uint64_t sp0) const {
        return static_cast<uint32_t>((sp0 >> 4) * 0x9e3779b97f4a7c15ull >> (64 - kSetsLog2));
    }
    void make_most_recent(uint32_t set, uint32_t position);
    static constexpr uint32_t kSeen = 6;

    // What a look-up of a set reads first, in one cache line: a capture that finds no walk for its
    // stack pointer touches nothing else of the set.
    struct alignas(64) SetHead {
        uint64_t sp0[kWays];     // of each way's walk; 0: empty
        RecentPrints<kSeen> seen; // of the set's last walks not replayed
        uint8_t order[kWays] = {0, 1, 2, 3}; // way indices, most recent first
    };
    static_assert(sizeof(SetHead) == 64 && kWays == 4);

    uint32_t epoch_ = 0;
    uint32_t stores_ = 0;         // walks stored by this lane; a stored walk's serial
    uint32_t owner_serial_ = 0;   // lanes::lane_serial() of the thread that last took the table
    LaneUse use_;
    SetHead heads_[kSets] = {};
    Walk ways_[kSets][kWays];
    Walk scratch_;
};

// Each lane's walks (recent_walks.cpp).
extern LaneTables<LaneWalks> g_lane_walks;

inline LaneWalks *LaneWalks::acquire() {
    // No thread-local state of its own: the library's static TLS block is what a dlopen of it (the
    // CUPTI injection) must find room for.
    unsigned lane = 0;
    LaneWalks *t = g_lane_walks.mine(&lane);
    if (t == nullptr || !t->use_.try_enter()) return nullptr;
    // A new owner: the walks recorded by the lane's earlier threads are of their stacks, not ours.
    const uint32_t serial = lanes::lane_serial(lane);
    if (t->owner_serial_ != serial) {
        t->owner_serial_ = serial;
        t->epoch_ = t->epoch_ + 1 == 0 ? 1 : t->epoch_ + 1;
    }
    return t;
}

// Counters since start (bench/ and the exit's debug line).
struct ReplayStats {
    uint64_t replayed;
    uint64_t stored;
    uint64_t with_id; // replays whose walk carried the caller's stack id
};
ReplayStats replay_stats();

} // namespace vramtrace::walks
