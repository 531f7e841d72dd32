// The calling thread's current CUDA context, as the hot path reads it: one cuCtxGetCurrent, then a
// per-thread cache of the context's registry id and device (tracking/context_registry.h), filled
// with cuCtxGetDevice only when the thread meets a context it has not cached or a teardown has
// retired ids since (ContextRegistry::epoch). Inside one hook (one ReentrancyGuard) the answer is
// read once: the hooks call forget_context_read() after the real call, and every later read under
// the same guard reuses it.
#pragma once

#include <cstdint>

namespace vramtrace {

struct ContextInfo {
    uint16_t id = 0;     // ContextRegistry id; 0: no current context, or the registry is full
    int device = -2;     // the context's device ordinal; kUnknownDevice (-2) when none is current
    uint64_t handle = 0; // the CUcontext
};

// Never holds a lock; makes at most two driver calls (cuCtxGetCurrent, cuCtxGetDevice on a miss).
ContextInfo current_context();
// Called right after the real function returns: the context may have changed inside it (cudart
// makes its primary context current on first use), so the next read asks the driver again.
void forget_context_read();

} // namespace vramtrace
