// Per-thread state of the interceptors: the reentrancy depth (so a runtime call that reaches the
// driver through our own driver hook is recorded once, by the outermost hook, and so that the
// tracker's own work never records itself) and the cached kernel thread id.
// initial-exec TLS: no allocation and no lock on first access from a new thread.
#pragma once

#include <cstdint>
#include <sys/syscall.h>
#include <unistd.h>

namespace vramtrace {

struct ThreadState {
    int depth;
    uint32_t tid;
    uint32_t entries; // ReentrancyGuards constructed on this thread: one per piece of our own work,
                      // so that a value read inside one (device/current_context.h) is not
                      // taken for the next one's
};

extern constinit thread_local ThreadState t_thread __attribute__((tls_model("initial-exec")));

inline uint32_t current_tid() {
    if (t_thread.tid == 0) t_thread.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    return t_thread.tid;
}

// Marks the calling thread as inside vramtrace for its lifetime.
class ReentrancyGuard {
public:
    ReentrancyGuard() {
        ++t_thread.depth;
        ++t_thread.entries;
    }
    ~ReentrancyGuard() { --t_thread.depth; }
    ReentrancyGuard(const ReentrancyGuard &) = delete;
    ReentrancyGuard &operator=(const ReentrancyGuard &) = delete;
    static bool inside() { return t_thread.depth > 0; }
};

} // namespace vramtrace
