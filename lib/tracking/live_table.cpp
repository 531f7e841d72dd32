// The lock-free live-allocation table (see live_table.h for the shape).
//
// Layout of one level (a single anonymous mapping, never unmapped once published):
//
//   [Level header][keys: 2^n x 8 bytes][slots: 2^n x 48 bytes][probe bounds: 2^n / 8 bytes]
//
// Keys are kept apart from the records so that a probe reads eight keys per cache line; an erase of
// an unknown address (common: frees of memory allocated before we were loaded) touches keys only.
// Probes are linear. Besides the level's longest probe, each group of 8 consecutive home slots keeps
// the longest probe made by an insert homed in it (one byte, only grows, raised before the key is
// published); lookups stop there. After long churn nearly every slot has been used, so lookups can
// no longer stop at an EMPTY slot and the per-group bound is what keeps a miss short: typically a
// fraction of the level-wide maximum, which is the tail of the whole level's history.
//
// Key states. A slot only moves along EMPTY -> PENDING -> address -> ERASING -> TOMBSTONE -> PENDING
// -> ..., so a slot that has left EMPTY never returns to it and a probe may stop at the first EMPTY.
//   EMPTY      never used
//   PENDING    claimed by an insert that is writing the record; skipped by everybody else
//   address    live; the record is complete (published with a release store of the key)
//   ERASING    claimed by the erase that won the CAS from `address`; it is copying the record out
//   TOMBSTONE  free again; inserts reuse it, probes continue past it
//
// Records are written only by the inserter that holds PENDING, and read by the eraser that holds
// ERASING, so neither can see a half-written record. find() and for_each() read without claiming:
// each record carries a sequence number (odd while being written) and a reader accepts a copy only
// when the sequence was even and unchanged around the copy (a seqlock whose writer never waits and
// whose reader gives up rather than retries). All record words are atomics, so the protocol is
// free of data races in the C++ model and under ThreadSanitizer.
//
// Counting. One counter that every insert and erase updates would be one cache line bouncing
// between all allocating cores: it capped the table at about 7.5 M operations/s from 2 to 16
// threads on the GPU machine's 16 cores. So a level counts in kStripes lines, a thread always
// in the same one (its shard's: my_stripe), and a level is full when their sum reaches half its slots. That sum is read
// only near the threshold: a stripe also passes on its change to a shared estimate, a batch at a
// time, once it has drifted a whole batch from what it last passed on, so the estimate is off by
// less than kStripes batches (twice that just after a thread steps on a stale count). The sum of
// the stripes is exact only when no insert or erase is in flight: read while they run, it can miss
// an insert and see the erase that followed it, so it is never taken for "this level is empty" and
// the total is clamped at 0. (Passing on at every multiple of the batch instead made a count that sits on a multiple,
// one free then one allocation, write the shared line every time: no scaling at all.)
#include "tracking/live_table.h"

#include <new>

#include "tracking/context_registry.h"
#include "tracking/raw_memory.h"
#include "tracking/thread_lanes.h"

namespace vramtrace {

namespace {

constexpr uint64_t kEmpty = 0;
constexpr uint64_t kTombstone = ~uint64_t{0};
constexpr uint64_t kPending = ~uint64_t{0} - 1;
constexpr uint64_t kErasing = ~uint64_t{0} - 2;

// Addresses in [kErasing, 2^64) cannot be user pointers (top of the kernel half).
inline bool is_address(uint64_t k) { return k != kEmpty && k < kErasing; }

constexpr unsigned kMinLog2 = 3;
constexpr uint64_t kGroup = 8; // home slots sharing one probe bound
constexpr unsigned kMaxLog2 = 40; // 2^40 slots is far past any mapping the kernel would give

// The calling thread's shard and counter stripe, by its thread lane (thread_lanes.h): lanes 0 to
// kShards - 2 are held by one thread at a time, so such a lane's shard and stripe are that
// thread's alone, and it claims free slots and counts with plain stores; every other lane shares
// the last shard and stripe, with read-modify-writes. Frees from other threads touch only keys
// that hold an address (and leave them as tombstones, their last write), never a free slot. (A
// signal handler that interrupts a hook on the same thread is not tracked: the hooks' reentrancy
// guard forwards its calls.)
static_assert(LiveTable::kShards == LiveTable::kStripes, "one index picks both");

inline unsigned my_stripe() {
    const unsigned lane = lanes::this_thread_lane();
    return lane < LiveTable::kShards - 1 ? lane : LiveTable::kShards - 1;
}
inline bool owns_stripe(unsigned stripe) { return stripe < LiveTable::kShards - 1; }

// The first level of a shard other than the constructing thread's: 1/64 of the size (1,024 slots,
// 57 KiB, for the default 2^16), since a table has one shard per allocating thread and a random
// placement soon touches every page of a level. A thread that holds many allocations grows its
// shard level by level. (With 1/16, 20,000 short-lived threads cycling through the shards added
// 4.6 MiB of resident memory against 0.2 MiB untraced, test_thread_churn.cpp.)
constexpr unsigned kOtherShardShrinkLog2 = 6;

// Addresses are aligned (256 B for cudaMalloc, pages for pinned memory): one multiply by an odd
// constant (2^64 / golden ratio) carries every bit of the address into the top bits, which pick
// the home slot, and spreads consecutive aligned addresses evenly over the level.
inline uint64_t hash_address(uint64_t a) { return a * 0x9e3779b97f4a7c15ull; }

size_t round_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

} // namespace

// One record, as six atomic words.
//   w[0] = seq << 32 | api << 24 | kind << 20 | context << 8 | (device + 2)   (seq odd while written)
//   w[1] = address, w[2] = size, w[3] = stream, w[4] = time_ns,
//   w[5] = range << 54 | thread_id << 32 | stack_id
// A kernel thread id is below PID_MAX_LIMIT (2^22 on 64-bit Linux), so 22 bits hold it and the
// 10 above hold the NVTX range stack id (AllocationRecord::range, kRangeBits).
struct LiveTable::Slot {
    std::atomic<uint64_t> w[6];
};
static_assert(sizeof(LiveTable::Slot) == 48);
static_assert(LiveTable::kProbeLimit <= 255, "probe bounds are stored in one byte");

struct LiveTable::Level {
    // Immutable once published.
    unsigned index;
    unsigned log2;
    uint64_t mask;
    size_t map_bytes;
    std::atomic<uint64_t> *keys;
    LiveTable::Slot *slots;
    std::atomic<uint8_t> *bounds; // per group of kGroup home slots
    int64_t batch; // how far a stripe's count drifts before it is passed on to `estimate`
    // Live entries, per stripe (their sum is exact when no insert or erase is in flight; one stripe
    // may go negative when other threads free what it counted), and the part of the count already
    // passed on to `estimate`. Each stripe on its own line.
    struct alignas(64) Stripe {
        std::atomic<int64_t> count;
        std::atomic<int64_t> passed_on;
    };
    Stripe stripes[LiveTable::kStripes];
    // The sum of the stripes' passed_on: less than kStripes * batch away from the true count.
    alignas(64) std::atomic<int64_t> estimate;
    // Longest insert probe (slots, home included) ever made in this level. Only grows.
    alignas(64) std::atomic<uint32_t> max_probe;

    uint64_t home(uint64_t hash) const { return hash >> (64 - log2); }
    int64_t live() const { // see "Counting": may be off while inserts and erases run
        int64_t total = 0;
        for (const Stripe &s : stripes) total += s.count.load(std::memory_order_relaxed);
        return total;
    }
    // stripe: the calling thread's (my_stripe). One of its own takes plain stores, like the device
    // counters' per-lane sums.
    void count(int64_t delta, unsigned stripe) {
        Stripe &s = stripes[stripe];
        int64_t now;
        if (owns_stripe(stripe)) {
            now = s.count.load(std::memory_order_relaxed) + delta;
            s.count.store(now, std::memory_order_relaxed);
        } else {
            now = s.count.fetch_add(delta, std::memory_order_relaxed) + delta;
        }
        int64_t passed = s.passed_on.load(std::memory_order_relaxed);
        // One batch at a time, so that `estimate` is always the sum of what was passed on. A thread
        // that shares the stripe (more threads than stripes) may step first: then the CAS fails and
        // this one leaves it; one that steps on a stale `now` is set right by the stripe's next ops.
        const int64_t step = now - passed >= batch ? batch : passed - now >= batch ? -batch : 0;
        if (step != 0 && s.passed_on.compare_exchange_strong(passed, passed + step, std::memory_order_relaxed))
            estimate.fetch_add(step, std::memory_order_relaxed);
    }
    // Whether the level holds half its capacity: the estimate decides far from the threshold, the
    // exact sum near it.
    bool half_full() const {
        const int64_t half = static_cast<int64_t>((mask + 1) / 2);
        const int64_t e = estimate.load(std::memory_order_relaxed);
        // Each stripe's count is within a batch of what it passed on (two, after a stale step).
        const int64_t slack = 2 * static_cast<int64_t>(LiveTable::kStripes) * batch;
        if (e + slack <= half) return false;
        if (e - slack >= half) return true;
        return live() >= half;
    }
    std::atomic<uint8_t> &bound(uint64_t home) { return bounds[home / kGroup]; }
    const std::atomic<uint8_t> &bound(uint64_t home) const { return bounds[home / kGroup]; }
};

static_assert(sizeof(LiveTable::Level) == 19 * 64, "the unit tests count a level's header as 1216 bytes");

namespace {

// Called by the slot's exclusive owner (PENDING). The odd sequence is stored before any record word
// (the record words are release stores), so a reader that sees any of these words sees the odd
// sequence, or a later one, when it re-reads w[0].
// Word 0 packs the slot's 32-bit sequence number (odd while being written) above the api (8 bits),
// the kind (4), the context id (12) and the device (8, stored + 2: ordinals -2 to 253).
constexpr uint64_t pack_low(const AllocationRecord &r) {
    const int device = r.device >= -2 && r.device <= 253 ? r.device : -2;
    return uint64_t{r.api} << 24 | (uint64_t{static_cast<uint8_t>(r.kind)} & 0xf) << 20 |
           (uint64_t{r.context} & 0xfff) << 8 | static_cast<uint64_t>(device + 2);
}
static_assert(static_cast<int>(MemoryKind::VaReservation) < 16, "kinds fit 4 bits of the slot");
static_assert(ContextRegistry::kCapacity < 4096, "context ids fit 12 bits of the slot");

void write_record(LiveTable::Slot &s, const AllocationRecord &r) {
    const uint64_t seq = s.w[0].load(std::memory_order_relaxed) >> 32;
    s.w[0].store(((seq + 1) & 0xffffffffu) << 32, std::memory_order_relaxed);
    s.w[1].store(r.address, std::memory_order_release);
    s.w[2].store(r.size, std::memory_order_release);
    s.w[3].store(r.stream, std::memory_order_release);
    s.w[4].store(r.time_ns, std::memory_order_release);
    s.w[5].store(uint64_t{r.range} << 54 | (uint64_t{r.thread_id} & 0x3fffff) << 32 | r.stack_id,
                 std::memory_order_release);
    s.w[0].store(((seq + 2) & 0xffffffffu) << 32 | pack_low(r), std::memory_order_release);
}

void decode(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3, uint64_t w4, uint64_t w5,
            AllocationRecord *out) {
    out->address = w1;
    out->size = w2;
    out->stream = w3;
    out->time_ns = w4;
    out->stack_id = static_cast<uint32_t>(w5);
    out->thread_id = static_cast<uint32_t>(w5 >> 32) & 0x3fffff;
    out->range = static_cast<uint16_t>(w5 >> 54);
    out->device = static_cast<int16_t>(static_cast<int>(w0 & 0xff) - 2);
    out->context = static_cast<uint16_t>((w0 >> 8) & 0xfff);
    out->kind = static_cast<MemoryKind>((w0 >> 20) & 0xf);
    out->api = static_cast<uint8_t>(w0 >> 24);
}

// Called by the slot's exclusive owner (ERASING): nobody writes the record meanwhile.
void read_owned(const LiveTable::Slot &s, AllocationRecord *out) {
    decode(s.w[0].load(std::memory_order_relaxed), s.w[1].load(std::memory_order_relaxed),
           s.w[2].load(std::memory_order_relaxed), s.w[3].load(std::memory_order_relaxed),
           s.w[4].load(std::memory_order_relaxed), s.w[5].load(std::memory_order_relaxed), out);
}

// Reader without ownership. Returns false (never waits) when a writer was active around the copy.
bool read_shared(const LiveTable::Slot &s, AllocationRecord *out) {
    const uint64_t a = s.w[0].load(std::memory_order_acquire);
    if ((a >> 32) & 1)
        return false;
    const uint64_t w1 = s.w[1].load(std::memory_order_acquire);
    const uint64_t w2 = s.w[2].load(std::memory_order_acquire);
    const uint64_t w3 = s.w[3].load(std::memory_order_acquire);
    const uint64_t w4 = s.w[4].load(std::memory_order_acquire);
    const uint64_t w5 = s.w[5].load(std::memory_order_acquire);
    if (s.w[0].load(std::memory_order_relaxed) != a)
        return false;
    decode(a, w1, w2, w3, w4, w5, out);
    return true;
}

} // namespace

LiveTable::LiveTable(unsigned initial_capacity_log2) {
    unsigned l = initial_capacity_log2;
    if (l < kMinLog2)
        l = kMinLog2;
    if (l > kMaxLog2)
        l = kMaxLog2;
    const unsigned own = my_stripe();
    for (unsigned i = 0; i < kShards; ++i) {
        shards_[i].index = i;
        shards_[i].initial_log2 = i == own ? l : (l >= kMinLog2 + kOtherShardShrinkLog2 ? l - kOtherShardShrinkLog2 : kMinLog2);
    }
    add_level(shards_[own], nullptr); // may fail; insert() retries
}

unsigned LiveTable::published_levels(const Shard &s) const {
    unsigned n = s.level_count.load(std::memory_order_acquire);
    while (n < kMaxLevels && s.levels[n].load(std::memory_order_acquire) != nullptr)
        ++n;
    return n;
}

LiveTable::Level *LiveTable::newest_level(const Shard &s) const {
    const unsigned n = published_levels(s);
    return n == 0 ? nullptr : s.levels[n - 1].load(std::memory_order_acquire);
}

// Returns level `after->index + 1` (level 0 for nullptr), mapping and publishing it if nobody has.
// nullptr when it cannot be mapped or the chain is at its end.
LiveTable::Level *LiveTable::add_level(Shard &s, Level *after) {
    const unsigned idx = after == nullptr ? 0 : after->index + 1;
    if (idx >= kMaxLevels)
        return nullptr;
    Level *cur = s.levels[idx].load(std::memory_order_acquire);
    if (cur != nullptr)
        return cur;
    const unsigned log2 = s.initial_log2 + idx;
    if (log2 > kMaxLog2)
        return nullptr;

    const size_t cap = size_t{1} << log2;
    const size_t header = round_up(sizeof(Level), 64);
    const size_t keys_bytes = cap * sizeof(std::atomic<uint64_t>);
    const size_t slots_bytes = cap * sizeof(Slot);
    const size_t bytes = round_up(header + keys_bytes + slots_bytes + cap / kGroup, 4096);
    void *m = map_zeroed(bytes);
    if (m == nullptr)
        return nullptr;
    // Zero-filled memory is a valid initial state for the atomics below (all EMPTY, seq 0); the
    // placement-new only begins their lifetime.
    auto *base = static_cast<unsigned char *>(m);
    Level *level = new (m) Level;
    level->index = idx;
    level->log2 = log2;
    level->mask = cap - 1;
    level->map_bytes = bytes;
    level->keys = reinterpret_cast<std::atomic<uint64_t> *>(base + header);
    level->slots = reinterpret_cast<Slot *>(base + header + keys_bytes);
    level->bounds = reinterpret_cast<std::atomic<uint8_t> *>(base + header + keys_bytes + slots_bytes);
    // A batch of at most 64 and at most cap / (2 * kStripes * 64): the band around the threshold in
    // which half_full() sums the stripes (2 * kStripes batches each way) is at most 1/32 of the level.
    uint64_t batch = 1;
    while (batch < 64 && batch * 2 * kStripes * 64 <= cap) batch *= 2;
    level->batch = static_cast<int64_t>(batch);
    for (Level::Stripe &st : level->stripes) {
        st.count.store(0, std::memory_order_relaxed);
        st.passed_on.store(0, std::memory_order_relaxed);
    }
    level->estimate.store(0, std::memory_order_relaxed);
    level->max_probe.store(0, std::memory_order_relaxed);

    Level *expected = nullptr;
    if (!s.levels[idx].compare_exchange_strong(expected, level, std::memory_order_acq_rel,
                                               std::memory_order_acquire)) {
        unmap(m, bytes); // never visible to anyone
        return expected;
    }
    unsigned hint = s.level_count.load(std::memory_order_relaxed);
    while (hint < idx + 1 &&
           !s.level_count.compare_exchange_weak(hint, idx + 1, std::memory_order_release,
                                                std::memory_order_relaxed)) {
    }
    // Before any key of this shard is published (release): an erase or find that must see such a
    // key reads this bit first (acquire).
    if (idx == 0) used_shards_.fetch_or(uint32_t{1} << s.index, std::memory_order_release);
    return level;
}

bool LiveTable::insert_into(Level *level, const AllocationRecord &record, uint64_t hash, unsigned stripe) {
    const bool owned = owns_stripe(stripe);
    const uint64_t home = level->home(hash);
    const uint32_t limit = level->mask + 1 < kProbeLimit ? static_cast<uint32_t>(level->mask + 1) : kProbeLimit;
    for (uint32_t d = 0; d < limit; ++d) {
        const uint64_t i = (home + d) & level->mask;
        std::atomic<uint64_t> &key = level->keys[i];
        // Acquire: a tombstone's eraser has finished reading the slot before we write it.
        uint64_t k = key.load(std::memory_order_acquire);
        while (k == kEmpty || k == kTombstone) {
            // The shard's only inserter takes the slot with a store; in the shared shard a failed
            // CAS means another thread changed this slot: re-examine it with the new value.
            if (owned)
                key.store(kPending, std::memory_order_relaxed);
            else if (!key.compare_exchange_weak(k, kPending, std::memory_order_acquire, std::memory_order_relaxed))
                continue;
            // Both bounds are raised before the key is published: an erase or find that comes after
            // this insert (the only kind that must find it) reads them after our release store.
            std::atomic<uint8_t> &gb = level->bound(home);
            uint8_t g = gb.load(std::memory_order_relaxed);
            while (g < d + 1 &&
                   !gb.compare_exchange_weak(g, static_cast<uint8_t>(d + 1), std::memory_order_relaxed,
                                             std::memory_order_relaxed)) {
            }
            uint32_t mp = level->max_probe.load(std::memory_order_relaxed);
            while (mp < d + 1 &&
                   !level->max_probe.compare_exchange_weak(mp, d + 1, std::memory_order_relaxed,
                                                           std::memory_order_relaxed)) {
            }
            level->count(+1, stripe);
            write_record(level->slots[i], record);
            key.store(record.address, std::memory_order_release);
            return true;
        }
    }
    return false;
}

bool LiveTable::insert(const AllocationRecord &record) {
    if (!is_address(record.address)) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    const uint64_t hash = hash_address(record.address);
    const unsigned stripe = my_stripe();
    Shard &s = shards_[stripe];
    Level *level = newest_level(s);
    if (level == nullptr)
        level = add_level(s, nullptr);
    while (level != nullptr) {
        if (level->half_full()) {
            if (Level *next = add_level(s, level)) {
                level = next;
                continue;
            }
            // No memory for a bigger level: keep filling this one while probes stay short.
        }
        if (insert_into(level, record, hash, stripe))
            return true;
        level = add_level(s, level);
    }
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
}

bool LiveTable::erase(uint64_t address, AllocationRecord *out) {
    if (!is_address(address))
        return false;
    const uint64_t hash = hash_address(address);
    const unsigned own = my_stripe();
    if (erase_in(shards_[own], address, hash, out, own))
        return true;
    uint32_t others = used_shards_.load(std::memory_order_acquire) & ~(uint32_t{1} << own);
    for (; others != 0; others &= others - 1)
        if (erase_in(shards_[__builtin_ctz(others)], address, hash, out, own))
            return true;
    return false;
}

bool LiveTable::erase_in(Shard &s, uint64_t address, uint64_t hash, AllocationRecord *out, unsigned stripe) {
    for (unsigned n = published_levels(s); n-- > 0;) {
        Level *level = s.levels[n].load(std::memory_order_acquire);
        // (No "is this level empty" test first: a sum of its stripes read while threads run can be 0
        // for a level that holds entries ("Counting"). A never-used home group has bound 0 and is
        // passed at once; a drained level is probed up to its group's bound, which only grows.)
        const uint64_t home = level->home(hash);
        const uint32_t probes = level->bound(home).load(std::memory_order_relaxed);
        for (uint32_t d = 0; d < probes; ++d) {
            const uint64_t i = (home + d) & level->mask;
            std::atomic<uint64_t> &key = level->keys[i];
            uint64_t k = key.load(std::memory_order_relaxed);
            if (k == address) {
                if (!key.compare_exchange_strong(k, kErasing, std::memory_order_acquire,
                                                 std::memory_order_relaxed))
                    return false; // a concurrent erase of the same address won
                if (out != nullptr)
                    read_owned(level->slots[i], out);
                level->count(-1, stripe);
                key.store(kTombstone, std::memory_order_release);
                return true;
            }
            if (k == kEmpty)
                break;
        }
    }
    return false;
}

bool LiveTable::find(uint64_t address, AllocationRecord *out) const {
    if (!is_address(address))
        return false;
    const uint64_t hash = hash_address(address);
    const unsigned own = my_stripe();
    int found = find_in(shards_[own], address, hash, out);
    uint32_t others = used_shards_.load(std::memory_order_acquire) & ~(uint32_t{1} << own);
    for (; found == 0 && others != 0; others &= others - 1)
        found = find_in(shards_[__builtin_ctz(others)], address, hash, out);
    return found > 0;
}

int LiveTable::find_in(const Shard &s, uint64_t address, uint64_t hash, AllocationRecord *out) const {
    for (unsigned n = published_levels(s); n-- > 0;) {
        const Level *level = s.levels[n].load(std::memory_order_acquire);
        const uint64_t home = level->home(hash);
        const uint32_t probes = level->bound(home).load(std::memory_order_relaxed);
        for (uint32_t d = 0; d < probes; ++d) {
            const uint64_t i = (home + d) & level->mask;
            const uint64_t k = level->keys[i].load(std::memory_order_acquire);
            if (k == address) {
                AllocationRecord r;
                // A failed or foreign copy means the entry was erased while we looked.
                if (!read_shared(level->slots[i], &r) || r.address != address)
                    return -1;
                if (out != nullptr)
                    *out = r;
                return 1;
            }
            if (k == kEmpty)
                break;
        }
    }
    return 0;
}

void LiveTable::visit_level(const Level *level, void (*cb)(const AllocationRecord &, void *), void *ctx) const {
    for (uint64_t i = 0; i <= level->mask; ++i) {
        const uint64_t k = level->keys[i].load(std::memory_order_acquire);
        if (!is_address(k))
            continue;
        AllocationRecord r;
        if (read_shared(level->slots[i], &r) && r.address == k)
            cb(r, ctx);
    }
}

// Calls fn(const Level *) for every published level of every shard.
template <class Fn> void LiveTable::for_each_level(Fn &&fn) const {
    for (const Shard &s : shards_) {
        const unsigned n = published_levels(s);
        for (unsigned j = 0; j < n; ++j) fn(s.levels[j].load(std::memory_order_acquire));
    }
}

void LiveTable::for_each_impl(void (*cb)(const AllocationRecord &, void *), void *ctx) const {
    // Every level, even one whose stripes sum to 0: a sum read while threads insert and erase can
    // be 0 for a level that holds entries ("Counting").
    for_each_level([&](const Level *level) { visit_level(level, cb, ctx); });
}

uint64_t LiveTable::live_count() const {
    int64_t total = 0;
    for_each_level([&](const Level *level) {
        const int64_t n = level->live();
        if (n > 0) total += n; // a sum read under way can be negative
    });
    return static_cast<uint64_t>(total);
}

uint64_t LiveTable::mapped_bytes() const {
    uint64_t total = 0;
    for_each_level([&](const Level *level) { total += level->map_bytes; });
    return total;
}

unsigned LiveTable::levels() const {
    unsigned total = 0;
    for (const Shard &s : shards_) total += published_levels(s);
    return total;
}

unsigned LiveTable::shards_used() const {
    return static_cast<unsigned>(__builtin_popcount(used_shards_.load(std::memory_order_acquire)));
}

unsigned LiveTable::this_thread_shard() { return my_stripe(); }

uint32_t LiveTable::longest_probe() const {
    uint32_t longest = 0;
    for_each_level([&](const Level *level) {
        const uint32_t p = level->max_probe.load(std::memory_order_relaxed);
        if (p > longest) longest = p;
    });
    return longest;
}

} // namespace vramtrace
