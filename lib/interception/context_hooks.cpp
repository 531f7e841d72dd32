// Contexts as owners of allocations: cuCtxCreate* registers a created context; a reset or a
// destroy ends the records of the context it tears down, taken out before the call and put back
// if it fails; a primary context release ends them when the driver says afterwards that the
// primary context is no longer active (its last retain was released). Nothing is ended while the
// process exits (process_exiting): the exit report lists what the program left live.
#include <vector>

#include "device/abi_values.h"
#include "interception/context_teardown.h"
#include "interception/hook_scope.h"

namespace vramtrace {
namespace {

using cuda::to_u64;

template <class Call> CUresult context_created(Reach reach, CUcontext *pctx, CUdevice dev, Call &&call) {
    CUresult rc = call();
    if (rc == cuda::kSuccess && pctx != nullptr && *pctx != nullptr)
        if (Tracker *t = tracker_for(reach)) t->contexts.note_created(to_u64(*pctx), dev);
    return rc;
}

// Tears down the context generations `ids` around the real call. They are superseded first, so that
// whatever is allocated from then on (in the context's next generation) gets ids of its own.
template <class Call>
CUresult teardown(Tracker &t, const std::vector<uint16_t> &ids, TeardownCause cause, ApiId api, int device,
                  Call &&call) {
    ReentrancyGuard guard;
    int saved_errno = errno;
    t.contexts.supersede(ids.data(), static_cast<uint32_t>(ids.size()));
    std::vector<AllocationRecord> taken = take_context_records(t, ids);
    errno = saved_errno;
    CUresult rc = call();
    int call_errno = errno;
    if (rc == cuda::kSuccess) end_context_records(t, taken, ids, cause, static_cast<uint8_t>(api), device);
    else restore_context_records(t, taken);
    errno = call_errno;
    return rc;
}

Tracker *teardown_tracker(Reach reach) {
    if (process_exiting()) return nullptr;
    return tracker_for(reach);
}

template <class Call> CUresult context_destroyed(Reach reach, ApiId api, CUcontext ctx, Call &&call) {
    Tracker *t = teardown_tracker(reach);
    if (t == nullptr || ctx == nullptr) return call();
    std::vector<uint16_t> ids = live_context_ids(*t, to_u64(ctx));
    if (ids.empty()) return call();
    return teardown(*t, ids, TeardownCause::Destroy, api, t->contexts.device_of(ids.front()), call);
}

template <class Call> CUresult primary_reset(Reach reach, ApiId api, CUdevice dev, Call &&call) {
    Tracker *t = teardown_tracker(reach);
    if (t == nullptr) return call();
    std::vector<uint16_t> ids = live_primary_ids(*t, dev);
    if (ids.empty()) return call(); // nothing was ever allocated in it: nothing to end or log
    return teardown(*t, ids, TeardownCause::Reset, api, dev, call);
}

// Only after the call is it known whether this release was the last: then the records of the ids
// the context had before the call are taken out after the fact. Those ids are superseded before
// the call, so that an allocation made meanwhile by a thread that retains the primary context again
// (its next generation) is recorded under a fresh id and is not ended with them. (A release that
// turns out not to be the last leaves them superseded: they still name the context's records for
// its next teardown. Past half of the registry's capacity they are no longer superseded, so that a
// program releasing in a loop cannot use it up; then an allocation in that moment would be ended
// with the old generation.)
template <class Call> CUresult primary_released(Reach reach, ApiId api, CUdevice dev, Call &&call) {
    Tracker *t = teardown_tracker(reach);
    if (t == nullptr) return call();
    ReentrancyGuard guard;
    int saved_errno = errno;
    std::vector<uint16_t> ids = live_primary_ids(*t, dev);
    if (!ids.empty() && t->contexts.used() < ContextRegistry::kCapacity / 2)
        t->contexts.supersede(ids.data(), static_cast<uint32_t>(ids.size()));
    errno = saved_errno;
    CUresult rc = call();
    int call_errno = errno;
    if (rc == cuda::kSuccess && !ids.empty() && !process_exiting() && primary_context_active(dev) == 0) {
        std::vector<AllocationRecord> taken = take_context_records(*t, ids);
        end_context_records(*t, taken, ids, TeardownCause::LastRelease, static_cast<uint8_t>(api), dev);
    }
    errno = call_errno;
    return rc;
}

} // namespace

namespace hooks {

#define VT_CONTEXT_HOOK(name, body_fn, params, call_args, ...)   \
    CUresult name(Reach reach, VT_EXPAND params) {               \
        auto real = VT_REAL(name);                               \
        if (real == nullptr) return cuda::kDriverUnknown;        \
        return body_fn(reach, __VA_ARGS__, [&] { return real call_args; }); \
    }

VT_CONTEXT_HOOK(cuCtxCreate_v2, context_created, (CUcontext * pctx, unsigned int flags, CUdevice dev),
                (pctx, flags, dev), pctx, dev)
VT_CONTEXT_HOOK(cuCtxCreate_v3, context_created,
                (CUcontext * pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, CUdevice dev),
                (pctx, paramsArray, numParams, flags, dev), pctx, dev)
VT_CONTEXT_HOOK(cuCtxCreate_v4, context_created,
                (CUcontext * pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev),
                (pctx, ctxCreateParams, flags, dev), pctx, dev)
VT_CONTEXT_HOOK(cuCtxDestroy_v2, context_destroyed, (CUcontext ctx), (ctx), ApiId::cuCtxDestroy_v2, ctx)
VT_CONTEXT_HOOK(cuCtxDestroy, context_destroyed, (CUcontext ctx), (ctx), ApiId::cuCtxDestroy, ctx)
VT_CONTEXT_HOOK(cuDevicePrimaryCtxReset_v2, primary_reset, (CUdevice dev), (dev), ApiId::cuDevicePrimaryCtxReset_v2, dev)
VT_CONTEXT_HOOK(cuDevicePrimaryCtxReset, primary_reset, (CUdevice dev), (dev), ApiId::cuDevicePrimaryCtxReset, dev)
VT_CONTEXT_HOOK(cuDevicePrimaryCtxRelease_v2, primary_released, (CUdevice dev), (dev),
                ApiId::cuDevicePrimaryCtxRelease_v2, dev)
VT_CONTEXT_HOOK(cuDevicePrimaryCtxRelease, primary_released, (CUdevice dev), (dev), ApiId::cuDevicePrimaryCtxRelease,
                dev)

} // namespace hooks
} // namespace vramtrace
