// The event history: a bounded, lock-free ring of the most recent alloc / free / mark / oom events
// (VRAMTRACE_EVENTS slots). Writers never wait. Each ticket's slot (ticket % capacity) carries a
// sequence number, odd while the slot is being written (2 * ticket + 1) and even once complete
// (2 * ticket + 2). A reader copies a slot and accepts it only when the sequence number before and
// after the copy is the one its ticket should have, so a dump that runs while writers push never
// sees a torn event: an event being written, or already overwritten by a newer lap, is left out. A
// writer whose slot is still held by a slower writer of an older lap (or already holds a newer
// event) drops its own event rather than wait; the count is lost().
//
// Tickets: a thread that holds a lane (thread_lanes.h) takes kBlock tickets at once with one
// fetch_add on the shared head and writes its next events into those consecutive slots, so threads
// neither share the head's cache line per event nor write into each other's slot lines. A block
// whose slots the ring has come round to (the head moved on by capacity - kBlock) is dropped for a
// fresh one. The head is read for that check only once the ring has reached the lap in which the
// block could be overtaken: each take of tickets publishes the head's lap on a line of its own,
// written once a lap, so the per-event check reads a line that stays in the core's cache. (A take
// whose lap is published late, its thread preempted in between, can leave a block in use past
// that point: its next events are then dropped as lost, or kept in slots that readers no longer
// visit.) Rings smaller than kMinBlockedCapacity, and threads on the shared lane, take one ticket
// per event. Tickets are then not in time order across threads: for_each walks in ticket order and
// readers that need time order sort (the snapshot's events are sorted by time). The ring keeps the
// events of the most recent `capacity` tickets; a ticket of a block that its thread has not filled
// yet holds no event, so while several threads allocate the ring keeps up to kBlock - 1 fewer
// events per such thread.
//
// Memory: one mapping of capacity * 96 bytes (raw_memory.h), never freed; from the process's first
// CUDA call its first 64 MiB are resident (all 6 MiB of the default 65,536 slots).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tracking/thread_lanes.h"

namespace vramtrace {

enum class EventType : uint8_t { Alloc = 0, Free = 1, Mark = 2, Oom = 3 };

// One event as stored and read back. Marks carry only type, time, thread and label.
struct EventRecord {
    static constexpr size_t kLabelMax = 63; // bytes of a mark's label kept (cut at a UTF-8 boundary)
    uint64_t time_ns = 0;   // CLOCK_MONOTONIC
    uint64_t address = 0;
    uint64_t size = 0;
    uint32_t stack = 0;
    uint32_t thread_id = 0;
    int16_t device = -2;
    EventType type = EventType::Alloc;
    uint8_t kind = 0;       // MemoryKind
    uint8_t api = 0;        // ApiId
    uint8_t cause = 0;      // frees: TeardownCause (teardown_log.h) when a context teardown ended it
    uint16_t range = 0;     // alloc/free: the allocation's NVTX range stack (AllocationRecord::range)
    char label[kLabelMax + 1] = {}; // marks: NUL-terminated
};

// An allocation's or a free's event as its slot stores it (event_ring.cpp's layout): filled by the
// hook from the values it holds, with no EventRecord (and no label) built in between.
struct EventWords {
    uint64_t time_ns;
    uint64_t meta;    // EventRing::pack_meta
    uint64_t who;     // thread_id | stack << 32
    uint64_t address;
    uint64_t size;
};

class EventRing {
public:
    EventRing() = default;
    EventRing(const EventRing &) = delete;
    EventRing &operator=(const EventRing &) = delete;

    // Maps the slots; capacity 0 turns the history off. Returns false (history off) when the memory
    // cannot be mapped. start_ns: CLOCK_MONOTONIC from which the history is complete until it wraps.
    // Call once, before any push.
    bool init(uint64_t capacity, uint64_t start_ns);

    // Makes the slots resident, up to kResidentBytesMax (raw_memory.h's make_resident): the first
    // lap would otherwise take a page fault every 42 events on the threads that push, and faults
    // from many threads at once queue on the process's page tables (docs/design.md). Called
    // once the process uses CUDA, so that a process that never does (a forked worker) does not hold
    // the pages; safe while other threads push. A larger ring's further slots fault in as used.
    void make_resident();
    static constexpr uint64_t kResidentBytesMax = uint64_t{64} << 20;

    // Records one event. Never blocks, never calls malloc; safe in a signal handler.
    void push(const EventRecord &event);
    // The same for an allocation or a free, from its slot's words.
    void push_words(const EventWords &words);
    static uint64_t pack_meta(EventType type, uint8_t kind, uint8_t api, uint8_t cause, int16_t device,
                              uint16_t range) {
        return uint64_t(uint8_t(type)) | uint64_t(kind) << 8 | uint64_t(api) << 16 | uint64_t(cause) << 24 |
               uint64_t(uint16_t(device)) << 32 | uint64_t(range) << 48;
    }
    // Copies `label` (at most EventRecord::kLabelMax bytes, cut before a partial UTF-8 character).
    static void set_label(EventRecord &event, const char *label);

    uint64_t capacity() const { return capacity_; }
    // Events pushed so far (summed over lanes: exact when no push is in flight).
    uint64_t recorded() const;
    uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }
    uint64_t start_ns() const { return start_ns_; }

    // Calls fn(const EventRecord&) for each complete event still in the ring, oldest ticket first
    // (not time order across threads). Returns recorded() as of the start of the walk.
    template <class Fn> uint64_t for_each(Fn &&fn) const {
        return for_each_impl([](const EventRecord &e, void *c) { (*static_cast<Fn *>(c))(e); },
                             const_cast<void *>(static_cast<const void *>(&fn)));
    }

    static constexpr size_t kSlotWords = 12; // sequence + 11 words of payload: 96 bytes
    static constexpr uint64_t kBlock = 16;
    static constexpr uint64_t kMinBlockedCapacity = 4096;

private:
    uint64_t for_each_impl(void (*fn)(const EventRecord &, void *), void *ctx) const;
    bool read_slot(uint64_t ticket, EventRecord *out) const;
    // The slot of the next ticket, claimed for writing (its sequence odd), or nullptr (dropped and
    // counted as lost); *done is the sequence number that completes it.
    std::atomic<uint64_t> *claim(uint64_t *done);

    std::atomic<uint64_t> *slots_ = nullptr; // capacity_ * kSlotWords words
    uint64_t capacity_ = 0;
    uint64_t start_ns_ = 0;
    // The next ticket, and in *index its slot.
    uint64_t take_ticket(uint64_t *index);
    void publish_lap(uint64_t head);
    // A lane's block of tickets [first, end) with its next ticket, the slot of `first` (a ticket's
    // slot follows from it with no division), the lap from which the block may be overtaken, and the
    // events it pushed; written by the lane's owner.
    struct alignas(64) Cursor {
        std::atomic<uint64_t> next{0}, first{0}, end{0}, first_slot{0}, overtaken_lap{0}, pushed{0};
    };

    uint64_t block_ = 1;
    // Each on a line of its own: the head is written at every block take, the lap once a lap (and
    // read at every event), the counters by shared-lane pushes and drops.
    alignas(64) std::atomic<uint64_t> head_{0};
    alignas(64) std::atomic<uint64_t> lap_{0}; // the highest head / capacity published by a take
    alignas(64) std::atomic<uint64_t> lost_{0};
    std::atomic<uint64_t> shared_pushed_{0}; // pushes with one ticket each (shared lane, small rings)
    Cursor cursors_[lanes::kLanes];
};

} // namespace vramtrace
