// Graph memory grows when a graph with memory nodes is uploaded or first launched and shrinks when
// the device's graph pool is trimmed, not on any allocation call. The calls around it
// (instantiate, upload, exec destroy, trim) are forwarded untouched and then ask the reporter
// thread to read the device's graph memory again (cuDeviceGetGraphMemAttribute,
// device/device_info.h); the replay path, cuGraphLaunch, is not hooked at all. Every dump reads
// it afresh.
#include "interception/hook_scope.h"
#include "device/device_info.h"
#include "triggers/reporter.h"

namespace vramtrace {
namespace {

template <class Call> CUresult then_sample(Reach reach, Call &&call) {
    CUresult rc = call();
    if (rc == cuda::kSuccess && graph_memory_in_use() && tracker_for(reach) != nullptr &&
        triggers::g_triggers_started.load(std::memory_order_acquire))
        triggers::wake_reporter(triggers::kWakeGraphMemory);
    return rc;
}

} // namespace

namespace hooks {

#define VT_GRAPH_MEMORY_HOOK(name, params, call_args)             \
    CUresult name(Reach reach, VT_EXPAND params) {                \
        auto real = VT_REAL(name);                                \
        if (real == nullptr) return cuda::kDriverUnknown;         \
        return then_sample(reach, [&] { return real call_args; }); \
    }

VT_GRAPH_MEMORY_HOOK(cuGraphInstantiateWithFlags, (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags),
                     (phGraphExec, hGraph, flags))
VT_GRAPH_MEMORY_HOOK(cuGraphInstantiateWithParams,
                     (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams),
                     (phGraphExec, hGraph, instantiateParams))
VT_GRAPH_MEMORY_HOOK(cuGraphInstantiateWithParams_ptsz,
                     (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams),
                     (phGraphExec, hGraph, instantiateParams))
VT_GRAPH_MEMORY_HOOK(cuGraphUpload, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream))
VT_GRAPH_MEMORY_HOOK(cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream))
VT_GRAPH_MEMORY_HOOK(cuGraphExecDestroy, (CUgraphExec hGraphExec), (hGraphExec))
VT_GRAPH_MEMORY_HOOK(cuDeviceGraphMemTrim, (CUdevice device), (device))

} // namespace hooks
} // namespace vramtrace
