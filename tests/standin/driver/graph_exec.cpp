// Executable graphs and the device's graph memory pool, accounted as the real driver does:
// - cuGraphInstantiate* makes a CUgraphExec holding the graph's nodes (the graph may then go).
// - cuGraphUpload* and cuGraphLaunch* run the exec's nodes on the books, in the order they were
//   added: an allocation node first takes its share of the device's graph pool (its size rounded up
//   to 2 MiB, reused from memory the pool holds idle, else grown against the device's capacity:
//   CUDA_ERROR_OUT_OF_MEMORY beyond) and is then allocated (USED grows); a free node frees its
//   address (a node's: USED shrinks; any other allocation: freed as cuMemFreeAsync would). Running
//   again leaves an allocation that is still allocated as it is. An upload runs the nodes like a
//   launch (there are no kernels whose timing could tell them apart).
// - A node allocation not freed in the graph stays allocated after the launch, and after the exec
//   and graph are destroyed, until cuMemFree* / cuMemFreeAsync* (or a free node of another graph)
//   frees it; its memory then goes back to the pool: USED drops, RESERVED stays.
// - RESERVED shrinks only at cuDeviceGraphMemTrim, which gives back every reservation of a node
//   not allocated now and the pool's idle memory.
#include "graphs_internal.h"
#include "cupti_hooks.h"

namespace sd = standin_driver;

namespace standin_driver {
namespace {

void note_highs(std::size_t d) {
  GraphState& g = gs();
  if (g.used[d] > g.used_high[d]) g.used_high[d] = g.used[d];
  if (g.reserved[d] > g.reserved_high[d]) g.reserved_high[d] = g.reserved[d];
}

// Under State::mu: gives n its share of the pool; false when the device cannot hold it.
bool reserve_node(State& st, NodeMem* n) {
  if (n->reserved) return true;
  const auto d = static_cast<std::size_t>(n->device);
  GraphState& g = gs();
  const std::size_t from_idle = g.idle[d] < n->rounded ? g.idle[d] : n->rounded;
  const std::size_t growth = n->rounded - from_idle;
  if (growth > 0 && !fits(st, n->device, growth)) return false;
  g.idle[d] -= from_idle;
  g.reserved[d] += growth;
  st.used[d] += growth;
  n->reserved = true;
  note_highs(d);
  return true;
}

void free_node(State& st, NodeMem* n) {
  n->live = false;
  gs().used[static_cast<std::size_t>(n->device)] -= n->bytes;
  drop_if_unused(st, n);
}

GraphExec* valid_exec(CUgraphExec h) {  // under State::mu
  auto* e = reinterpret_cast<GraphExec*>(h);
  return h != nullptr && gs().execs.count(e) != 0 ? e : nullptr;
}

constexpr unsigned long long kKnownInstantiateFlags =
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;

CUresult instantiate(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (exec == nullptr || (flags & ~kKnownInstantiateFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* g = reinterpret_cast<Graph*>(graph);
  if (graph == nullptr || gs().graphs.count(g) == 0) return CUDA_ERROR_INVALID_VALUE;
  auto* e = new GraphExec{kGraphExecMagic, g->ops, flags};
  for (const GraphOp& op : e->ops) {
    if (op.alloc != nullptr) ++op.alloc->holders;
  }
  gs().execs.insert(e);
  *exec = reinterpret_cast<CUgraphExec>(e);
  return CUDA_SUCCESS;
}

// Upload and launch: reserve, then run the nodes in order.
CUresult run(CUgraphExec exec, CUstream stream) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  int device = -1;
  if (CUresult r = stream_device(stream, &device); r != CUDA_SUCCESS) return r;
  std::vector<std::uintptr_t> other_frees;
  {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    GraphExec* e = valid_exec(exec);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    for (const GraphOp& op : e->ops) {
      if (op.alloc != nullptr && !reserve_node(st, op.alloc)) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (const GraphOp& op : e->ops) {
      if (op.alloc != nullptr) {
        if (op.alloc->live) continue;
        op.alloc->live = true;
        const auto d = static_cast<std::size_t>(op.alloc->device);
        gs().used[d] += op.alloc->bytes;
        note_highs(d);
      } else if (auto n = gs().nodes.find(op.free_address); n != gs().nodes.end()) {
        if (n->second->live) free_node(st, n->second);
      } else {
        other_frees.push_back(op.free_address);
      }
    }
  }
  for (std::uintptr_t address : other_frees) {
    release(address, kind_bit(MemKind::device) | kind_bit(MemKind::device_async) | kind_bit(MemKind::pitched));
  }
  return CUDA_SUCCESS;
}

CUresult exec_destroy(CUgraphExec exec) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  GraphExec* e = valid_exec(exec);
  if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
  gs().execs.erase(e);
  release_holders(st, e->ops);
  e->magic = 0;
  delete e;
  return CUDA_SUCCESS;
}

CUresult trim(CUdevice device, std::size_t* released) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  const auto d = static_cast<std::size_t>(device);
  GraphState& g = gs();
  std::size_t freed = g.idle[d];
  g.idle[d] = 0;
  for (auto& [address, n] : g.nodes) {
    if (n->device != device || !n->reserved || n->live) continue;
    n->reserved = false;
    freed += n->rounded;
  }
  g.reserved[d] -= freed;
  st.used[d] -= freed;
  *released = freed;
  return CUDA_SUCCESS;
}

CUresult instantiate_with_params(CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = instantiate(exec, graph, params->flags);
  if (r == CUDA_SUCCESS && (params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) {
    r = run(*exec, params->hUploadStream);
    if (r != CUDA_SUCCESS) exec_destroy(*exec);
  }
  params->hErrNode_out = nullptr;
  params->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  return r;
}

}  // namespace

CUresult free_graph_node(std::uintptr_t address) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = gs().nodes.find(address);
  if (it == gs().nodes.end() || !it->second->live) return CUDA_ERROR_INVALID_VALUE;
  free_node(st, it->second);
  return CUDA_SUCCESS;
}

}  // namespace standin_driver

using sd::traced;

// ---- instantiation ----

STANDIN_CU_API CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                            unsigned long long flags) {
  STANDIN_API_CALL(cuGraphInstantiateWithFlags, phGraphExec, hGraph, flags);
  CUresult r = sd::instantiate(phGraphExec, hGraph, flags);
  return standin_api_call_.done(traced(r, "cuGraphInstantiateWithFlags(%p, flags=%llu) exec=%p",
                                       static_cast<void*>(hGraph), flags,
                                       r == CUDA_SUCCESS ? static_cast<void*>(*phGraphExec) : nullptr));
}

// CUDA 10.0 and 11.0 ABIs (error node and log buffer): no error to report here.
STANDIN_CU_API CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                      CUgraphNode* phErrorNode, char* logBuffer, size_t bufferSize) {
  CUresult r = sd::instantiate(phGraphExec, hGraph, 0);
  if (phErrorNode != nullptr) *phErrorNode = nullptr;
  if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
  return traced(r, "cuGraphInstantiate_v2(%p) exec=%p", static_cast<void*>(hGraph),
                r == CUDA_SUCCESS ? static_cast<void*>(*phGraphExec) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                                                   char* logBuffer, size_t bufferSize) {
  CUresult r = sd::instantiate(phGraphExec, hGraph, 0);
  if (phErrorNode != nullptr) *phErrorNode = nullptr;
  if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
  return traced(r, "cuGraphInstantiate(%p) exec=%p", static_cast<void*>(hGraph),
                r == CUDA_SUCCESS ? static_cast<void*>(*phGraphExec) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                             CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  STANDIN_API_CALL(cuGraphInstantiateWithParams, phGraphExec, hGraph, instantiateParams);
  CUresult r = sd::instantiate_with_params(phGraphExec, hGraph, instantiateParams);
  return standin_api_call_.done(
      traced(r, "cuGraphInstantiateWithParams(%p, flags=%llu) exec=%p", static_cast<void*>(hGraph),
             instantiateParams != nullptr ? static_cast<unsigned long long>(instantiateParams->flags) : 0ULL,
             r == CUDA_SUCCESS ? static_cast<void*>(*phGraphExec) : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                                  CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  STANDIN_API_CALL(cuGraphInstantiateWithParams_ptsz, phGraphExec, hGraph, instantiateParams);
  CUresult r = sd::instantiate_with_params(phGraphExec, hGraph, instantiateParams);
  return standin_api_call_.done(
      traced(r, "cuGraphInstantiateWithParams_ptsz(%p, flags=%llu) exec=%p", static_cast<void*>(hGraph),
             instantiateParams != nullptr ? static_cast<unsigned long long>(instantiateParams->flags) : 0ULL,
             r == CUDA_SUCCESS ? static_cast<void*>(*phGraphExec) : nullptr));
}

// ---- upload, launch, destroy ----

STANDIN_CU_API CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) {
  STANDIN_API_CALL(cuGraphUpload, hGraphExec, hStream);
  return standin_api_call_.done(traced(sd::run(hGraphExec, hStream), "cuGraphUpload(%p, stream=%p)",
                                       static_cast<void*>(hGraphExec), static_cast<void*>(hStream)));
}

STANDIN_CU_API CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  STANDIN_API_CALL(cuGraphUpload_ptsz, hGraphExec, hStream);
  return standin_api_call_.done(traced(sd::run(hGraphExec, hStream), "cuGraphUpload_ptsz(%p, stream=%p)",
                                       static_cast<void*>(hGraphExec), static_cast<void*>(hStream)));
}

STANDIN_CU_API CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return traced(sd::run(hGraphExec, hStream), "cuGraphLaunch(%p, stream=%p)", static_cast<void*>(hGraphExec),
                static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return traced(sd::run(hGraphExec, hStream), "cuGraphLaunch_ptsz(%p, stream=%p)", static_cast<void*>(hGraphExec),
                static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
  STANDIN_API_CALL(cuGraphExecDestroy, hGraphExec);
  return standin_api_call_.done(
      traced(sd::exec_destroy(hGraphExec), "cuGraphExecDestroy(%p)", static_cast<void*>(hGraphExec)));
}

// ---- the device's graph pool ----

STANDIN_CU_API CUresult CUDAAPI cuDeviceGraphMemTrim(CUdevice device) {
  STANDIN_API_CALL(cuDeviceGraphMemTrim, device);
  std::size_t released = 0;
  CUresult r = sd::trim(device, &released);
  return standin_api_call_.done(traced(r, "cuDeviceGraphMemTrim(%d) released=%zu", device, released));
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  CUresult r = CUDA_SUCCESS;
  cuuint64_t v = 0;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (!sd::valid_device(device)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else if (value == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    const auto d = static_cast<std::size_t>(device);
    sd::GraphState& g = sd::gs();
    switch (attr) {
      case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: v = g.used[d]; break;
      case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: v = g.used_high[d]; break;
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: v = g.reserved[d]; break;
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: v = g.reserved_high[d]; break;
      default: r = CUDA_ERROR_INVALID_VALUE;
    }
    if (r == CUDA_SUCCESS) *static_cast<cuuint64_t*>(value) = v;
  }
  return traced(r, "cuDeviceGetGraphMemAttribute(%d, attr=%d) value=%llu", device, static_cast<int>(attr),
                static_cast<unsigned long long>(v));
}

// Only the high watermarks can be set, and only to 0: they restart from the current values.
STANDIN_CU_API CUresult CUDAAPI cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (!sd::valid_device(device)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else if (value == nullptr || *static_cast<const cuuint64_t*>(value) != 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    const auto d = static_cast<std::size_t>(device);
    sd::GraphState& g = sd::gs();
    if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) {
      g.used_high[d] = g.used[d];
    } else if (attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) {
      g.reserved_high[d] = g.reserved[d];
    } else {
      r = CUDA_ERROR_INVALID_VALUE;
    }
  }
  return traced(r, "cuDeviceSetGraphMemAttribute(%d, attr=%d)", device, static_cast<int>(attr));
}
