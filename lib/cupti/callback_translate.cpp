// Generated from hooks.def like every preload layer, so that both backends read the same rows:
//   - each driver row's CUPTI parameter struct is declared from the row's parameter list (CUPTI's
//     generated_cuda_meta.h structs have exactly the function's parameters as members, in order;
//     tests/unit/cupti checks this against the real headers by driving us with their structs);
//   - allocation and free rows bind the struct's members to the parameter names and evaluate the
//     row's own address/size expressions; custom rows are written out below.
// Runtime rows have no driver callback: with CUPTI, cudaMalloc is seen as the cuMemAlloc_v2 it makes.
#include "cupti/callback_translate.h"

#include <atomic>
#include <type_traits>

#include <cupti_driver_cbid.h> // ids only: a plain enum, no other CUDA header

#include "device/abi_values.h"
#include "interception/array_size.h"
#include "device/driver_api.h"
#include "triggers/oom_request_size.h"

namespace vramtrace::cupti {
namespace {

// FOR_EACH over at most 8 macro arguments.
#define VT_FE_1(m, a) m(a)
#define VT_FE_2(m, a, ...) m(a) VT_FE_1(m, __VA_ARGS__)
#define VT_FE_3(m, a, ...) m(a) VT_FE_2(m, __VA_ARGS__)
#define VT_FE_4(m, a, ...) m(a) VT_FE_3(m, __VA_ARGS__)
#define VT_FE_5(m, a, ...) m(a) VT_FE_4(m, __VA_ARGS__)
#define VT_FE_6(m, a, ...) m(a) VT_FE_5(m, __VA_ARGS__)
#define VT_FE_7(m, a, ...) m(a) VT_FE_6(m, __VA_ARGS__)
#define VT_FE_8(m, a, ...) m(a) VT_FE_7(m, __VA_ARGS__)
#define VT_FE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define VT_FOR_EACH(m, ...) \
    VT_FE_PICK(__VA_ARGS__, VT_FE_8, VT_FE_7, VT_FE_6, VT_FE_5, VT_FE_4, VT_FE_3, VT_FE_2, VT_FE_1)(m, __VA_ARGS__)

#define VT_FIELD(decl) decl;
#define VT_BIND(name) [[maybe_unused]] auto name = vt_params_->name;

// The parameter struct of every driver row: params::cuMemAlloc_v2 is { CUdeviceptr *dptr; size_t bytesize; }.
namespace params {
#define VT_DRIVER_HOOK(name, ps, args) \
    struct name {                      \
        VT_FOR_EACH(VT_FIELD, VT_EXPAND ps)  \
    };
#include "device/hooks.def"
} // namespace params

// The names hooks.def's expressions use, as in the preload hooks (interception/hook_bodies.cpp).
using cuda::out;
using cuda::to_u64;

// Captures begun and not yet ended (as custom_hooks.cpp counts them): while none is active, no
// stream-ordered call needs the driver's capture status.
std::atomic<int64_t> g_active_captures{0};

struct Row {
    uint8_t api;
    MemoryKind kind;
    uint64_t stream;
    uint64_t failed_request; // triggers::kRequestFromSize: the size expression
};

// An allocation row at its exit (tracked_alloc's work after the real call).
template <class Address, class Size, class Device>
void alloc_exit(const Event &ev, Sink &sink, const Row &row, Address &&address, Size &&size, Device &&device) {
    if (ev.site != Site::Exit || !sink.active()) return;
    if (ev.result == cuda::kSuccess) {
        uint64_t ptr = address();
        if (ptr == 0) return;
        NewAllocation a;
        a.api = row.api;
        a.kind = row.kind;
        a.address = ptr;
        a.size = size();
        a.stream = row.stream;
        a.device = device(ptr);
        a.stack = sink.capture_stack();
        sink.record(a);
    } else if (ev.result == cuda::kDriverOutOfMemory) {
        uint64_t requested = row.failed_request != triggers::kRequestFromSize ? row.failed_request : size();
        sink.out_of_memory(row.api, device(0), requested, row.stream, sink.capture_stack(), ev.result);
    }
}

template <class Address, class Size>
void alloc_exit(const Event &ev, Sink &sink, const Row &row, Address &&address, Size &&size) {
    alloc_exit(ev, sink, row, address, size, [&](uint64_t ptr) { return sink.device_of(row.kind, ptr); });
}

// A free row: the record leaves the table at entry and is settled at exit (tracked_free).
void free_call(const Event &ev, Sink &sink, uint64_t address) {
    if (ev.correlation == nullptr) return;
    if (ev.site == Site::Enter) {
        *ev.correlation = address != 0 && sink.active() ? sink.take(address) : 0;
    } else if (*ev.correlation != 0) {
        sink.finish_free(*ev.correlation, ev.result == cuda::kSuccess);
        *ev.correlation = 0;
    }
}

int vmm_device(const CUmemAllocationProp *prop) {
    if (prop == nullptr) return kUnknownDevice;
    auto *prefix = reinterpret_cast<const cuda::CUmemAllocationPropPrefix *>(prop);
    return prefix->location.type == cuda::kMemLocationTypeDevice ? prefix->location.id : kHostDevice;
}

int pool_device(const void *props) {
    auto *p = static_cast<const cuda::CUmemPoolPropsPrefix *>(props);
    return p && p->location.type == cuda::kMemLocationTypeDevice ? p->location.id : kUnknownDevice;
}

bool capture_possible() { return g_active_captures.load(std::memory_order_relaxed) > 0; }

// Stream-ordered allocation (custom_hooks.cpp's stream_alloc): on a capturing stream it is a graph
// memory node of the capture's graph, not counted.
template <class P> void stream_alloc(const Event &ev, Sink &sink, ApiId api, bool per_thread, uint64_t pool) {
    const auto *p = static_cast<const P *>(ev.params);
    uint64_t stream = to_u64(p->hStream);
    Row row{static_cast<uint8_t>(api), MemoryKind::Device, stream, triggers::kRequestFromSize};
    alloc_exit(
        ev, sink, row,
        [&] {
            uint64_t graph = 0;
            if (capture_possible() && sink.capturing(stream, per_thread, &graph)) {
                row.kind = MemoryKind::GraphPool;
                row.stream = graph;
            }
            return out(p->dptr);
        },
        [&] { return static_cast<uint64_t>(p->bytesize); },
        [&](uint64_t ptr) {
            // As the preload hooks (custom_hooks.cpp's stream_alloc): the stream's device, unless a
            // pool argument or a capture makes the pointer the one safe and right answer.
            bool by_pointer = pool != 0 || row.kind == MemoryKind::GraphPool || capture_possible();
            int device = sink.stream_alloc_device(stream, by_pointer, ptr);
            if (ptr != 0) {
                if (row.kind == MemoryKind::GraphPool) sink.graph_memory_used(device);
                else if (pool == 0) sink.default_pool_used(device);
            }
            return device;
        });
    if (ev.site == Site::Exit && ev.result == cuda::kSuccess && pool != 0 && sink.active()) sink.pool_used(pool);
}

template <class P> void stream_free(const Event &ev, Sink &sink, bool per_thread) {
    const auto *p = static_cast<const P *>(ev.params);
    uint64_t graph = 0;
    // A free issued during capture becomes a free node: it frees nothing now.
    if (ev.site == Site::Enter && capture_possible() && sink.active() &&
        sink.capturing(to_u64(p->hStream), per_thread, &graph)) {
        if (ev.correlation) *ev.correlation = 0;
        return;
    }
    free_call(ev, sink, to_u64(p->dptr));
}

// A call whose records leave at entry and are settled at exit (free_call's shape), for the
// lifetimes the driver ends without a free per allocation.
template <class Take> void taken_call(const Event &ev, Sink &sink, Take &&take) {
    if (ev.correlation == nullptr) return;
    if (ev.site == Site::Enter) {
        *ev.correlation = sink.active() ? take() : 0;
    } else if (*ev.correlation != 0) {
        sink.finish_free(*ev.correlation, ev.result == cuda::kSuccess);
        *ev.correlation = 0;
    }
}

bool succeeded_exit(const Event &ev, Sink &sink) {
    return ev.site == Site::Exit && ev.result == cuda::kSuccess && sink.active();
}

// cuCtxCreate_v2/_v3/_v4: the new context and its device, once the call succeeded.
template <class P> void note_context_created(const Event &ev, Sink &sink) {
    const auto *p = static_cast<const P *>(ev.params);
    if (succeeded_exit(ev, sink) && p->pctx != nullptr) sink.context_created(to_u64(*p->pctx), p->dev);
}

void capture_begun(const Event &ev) {
    if (ev.site == Site::Exit && ev.result == cuda::kSuccess) g_active_captures.fetch_add(1, std::memory_order_relaxed);
}

void capture_ended(const Event &ev) {
    // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901) ends the capture too.
    if (ev.site != Site::Exit || (ev.result != cuda::kSuccess && ev.result != 901)) return;
    int64_t n = g_active_captures.load(std::memory_order_relaxed);
    while (n > 0 && !g_active_captures.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) {
    }
}

#define VT_CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

// The custom rows this backend follows (the rest, cuGetProcAddress*, only matter to the preload).
#define VT_CUPTI_CUSTOM_ROWS(X)                                                                    \
    X(cuMemAllocAsync) X(cuMemAllocAsync_ptsz) X(cuMemFreeAsync) X(cuMemFreeAsync_ptsz)             \
    X(cuMemAllocFromPoolAsync) X(cuMemAllocFromPoolAsync_ptsz) X(cuMemCreate) X(cuMemMap)           \
    X(cuGraphAddMemAllocNode) X(cuGraphDestroy) X(cuMemPoolCreate) X(cuMemPoolDestroy)              \
    X(cuStreamBeginCapture) X(cuStreamBeginCapture_ptsz) X(cuStreamBeginCapture_v2)                 \
    X(cuStreamBeginCapture_v2_ptsz) X(cuStreamBeginCaptureToGraph) X(cuStreamBeginCaptureToGraph_ptsz) \
    X(cuStreamEndCapture) X(cuStreamEndCapture_ptsz)                                                \
    X(cuMemRelease) X(cuMemUnmap) X(cuMemRetainAllocationHandle) X(cuMemImportFromShareableHandle)   \
    X(cuCtxCreate_v2) X(cuCtxCreate_v3) X(cuCtxCreate_v4) X(cuCtxDestroy) X(cuCtxDestroy_v2)        \
    X(cuDevicePrimaryCtxReset) X(cuDevicePrimaryCtxReset_v2) X(cuDevicePrimaryCtxRelease)           \
    X(cuDevicePrimaryCtxRelease_v2) X(cuGraphInstantiateWithFlags) X(cuGraphInstantiateWithParams)  \
    X(cuGraphInstantiateWithParams_ptsz) X(cuGraphUpload) X(cuGraphUpload_ptsz) X(cuGraphExecDestroy) \
    X(cuDeviceGraphMemTrim)

struct IdName {
    uint32_t cbid;
    const char *name;
};
const IdName kSubscribed[] = {
#define VT_DRIVER_ALLOC(name, kind, ps, args, address, size, stream) {VT_CBID(name), #name},
#define VT_DRIVER_FREE(name, ps, args, ptr) {VT_CBID(name), #name},
#include "device/hooks.def"
#define VT_CUSTOM_ENTRY(name) {VT_CBID(name), #name},
    VT_CUPTI_CUSTOM_ROWS(VT_CUSTOM_ENTRY)
#undef VT_CUSTOM_ENTRY
};

} // namespace

void translate(const Event &ev, Sink &sink) {
    if (ev.params == nullptr) return;
    // hooks.def's IPC rows take their size from the driver.
    [[maybe_unused]] auto allocation_size_at = [&](uint64_t a) { return sink.range_size(a); };
    switch (ev.cbid) {
#define VT_DRIVER_ALLOC(name, kind, ps, args, address, size, stream)                                 \
    case VT_CBID(name): {                                                                             \
        if (ev.site != Site::Exit) return;                                                            \
        const auto *vt_params_ = static_cast<const params::name *>(ev.params);                        \
        VT_FOR_EACH(VT_BIND, VT_EXPAND args)                                                          \
        alloc_exit(ev, sink,                                                                          \
                   Row{static_cast<uint8_t>(ApiId::name), MemoryKind::kind, to_u64(stream),           \
                       triggers::request_before_call<ApiId::name> args},                             \
                   [&] { return to_u64(address); }, [&] { return to_u64(size); });                    \
        return;                                                                                       \
    }
#define VT_DRIVER_FREE(name, ps, args, ptr)                                                           \
    case VT_CBID(name): {                                                                             \
        const auto *vt_params_ = static_cast<const params::name *>(ev.params);                        \
        VT_FOR_EACH(VT_BIND, VT_EXPAND args)                                                          \
        free_call(ev, sink, to_u64(ptr));                                                             \
        return;                                                                                       \
    }
#include "device/hooks.def"

    case VT_CBID(cuMemAllocAsync): return stream_alloc<params::cuMemAllocAsync>(ev, sink, ApiId::cuMemAllocAsync, false, 0);
    case VT_CBID(cuMemAllocAsync_ptsz):
        return stream_alloc<params::cuMemAllocAsync_ptsz>(ev, sink, ApiId::cuMemAllocAsync_ptsz, true, 0);
    case VT_CBID(cuMemAllocFromPoolAsync): {
        auto *p = static_cast<const params::cuMemAllocFromPoolAsync *>(ev.params);
        return stream_alloc<params::cuMemAllocFromPoolAsync>(ev, sink, ApiId::cuMemAllocFromPoolAsync, false,
                                                             to_u64(p->pool));
    }
    case VT_CBID(cuMemAllocFromPoolAsync_ptsz): {
        auto *p = static_cast<const params::cuMemAllocFromPoolAsync_ptsz *>(ev.params);
        return stream_alloc<params::cuMemAllocFromPoolAsync_ptsz>(ev, sink, ApiId::cuMemAllocFromPoolAsync_ptsz,
                                                                  true, to_u64(p->pool));
    }
    case VT_CBID(cuMemFreeAsync): return stream_free<params::cuMemFreeAsync>(ev, sink, false);
    case VT_CBID(cuMemFreeAsync_ptsz): return stream_free<params::cuMemFreeAsync_ptsz>(ev, sink, true);

    case VT_CBID(cuMemCreate): {
        auto *p = static_cast<const params::cuMemCreate *>(ev.params);
        return alloc_exit(
            ev, sink, Row{static_cast<uint8_t>(ApiId::cuMemCreate), MemoryKind::VmmPhysical, 0, triggers::kRequestFromSize},
            [&] { return out(p->handle); }, [&] { return static_cast<uint64_t>(p->size); },
            [&](uint64_t) { return vmm_device(p->prop); });
    }
    case VT_CBID(cuMemMap): {
        auto *p = static_cast<const params::cuMemMap *>(ev.params);
        return alloc_exit(
            ev, sink, Row{static_cast<uint8_t>(ApiId::cuMemMap), MemoryKind::VmmMapping, p->handle, triggers::kRequestFromSize},
            [&] {
                sink.vmm_mapped(p->handle, p->size);
                return to_u64(p->ptr);
            },
            [&] { return static_cast<uint64_t>(p->size); }, [&](uint64_t) { return sink.recorded_device(p->handle); });
    }
    case VT_CBID(cuMemRelease): {
        auto *p = static_cast<const params::cuMemRelease *>(ev.params);
        return taken_call(ev, sink, [&] { return p->handle != 0 ? sink.take_release(p->handle) : 0; });
    }
    case VT_CBID(cuMemUnmap): {
        auto *p = static_cast<const params::cuMemUnmap *>(ev.params);
        return taken_call(ev, sink, [&] { return p->ptr != 0 ? sink.take_unmap(p->ptr, p->size) : 0; });
    }
    case VT_CBID(cuMemRetainAllocationHandle): {
        auto *p = static_cast<const params::cuMemRetainAllocationHandle *>(ev.params);
        if (succeeded_exit(ev, sink) && p->handle != nullptr) sink.vmm_retained(*p->handle);
        return;
    }
    case VT_CBID(cuMemImportFromShareableHandle): {
        auto *p = static_cast<const params::cuMemImportFromShareableHandle *>(ev.params);
        return alloc_exit(
            ev, sink,
            Row{static_cast<uint8_t>(ApiId::cuMemImportFromShareableHandle), MemoryKind::VmmImported, 0,
                triggers::kRequestFromSize},
            [&] { return out(p->handle); }, [&] { return uint64_t{0}; },
            [&](uint64_t h) { return sink.device_of(MemoryKind::VmmImported, h); });
    }
    case VT_CBID(cuCtxCreate_v2): return note_context_created<params::cuCtxCreate_v2>(ev, sink);
    case VT_CBID(cuCtxCreate_v3): return note_context_created<params::cuCtxCreate_v3>(ev, sink);
    case VT_CBID(cuCtxCreate_v4): return note_context_created<params::cuCtxCreate_v4>(ev, sink);
    case VT_CBID(cuCtxDestroy): {
        auto *p = static_cast<const params::cuCtxDestroy *>(ev.params);
        return taken_call(ev, sink, [&] { return sink.take_context(uint8_t(ApiId::cuCtxDestroy), to_u64(p->ctx)); });
    }
    case VT_CBID(cuCtxDestroy_v2): {
        auto *p = static_cast<const params::cuCtxDestroy_v2 *>(ev.params);
        return taken_call(ev, sink, [&] { return sink.take_context(uint8_t(ApiId::cuCtxDestroy_v2), to_u64(p->ctx)); });
    }
    case VT_CBID(cuDevicePrimaryCtxReset): {
        auto *p = static_cast<const params::cuDevicePrimaryCtxReset *>(ev.params);
        return taken_call(ev, sink, [&] { return sink.take_primary(uint8_t(ApiId::cuDevicePrimaryCtxReset), p->dev); });
    }
    case VT_CBID(cuDevicePrimaryCtxReset_v2): {
        auto *p = static_cast<const params::cuDevicePrimaryCtxReset_v2 *>(ev.params);
        return taken_call(ev, sink,
                          [&] { return sink.take_primary(uint8_t(ApiId::cuDevicePrimaryCtxReset_v2), p->dev); });
    }
    case VT_CBID(cuDevicePrimaryCtxRelease): {
        auto *p = static_cast<const params::cuDevicePrimaryCtxRelease *>(ev.params);
        return taken_call(ev, sink,
                          [&] { return sink.take_primary_release(uint8_t(ApiId::cuDevicePrimaryCtxRelease), p->dev); });
    }
    case VT_CBID(cuDevicePrimaryCtxRelease_v2): {
        auto *p = static_cast<const params::cuDevicePrimaryCtxRelease_v2 *>(ev.params);
        return taken_call(
            ev, sink, [&] { return sink.take_primary_release(uint8_t(ApiId::cuDevicePrimaryCtxRelease_v2), p->dev); });
    }
    case VT_CBID(cuGraphInstantiateWithFlags):
    case VT_CBID(cuGraphInstantiateWithParams):
    case VT_CBID(cuGraphInstantiateWithParams_ptsz):
    case VT_CBID(cuGraphUpload):
    case VT_CBID(cuGraphUpload_ptsz):
    case VT_CBID(cuGraphExecDestroy):
    case VT_CBID(cuDeviceGraphMemTrim):
        if (succeeded_exit(ev, sink)) sink.graph_memory_changed();
        return;
    case VT_CBID(cuGraphAddMemAllocNode): {
        auto *p = static_cast<const params::cuGraphAddMemAllocNode *>(ev.params);
        auto *node = reinterpret_cast<const cuda::MemAllocNodeParams *>(p->nodeParams);
        return alloc_exit(
            ev, sink,
            Row{static_cast<uint8_t>(ApiId::cuGraphAddMemAllocNode), MemoryKind::GraphPool, to_u64(p->hGraph),
                triggers::kRequestFromSize},
            [&] { return node ? node->dptr : 0; }, [&] { return node ? static_cast<uint64_t>(node->bytesize) : 0; },
            [&](uint64_t) {
                int device = node && node->poolProps.location.type == cuda::kMemLocationTypeDevice
                                 ? node->poolProps.location.id
                                 : kUnknownDevice;
                sink.graph_memory_used(device);
                return device;
            });
    }
    case VT_CBID(cuGraphDestroy): {
        auto *p = static_cast<const params::cuGraphDestroy *>(ev.params);
        return taken_call(ev, sink, [&] { return p->hGraph != nullptr ? sink.take_graph(to_u64(p->hGraph)) : 0; });
    }
    case VT_CBID(cuMemPoolCreate): {
        auto *p = static_cast<const params::cuMemPoolCreate *>(ev.params);
        if (ev.site == Site::Exit && ev.result == cuda::kSuccess && p->pool != nullptr && sink.active())
            sink.pool_created(to_u64(*p->pool), pool_device(p->poolProps));
        return;
    }
    case VT_CBID(cuMemPoolDestroy): {
        auto *p = static_cast<const params::cuMemPoolDestroy *>(ev.params);
        if (ev.site == Site::Exit && ev.result == cuda::kSuccess && sink.active()) sink.pool_destroyed(to_u64(p->pool));
        return;
    }
    case VT_CBID(cuStreamBeginCapture):
    case VT_CBID(cuStreamBeginCapture_ptsz):
    case VT_CBID(cuStreamBeginCapture_v2):
    case VT_CBID(cuStreamBeginCapture_v2_ptsz):
    case VT_CBID(cuStreamBeginCaptureToGraph):
    case VT_CBID(cuStreamBeginCaptureToGraph_ptsz): return capture_begun(ev);
    case VT_CBID(cuStreamEndCapture):
    case VT_CBID(cuStreamEndCapture_ptsz): return capture_ended(ev);
    default: return;
    }
}

size_t subscribed_callbacks(uint32_t *out_ids, size_t capacity) {
    size_t n = sizeof(kSubscribed) / sizeof(kSubscribed[0]);
    for (size_t i = 0; i < n && i < capacity; ++i) out_ids[i] = kSubscribed[i].cbid;
    return n;
}

const char *row_name(uint8_t api) {
    static const char *const kNames[] = {
        "none",
#define VT_RUNTIME_HOOK(name, ps, args) #name,
#define VT_DRIVER_HOOK(name, ps, args) #name,
#include "device/hooks.def"
    };
    return api < sizeof kNames / sizeof kNames[0] ? kNames[api] : "unknown";
}

const char *callback_name(uint32_t cbid) {
    for (const IdName &e : kSubscribed)
        if (e.cbid == cbid) return e.name;
    return nullptr;
}

} // namespace vramtrace::cupti
