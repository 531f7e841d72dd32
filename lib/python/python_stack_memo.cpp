// Each lane's recent Python stacks (python_stack_memo.h).
#include "python/python_stack_memo.h"

#include <atomic>
#include <cstring>

#include "tracking/lane_tables.h"

namespace vramtrace::python {

namespace {

LaneTables<LaneStackMemo> g_memos;

// A rotate-xor chain: one cycle per word (a multiply per word would cost four).
inline uint64_t mix(uint64_t h, uint64_t word) { return ((h << 7) | (h >> 57)) ^ word; }

} // namespace

uint64_t memo_hash(const MemoQuery &q) {
    uint64_t h = (uint64_t{q.native_depth} << 32 | q.count) ^ q.run_ends * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < q.native_depth; ++i) h = mix(h, q.native[i]);
    for (uint32_t i = 0; i < q.count; ++i) {
        const FrameKey &k = q.keys[i];
        h = mix(mix(mix(mix(mix(h, k.code), k.instr), k.file), k.name), k.meta);
    }
    h = mix(h, q.owner ^ q.epoch);
    h *= 0x9e3779b97f4a7c15ull;
    return h == 0 ? 1 : h;
}

LaneStackMemo *LaneStackMemo::acquire() {
    LaneStackMemo *m = g_memos.mine();
    if (m == nullptr || !m->use_.try_enter()) return nullptr;
    return m;
}

void LaneStackMemo::release() { use_.leave(); }

bool LaneStackMemo::matches(const Entry &e, const MemoQuery &q, uint64_t hash) const {
    return e.hash == hash && e.id != 0 && e.owner == q.owner && e.epoch == q.epoch &&
           e.native_depth == q.native_depth && e.count == q.count && e.run_ends == q.run_ends &&
           std::memcmp(e.native, q.native, q.native_depth * sizeof(uintptr_t)) == 0 &&
           std::memcmp(e.keys, q.keys, q.count * sizeof(FrameKey)) == 0;
}

uint32_t LaneStackMemo::find(const MemoQuery &q, MemoTicket *ticket) {
    *ticket = MemoTicket{};
    const uint64_t hash = memo_hash(q);
    const uint32_t set = static_cast<uint32_t>(hash >> (64 - kSetsLog2));
    for (uint32_t way = 0; way < kWays; ++way)
        if (matches(entries_[set][way], q, hash)) {
            found.store(found.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            return entries_[set][way].id;
        }

    SetHead &head = heads_[set];
    const uint32_t print = static_cast<uint32_t>(hash) | 1; // 0 marks an empty place
    if (!head.seen.seen_or_note(print)) return 0;
    const uint32_t way = head.next_way;
    head.next_way = static_cast<uint8_t>((way + 1) % kWays);
    Entry &e = entries_[set][way];
    stores_ = stores_ + 1 == 0 ? 1 : stores_ + 1;
    e.hash = hash;
    e.owner = q.owner;
    e.epoch = q.epoch;
    e.run_ends = q.run_ends;
    e.native_depth = q.native_depth;
    e.count = q.count;
    e.id = 0; // filled by remember()
    e.serial = stores_;
    std::memcpy(e.native, q.native, q.native_depth * sizeof(uintptr_t));
    std::memcpy(static_cast<void *>(e.keys), q.keys, q.count * sizeof(FrameKey));
    *ticket = MemoTicket{set, way, e.serial};
    stored.store(stored.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return 0;
}

void LaneStackMemo::remember(const MemoTicket &ticket, uint32_t id) {
    if (ticket.serial == 0 || ticket.set >= kSets || ticket.way >= kWays) return;
    Entry &e = entries_[ticket.set][ticket.way];
    if (e.serial == ticket.serial) e.id = id;
}

MemoStats memo_stats() {
    MemoStats s{0, 0};
    g_memos.for_each([&](const LaneStackMemo &m) {
        s.stored += m.stored.load(std::memory_order_relaxed);
        s.found += m.found.load(std::memory_order_relaxed);
    });
    return s;
}

} // namespace vramtrace::python
