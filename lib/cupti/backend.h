// Which backend records allocations: the preload hooks (the default) or CUPTI's driver-API callbacks
// (docs/cupti.md). Never both: while CUPTI records, the preload hooks (if the library is also
// preloaded) forward every call untouched; they take over again only when CUPTI cannot be used.
#pragma once

#include <atomic>

namespace vramtrace {

extern std::atomic<bool> g_preload_hooks_record;

// Read by every preload hook (hook_scope.h's tracker_for): one relaxed load.
inline bool preload_hooks_record() { return g_preload_hooks_record.load(std::memory_order_relaxed); }

namespace cupti {

// Library constructor: with VRAMTRACE_BACKEND=cupti the preload hooks start passive. Says so when
// CUDA_INJECTION64_PATH is missing (the driver would never call InitializeInjection) and stays
// with the preload hooks then.
void select_backend_at_start();

// Whether this library's exported definitions are the ones the process binds to (it was
// preloaded), as opposed to loaded privately by the driver through CUDA_INJECTION64_PATH.
bool preload_interposed();

// Whether the library was loaded by the driver only (not preloaded): then the preload layers'
// start-up checks do not apply.
bool loaded_by_injection_only();

// The driver's call of InitializeInjection (at cuInit): subscribes to CUPTI when this backend is
// chosen. Returns what InitializeInjection returns (1: the driver carries on in every case).
int initialize_injection();

} // namespace cupti
} // namespace vramtrace
