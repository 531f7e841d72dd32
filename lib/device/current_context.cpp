#include "device/current_context.h"

#include <atomic>

#include "core/log.h"
#include "core/thread_state.h"
#include "core/tracker.h"
#include "device/cuda_abi.h"
#include "device/real_functions.h"
#include "tracking/allocation_record.h"

namespace vramtrace {
namespace {

struct CachedContext {
    uint64_t handle;
    uint64_t epoch;     // ContextRegistry::epoch() when cached
    uint16_t id;
    int16_t device;
    uint32_t entry;     // ThreadState::entries of the read; 0: not to be reused
};
// initial-exec: no allocation and no lock on a new thread's first use (see core/thread_state.h).
thread_local CachedContext t_context __attribute__((tls_model("initial-exec"))) = {0, 0, 0, -2, 0};

std::atomic<void *> g_get_current{nullptr};
std::atomic<void *> g_get_device{nullptr};

ContextInfo from_cache() { return ContextInfo{t_context.id, t_context.device, t_context.handle}; }

} // namespace

ContextInfo current_context() {
    const uint32_t entry = t_thread.depth > 0 ? t_thread.entries : 0;
    if (entry != 0 && t_context.entry == entry) return from_cache();
    auto get_current = reinterpret_cast<CUresult (*)(void **)>(cached_driver_symbol(g_get_current, "cuCtxGetCurrent"));
    void *ctx = nullptr;
    if (get_current == nullptr || get_current(&ctx) != cuda::kSuccess || ctx == nullptr) {
        t_context = {0, 0, 0, kUnknownDevice, entry};
        return from_cache();
    }
    const uint64_t handle = reinterpret_cast<uint64_t>(ctx);
    Tracker *t = tracker();
    const uint64_t epoch = t != nullptr ? t->contexts.epoch() : 0;
    if (handle == t_context.handle && epoch == t_context.epoch && t_context.device != kUnknownDevice) {
        t_context.entry = entry;
        return from_cache();
    }
    int device = kUnknownDevice;
    auto get_device = reinterpret_cast<CUresult (*)(int *)>(cached_driver_symbol(g_get_device, "cuCtxGetDevice"));
    if (get_device == nullptr || get_device(&device) != cuda::kSuccess) device = kUnknownDevice;
    uint16_t id = t != nullptr && device != kUnknownDevice ? t->contexts.id_for(handle, device) : 0;
    if (id == 0 && t != nullptr && t->contexts.full())
        VT_WARN_ONCE("more than %u CUDA context generations: allocations in newer contexts are no longer "
                     "ended by a context teardown (their reset or destroy leaves them listed)",
                     ContextRegistry::kCapacity);
    t_context = {handle, epoch, id, static_cast<int16_t>(device), entry};
    return from_cache();
}

void forget_context_read() { t_context.entry = 0; }

} // namespace vramtrace
