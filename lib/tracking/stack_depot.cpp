// The lock-free stack depot (see stack_depot.h for the shape).
//
// Interning a new stack:
//   1. search the bucket's list (every node compared by hash, depth and all frames);
//   2. build a node in the arena and push it with CAS. When the CAS fails, the nodes pushed since
//      the last look (from the new head down to the previously seen head) are searched; if one of
//      them is the same stack, it wins and our node is abandoned (its arena bytes stay unused).
//      Pushes are totally ordered per bucket, so of two threads racing with the same new stack
//      exactly one pushes and the other finds that node: each stack is in its list at most once.
//   3. give the node its id (publish_id).
//
// Ids are dense because they are settled through the directory, in order: cell n of the directory
// is claimed with CAS by a node without an id, the node in cell n then takes id n (CAS on its id
// from 0), and only then does next_id_ move from n to n+1. Any thread that finds cell n occupied
// finishes that work for the owner (helping), so nobody waits. A thread that read "no id yet" just
// before another thread settled the node may claim a second cell for it; such a cell holds a node
// whose id is not the cell's index and is cleared by whoever sees it, before next_id_ can pass it.
#include "tracking/stack_depot.h"

#include <new>

namespace vramtrace {

struct StackDepot::Node {
    const Node *next;         // set before the publishing CAS, immutable afterwards
    uint64_t hash;
    std::atomic<uint32_t> id; // 0 until publish_id settles it; then never changes
    uint32_t depth;
    // depth frames follow

    const uintptr_t *frames() const { return reinterpret_cast<const uintptr_t *>(this + 1); }
    uintptr_t *frames() { return reinterpret_cast<uintptr_t *>(this + 1); }
};
static_assert(sizeof(StackDepot::Node) % alignof(uintptr_t) == 0);

namespace {

constexpr uint32_t kDirChunkSize = 1u << 16;
constexpr unsigned kMaxBucketBits = 28;

inline uint64_t rotl(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

// Final avalanche: every input bit affects every output bit.
inline uint64_t avalanche(uint64_t x) {
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    return x;
}

} // namespace

// One frame folded into a lane: pre-mixed (return addresses differ in few, low bits), then
// multiply-rotate, so that the lane depends on the order of its frames as well as their content.
inline uint64_t fold_frame(uint64_t lane, uint64_t frame) {
    uint64_t f = frame * 0xbf58476d1ce4e5b9ull;
    f ^= f >> 31;
    return rotl(lane ^ f, 27) * 0x94d049bb133111ebull + 0x632be59bd9b4e019ull;
}

uint64_t StackDepot::default_hash(const uintptr_t *frames, uint32_t depth) {
    // Four independent lanes (frame i goes to lane i % 4) instead of one serial multiply chain:
    // the CPU runs the lanes side by side, which cut the hash of a 32-frame stack from about 66 ns
    // to a quarter of it on the hook path (docs/design.md). Lanes start from different seeds
    // and are combined in order, so moving a frame to another position changes the hash.
    uint64_t lane[4] = {0x243f6a8885a308d3ull ^ (uint64_t{depth} * 0x9e3779b97f4a7c15ull), 0x13198a2e03707344ull,
                        0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
    uint32_t i = 0;
    for (; i + 4 <= depth; i += 4) {
        lane[0] = fold_frame(lane[0], frames[i]);
        lane[1] = fold_frame(lane[1], frames[i + 1]);
        lane[2] = fold_frame(lane[2], frames[i + 2]);
        lane[3] = fold_frame(lane[3], frames[i + 3]);
    }
    for (; i < depth; ++i) lane[i & 3] = fold_frame(lane[i & 3], frames[i]);
    uint64_t h = lane[0];
    for (int l = 1; l < 4; ++l) h = rotl(h, 23) * 0x9e3779b97f4a7c15ull ^ lane[l];
    return avalanche(h);
}

namespace {
std::atomic<uint64_t> g_depots_constructed{0};
} // namespace

StackDepot::StackDepot(unsigned bucket_bits, HashFn hash)
    : bucket_bits_(bucket_bits > kMaxBucketBits ? kMaxBucketBits : bucket_bits),
      hash_(hash != nullptr ? hash : &default_hash),
      instance_(g_depots_constructed.fetch_add(1, std::memory_order_relaxed) + 1) {
    const size_t bucket_bytes = (size_t{1} << bucket_bits_) * sizeof(std::atomic<Node *>);
    if (void *m = map_zeroed(bucket_bytes)) {
        buckets_ = new (m) std::atomic<Node *>[size_t{1} << bucket_bits_];
        mapped_.fetch_add(bucket_bytes, std::memory_order_relaxed);
    }
    const size_t dir_bytes = kDirChunks * sizeof(std::atomic<std::atomic<Node *> *>);
    if (void *m = map_zeroed(dir_bytes)) {
        directory_ = new (m) std::atomic<std::atomic<Node *> *>[kDirChunks];
        mapped_.fetch_add(dir_bytes, std::memory_order_relaxed);
    }
}

const StackDepot::Node *StackDepot::find_in_list(const Node *from, const Node *stop, uint64_t hash,
                                                 const uintptr_t *frames, uint32_t depth) const {
    for (const Node *n = from; n != nullptr && n != stop; n = n->next) {
        if (n->hash != hash || n->depth != depth)
            continue;
        const uintptr_t *f = n->frames();
        uint32_t i = 0;
        while (i < depth && f[i] == frames[i])
            ++i;
        if (i == depth)
            return n;
    }
    return nullptr;
}

std::atomic<StackDepot::Node *> *StackDepot::directory_cell(uint32_t id, bool map_if_missing) {
    if (directory_ == nullptr)
        return nullptr;
    std::atomic<std::atomic<Node *> *> &root = directory_[id >> kDirChunkLog2];
    std::atomic<Node *> *chunk = root.load(std::memory_order_acquire);
    if (chunk == nullptr) {
        if (!map_if_missing)
            return nullptr;
        const size_t bytes = kDirChunkSize * sizeof(std::atomic<Node *>);
        void *m = map_zeroed(bytes);
        if (m == nullptr)
            return nullptr;
        auto *fresh = new (m) std::atomic<Node *>[kDirChunkSize];
        if (root.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
            mapped_.fetch_add(bytes, std::memory_order_relaxed);
            chunk = fresh;
        } else {
            unmap(m, bytes); // chunk now holds the winner's
        }
    }
    return &chunk[id & (kDirChunkSize - 1)];
}

uint32_t StackDepot::publish_id(Node *node) {
    for (;;) {
        const uint32_t mine = node->id.load(std::memory_order_acquire);
        if (mine != 0) {
            // Make sure size() covers the id we hand out, even if the thread that settled it has not
            // advanced the counter yet (next_id_ >= mine always holds).
            uint32_t expect = next_id_.load(std::memory_order_acquire);
            if (expect == mine)
                next_id_.compare_exchange_strong(expect, mine + 1, std::memory_order_acq_rel,
                                                 std::memory_order_relaxed);
            return mine;
        }
        const uint32_t n = next_id_.load(std::memory_order_acquire);
        if (n == 0 || n == ~uint32_t{0})
            return 0; // id space exhausted
        std::atomic<Node *> *cell = directory_cell(n, true);
        if (cell == nullptr)
            return 0; // no memory for the directory: the node stays without id, a later intern retries
        Node *c = cell->load(std::memory_order_acquire);
        if (c == nullptr) {
            if (!cell->compare_exchange_strong(c, node, std::memory_order_acq_rel, std::memory_order_acquire))
                continue;
            c = node;
        }
        // Settle cell n on behalf of whichever node holds it.
        uint32_t cid = 0;
        if (c->id.compare_exchange_strong(cid, n, std::memory_order_acq_rel, std::memory_order_acquire))
            cid = n;
        if (cid == n) {
            uint32_t expect = n;
            next_id_.compare_exchange_strong(expect, n + 1, std::memory_order_acq_rel, std::memory_order_relaxed);
        } else {
            // c got an earlier id through another cell: this claim is stale, free the cell.
            cell->compare_exchange_strong(c, nullptr, std::memory_order_acq_rel, std::memory_order_relaxed);
        }
    }
}

struct StackDepot::Recent {
    struct Entry {
        uint32_t depth, id; // id 0: empty
        uintptr_t frames[kRecentDepth];
    } entries[kRecentEntries];
};

namespace {

// Which remembered entry a stack may be in: a few frames spread over it (the innermost and
// outermost frames alone are the same for most stacks of a framework).
inline uint32_t recent_slot(const uintptr_t *f, uint32_t depth) {
    uint64_t h = depth;
    h = (h ^ f[0]) * 0x9E3779B97F4A7C15ull;
    h = (h ^ f[depth / 4]) * 0xC2B2AE3D27D4EB4Full;
    h = (h ^ f[depth / 2]) * 0x9E3779B97F4A7C15ull;
    h = (h ^ f[depth - 1 - depth / 4]) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<uint32_t>(h >> (64 - StackDepot::kRecentEntriesLog2));
}

inline bool same_frames(const uintptr_t *a, const uintptr_t *b, uint32_t depth) {
    for (uint32_t i = 0; i < depth; ++i)
        if (a[i] != b[i]) return false;
    return true;
}

} // namespace

uint32_t StackDepot::intern(const uintptr_t *frames, uint32_t depth) {
    if (depth == 0 || frames == nullptr)
        return 0;
    if (depth > kMaxDepth)
        depth = kMaxDepth;
    const unsigned lane = depth <= kRecentDepth ? lanes::this_thread_lane() : lanes::kSharedLane;
    if (lane >= lanes::kLanes) return intern_slow(frames, depth);
    Recent *recent = recent_[lane].load(std::memory_order_relaxed);
    if (recent == nullptr) {
        // Only this lane's thread maps its block; a failed mapping is retried at the next intern.
        recent = static_cast<Recent *>(map_zeroed(sizeof(Recent)));
        if (recent == nullptr) return intern_slow(frames, depth);
        mapped_.fetch_add(sizeof(Recent), std::memory_order_relaxed);
        recent_[lane].store(recent, std::memory_order_relaxed);
    }
    Recent::Entry &e = recent->entries[recent_slot(frames, depth)];
    if (e.id != 0 && e.depth == depth && same_frames(e.frames, frames, depth)) return e.id;
    const uint32_t id = intern_slow(frames, depth);
    if (id != 0) {
        e.depth = depth;
        e.id = id;
        for (uint32_t i = 0; i < depth; ++i) e.frames[i] = frames[i];
    }
    return id;
}

uint32_t StackDepot::intern_slow(const uintptr_t *frames, uint32_t depth) {
    if (buckets_ == nullptr) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    const uint64_t hash = hash_(frames, depth);
    std::atomic<Node *> &bucket = buckets_[hash & ((uint64_t{1} << bucket_bits_) - 1)];

    Node *head = bucket.load(std::memory_order_acquire);
    const Node *found = find_in_list(head, nullptr, hash, frames, depth);
    if (found == nullptr) {
        void *m = arena_.allocate(sizeof(Node) + size_t{depth} * sizeof(uintptr_t), alignof(Node));
        if (m == nullptr) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
            return 0;
        }
        Node *node = new (m) Node;
        node->hash = hash;
        node->id.store(0, std::memory_order_relaxed);
        node->depth = depth;
        uintptr_t *f = node->frames();
        for (uint32_t i = 0; i < depth; ++i)
            f[i] = frames[i];

        const Node *seen = head; // every node from `seen` down has been searched
        for (;;) {
            node->next = head;
            if (bucket.compare_exchange_weak(head, node, std::memory_order_release, std::memory_order_acquire)) {
                found = node;
                break;
            }
            // head is now the current head: search only what was pushed since we last looked.
            found = find_in_list(head, seen, hash, frames, depth);
            if (found != nullptr)
                break; // our node was never published; its bytes are simply left in the arena
            seen = head;
        }
    }
    const uint32_t id = publish_id(const_cast<Node *>(found));
    if (id == 0)
        dropped_.fetch_add(1, std::memory_order_relaxed);
    return id;
}

StackView StackDepot::get(uint32_t id) const {
    if (id == 0)
        return {};
    std::atomic<Node *> *cell = const_cast<StackDepot *>(this)->directory_cell(id, false);
    if (cell == nullptr)
        return {};
    const Node *n = cell->load(std::memory_order_acquire);
    if (n == nullptr || n->id.load(std::memory_order_acquire) != id)
        return {};
    return StackView{n->frames(), n->depth};
}

uint32_t StackDepot::size() const { return next_id_.load(std::memory_order_acquire) - 1; }

uint64_t StackDepot::dropped() const { return dropped_.load(std::memory_order_relaxed); }

uint64_t StackDepot::mapped_bytes() const {
    return mapped_.load(std::memory_order_relaxed) + arena_.mapped_bytes();
}

} // namespace vramtrace
