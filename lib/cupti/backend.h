// The CUPTI backend's choice and start (docs/cupti.md): whether CUPTI records instead of the preload
// hooks (core/recording_backend.h holds the switch the hooks read).
#pragma once

namespace vramtrace::cupti {

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

} // namespace vramtrace::cupti
