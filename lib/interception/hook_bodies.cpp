// Generated from hooks.def: the bodies of every plain allocation and free row. The stream-ordered,
// capture, graph memory node and pool rows are generated in custom_hooks.cpp; rows of kind
// VT_<FAMILY>_CUSTOM are written by hand elsewhere.
#include <type_traits>

#include "device/abi_values.h"
#include "interception/array_size.h"
#include "interception/hook_scope.h"

namespace vramtrace::hooks {
namespace {

using cuda::out;
using cuda::to_u64;

uint64_t pitched_address(const cudaPitchedPtr *p) { return p ? to_u64(p->ptr) : 0; }
uint64_t pitched_bytes(const cudaPitchedPtr *p, const cudaExtent &e) {
    return p ? p->pitch * e.height * (e.depth ? e.depth : 1) : 0;
}

} // namespace

#define VT_ALLOC_BODY(ret, fail, name, kind, params, args, address, size, stream)                   \
    ret name(Reach reach, VT_EXPAND params) {                                                      \
        auto real = VT_REAL(name);                                                                 \
        if (real == nullptr) return fail;                                                          \
        return tracked_alloc(reach, {ApiId::name, MemoryKind::kind, to_u64(stream),                \
                                     triggers::request_before_call<ApiId::name> args},             \
                             [&] { return real args; }, [&] { return to_u64(address); },           \
                             [&] { return to_u64(size); });                                        \
    }
#define VT_FREE_BODY(ret, fail, name, params, args, ptr)                                           \
    ret name(Reach reach, VT_EXPAND params) {                                                      \
        auto real = VT_REAL(name);                                                                 \
        if (real == nullptr) return fail;                                                          \
        return tracked_free(reach, to_u64(ptr), [&] { return real args; });                        \
    }

#define VT_RUNTIME_ALLOC(name, kind, params, args, address, size, stream) \
    VT_ALLOC_BODY(cudaError_t, cuda::kRuntimeUnknown, name, kind, params, args, address, size, stream)
#define VT_RUNTIME_FREE(name, params, args, ptr) \
    VT_FREE_BODY(cudaError_t, cuda::kRuntimeUnknown, name, params, args, ptr)
#define VT_DRIVER_ALLOC(name, kind, params, args, address, size, stream) \
    VT_ALLOC_BODY(CUresult, cuda::kDriverUnknown, name, kind, params, args, address, size, stream)
#define VT_DRIVER_FREE(name, params, args, ptr) \
    VT_FREE_BODY(CUresult, cuda::kDriverUnknown, name, params, args, ptr)
#include "device/hooks.def"

} // namespace vramtrace::hooks
