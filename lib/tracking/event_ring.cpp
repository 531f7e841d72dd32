// The event history ring (see event_ring.h). Slot layout, in 64-bit words:
//   0 sequence | 1 time_ns | 2 type, kind, api, cause, device, range | 3 thread_id, stack | 4 address | 5 size
// and for marks words 4..11 hold the label (64 bytes, NUL-terminated) instead of address/size.
// Payload words are relaxed atomics so that a reader racing a writer is well defined; the sequence
// number decides whether the copy is kept.
#include "tracking/event_ring.h"

#include <cstring>

#include "tracking/raw_memory.h"

namespace vramtrace {
namespace {

constexpr size_t kLabelWords = (EventRecord::kLabelMax + 1) / 8;
static_assert(4 + kLabelWords == EventRing::kSlotWords, "a mark's label fills the slot");

uint64_t meta_of(const EventRecord &e) {
    return EventRing::pack_meta(e.type, e.kind, e.api, e.cause, e.device, e.range);
}

} // namespace

bool EventRing::init(uint64_t capacity, uint64_t start_ns) {
    start_ns_ = start_ns;
    if (capacity == 0) return true;
    if (capacity > (uint64_t{1} << 32)) return false;
    void *m = map_zeroed(capacity * kSlotWords * sizeof(uint64_t));
    if (m == nullptr) return false;
    slots_ = static_cast<std::atomic<uint64_t> *>(m);
    capacity_ = capacity;
    block_ = capacity >= kMinBlockedCapacity ? kBlock : 1;
    return true;
}

void EventRing::make_resident() {
    const uint64_t bytes = capacity_ * kSlotWords * sizeof(uint64_t);
    if (capacity_ != 0) vramtrace::make_resident(slots_, bytes < kResidentBytesMax ? bytes : kResidentBytesMax);
}

void EventRing::set_label(EventRecord &event, const char *label) {
    size_t n = label ? strnlen(label, EventRecord::kLabelMax + 1) : 0;
    if (n > EventRecord::kLabelMax) {
        n = EventRecord::kLabelMax;
        // Do not keep the first bytes of a character cut in half: back up to its lead byte.
        while (n > 0 && (static_cast<unsigned char>(label[n]) & 0xC0) == 0x80) --n;
    }
    if (n) memcpy(event.label, label, n);
    memset(event.label + n, 0, sizeof event.label - n);
}

void EventRing::publish_lap(uint64_t head) {
    const uint64_t lap = head / capacity_;
    uint64_t seen = lap_.load(std::memory_order_relaxed);
    while (seen < lap && !lap_.compare_exchange_weak(seen, lap, std::memory_order_relaxed)) {
    }
}

uint64_t EventRing::take_ticket(uint64_t *index) {
    const unsigned lane = block_ > 1 ? lanes::this_thread_lane() : lanes::kSharedLane;
    if (lane >= lanes::kLanes) {
        shared_pushed_.fetch_add(1, std::memory_order_relaxed);
        const uint64_t ticket = head_.fetch_add(1, std::memory_order_relaxed);
        if (block_ > 1) publish_lap(ticket + 1);
        *index = ticket % capacity_;
        return ticket;
    }
    Cursor &c = cursors_[lane];
    uint64_t next = c.next.load(std::memory_order_relaxed);
    // A block the ring has come round to would put our events behind newer laps: take a fresh one.
    bool fresh = next == c.end.load(std::memory_order_relaxed);
    if (!fresh && lap_.load(std::memory_order_relaxed) >= c.overtaken_lap.load(std::memory_order_relaxed))
        fresh = head_.load(std::memory_order_relaxed) - next >= capacity_ - block_;
    if (fresh) {
        next = head_.fetch_add(block_, std::memory_order_relaxed);
        publish_lap(next + block_);
        c.first.store(next, std::memory_order_relaxed);
        c.first_slot.store(next % capacity_, std::memory_order_relaxed); // one division per block
        c.end.store(next + block_, std::memory_order_relaxed);
        c.overtaken_lap.store((next + capacity_ - block_) / capacity_, std::memory_order_relaxed);
    }
    // A ticket's slot from the block's first, so that no state carried from event to event can
    // drift from the ticket (a push interrupted by a signal handler's push, say).
    uint64_t slot = c.first_slot.load(std::memory_order_relaxed) + (next - c.first.load(std::memory_order_relaxed));
    if (slot >= capacity_) slot -= capacity_;
    const uint64_t following = slot + 1 == capacity_ ? 0 : slot + 1;
    c.next.store(next + 1, std::memory_order_relaxed);
    c.pushed.store(c.pushed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // The ring is larger than a core's cache, so each slot is a cold line: fetch the block's next
    // slot for writing now, while this thread goes on to the program's next CUDA call.
    if (next + 1 < c.end.load(std::memory_order_relaxed)) {
        const char *line = reinterpret_cast<const char *>(slots_ + following * kSlotWords);
        __builtin_prefetch(line, 1, 3);
        __builtin_prefetch(line + kSlotWords * sizeof(uint64_t) - 1, 1, 3);
    }
    *index = slot;
    return next;
}

uint64_t EventRing::recorded() const {
    uint64_t n = shared_pushed_.load(std::memory_order_relaxed);
    for (const Cursor &c : cursors_) n += c.pushed.load(std::memory_order_relaxed);
    return n;
}

__attribute__((always_inline)) inline std::atomic<uint64_t> *EventRing::claim(uint64_t *done) {
    uint64_t index = 0;
    const uint64_t ticket = take_ticket(&index);
    std::atomic<uint64_t> *slot = slots_ + index * kSlotWords;
    const uint64_t busy = 2 * ticket + 1;
    uint64_t seq = slot[0].load(std::memory_order_relaxed);
    // Claim only a slot that holds a complete, older event; otherwise a writer of another lap is in
    // it (or is newer): drop ours rather than wait.
    if ((seq & 1) != 0 || seq >= busy ||
        !slot[0].compare_exchange_strong(seq, busy, std::memory_order_relaxed, std::memory_order_relaxed)) {
        lost_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    std::atomic_thread_fence(std::memory_order_release); // the odd number is seen before the payload
    *done = busy + 1;
    return slot;
}

void EventRing::push_words(const EventWords &w) {
    if (capacity_ == 0) return;
    uint64_t done = 0;
    std::atomic<uint64_t> *slot = claim(&done);
    if (slot == nullptr) return;
    slot[1].store(w.time_ns, std::memory_order_relaxed);
    slot[2].store(w.meta, std::memory_order_relaxed);
    slot[3].store(w.who, std::memory_order_relaxed);
    slot[4].store(w.address, std::memory_order_relaxed);
    slot[5].store(w.size, std::memory_order_relaxed);
    slot[0].store(done, std::memory_order_release);
}

void EventRing::push(const EventRecord &e) {
    if (e.type != EventType::Mark) {
        push_words(EventWords{e.time_ns, meta_of(e), uint64_t(e.thread_id) | uint64_t(e.stack) << 32, e.address,
                              e.size});
        return;
    }
    if (capacity_ == 0) return;
    uint64_t done = 0;
    std::atomic<uint64_t> *slot = claim(&done);
    if (slot == nullptr) return;
    slot[1].store(e.time_ns, std::memory_order_relaxed);
    slot[2].store(meta_of(e), std::memory_order_relaxed);
    slot[3].store(uint64_t(e.thread_id) | uint64_t(e.stack) << 32, std::memory_order_relaxed);
    uint64_t words[kLabelWords];
    memcpy(words, e.label, sizeof words);
    for (size_t i = 0; i < kLabelWords; ++i) slot[4 + i].store(words[i], std::memory_order_relaxed);
    slot[0].store(done, std::memory_order_release);
}

bool EventRing::read_slot(uint64_t ticket, EventRecord *out) const {
    const std::atomic<uint64_t> *slot = slots_ + (ticket % capacity_) * kSlotWords;
    const uint64_t done = 2 * ticket + 2;
    if (slot[0].load(std::memory_order_acquire) != done) return false;
    uint64_t w[kSlotWords];
    for (size_t i = 1; i < kSlotWords; ++i) w[i] = slot[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire); // the copy is done before the re-check
    if (slot[0].load(std::memory_order_relaxed) != done) return false; // rewritten meanwhile: torn
    EventRecord e;
    e.time_ns = w[1];
    e.type = EventType(uint8_t(w[2]));
    e.kind = uint8_t(w[2] >> 8);
    e.api = uint8_t(w[2] >> 16);
    e.cause = uint8_t(w[2] >> 24);
    e.device = int16_t(uint16_t(w[2] >> 32));
    e.range = uint16_t(w[2] >> 48);
    e.thread_id = uint32_t(w[3]);
    e.stack = uint32_t(w[3] >> 32);
    if (e.type == EventType::Mark) {
        memcpy(e.label, &w[4], sizeof e.label);
        e.label[EventRecord::kLabelMax] = 0;
    } else {
        e.address = w[4];
        e.size = w[5];
    }
    *out = e;
    return true;
}

uint64_t EventRing::for_each_impl(void (*fn)(const EventRecord &, void *), void *ctx) const {
    const uint64_t pushed = recorded();
    const uint64_t head = head_.load(std::memory_order_acquire);
    if (capacity_ == 0) return pushed;
    uint64_t first = head > capacity_ ? head - capacity_ : 0;
    EventRecord e;
    for (uint64_t t = first; t < head; ++t)
        if (read_slot(t, &e)) fn(e, ctx);
    return pushed;
}

} // namespace vramtrace
