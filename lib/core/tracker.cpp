#include "core/tracker.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <pthread.h>

#define VRAMTRACE_BUILDING_LIBRARY
#include "vramtrace/vramtrace.h"

#include "core/clock.h"
#include "core/tsc_clock.h"
#include "core/config.h"
#include "core/hot_flags.h"
#include "core/recording_backend.h"
#include "core/log.h"
#include "core/thread_state.h"
#include "tracking/asymmetric_fence.h"

namespace vramtrace {

constinit thread_local ThreadState t_thread __attribute__((tls_model("initial-exec"))) = {0, 0, 0};

alignas(Tracker) unsigned char g_tracker_storage[sizeof(Tracker)];

namespace {

unsigned char (&g_storage)[sizeof(Tracker)] = g_tracker_storage;

enum State : int { kNotStarted, kStarting, kReady, kDisabled };
std::atomic<int> g_state{kNotStarted};
std::atomic<bool> g_cuda_seen{false};

// Clocks and the event ring of a freshly constructed tracker.
void start_tracker(Tracker *t) {
    t->start_wall_ns = wall_ns();
    t->start_monotonic_ns = monotonic_ns();
    if (!t->events.init(config().events, t->start_monotonic_ns))
        log_warning("no memory for the event history (VRAMTRACE_EVENTS=%u); snapshots carry no events",
                    config().events);
    // Tests only: from here on the tracker cannot grow (see docs/reliability.md, internal limits).
    if (config().test_fail_mappings) set_mapping_failure_for_testing(true);
}

// The event of an allocation or a free, as its slot in the ring stores it.
EventWords event_of(EventType type, const AllocationRecord &r, uint8_t cause = 0) {
    // A free on another thread may read the counter a little ahead of its own loads (core/clock.h):
    // its time is never before the allocation's.
    uint64_t time_ns = r.time_ns;
    uint32_t thread_id = r.thread_id;
    if (type != EventType::Alloc) {
        const uint64_t now = monotonic_ns();
        time_ns = now > r.time_ns ? now : r.time_ns;
        thread_id = current_tid();
    }
    return EventWords{time_ns,
                      EventRing::pack_meta(type, static_cast<uint8_t>(r.kind), r.api, cause, r.device, r.range),
                      uint64_t(thread_id) | uint64_t(r.stack_id) << 32, r.address, r.size};
}

// In the child of fork(): the child gets a fresh, empty tracker (see docs/reliability.md). The
// parent's live allocations are not the child's: device memory is not usefully inherited across
// fork (CUDA does not support using the parent's context in the child), and reporting them again
// would show every parent allocation twice, once as the child's leak. The parent's table, depot
// and counters stay mapped in the child (copy-on-write, never written again) and are simply
// abandoned, so nothing another parent thread was doing at the moment of fork (a half-finished
// insert, a depot push) can be seen by the child. Only the forking thread exists in the child; it
// runs this before fork() returns, so no hook can run concurrently.
void after_fork_in_child() {
    t_thread.tid = 0; // the forking thread keeps its TLS but gets a new kernel thread id
    tsc::reset();     // the child's reporter fits its own line
    g_cuda_seen.store(false, std::memory_order_relaxed);
    hot::clear(hot::kCudaSeen);
    int s = g_state.load(std::memory_order_relaxed);
    if (s == kStarting) {
        // Another parent thread was initializing: that thread does not exist here. Start over.
        g_state.store(kNotStarted, std::memory_order_relaxed);
        refresh_recording_bits();
        return;
    }
    if (s != kReady) return;
    if (!config().follow) {
        // Only the process started under vramtrace is traced, not the processes it forks.
        g_state.store(kDisabled, std::memory_order_relaxed);
        refresh_recording_bits();
        return;
    }
    start_tracker(new (g_storage) Tracker());
}

} // namespace

void refresh_recording_bits() {
    // Set first, then checked (core/hot_flags.h): a concurrent change of a source clears them after.
    hot::set(hot::kRecordExport | hot::kRecordHandout);
    uint64_t off = 0;
    if (g_state.load(std::memory_order_acquire) != kReady || !preload_hooks_record())
        off = hot::kRecordExport | hot::kRecordHandout;
    else if (!config().hook_exports)
        off = hot::kRecordExport;
    if (off != 0) hot::clear(off);
}

Tracker *tracker() {
    int s = g_state.load(std::memory_order_acquire);
    if (s == kReady) return reinterpret_cast<Tracker *>(g_storage);
    if (s == kNotStarted) {
        initialize();
        if (g_state.load(std::memory_order_acquire) == kReady) return reinterpret_cast<Tracker *>(g_storage);
    }
    return nullptr;
}

void initialize() {
    int expected = kNotStarted;
    if (!g_state.compare_exchange_strong(expected, kStarting, std::memory_order_acq_rel)) return;
    load_config();
    static bool atfork_registered;
    if (!atfork_registered) {
        atfork_registered = true;
        // The first child handler: the layers above (start/library_lifetime.cpp) register theirs
        // later and find a fresh tracker.
        pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    }
    if (config().disabled) {
        g_state.store(kDisabled, std::memory_order_release);
        return;
    }
    const Config &c = config();
    if (c.hook_exports && c.hook_dlsym && c.hook_procaddress) hot::set(hot::kLayersOn);
    start_tracker(new (g_storage) Tracker());
    g_state.store(kReady, std::memory_order_release);
    refresh_recording_bits();
    log_debug(asym::light_writers() ? "peak reads: membarrier; writers use a compiler fence"
                                    : "peak reads: writers use a full fence (no expedited membarrier)");
}

void disable_tracking(const char *why) {
    int prev = g_state.exchange(kDisabled, std::memory_order_acq_rel);
    hot::clear(hot::kRecordExport | hot::kRecordHandout);
    if (prev != kDisabled) log_warning("tracking turned off: %s; the program continues untracked", why);
}

void note_cuda_seen_slow() {
    if (g_cuda_seen.load(std::memory_order_relaxed) || g_cuda_seen.exchange(true, std::memory_order_relaxed)) {
        hot::set(hot::kCudaSeen);
        return;
    }
    // The first CUDA call of this process (a forked child's own first one too).
    if (g_state.load(std::memory_order_acquire) == kReady) reinterpret_cast<Tracker *>(g_storage)->events.make_resident();
    hot::set(hot::kCudaSeen);
}
bool cuda_seen() { return g_cuda_seen.load(std::memory_order_relaxed); }

namespace {
std::atomic<bool> g_exiting{false};
// Runtime bootstraps seen (+1), and the count when the exit handler was last registered (0: never).
std::atomic<uint32_t> g_bootstraps{1};
std::atomic<uint32_t> g_exit_handler_at{0};
void mark_exiting() { g_exiting.store(true, std::memory_order_release); }
} // namespace

void note_runtime_bootstrap() {
    g_bootstraps.fetch_add(1, std::memory_order_relaxed);
    hot::clear(hot::kExitHandlerCurrent); // after the count: see register_exit_handler
}

namespace {
// Registered again after each runtime start, at most kMaxExitHandlers times in all (a program
// that looks "cuGetProcAddress" up over and over does not grow the atexit list without bound).
// The bit goes on before the count is read, so a runtime start counted after that read clears it.
void register_exit_handler() {
    constexpr uint32_t kMaxExitHandlers = 16;
    hot::set(hot::kExitHandlerCurrent);
    uint32_t seen = g_bootstraps.load(std::memory_order_relaxed);
    uint32_t at = g_exit_handler_at.load(std::memory_order_relaxed);
    if (at != seen && at < kMaxExitHandlers &&
        g_exit_handler_at.compare_exchange_strong(at, seen < kMaxExitHandlers ? seen : kMaxExitHandlers,
                                                  std::memory_order_relaxed))
        atexit(&mark_exiting);
}
} // namespace

uint32_t peak_key(Tracker &t, uint32_t stack, uint16_t range) {
    if (range == 0) return stack;
    uintptr_t frame = static_cast<uintptr_t>(kRangeKeyTag | uint64_t{range} << 32 | stack);
    return t.depot.intern(&frame, 1);
}

bool split_peak_key(const Tracker &t, uint32_t key, uint32_t *stack, uint16_t *range) {
    StackView v = t.depot.get(key);
    if (v.depth != 1 || (v.frames[0] & 0xffff000000000000ull) != kRangeKeyTag) return false;
    *stack = static_cast<uint32_t>(v.frames[0]);
    *range = static_cast<uint16_t>(v.frames[0] >> 32);
    return true;
}

uint64_t record_allocation(Tracker &t, const AllocationRecord &record) {
    if ((hot::word() & hot::kExitHandlerCurrent) == 0) register_exit_handler();
    if (!t.table.insert(record)) return 0;
    uint64_t live_after = 0;
    if (counts_toward_device(record.kind))
        live_after = t.counters.on_alloc(record.device, record.size, peak_key(t, record.stack_id, record.range),
                                         record.time_ns);
    t.events.push_words(event_of(EventType::Alloc, record));
    return live_after;
}

bool take_allocation(Tracker &t, uint64_t address, AllocationRecord *out) {
    return t.table.erase(address, out);
}

void restore_allocation(Tracker &t, const AllocationRecord &record) { t.table.insert(record); }

void account_free(Tracker &t, const AllocationRecord &record, TeardownCause cause) {
    if (counts_toward_device(record.kind))
        t.counters.on_free(record.device, record.size, peak_key(t, record.stack_id, record.range));
    t.events.push_words(event_of(EventType::Free, record, static_cast<uint8_t>(cause)));
}

bool process_exiting() { return g_exiting.load(std::memory_order_acquire); }

void record_oom_event(Tracker &t, int device, uint64_t size, uint8_t api, uint32_t stack) {
    EventRecord e;
    e.type = EventType::Oom;
    e.time_ns = monotonic_ns();
    e.size = size;
    e.stack = stack;
    e.thread_id = current_tid();
    e.device = static_cast<int16_t>(device);
    e.api = api;
    t.events.push(e);
}

int record_mark(const char *label) {
    Tracker *t = tracker();
    if (t == nullptr) return VRAMTRACE_ERROR_DISABLED;
    EventRecord e;
    e.type = EventType::Mark;
    e.time_ns = monotonic_ns();
    e.thread_id = current_tid();
    e.device = kUnknownDevice;
    EventRing::set_label(e, label);
    t->events.push(e);
    return VRAMTRACE_OK;
}

} // namespace vramtrace
