#include "tracking/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace vramtrace::asym {

std::atomic<bool> g_light_writers{false};

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

// Set for good once a membarrier failed after writers were light.
std::atomic<bool> g_fell_back{false};

// Not a guarantee, a practical bound: a writer in its light window has its busy store at worst in
// its store buffer, which drains within nanoseconds unless the thread is preempted; a few yields
// give a preempted writer's core time to run. Only ever reached after a membarrier failed, which
// registration makes all but impossible.
void drain_light_writers() {
    for (int i = 0; i < 64; ++i) sched_yield();
}

bool register_process() {
    const int saved = errno;
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    const bool ok = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
                    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
    errno = saved;
    return ok;
}

} // namespace

bool enable() {
    static std::atomic<int> state{0}; // 0 not tried, 1 light, 2 full fences
    int s = state.load(std::memory_order_acquire);
    if (s == 0) {
        s = !kSanitized && register_process() ? 1 : 2;
        int expected = 0;
        if (!state.compare_exchange_strong(expected, s, std::memory_order_acq_rel)) s = expected;
        if (s == 1) g_light_writers.store(true, std::memory_order_release);
    }
    return s == 1;
}

void set_light_writers_for_testing(bool light) { g_light_writers.store(light && enable(), std::memory_order_seq_cst); }

void reader_fence() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!light_writers()) {
        // After a failed membarrier, writers that loaded the old setting may still be in their
        // light window, also while another reader is the one that saw the failure.
        if (g_fell_back.load(std::memory_order_seq_cst)) drain_light_writers();
        return;
    }
    const int saved = errno;
    bool ok = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
    if (!ok && errno == EPERM) ok = register_process() && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
    errno = saved;
    if (ok) return;
    g_fell_back.store(true, std::memory_order_seq_cst);
    g_light_writers.store(false, std::memory_order_seq_cst);
    drain_light_writers();
}

} // namespace vramtrace::asym
