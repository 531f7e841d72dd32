// Contexts and their teardown. Created contexts (cuCtxCreate*, cuCtxDestroy*), the per-thread
// context stack (cuCtxPushCurrent*, cuCtxPopCurrent*), and the primary context's reset and last
// release. A teardown ends what the context owns, as measured on an H200 (driver 580, CUDA 13):
// device, pitched, legacy, managed and pinned host memory, registrations, IPC imports and CUDA
// arrays; it leaves stream-ordered, VMM and graph memory alone. Ended memory is not given back to
// the host: it goes to its device's rewind list, so the next allocations of the same kind and size
// get the same addresses back, in their original order (what an interposer has to tell apart).
// A primary context keeps its CUcontext value across resets and releases.
#include "driver_internal.h"
#include "cupti_hooks.h"

#include <algorithm>

namespace sd = standin_driver;

namespace standin_driver {

std::size_t end_context_allocations(Context* ctx) {
  State& st = state();
  std::vector<std::pair<std::uintptr_t, Allocation>> ended;
  std::vector<std::pair<std::uintptr_t, Allocation>> imports;
  std::size_t count = 0;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    for (auto it = st.allocations.begin(); it != st.allocations.end();) {
      const Allocation& a = it->second;
      if (a.context != ctx || (kContextOwnedKinds & kind_bit(a.kind)) == 0) {
        ++it;
        continue;
      }
      if (a.kind == MemKind::ipc_import) {
        imports.emplace_back(it->first, a);
      } else if ((kRewindKinds & kind_bit(a.kind)) != 0) {
        if (a.kind != MemKind::host_pinned) st.used[static_cast<std::size_t>(a.device)] -= a.size;
        ended.emplace_back(it->first, a);
      }  // host_registered: the memory is the program's; only the record goes
      it = st.allocations.erase(it);
      ++count;
    }
    std::sort(ended.begin(), ended.end(),
              [](const auto& x, const auto& y) { return x.second.serial < y.second.serial; });
    for (const auto& [address, a] : ended) {
      st.rewind[static_cast<std::size_t>(a.device)].push_back(Rewound{address, a.size, a.kind});
    }
    count += end_context_arrays(st, ctx);
  }
  for (const auto& [address, a] : imports) unmap_import(address, a);
  return count;
}

namespace {

CUresult create_context(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (pctx == nullptr || (flags & ~static_cast<unsigned>(CU_CTX_FLAGS_MASK)) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  auto* c = new Context();  // never freed (see Context)
  c->magic = kContextMagic;
  c->device = dev;
  c->retain_count = 0;
  c->flags = flags;
  {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    st.created.insert(c);
  }
  if (!push_context(c)) {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    st.created.erase(c);
    c->destroyed.store(true, std::memory_order_release);
    st.retired.push_back(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *pctx = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

// A primary context, or one destroyed already: CUDA_ERROR_INVALID_CONTEXT.
CUresult destroy_context(CUcontext ctx, std::size_t* ended) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  auto* c = reinterpret_cast<Context*>(ctx);
  {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    if (ctx == nullptr || st.created.erase(c) == 0) return CUDA_ERROR_INVALID_CONTEXT;
    c->destroyed.store(true, std::memory_order_release);
    st.retired.push_back(c);
  }
  forget_context_on_thread(c);
  *ended = end_context_allocations(c);
  return CUDA_SUCCESS;
}

CUresult push_current(CUcontext ctx) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  Context* c = context_from_handle(ctx);
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  return push_context(c) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult pop_current(CUcontext* pctx) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  Context* c = pop_context();
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx != nullptr) *pctx = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

Context* primary(CUdevice dev) { return &state().contexts[static_cast<std::size_t>(dev)]; }

// A reset ends the allocations and keeps the retain count.
CUresult primary_reset(CUdevice dev, std::size_t* ended) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *ended = end_context_allocations(primary(dev));
  return CUDA_SUCCESS;
}

// The release that brings the retain count to 0 ends the allocations.
CUresult primary_release(CUdevice dev, std::size_t* ended) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  bool last = false;
  {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    Context& c = *primary(dev);
    if (c.retain_count == 0) return CUDA_ERROR_INVALID_CONTEXT;
    last = --c.retain_count == 0;
  }
  if (last) *ended = end_context_allocations(primary(dev));
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace standin_driver

using sd::traced;

// ---- created contexts ----

STANDIN_CU_API CUresult CUDAAPI cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  STANDIN_API_CALL(cuCtxCreate_v2, pctx, flags, dev);
  CUresult r = sd::create_context(pctx, flags, dev);
  return standin_api_call_.done(traced(r, "cuCtxCreate_v2(flags=%u, dev=%d) ctx=%p", flags, dev,
                                       r == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr));
}

// Legacy (CUDA 2.0) entry point: same ABI.
STANDIN_CU_API CUresult CUDAAPI cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  CUresult r = sd::create_context(pctx, flags, dev);
  return traced(r, "cuCtxCreate(flags=%u, dev=%d) ctx=%p", flags, dev,
                r == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr);
}

// Execution affinity is accepted and not modelled.
STANDIN_CU_API CUresult CUDAAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                               unsigned int flags, CUdevice dev) {
  STANDIN_API_CALL(cuCtxCreate_v3, pctx, paramsArray, numParams, flags, dev);
  CUresult r = numParams < 0 || (numParams > 0 && paramsArray == nullptr) ? CUDA_ERROR_INVALID_VALUE
                                                                          : sd::create_context(pctx, flags, dev);
  return standin_api_call_.done(traced(r, "cuCtxCreate_v3(numParams=%d, flags=%u, dev=%d) ctx=%p", numParams, flags,
                                       dev, r == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr));
}

// ctxCreateParams may be NULL; CIG (cigParams) is not supported here.
STANDIN_CU_API CUresult CUDAAPI cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* ctxCreateParams,
                                               unsigned int flags, CUdevice dev) {
  STANDIN_API_CALL(cuCtxCreate_v4, pctx, ctxCreateParams, flags, dev);
  CUresult r = CUDA_SUCCESS;
  if (ctxCreateParams != nullptr && ctxCreateParams->cigParams != nullptr) {
    r = CUDA_ERROR_NOT_SUPPORTED;
  } else if (ctxCreateParams != nullptr && (ctxCreateParams->numExecAffinityParams < 0 ||
                                            (ctxCreateParams->numExecAffinityParams > 0 &&
                                             ctxCreateParams->execAffinityParams == nullptr))) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    r = sd::create_context(pctx, flags, dev);
  }
  return standin_api_call_.done(traced(r, "cuCtxCreate_v4(flags=%u, dev=%d) ctx=%p", flags, dev,
                                       r == CUDA_SUCCESS ? static_cast<void*>(*pctx) : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx) {
  STANDIN_API_CALL(cuCtxDestroy_v2, ctx);
  std::size_t ended = 0;
  CUresult r = sd::destroy_context(ctx, &ended);
  return standin_api_call_.done(traced(r, "cuCtxDestroy_v2(%p) ended=%zu", static_cast<void*>(ctx), ended));
}

STANDIN_CU_API CUresult CUDAAPI cuCtxDestroy(CUcontext ctx) {
  STANDIN_API_CALL(cuCtxDestroy, ctx);
  std::size_t ended = 0;
  CUresult r = sd::destroy_context(ctx, &ended);
  return standin_api_call_.done(traced(r, "cuCtxDestroy(%p) ended=%zu", static_cast<void*>(ctx), ended));
}

// ---- the context stack ----

STANDIN_CU_API CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) {
  return traced(sd::push_current(ctx), "cuCtxPushCurrent_v2(%p)", static_cast<void*>(ctx));
}

STANDIN_CU_API CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  return traced(sd::push_current(ctx), "cuCtxPushCurrent(%p)", static_cast<void*>(ctx));
}

STANDIN_CU_API CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext* pctx) {
  CUcontext c = nullptr;
  CUresult r = sd::pop_current(&c);
  if (r == CUDA_SUCCESS && pctx != nullptr) *pctx = c;
  return traced(r, "cuCtxPopCurrent_v2() ctx=%p", static_cast<void*>(c));
}

STANDIN_CU_API CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) {
  CUcontext c = nullptr;
  CUresult r = sd::pop_current(&c);
  if (r == CUDA_SUCCESS && pctx != nullptr) *pctx = c;
  return traced(r, "cuCtxPopCurrent() ctx=%p", static_cast<void*>(c));
}

// 3020 for every context, the ABI generation NVIDIA's driver reports.
STANDIN_CU_API CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (version == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if ((ctx == nullptr ? sd::current_context() : sd::context_from_handle(ctx)) == nullptr) {
    r = CUDA_ERROR_INVALID_CONTEXT;
  } else {
    *version = 3020;
  }
  return traced(r, "cuCtxGetApiVersion(%p) version=%u", static_cast<void*>(ctx), r == CUDA_SUCCESS ? *version : 0);
}

// ---- primary contexts ----

STANDIN_CU_API CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  STANDIN_API_CALL(cuDevicePrimaryCtxRelease_v2, dev);
  std::size_t ended = 0;
  CUresult r = sd::primary_release(dev, &ended);
  return standin_api_call_.done(traced(r, "cuDevicePrimaryCtxRelease_v2(dev=%d) ended=%zu", dev, ended));
}

STANDIN_CU_API CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  STANDIN_API_CALL(cuDevicePrimaryCtxRelease, dev);
  std::size_t ended = 0;
  CUresult r = sd::primary_release(dev, &ended);
  return standin_api_call_.done(traced(r, "cuDevicePrimaryCtxRelease(dev=%d) ended=%zu", dev, ended));
}

STANDIN_CU_API CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  STANDIN_API_CALL(cuDevicePrimaryCtxReset_v2, dev);
  std::size_t ended = 0;
  CUresult r = sd::primary_reset(dev, &ended);
  return standin_api_call_.done(traced(r, "cuDevicePrimaryCtxReset_v2(dev=%d) ended=%zu", dev, ended));
}

STANDIN_CU_API CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) {
  STANDIN_API_CALL(cuDevicePrimaryCtxReset, dev);
  std::size_t ended = 0;
  CUresult r = sd::primary_reset(dev, &ended);
  return standin_api_call_.done(traced(r, "cuDevicePrimaryCtxReset(dev=%d) ended=%zu", dev, ended));
}

STANDIN_CU_API CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (flags == nullptr || active == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(dev)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    const sd::Context& c = st.contexts[static_cast<std::size_t>(dev)];
    *flags = c.flags;
    *active = c.retain_count > 0 ? 1 : 0;
  }
  return traced(r, "cuDevicePrimaryCtxGetState(dev=%d) active=%d", dev, r == CUDA_SUCCESS ? *active : -1);
}
