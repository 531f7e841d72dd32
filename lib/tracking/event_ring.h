// The event history: a bounded, lock-free ring of the most recent alloc / free / mark / oom events
// (VRAMTRACE_EVENTS slots). Writers never wait: a writer takes a ticket with one fetch_add, and the
// ticket's slot (ticket % capacity) carries a sequence number, odd while the slot is being written
// (2 * ticket + 1) and even once complete (2 * ticket + 2). A reader copies a slot and accepts it
// only when the sequence number before and after the copy is the one its ticket should have, so a
// dump that runs while writers push never sees a torn event: an event being written, or already
// overwritten by a newer lap, is left out. A writer whose slot is still held by a slower writer of
// an older lap (or already holds a newer event) drops its own event rather than wait; the count is
// lost().
//
// Memory: one mapping of capacity * 96 bytes (raw_memory.h), never freed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

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
    char label[kLabelMax + 1] = {}; // marks: NUL-terminated
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

    // Records one event. Never blocks, never calls malloc; safe in a signal handler.
    void push(const EventRecord &event);
    // Copies `label` (at most EventRecord::kLabelMax bytes, cut before a partial UTF-8 character).
    static void set_label(EventRecord &event, const char *label);

    uint64_t capacity() const { return capacity_; }
    uint64_t recorded() const { return head_.load(std::memory_order_acquire); } // tickets taken
    uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }
    uint64_t start_ns() const { return start_ns_; }

    // Calls fn(const EventRecord&) for each complete event still in the ring, oldest ticket first.
    // Returns the number of tickets taken when the walk started (recorded()).
    template <class Fn> uint64_t for_each(Fn &&fn) const {
        return for_each_impl([](const EventRecord &e, void *c) { (*static_cast<Fn *>(c))(e); },
                             const_cast<void *>(static_cast<const void *>(&fn)));
    }

    static constexpr size_t kSlotWords = 12; // sequence + 11 words of payload: 96 bytes

private:
    uint64_t for_each_impl(void (*fn)(const EventRecord &, void *), void *ctx) const;
    bool read_slot(uint64_t ticket, EventRecord *out) const;

    std::atomic<uint64_t> *slots_ = nullptr; // capacity_ * kSlotWords words
    uint64_t capacity_ = 0;
    uint64_t start_ns_ = 0;
    alignas(64) std::atomic<uint64_t> head_{0};
    std::atomic<uint64_t> lost_{0};
};

} // namespace vramtrace
