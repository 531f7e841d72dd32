// Hook bodies that need more than an address and a size, generated from their rows of hooks.def:
// stream-ordered calls that may be captured into a graph, stream capture, graph memory nodes, and
// pool creation. (Virtual memory management: vmm_hooks.cpp;
// contexts: context_hooks.cpp; graph memory sampling: graph_hooks.cpp.)
#include <atomic>
#include <type_traits>
#include <vector>

#include "device/abi_values.h"
#include "interception/hook_scope.h"
#include "device/device_info.h"

// ---- Stream-ordered allocations and stream capture ------------------------------------------------
// cuMemAllocAsync & co. issued on a stream that is being captured allocate nothing: they add a
// graph memory node to the capture's graph and return the address it will have when the graph
// runs. After a successful call we ask the driver (its own cuStreamGetCaptureInfo, no lock held)
// whether the stream is capturing; if so the record is GraphPool, keyed by that address, with the
// graph in `stream`, and it is not counted. A free issued during capture becomes a free node and
// frees nothing now, so it changes no record. Stream 0 means the legacy default stream (which
// cannot be captured) for the plain variants, and the per-thread default stream for the _ptsz ones.
namespace vramtrace {
namespace {

// Captures begun (cuStreamBeginCapture*) and not yet ended (cuStreamEndCapture*), counted in the
// hooks' word (core/hot_flags.h). While there are none no stream can be capturing, so the
// per-allocation question to the driver (about 0.5 us on the H200, twice per alloc/free pair) is
// skipped. Counting more than there are is only slower; counting fewer would miss a capture, so an
// end that fails for another reason does not decrement. When an interposition layer is switched
// off, a capture may begin through a path we do not see: then always ask.
template <class Call> CUresult capture_begun(Call &&call) {
    CUresult rc = call();
    if (rc == cuda::kSuccess) hot::capture_begun();
    return rc;
}

template <class Call> CUresult capture_ended(Call &&call) {
    CUresult rc = call();
    // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901) ends the capture too (with no graph).
    if (rc == cuda::kSuccess || rc == 901) hot::capture_ended();
    return rc;
}

std::atomic<void *> g_capture_info_v3{nullptr};
std::atomic<void *> g_capture_info_v2{nullptr};
std::atomic<void *> g_is_capturing{nullptr};

// Whether `stream` is being captured now, when some capture may be active (hot::capture_possible).
bool capturing(uint64_t w, uint64_t stream, bool per_thread, uint64_t *graph) {
    *graph = 0;
    return hot::capture_possible(w) && driver_stream_capturing(stream, per_thread, graph);
}

} // namespace

bool driver_stream_capturing(uint64_t stream, bool per_thread, uint64_t *graph) {
    *graph = 0;
    if (stream == cuda::kStreamLegacy) return false;
    if (stream == 0) {
        if (!per_thread) return false;
        stream = cuda::kStreamPerThread;
    }
    int saved_errno = errno;
    auto s = reinterpret_cast<CUstream>(stream);
    int status = 0;
    unsigned long long id = 0;
    void *g = nullptr;
    bool answered = false;
    using V3 = CUresult (*)(CUstream, int *, unsigned long long *, void **, const void **, const void **, size_t *);
    using V2 = CUresult (*)(CUstream, int *, unsigned long long *, void **, const void **, size_t *);
    using IsCapturing = CUresult (*)(CUstream, int *);
    if (auto v3 = reinterpret_cast<V3>(cached_driver_symbol(g_capture_info_v3, "cuStreamGetCaptureInfo_v3")))
        answered = v3(s, &status, &id, &g, nullptr, nullptr, nullptr) == cuda::kSuccess;
    if (!answered)
        if (auto v2 = reinterpret_cast<V2>(cached_driver_symbol(g_capture_info_v2, "cuStreamGetCaptureInfo_v2")))
            answered = v2(s, &status, &id, &g, nullptr, nullptr) == cuda::kSuccess;
    if (!answered) {
        g = nullptr;
        if (auto is = reinterpret_cast<IsCapturing>(cached_driver_symbol(g_is_capturing, "cuStreamIsCapturing")))
            answered = is(s, &status) == cuda::kSuccess;
    }
    errno = saved_errno;
    if (!answered || status != cuda::kStreamCaptureStatusActive) return false;
    *graph = reinterpret_cast<uint64_t>(g);
    return true;
}

namespace {

// The device of a stream-ordered allocation (address 0: the one that failed for lack of memory). A
// pool argument may name another device's pool: then the pointer says where. On a capturing stream,
// cuStreamGetDevice would invalidate a global-mode capture (seen on the H200: cudaStreamEndCapture
// failed); a global-mode capture forbids unsafe calls from every thread, so while any capture is
// active the pointer is asked.
int stream_allocation_device(uint64_t w, MemoryKind kind, uint64_t stream, uint64_t pool, uint64_t address) {
    bool by_pointer = pool != 0 || kind == MemoryKind::GraphPool || hot::capture_possible(w);
    int device = stream_ordered_device(stream, by_pointer, address);
    if (kind == MemoryKind::GraphPool) note_graph_memory_used(device);
    else if (pool == 0) note_default_pool_used(device);
    return device;
}

// The hook fills the record here, after the real call, and hands it over once (AllocScope).
template <class Call, class Address>
int stream_alloc(Reach reach, ApiId api, uint64_t stream, bool per_thread, uint64_t pool, Call &&call,
                 Address &&address, uint64_t size) {
    int rc;
    if (Tracker *t = tracker_for(reach); t == nullptr) {
        rc = call();
    } else {
        AllocScope scope(*t);
        rc = call();
        scope.after_call();
        const uint64_t w = hot::word(); // after the call: a capture begun meanwhile is counted
        AllocRequest req{api, MemoryKind::Device, stream};
        uint64_t ptr = 0;
        int device = kUnknownDevice;
        if (rc == cuda::kSuccess) {
            uint64_t graph = 0;
            if (capturing(w, stream, per_thread, &graph)) {
                req.kind = MemoryKind::GraphPool;
                req.stream = graph;
            }
            ptr = address();
        }
        // Out of memory: nothing was allocated, ptr stays 0 and the device is where it failed.
        if ((rc == cuda::kSuccess && ptr != 0) || rc == cuda::kDriverOutOfMemory)
            device = stream_allocation_device(w, req.kind, stream, pool, ptr);
        rc = scope.finish(req, rc, ptr, size, device);
    }
    if (rc == cuda::kSuccess && pool != 0) note_pool_used(pool);
    return rc;
}

template <class Call> int stream_free(Reach reach, uint64_t ptr, uint64_t stream, bool per_thread, Call &&call) {
    Tracker *t = ptr != 0 ? tracker_for(reach) : nullptr;
    if (t == nullptr) return call();
    uint64_t graph = 0;
    if (capturing(hot::word(), stream, per_thread, &graph)) return call();
    return tracked_free_in(*t, ptr, call);
}

using cuda::to_u64;
using cuda::out;

} // namespace

// ---- Graph memory nodes -----------------------------------------------------------------------
// cuGraphAddMemAllocNode fixes the node's virtual address when the node is added; the graph's
// memory pool backs it while the graph runs. The record (GraphPool, not counted) lives under that
// address, with the graph in `stream`, until the graph is destroyed or the address is freed
// outside the graph (cuMemFree*, cuMemFreeAsync*: an allocation a graph left unfreed).
namespace {

template <class Call>
int graph_alloc_node(Reach reach, ApiId api, uint64_t graph, cuda::MemAllocNodeParams *params, Call &&call) {
    return tracked_alloc(
        reach, {api, MemoryKind::GraphPool, graph}, call, [&] { return params ? params->dptr : 0; },
        [&] { return params ? static_cast<uint64_t>(params->bytesize) : 0; },
        [&](uint64_t) {
            int device = params ? pool_location_device(&params->poolProps) : kUnknownDevice;
            note_graph_memory_used(device);
            return device;
        });
}

// The graph's records are taken out before the real call (an address it frees may be handed out
// again at once) and put back if the call fails.
template <class Call> int graph_destroy(Reach reach, uint64_t graph, Call &&call) {
    Tracker *t = tracker_for(reach);
    if (t == nullptr || graph == 0) return call();
    ReentrancyGuard guard;
    int saved_errno = errno;
    std::vector<uint64_t> addresses;
    t->table.for_each([&](const AllocationRecord &r) {
        if (r.kind == MemoryKind::GraphPool && r.stream == graph) addresses.push_back(r.address);
    });
    std::vector<AllocationRecord> taken;
    taken.reserve(addresses.size());
    for (uint64_t a : addresses) {
        AllocationRecord r;
        if (take_allocation(*t, a, &r)) taken.push_back(r);
    }
    errno = saved_errno;
    int rc = call();
    int call_errno = errno;
    for (const AllocationRecord &r : taken) {
        if (rc == cuda::kSuccess) account_free(*t, r);
        else restore_allocation(*t, r);
    }
    errno = call_errno;
    return rc;
}

// Pools: remembered (never recorded as allocations) whichever layer sees them first.
template <class Handle, class Props, class Call> int pool_create(Handle *pool, const Props *props, Call &&call) {
    int rc = call();
    if (rc == cuda::kSuccess && pool != nullptr) note_pool_created(to_u64(*pool), pool_location_device(props));
    return rc;
}

template <class Call> int pool_destroy(uint64_t pool, Call &&call) {
    int rc = call();
    if (rc == cuda::kSuccess) note_pool_destroyed(pool);
    return rc;
}

} // namespace

// The bodies of the stream-ordered, capture, graph memory node and pool rows of hooks.def.
namespace hooks {

#define VT_STREAM_ALLOC_BODY(ret, fail, name, params, args, out_ptr, size, stream, pool, per_thread)     \
    ret name(Reach reach, VT_EXPAND params) {                                                          \
        auto real = VT_REAL(name);                                                                     \
        if (real == nullptr) return fail;                                                              \
        return stream_alloc(reach, ApiId::name, to_u64(stream), per_thread, to_u64(pool),              \
                            [&] { return real args; }, [&] { return out(out_ptr); }, size);            \
    }
#define VT_STREAM_FREE_BODY(ret, fail, name, params, args, ptr, stream, per_thread)                     \
    ret name(Reach reach, VT_EXPAND params) {                                                          \
        auto real = VT_REAL(name);                                                                     \
        if (real == nullptr) return fail;                                                              \
        return stream_free(reach, to_u64(ptr), to_u64(stream), per_thread, [&] { return real args; }); \
    }
#define VT_CAPTURE_BODY(counted, name, params, args)                                                   \
    CUresult name(Reach, VT_EXPAND params) {                                                           \
        auto real = VT_REAL(name);                                                                     \
        if (real == nullptr) return cuda::kDriverUnknown;                                              \
        return counted([&] { return real args; });                                                     \
    }
#define VT_GRAPH_MEM_NODE_BODY(ret, fail, name, params, args, graph, node_params)                       \
    ret name(Reach reach, VT_EXPAND params) {                                                          \
        auto real = VT_REAL(name);                                                                     \
        if (real == nullptr) return fail;                                                              \
        return graph_alloc_node(reach, ApiId::name, to_u64(graph), node_params, [&] { return real args; }); \
    }
#define VT_GRAPH_DESTROY_BODY(ret, fail, name, params, args, graph)                                     \
    ret name(Reach reach, VT_EXPAND params) {                                                          \
        auto real = VT_REAL(name);                                                                     \
        if (real == nullptr) return fail;                                                              \
        return graph_destroy(reach, to_u64(graph), [&] { return real args; });                         \
    }
#define VT_POOL_CREATE_BODY(ret, fail, name, params, args, pool_out, props)                             \
    ret name(Reach, VT_EXPAND params) {                                                                \
        auto real = VT_REAL(name);                                                                     \
        if (real == nullptr) return fail;                                                              \
        return pool_create(pool_out, props, [&] { return real args; });                                \
    }
#define VT_POOL_DESTROY_BODY(ret, fail, name, params, args, pool)                                       \
    ret name(Reach, VT_EXPAND params) {                                                                \
        auto real = VT_REAL(name);                                                                     \
        if (real == nullptr) return fail;                                                              \
        return pool_destroy(to_u64(pool), [&] { return real args; });                                  \
    }

#define VT_RUNTIME_STREAM_ALLOC(...) VT_STREAM_ALLOC_BODY(cudaError_t, cuda::kRuntimeUnknown, __VA_ARGS__)
#define VT_DRIVER_STREAM_ALLOC(...) VT_STREAM_ALLOC_BODY(CUresult, cuda::kDriverUnknown, __VA_ARGS__)
#define VT_RUNTIME_STREAM_FREE(...) VT_STREAM_FREE_BODY(cudaError_t, cuda::kRuntimeUnknown, __VA_ARGS__)
#define VT_DRIVER_STREAM_FREE(...) VT_STREAM_FREE_BODY(CUresult, cuda::kDriverUnknown, __VA_ARGS__)
#define VT_DRIVER_CAPTURE_BEGIN(...) VT_CAPTURE_BODY(capture_begun, __VA_ARGS__)
#define VT_DRIVER_CAPTURE_END(...) VT_CAPTURE_BODY(capture_ended, __VA_ARGS__)
#define VT_RUNTIME_GRAPH_MEM_NODE(...) VT_GRAPH_MEM_NODE_BODY(cudaError_t, cuda::kRuntimeUnknown, __VA_ARGS__)
#define VT_DRIVER_GRAPH_MEM_NODE(...) VT_GRAPH_MEM_NODE_BODY(CUresult, cuda::kDriverUnknown, __VA_ARGS__)
#define VT_RUNTIME_GRAPH_DESTROY(...) VT_GRAPH_DESTROY_BODY(cudaError_t, cuda::kRuntimeUnknown, __VA_ARGS__)
#define VT_DRIVER_GRAPH_DESTROY(...) VT_GRAPH_DESTROY_BODY(CUresult, cuda::kDriverUnknown, __VA_ARGS__)
#define VT_RUNTIME_POOL_CREATE(...) VT_POOL_CREATE_BODY(cudaError_t, cuda::kRuntimeUnknown, __VA_ARGS__)
#define VT_DRIVER_POOL_CREATE(...) VT_POOL_CREATE_BODY(CUresult, cuda::kDriverUnknown, __VA_ARGS__)
#define VT_RUNTIME_POOL_DESTROY(...) VT_POOL_DESTROY_BODY(cudaError_t, cuda::kRuntimeUnknown, __VA_ARGS__)
#define VT_DRIVER_POOL_DESTROY(...) VT_POOL_DESTROY_BODY(CUresult, cuda::kDriverUnknown, __VA_ARGS__)
#include "device/hooks.def"

} // namespace hooks
} // namespace vramtrace
