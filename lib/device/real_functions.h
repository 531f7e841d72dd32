// Where the real CUDA functions and the real dlsym come from.
//
// - real_dlsym(): glibc's dlsym, found with dlvsym(RTLD_NEXT, "dlsym", ...) since our own exported
//   dlsym hides it from an ordinary look-up.
// - Runtime rows of hooks.def resolve with real_dlsym(RTLD_NEXT, name): the next definition after
//   this library, i.e. the program's libcudart.
// - Driver rows resolve in the driver's handle: the one cudart itself passed to dlsym, else the
//   already-loaded libcuda.so.1 (dlopen with RTLD_NOLOAD never loads it on our initiative).
// Slots are filled lazily and idempotently (plain atomic stores of the same value), so no thread
// ever waits for another.
#pragma once

#include <atomic>

#include "device/driver_api.h"

namespace vramtrace {

using DlsymFn = void *(*)(void *, const char *);
DlsymFn real_dlsym();

namespace detail {
extern std::atomic<void *> g_real[kApiCount]; // each row's real function once found
void *look_up_real(ApiId id);
void *look_up_real_or_warn(ApiId id);
} // namespace detail

// The real function of a row, or nullptr when it cannot be found (yet). Inline: every hook asks,
// and once found it is one load.
inline void *find_real(ApiId id) {
    void *p = detail::g_real[static_cast<int>(id)].load(std::memory_order_acquire);
    return p != nullptr ? p : detail::look_up_real(id);
}
// The same for a call that must be forwarded: says on stderr when it cannot be found.
inline void *real_function(ApiId id) {
    void *p = detail::g_real[static_cast<int>(id)].load(std::memory_order_acquire);
    return p != nullptr ? p : detail::look_up_real_or_warn(id);
}

template <ApiId Id, class Fn> inline Fn real() {
    return reinterpret_cast<Fn>(real_function(Id));
}
#define VT_REAL(name) ::vramtrace::real<::vramtrace::ApiId::name, ::vramtrace::fn::name>()

// Remembers the handle a program used to look up a driver symbol (a dlopen'ed libcuda).
void note_driver_handle(void *handle);
// The driver's handle, or nullptr when libcuda is not loaded.
void *driver_handle();
// Looks up any symbol of the loaded driver (not only wrapped ones), nullptr when absent.
void *driver_symbol(const char *name);
// The same, kept in `slot` once found (absence is not cached: the driver may be loaded later).
void *cached_driver_symbol(std::atomic<void *> &slot, const char *name);

// Helpers that ask the driver; never called while holding any lock.
int current_device_ordinal();   // the current context's device (current_context.h), kUnknownDevice when none
int pointer_device_ordinal(uint64_t ptr); // cuPointerGetAttribute(DEVICE_ORDINAL), kUnknownDevice
// cuStreamGetDevice of a created stream (not 0, legacy or per-thread), kUnknownDevice when the
// driver has no such function (before 12.8) or refuses the handle.
int stream_device_ordinal(uint64_t stream);
// cuDeviceGetCount, asked once and kept: the devices CUDA_VISIBLE_DEVICES leaves are fixed once
// cuInit has succeeded, so call it only after a successful allocation. 0 when the driver does not
// answer (then callers keep asking the driver per allocation).
int visible_device_count();
uint64_t allocation_size_at(uint64_t ptr); // cuMemGetAddressRange_v2's size, 0 when unknown
// cuDevicePrimaryCtxGetState's `active` for the device (1 or 0), -1 when the driver does not answer.
int primary_context_active(int device);
// The device of a VMM handle's memory (cuMemGetAllocationPropertiesFromHandle's location; the
// host for host memory), kUnknownDevice when the driver does not say.
int handle_device_ordinal(uint64_t handle);
int driver_version();            // cuDriverGetVersion, 0 when not known (cached)
int cached_driver_version();     // the cached value only: makes no CUDA call

} // namespace vramtrace
