// A fence split between many frequent writers and a rare reader (the Dekker handshake of
// device_counters.cpp): while the process is registered for Linux's expedited private membarrier,
// a writer needs only a compiler fence between its busy store and its load of the freeze flag, and
// the reader's membarrier(2) makes every running thread of the process execute a full memory
// barrier, so the reader sees the writer busy or the writer sees the flag. That takes a locked
// instruction off every allocation and free. Where membarrier is missing (old kernel, seccomp) or
// under ThreadSanitizer (which does not model it), writers keep a full fence.
#pragma once

#include <atomic>

namespace vramtrace::asym {

extern std::atomic<bool> g_light_writers;

// Registers the process once (the first call makes one membarrier syscall; in a process that
// already runs many threads the kernel may take milliseconds over it, once); true when writers may
// use the light fence. Called before any writer runs (the tracker's construction).
bool enable();

// The writer's side: between its store that says "busy" and its load of the reader's flag.
inline bool light_writers() { return g_light_writers.load(std::memory_order_relaxed); }
inline void writer_fence() {
    if (light_writers()) std::atomic_signal_fence(std::memory_order_seq_cst);
    else std::atomic_thread_fence(std::memory_order_seq_cst);
}

// The reader's side, after its store of the flag and before it reads the writers' busy flags.
// One membarrier syscall (async-signal-safe) when writers are light, else a full fence. If the
// syscall fails (a forked child that is not registered yet registers and retries), writers go back
// to full fences for good, and this and every later reader yield a few times so that writers still
// in their light window finish it (a practical bound, not a proof: see the .cpp).
void reader_fence();

// Tests only: writers use full fences (false), or the light one when enable() succeeded (true).
void set_light_writers_for_testing(bool light);

} // namespace vramtrace::asym
