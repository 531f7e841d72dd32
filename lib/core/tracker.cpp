#include "core/tracker.h"

#include <atomic>
#include <new>
#include <pthread.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/thread_state.h"
#include "tracking/stack_capture.h"

namespace vramtrace {

thread_local ThreadState t_thread __attribute__((tls_model("initial-exec"))) = {0, 0};

namespace {

enum State : int { kNotStarted, kStarting, kReady, kDisabled };
std::atomic<int> g_state{kNotStarted};
std::atomic<bool> g_cuda_seen{false};
alignas(Tracker) unsigned char g_storage[sizeof(Tracker)];

} // namespace

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
    if (config().disabled) {
        g_state.store(kDisabled, std::memory_order_release);
        return;
    }
    Tracker *t = new (g_storage) Tracker();
    t->start_wall_ns = wall_ns();
    // The forking thread keeps its TLS in the child but gets a new kernel thread id.
    pthread_atfork(nullptr, nullptr, [] { t_thread.tid = 0; });
    g_state.store(kReady, std::memory_order_release);
}

void disable_tracking(const char *why) {
    int prev = g_state.exchange(kDisabled, std::memory_order_acq_rel);
    if (prev != kDisabled) log_warning("tracking turned off: %s; the program continues untracked", why);
}

void note_cuda_seen() {
    if (!g_cuda_seen.load(std::memory_order_relaxed)) g_cuda_seen.store(true, std::memory_order_relaxed);
}
bool cuda_seen() { return g_cuda_seen.load(std::memory_order_relaxed); }

uint32_t capture_and_intern_stack(Tracker &t) {
    uintptr_t frames[StackDepot::kMaxDepth];
    uint32_t depth = capture_stack(frames, config().stack_depth);
    return t.depot.intern(frames, depth);
}

void record_allocation(Tracker &t, const AllocationRecord &record) {
    if (t.table.insert(record)) t.counters.on_alloc(record.device, record.size);
}

bool take_allocation(Tracker &t, uint64_t address, AllocationRecord *out) {
    return t.table.erase(address, out);
}

void restore_allocation(Tracker &t, const AllocationRecord &record) { t.table.insert(record); }

void account_free(Tracker &t, const AllocationRecord &record) {
    t.counters.on_free(record.device, record.size);
}

} // namespace vramtrace
