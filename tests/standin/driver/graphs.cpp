// Graphs with memory nodes, and stream capture, as far as memory goes.
//
// - Graphs (cuGraphCreate, cuGraphDestroy) hold memory nodes. cuGraphAddMemAllocNode (and
//   cuMemAllocAsync* on a capturing stream) hands out a distinct address at once, but charges
//   nothing: the memory is reserved and allocated when an exec of the graph is uploaded or launched
//   (graph_exec.cpp), as the real driver does. Free nodes (cuGraphAddMemFreeNode, or cuMemFreeAsync*
//   on a capturing stream) free their address when the exec runs. Destroying a graph drops its
//   hold on its nodes; a node's address lives while a graph or exec contains it or it is allocated.
// - Capture (cuStreamBeginCapture_v2 / cuStreamEndCapture, created streams only).
#include "graphs_internal.h"

#include "cupti_hooks.h"

#include <cstdlib>
#include <cstring>

namespace sd = standin_driver;

namespace standin_driver {

GraphState& gs() {  // under State::mu
  static GraphState* g = [] {
    auto* s = new GraphState();  // never freed
    const auto n = static_cast<std::size_t>(config().device_count);
    s->used.assign(n, 0);
    s->reserved.assign(n, 0);
    s->idle.assign(n, 0);
    s->used_high.assign(n, 0);
    s->reserved_high.assign(n, 0);
    return s;
  }();
  return *g;
}

void drop_if_unused(State& st, NodeMem* n) {
  if (n->holders > 0 || n->live) return;
  if (n->reserved) gs().idle[static_cast<std::size_t>(n->device)] += n->rounded;
  gs().nodes.erase(n->address);
  st.allocations.erase(n->address);
  std::free(reinterpret_cast<void*>(n->address));
  delete n;
}

void release_holders(State& st, const std::vector<GraphOp>& ops) {
  for (const GraphOp& op : ops) {
    if (op.alloc == nullptr) continue;
    --op.alloc->holders;
    drop_if_unused(st, op.alloc);
  }
}

namespace {

Graph* valid_graph(CUgraph h) {  // under State::mu
  auto* g = reinterpret_cast<Graph*>(h);
  return h != nullptr && gs().graphs.count(g) != 0 ? g : nullptr;
}

CUgraphNode new_node() {  // fake node handles: distinct, never dereferenced
  return reinterpret_cast<CUgraphNode>(static_cast<std::uintptr_t>(0x6e0de0000000ULL + 16 * ++gs().node_serial));
}

}  // namespace

Graph* capturing_graph(CUstream s) {
  if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return nullptr;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = gs().capturing.find(reinterpret_cast<Stream*>(s));
  return it == gs().capturing.end() ? nullptr : it->second;
}

void forget_capture(CUstream s) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  gs().capturing.erase(reinterpret_cast<Stream*>(s));
  gs().capture_modes.erase(reinterpret_cast<Stream*>(s));
  gs().invalidated.erase(reinterpret_cast<Stream*>(s));
}

void unsafe_call_on(CUstream s) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* stream = reinterpret_cast<Stream*>(s);
  auto mode = gs().capture_modes.find(stream);
  if (mode != gs().capture_modes.end() && mode->second == CU_STREAM_CAPTURE_MODE_GLOBAL)
    gs().invalidated.insert(stream);
}

CUresult graph_alloc(Graph* graph, int device, std::size_t bytes, std::uintptr_t* out) {
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > config().device_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  std::size_t rounded = 0;
  if (!round_up(bytes, kAlignment, &rounded)) return CUDA_ERROR_OUT_OF_MEMORY;
  void* mem = std::aligned_alloc(kAlignment, rounded);
  if (mem == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto address = reinterpret_cast<std::uintptr_t>(mem);
  State& st = state();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (gs().graphs.count(graph) == 0) {
      std::free(mem);
      return CUDA_ERROR_INVALID_VALUE;
    }
    std::size_t chunk = 0;
    round_up(bytes, kPoolChunk, &chunk);  // bytes <= the device's capacity: no overflow
    Allocation a{bytes, device, MemKind::graph};
    a.serial = st.next_serial++;
    st.allocations[address] = a;
    auto* n = new NodeMem{address, device, bytes, chunk, 1, false, false};
    gs().nodes[address] = n;
    graph->ops.push_back(GraphOp{n, 0});
  }
  *out = address;
  return CUDA_SUCCESS;
}

CUresult graph_free(Graph* g, std::uintptr_t address) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.allocations.find(address);
  if (gs().graphs.count(g) == 0 || it == st.allocations.end() ||
      (it->second.kind != MemKind::graph && it->second.kind != MemKind::device &&
       it->second.kind != MemKind::device_async)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  g->ops.push_back(GraphOp{nullptr, address});  // frees when an exec of g runs
  return CUDA_SUCCESS;
}

}  // namespace standin_driver

using sd::traced;

// ---- graphs ----
STANDIN_CU_API CUresult CUDAAPI cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (phGraph == nullptr || flags != 0) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    auto* g = new sd::Graph{sd::kGraphMagic, {}};
    sd::gs().graphs.insert(g);
    *phGraph = reinterpret_cast<CUgraph>(g);
  }
  return traced(r, "cuGraphCreate() graph=%p", r == CUDA_SUCCESS ? static_cast<void*>(*phGraph) : nullptr);
}

// The graph's nodes stay valid while an exec of it exists or a launch has them allocated.
STANDIN_CU_API CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  STANDIN_API_CALL(cuGraphDestroy, hGraph);
  CUresult r = CUDA_SUCCESS;
  std::size_t before = 0, after = 0;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    sd::Graph* g = sd::valid_graph(hGraph);
    if (g == nullptr) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      before = sd::gs().nodes.size();
      sd::release_holders(st, g->ops);
      after = sd::gs().nodes.size();
      sd::gs().graphs.erase(g);
      g->magic = 0;
      delete g;
    }
  }
  return standin_api_call_.done(
      traced(r, "cuGraphDestroy(%p) nodes freed=%zu", static_cast<void*>(hGraph), before - after));
}

STANDIN_CU_API CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                       const CUgraphNode* dependencies, size_t numDependencies,
                                                       CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  STANDIN_API_CALL(cuGraphAddMemAllocNode, phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (phGraphNode == nullptr || nodeParams == nullptr || (numDependencies != 0 && dependencies == nullptr) ||
             nodeParams->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
             nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (!sd::valid_device(nodeParams->poolProps.location.id)) {
    r = CUDA_ERROR_INVALID_DEVICE;
  } else {
    sd::Graph* g = nullptr;
    {
      sd::State& st = sd::state();
      std::lock_guard<std::mutex> lock(st.mu);
      g = sd::valid_graph(hGraph);
    }
    std::uintptr_t address = 0;
    r = g == nullptr ? CUDA_ERROR_INVALID_VALUE
                     : sd::graph_alloc(g, nodeParams->poolProps.location.id, nodeParams->bytesize, &address);
    if (r == CUDA_SUCCESS) {
      nodeParams->dptr = static_cast<CUdeviceptr>(address);
      sd::State& st = sd::state();
      std::lock_guard<std::mutex> lock(st.mu);
      *phGraphNode = sd::new_node();
    }
  }
  return standin_api_call_.done(traced(r, "cuGraphAddMemAllocNode(graph=%p, bytesize=%zu) dptr=%#llx",
                                       static_cast<void*>(hGraph), nodeParams ? nodeParams->bytesize : 0,
                                       r == CUDA_SUCCESS ? nodeParams->dptr : 0ULL));
}

STANDIN_CU_API CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                      const CUgraphNode* dependencies, size_t numDependencies,
                                                      CUdeviceptr dptr) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (phGraphNode == nullptr || (numDependencies != 0 && dependencies == nullptr)) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::Graph* g = nullptr;
    {
      sd::State& st = sd::state();
      std::lock_guard<std::mutex> lock(st.mu);
      g = sd::valid_graph(hGraph);
    }
    r = g == nullptr ? CUDA_ERROR_INVALID_VALUE : sd::graph_free(g, static_cast<std::uintptr_t>(dptr));
    if (r == CUDA_SUCCESS) {
      sd::State& st = sd::state();
      std::lock_guard<std::mutex> lock(st.mu);
      *phGraphNode = sd::new_node();
    }
  }
  return traced(r, "cuGraphAddMemFreeNode(graph=%p, dptr=%#llx)", static_cast<void*>(hGraph), dptr);
}

// ---- stream capture ----
namespace {
CUresult begin_capture(CUstream s, CUstreamCaptureMode mode) {
  if (!sd::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  sd::State& st = sd::state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* stream = reinterpret_cast<sd::Stream*>(s);
  if (st.streams.count(stream) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (sd::gs().capturing.count(stream) != 0) return CUDA_ERROR_ILLEGAL_STATE;
  auto* g = new sd::Graph{sd::kGraphMagic, {}};
  sd::gs().graphs.insert(g);
  sd::gs().capturing[stream] = g;
  sd::gs().capture_modes[stream] = mode;
  sd::gs().invalidated.erase(stream);
  return CUDA_SUCCESS;
}

CUresult capture_info(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph) {
  if (!sd::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!sd::valid_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
  sd::Graph* g = sd::capturing_graph(s);
  *status = g != nullptr ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  if (id != nullptr) *id = g != nullptr ? reinterpret_cast<std::uintptr_t>(g) : 0;
  if (graph != nullptr) *graph = g != nullptr ? reinterpret_cast<CUgraph>(g) : nullptr;
  return CUDA_SUCCESS;
}
}  // namespace

STANDIN_CU_API CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  STANDIN_API_CALL(cuStreamBeginCapture_v2, hStream, mode);
  return standin_api_call_.done(traced(begin_capture(hStream, mode), "cuStreamBeginCapture_v2(%p, mode=%d)",
                                       static_cast<void*>(hStream), static_cast<int>(mode)));
}

namespace {
CUresult end_capture(CUstream hStream, CUgraph* phGraph) {
  if (!sd::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  sd::State& st = sd::state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = sd::gs().capturing.find(reinterpret_cast<sd::Stream*>(hStream));
  if (it == sd::gs().capturing.end()) return CUDA_ERROR_ILLEGAL_STATE;
  auto* stream = reinterpret_cast<sd::Stream*>(hStream);
  CUresult r = CUDA_SUCCESS;
  if (sd::gs().invalidated.erase(stream) != 0) {
    r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;  // the capture ends without a graph
  } else {
    *phGraph = reinterpret_cast<CUgraph>(it->second);
  }
  sd::gs().capturing.erase(it);
  sd::gs().capture_modes.erase(stream);
  return r;
}
}  // namespace

STANDIN_CU_API CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  STANDIN_API_CALL(cuStreamEndCapture, hStream, phGraph);
  CUresult r = end_capture(hStream, phGraph);
  return standin_api_call_.done(traced(r, "cuStreamEndCapture(%p) graph=%p", static_cast<void*>(hStream),
                                       r == CUDA_SUCCESS ? static_cast<void*>(*phGraph) : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  STANDIN_API_CALL(cuStreamEndCapture_ptsz, hStream, phGraph);
  CUresult r = end_capture(hStream, phGraph);
  return standin_api_call_.done(traced(r, "cuStreamEndCapture_ptsz(%p) graph=%p", static_cast<void*>(hStream),
                                       r == CUDA_SUCCESS ? static_cast<void*>(*phGraph) : nullptr));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return traced(capture_info(hStream, captureStatus, nullptr, nullptr), "cuStreamIsCapturing(%p)",
                static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return traced(capture_info(hStream, captureStatus, nullptr, nullptr), "cuStreamIsCapturing_ptsz(%p)",
                static_cast<void*>(hStream));
}

// The per-thread-stream variants of capture (what cuGetProcAddress returns with flags 2) and the
// CUDA 10.0 ABIs (no mode: global; capture info without graph and dependencies).
STANDIN_CU_API CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  STANDIN_API_CALL(cuStreamBeginCapture_v2_ptsz, hStream, mode);
  return standin_api_call_.done(traced(begin_capture(hStream, mode), "cuStreamBeginCapture_v2_ptsz(%p, mode=%d)",
                                       static_cast<void*>(hStream), static_cast<int>(mode)));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream) {
  STANDIN_API_CALL(cuStreamBeginCapture, hStream);
  return standin_api_call_.done(traced(begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL),
                                       "cuStreamBeginCapture(%p)", static_cast<void*>(hStream)));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream) {
  STANDIN_API_CALL(cuStreamBeginCapture_ptsz, hStream);
  return standin_api_call_.done(traced(begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL),
                                       "cuStreamBeginCapture_ptsz(%p)", static_cast<void*>(hStream)));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                       cuuint64_t* id_out) {
  return traced(capture_info(hStream, captureStatus_out, id_out, nullptr), "cuStreamGetCaptureInfo(%p)",
                static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                            cuuint64_t* id_out) {
  return traced(capture_info(hStream, captureStatus_out, id_out, nullptr), "cuStreamGetCaptureInfo_ptsz(%p)",
                static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                          cuuint64_t* id_out, CUgraph* graph_out,
                                                          const CUgraphNode** dependencies_out,
                                                          size_t* numDependencies_out) {
  CUresult r = capture_info(hStream, captureStatus_out, id_out, graph_out);
  if (r == CUDA_SUCCESS && dependencies_out != nullptr) *dependencies_out = nullptr;
  if (r == CUDA_SUCCESS && numDependencies_out != nullptr) *numDependencies_out = 0;
  return traced(r, "cuStreamGetCaptureInfo_v2(%p)", static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                          cuuint64_t* id_out, CUgraph* graph_out,
                                                          const CUgraphNode** dependencies_out,
                                                          const CUgraphEdgeData** edgeData_out,
                                                          size_t* numDependencies_out) {
  CUresult r = capture_info(hStream, captureStatus_out, id_out, graph_out);
  if (r == CUDA_SUCCESS && dependencies_out != nullptr) *dependencies_out = nullptr;
  if (r == CUDA_SUCCESS && edgeData_out != nullptr) *edgeData_out = nullptr;
  if (r == CUDA_SUCCESS && numDependencies_out != nullptr) *numDependencies_out = 0;
  return traced(r, "cuStreamGetCaptureInfo_v3(%p)", static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                               cuuint64_t* id_out, CUgraph* graph_out,
                                                               const CUgraphNode** dependencies_out,
                                                               size_t* numDependencies_out) {
  CUresult r = capture_info(hStream, captureStatus_out, id_out, graph_out);
  if (r == CUDA_SUCCESS && dependencies_out != nullptr) *dependencies_out = nullptr;
  if (r == CUDA_SUCCESS && numDependencies_out != nullptr) *numDependencies_out = 0;
  return traced(r, "cuStreamGetCaptureInfo_v2_ptsz(%p)", static_cast<void*>(hStream));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                               cuuint64_t* id_out, CUgraph* graph_out,
                                                               const CUgraphNode** dependencies_out,
                                                               const CUgraphEdgeData** edgeData_out,
                                                               size_t* numDependencies_out) {
  CUresult r = capture_info(hStream, captureStatus_out, id_out, graph_out);
  if (r == CUDA_SUCCESS && dependencies_out != nullptr) *dependencies_out = nullptr;
  if (r == CUDA_SUCCESS && edgeData_out != nullptr) *edgeData_out = nullptr;
  if (r == CUDA_SUCCESS && numDependencies_out != nullptr) *numDependencies_out = 0;
  return traced(r, "cuStreamGetCaptureInfo_v3_ptsz(%p)", static_cast<void*>(hStream));
}
