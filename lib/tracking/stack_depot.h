// The lock-free stack depot: interns call stacks (arrays of raw return addresses) and hands out a
// small integer id per unique stack, so that each live allocation stores 4 bytes instead of a stack.
//
// Shape: a fixed array of buckets, each the head of a singly linked list of immutable nodes pushed
// with CAS. Nodes live in an append-only arena (mmap, never freed). Lookup compares the whole stack
// (depth and every frame), never the hash alone, so colliding stacks get distinct ids. Ids are dense
// (1, 2, 3, ...) and resolve back to the node through a two-level directory.
//
// In front of the buckets, each thread lane (thread_lanes.h) remembers the last few stacks it
// interned (kRecentEntries, up to kRecentDepth frames): a program allocates from the same call paths
// over and over, and comparing the frames with a remembered stack costs a fraction of hashing them
// and walking a bucket. Only the lane's thread reads or writes its entries.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tracking/raw_memory.h"
#include "tracking/thread_lanes.h"

namespace vramtrace {

struct StackView {
    const uintptr_t *frames = nullptr; // innermost (leaf) first
    uint32_t depth = 0;
};

class StackDepot {
public:
    using HashFn = uint64_t (*)(const uintptr_t *frames, uint32_t depth);
    static uint64_t default_hash(const uintptr_t *frames, uint32_t depth);

    static constexpr uint32_t kMaxDepth = 256;
    // Enough for a framework's call paths in one training step (PyTorch's small loop allocates
    // from a few hundred): 128 entries of 64 frames, 65 KiB per lane that interns into this depot
    // (the tracker has two: native stacks and Python frames), mapped then.
    static constexpr uint32_t kRecentEntriesLog2 = 7;
    static constexpr uint32_t kRecentEntries = 1u << kRecentEntriesLog2;
    static constexpr uint32_t kRecentDepth = 64;

    // bucket_bits: 2^n buckets. hash: replaceable so tests can force collisions.
    explicit StackDepot(unsigned bucket_bits = 18, HashFn hash = &default_hash);
    StackDepot(const StackDepot &) = delete;
    StackDepot &operator=(const StackDepot &) = delete;

    // Returns the id of this stack, adding it when new. depth == 0 gives 0 ("no stack").
    // Returns 0 and counts a drop when memory for a new node cannot be mapped. depth is clamped
    // to kMaxDepth. Threads interning the same new stack at the same time all get the same id: a
    // stack is stored once, and ids have no gaps (size() ids are 1 .. size()).
    uint32_t intern(const uintptr_t *frames, uint32_t depth);

    // The frames of an id returned by intern(); an empty view for 0 or an unknown id.
    StackView get(uint32_t id) const;

    uint32_t size() const;      // number of unique stacks interned
    // Tells this depot from every other constructed in the process, also one constructed later at
    // the same address (a forked child's fresh tracker): ids are kept elsewhere under it. Never 0.
    uint64_t instance() const { return instance_; }
    uint64_t dropped() const;   // stacks that could not be stored
    uint64_t mapped_bytes() const;

    struct Node;
    struct Recent;

private:
    uint32_t intern_slow(const uintptr_t *frames, uint32_t depth);
    uint32_t publish_id(Node *node);
    std::atomic<Node *> *directory_cell(uint32_t id, bool map_if_missing);
    const Node *find_in_list(const Node *from, const Node *stop, uint64_t hash, const uintptr_t *frames,
                             uint32_t depth) const;

    unsigned bucket_bits_;
    HashFn hash_;
    uint64_t instance_;
    std::atomic<Node *> *buckets_ = nullptr;      // 2^bucket_bits heads
    static constexpr unsigned kDirChunkLog2 = 16; // ids per directory chunk
    static constexpr unsigned kDirChunks = 1u << 16;
    std::atomic<std::atomic<Node *> *> *directory_ = nullptr; // id -> node, chunked
    std::atomic<uint32_t> next_id_{1};
    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint64_t> mapped_{0};  // buckets, directory root and chunks (the arena counts its own)
    BumpArena arena_;                 // nodes
    std::atomic<Recent *> recent_[lanes::kLanes] = {}; // mapped at a lane's first intern
};

} // namespace vramtrace
