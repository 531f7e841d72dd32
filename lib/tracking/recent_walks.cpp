// Each lane's recent stack walks (recent_walks.h).
#include "tracking/recent_walks.h"

#include <cstddef>
#include <cstring>

#include "tracking/lane_tables.h"
#include "tracking/stack_words.h"
#include "tracking/thread_lanes.h"

namespace vramtrace::walks {

constinit LaneTables<LaneWalks> g_lane_walks;

void LaneWalks::make_most_recent(uint32_t set, uint32_t position) {
    uint8_t *order = heads_[set].order;
    uint8_t way = order[position];
    for (uint32_t j = position; j > 0; --j) order[j] = order[j - 1];
    order[0] = way;
}

// Whether every word the walk read still holds, checked in the order the walk read them and
// stopping at the first that differs.
namespace {
inline bool holds(const Check &c, uint64_t sp0) { return load_word(sp0 + c.offset) == c.value; }

bool words_hold(const Walk &w, uint64_t sp0) {
    const Check *c = w.check;
    const Check *const end = c + w.checks, *const end4 = c + (w.checks & ~3u);
    // Four at a time (a load, a compare and a branch each), in order.
    for (; c != end4; c += 4)
        if (!holds(c[0], sp0) || !holds(c[1], sp0) || !holds(c[2], sp0) || !holds(c[3], sp0)) return false;
    for (; c != end; ++c)
        if (!holds(*c, sp0)) return false;
    return true;
}
} // namespace

bool LaneWalks::replay(uint64_t ip0, uint64_t sp0, uint64_t bp0, uint32_t max_depth, uintptr_t *out,
                       uint32_t *depth, uint64_t owner, bool id_only, WalkToken *token, uint32_t *id) {
    const uint32_t set = set_of(sp0);
    const SetHead &head = heads_[set];
    for (uint32_t position = 0; position < kWays; ++position) {
        const uint32_t way = head.order[position];
        if (head.sp0[way] != sp0) continue;
        const Walk &w = ways_[set][way];
        if (w.epoch != epoch_ || w.max_depth != max_depth || w.ip0 != ip0 || (w.bp0_used && w.bp0 != bp0))
            continue;
        if (!words_hold(w, sp0)) continue;
        *id = owner != 0 && w.id_owner == owner ? w.stack_id : 0;
        if (*id == 0 || !id_only) std::memcpy(out, w.frame, w.depth * sizeof(uint64_t));
        *depth = w.depth;
        *token = WalkToken{set, way, w.serial};
        if (position != 0) make_most_recent(set, position);
        replayed.store(replayed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        with_id.store(with_id.load(std::memory_order_relaxed) + (*id != 0), std::memory_order_relaxed);
        return true;
    }
    return false;
}

void LaneWalks::attach_id(const WalkToken &token, uint64_t owner, uint32_t id) {
    if (token.serial == 0 || token.set >= kSets || token.way >= kWays) return;
    Walk &w = ways_[token.set][token.way];
    if (w.serial != token.serial || w.epoch != epoch_) return;
    w.id_owner = owner;
    w.stack_id = id;
}

bool LaneWalks::seen_before(uint64_t sp0, const uintptr_t *frames, uint32_t depth) {
    SetHead &head = heads_[set_of(sp0)];
    // A rotate-xor chain: one cycle per frame (a multiply per frame would cost four).
    uint64_t h = sp0 ^ depth;
    for (uint32_t i = 0; i < depth; ++i) h = ((h << 7) | (h >> 57)) ^ frames[i];
    h *= 0x9e3779b97f4a7c15ull;
    const uint32_t print = static_cast<uint32_t>(h >> 32) | 1; // 0 marks an empty place
    return head.seen.seen_or_note(print);
}

Walk &LaneWalks::start_walk(uint64_t ip0, uint64_t sp0, uint64_t bp0, uint32_t max_depth) {
    Walk &w = scratch_;
    w.ip0 = ip0;
    w.sp0 = sp0;
    w.bp0 = bp0;
    w.max_depth = max_depth;
    w.id_owner = 0;
    w.stack_id = 0;
    w.checks = w.depth = 0;
    w.bp0_used = false;
    w.complete = true;
    return w;
}

void LaneWalks::store() {
    const Walk &walk = scratch_;
    if (!walk.complete) return;
    const uint32_t set = set_of(walk.sp0);
    SetHead &head = heads_[set];
    const uint32_t way = head.order[kWays - 1];
    Walk &victim = ways_[set][way];
    std::memcpy(static_cast<void *>(&victim), &walk, offsetof(Walk, frame) + walk.depth * sizeof(uint64_t));
    std::memcpy(victim.check, walk.check, walk.checks * sizeof(Check));
    victim.epoch = epoch_;
    stores_ = stores_ + 1 == 0 ? 1 : stores_ + 1;
    victim.serial = stores_;
    head.sp0[way] = walk.sp0;
    make_most_recent(set, kWays - 1);
    stored.store(stored.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

ReplayStats replay_stats() {
    ReplayStats s{0, 0, 0};
    g_lane_walks.for_each([&](const LaneWalks &t) {
        s.replayed += t.replayed.load(std::memory_order_relaxed);
        s.stored += t.stored.load(std::memory_order_relaxed);
        s.with_id += t.with_id.load(std::memory_order_relaxed);
    });
    return s;
}

} // namespace vramtrace::walks
