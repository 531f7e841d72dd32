#include "tracking/thread_lanes.h"

#include <atomic>
#include <pthread.h>

namespace vramtrace::lanes {

uint32_t detail::g_serial[kLanes]; // written by the lane's owner; hand-over orders it for the next

// 0: none yet; kLanes + 1 + lane: holds `lane`; kReleased: gave its lane back at thread exit.
constinit thread_local unsigned detail::t_lane __attribute__((tls_model("initial-exec"))) = 0;

namespace {

using detail::kHeldBase;
using detail::t_lane;
constexpr unsigned kNone = 0;
constexpr unsigned kReleased = 2 * kAllLanes + 1;
static_assert(kNone < kHeldBase && kReleased >= kHeldBase + kAllLanes);

std::atomic<bool> g_taken[kLanes];

std::atomic<unsigned> g_in_use{0};

enum KeyState : int { kKeyNone, kKeyMaking, kKeyReady, kKeyFailed };
std::atomic<int> g_key_state{kKeyNone};
pthread_key_t g_key;

void give_back(unsigned lane) {
    g_taken[lane].store(false, std::memory_order_release);
    g_in_use.fetch_sub(1, std::memory_order_relaxed);
}

// Thread exit: the value is lane + 1.
void on_thread_exit(void *value) {
    unsigned lane = static_cast<unsigned>(reinterpret_cast<uintptr_t>(value)) - 1;
    t_lane = kReleased;
    if (lane < kLanes) give_back(lane);
}

// In the child of fork() only the forking thread runs: every other lane is free again.
void after_fork_in_child() {
    unsigned mine = t_lane >= kHeldBase && t_lane < kHeldBase + kLanes ? t_lane - kHeldBase : kLanes;
    unsigned used = 0;
    for (unsigned i = 0; i < kLanes; ++i) {
        bool keep = i == mine;
        g_taken[i].store(keep, std::memory_order_relaxed);
        used += keep;
    }
    g_in_use.store(used, std::memory_order_relaxed);
}

bool key_ready() {
    int s = g_key_state.load(std::memory_order_acquire);
    if (s == kKeyReady) return true;
    if (s == kKeyFailed) return false;
    int expected = kKeyNone;
    if (g_key_state.compare_exchange_strong(expected, kKeyMaking, std::memory_order_acq_rel)) {
        bool ok = pthread_key_create(&g_key, &on_thread_exit) == 0;
        if (ok) pthread_atfork(nullptr, nullptr, &after_fork_in_child);
        g_key_state.store(ok ? kKeyReady : kKeyFailed, std::memory_order_release);
        return ok;
    }
    while ((s = g_key_state.load(std::memory_order_acquire)) == kKeyMaking) {
    }
    return s == kKeyReady;
}

unsigned take_lane() {
    // Without a way to give the lane back at thread exit, a lane would leak per thread: share.
    if (!key_ready()) return kSharedLane;
    for (unsigned i = 0; i < kLanes; ++i) {
        if (g_taken[i].load(std::memory_order_relaxed)) continue;
        bool expected = false;
        if (!g_taken[i].compare_exchange_strong(expected, true, std::memory_order_acquire)) continue;
        if (pthread_setspecific(g_key, reinterpret_cast<void *>(uintptr_t{i} + 1)) != 0) {
            give_back(i);
            return kSharedLane;
        }
        g_in_use.fetch_add(1, std::memory_order_relaxed);
        ++detail::g_serial[i];
        return i;
    }
    return kSharedLane;
}

} // namespace

unsigned detail::take_this_thread_lane() {
    const unsigned v = t_lane;
    if (v >= kHeldBase && v < kHeldBase + kAllLanes) return v - kHeldBase;
    if (v == kReleased) return kSharedLane;
    unsigned lane = take_lane();
    t_lane = kHeldBase + lane;
    return lane;
}

unsigned held_lane() {
    unsigned v = t_lane;
    return v >= kHeldBase && v < kHeldBase + kLanes ? v - kHeldBase : kSharedLane;
}

unsigned lanes_in_use() { return g_in_use.load(std::memory_order_relaxed); }


} // namespace vramtrace::lanes
