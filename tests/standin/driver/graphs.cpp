// CUDA arrays, graphs with memory nodes, and stream capture, as far as memory goes.
//
// - Arrays (cuArrayCreate_v2, cuArray3DCreate_v2, cuMipmappedArrayCreate; need a current context):
//   handles to a small object; they count width x max(height,1) x max(depth,1) x element bytes,
//   summed over mip levels (levels clamped to what the extent allows; layered/cubemap depth is not
//   halved), against the context's device. No padding: an interposer's estimate is exact here.
// - Graphs (cuGraphCreate, cuGraphDestroy) hold memory nodes. cuGraphAddMemAllocNode (and
//   cuMemAllocAsync* on a capturing stream) hands out a distinct address at once and charges the
//   device's graph memory: USED = bytes of live nodes, RESERVED = that rounded up to 2 MiB, which
//   counts against the device's capacity. (The real driver reserves at instantiate/launch; the
//   stand-in has no launch.) Destroying the graph gives its nodes' memory back. Free nodes
//   (cuGraphAddMemFreeNode, or cuMemFreeAsync* on a capturing stream) free nothing.
// - Capture (cuStreamBeginCapture_v2 / cuStreamEndCapture, created streams only).
#include "driver_internal.h"

#include <cstdlib>
#include <cstring>

namespace sd = standin_driver;

namespace standin_driver {

struct Graph {
  std::uint32_t magic;
  std::vector<std::uintptr_t> nodes;  // addresses of its memory nodes
};
constexpr std::uint32_t kGraphMagic = 0x48505247;  // "GRPH"
struct ArrayObj {
  std::uint32_t magic;
  int device;
  std::size_t bytes;
  bool mipmapped;
};
constexpr std::uint32_t kArrayMagic = 0x59415241;  // "ARAY"

namespace {

struct GraphState {  // guarded by State::mu
  std::set<Graph*> graphs;
  std::map<Stream*, Graph*> capturing;
  std::map<Stream*, CUstreamCaptureMode> capture_modes;
  std::set<Stream*> invalidated;  // captures that an unsafe call ended (cuStreamEndCapture fails)
  std::set<ArrayObj*> arrays;
  std::vector<std::size_t> used, reserved, used_high, reserved_high;  // graph memory per device
  int node_serial = 0;
};
GraphState& gs() {  // under State::mu
  static GraphState* g = [] {
    auto* s = new GraphState();  // never freed
    const auto n = static_cast<std::size_t>(config().device_count);
    s->used.assign(n, 0);
    s->reserved.assign(n, 0);
    s->used_high.assign(n, 0);
    s->reserved_high.assign(n, 0);
    return s;
  }();
  return *g;
}

std::size_t element_bytes(CUarray_format f, unsigned channels) {
  if (channels != 1 && channels != 2 && channels != 4) return 0;
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return channels;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2 * channels;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4 * channels;
    default: return 0;
  }
}

std::size_t elements(std::size_t w, std::size_t h, std::size_t d, unsigned levels, unsigned flags) {
  const bool layers = (flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  h = h ? h : 1;
  d = d ? d : 1;
  std::size_t total = 0;
  for (unsigned level = 0; level < levels; ++level) {
    total += w * h * d;
    if (w == 1 && h == 1 && (layers || d == 1)) break;
    w = w > 1 ? w / 2 : 1;
    h = h > 1 ? h / 2 : 1;
    if (!layers) d = d > 1 ? d / 2 : 1;
  }
  return total;
}

CUresult create_array(void** handle, const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned levels, bool mipmapped) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == nullptr || desc == nullptr || desc->Width == 0 || levels == 0) return CUDA_ERROR_INVALID_VALUE;
  if ((desc->Flags & ~(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_SURFACE_LDST |
                       CUDA_ARRAY3D_TEXTURE_GATHER)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t elem = element_bytes(desc->Format, desc->NumChannels);
  if (elem == 0) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = current_context();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  const std::size_t bytes = elements(desc->Width, desc->Height, desc->Depth, levels, desc->Flags) * elem;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!fits(st, ctx->device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  auto* a = new ArrayObj{kArrayMagic, ctx->device, bytes, mipmapped};
  gs().arrays.insert(a);
  st.used[static_cast<std::size_t>(ctx->device)] += bytes;
  *handle = a;
  return CUDA_SUCCESS;
}

CUresult destroy_array(void* handle, bool mipmapped) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* a = static_cast<ArrayObj*>(handle);
  if (handle == nullptr || gs().arrays.count(a) == 0 || a->mipmapped != mipmapped) return CUDA_ERROR_INVALID_HANDLE;
  gs().arrays.erase(a);
  st.used[static_cast<std::size_t>(a->device)] -= a->bytes;
  a->magic = 0;
  delete a;
  return CUDA_SUCCESS;
}

// Under State::mu: recomputes the device's graph reserve after `used` changed; false when it does
// not fit the device's capacity (nothing changed then).
bool regraph(State& st, int device, std::size_t new_used) {
  GraphState& g = gs();
  const auto d = static_cast<std::size_t>(device);
  std::size_t reserved = 0;
  if (!round_up(new_used, kPoolChunk, &reserved)) return false;
  if (reserved > g.reserved[d] && !fits(st, device, reserved - g.reserved[d])) return false;
  st.used[d] = st.used[d] - g.reserved[d] + reserved;
  g.used[d] = new_used;
  g.reserved[d] = reserved;
  if (new_used > g.used_high[d]) g.used_high[d] = new_used;
  if (reserved > g.reserved_high[d]) g.reserved_high[d] = reserved;
  return true;
}

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
    if (!regraph(st, device, gs().used[static_cast<std::size_t>(device)] + bytes)) {
      std::free(mem);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    Allocation a{bytes, device, MemKind::graph};
    a.serial = st.next_serial++;
    st.allocations[address] = a;
    graph->nodes.push_back(address);
  }
  *out = address;
  return CUDA_SUCCESS;
}

CUresult graph_free(std::uintptr_t address) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.allocations.find(address);
  if (it == st.allocations.end() || (it->second.kind != MemKind::graph && it->second.kind != MemKind::device &&
                                     it->second.kind != MemKind::device_async)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;  // a free node: nothing is freed now
}

}  // namespace standin_driver

using sd::traced;

// ---- arrays ----
STANDIN_CU_API CUresult CUDAAPI cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d) {
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  if (d != nullptr) {
    CUDA_ARRAY3D_DESCRIPTOR d3{d->Width, d->Height, 0, d->Format, d->NumChannels, 0};
    r = sd::create_array(reinterpret_cast<void**>(pHandle), &d3, 1, false);
  } else if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  }
  return traced(r, "cuArrayCreate_v2(%zux%zu) array=%p", d ? d->Width : 0, d ? d->Height : 0,
                r == CUDA_SUCCESS ? static_cast<void*>(*pHandle) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d) {
  CUresult r = sd::create_array(reinterpret_cast<void**>(pHandle), d, 1, false);
  return traced(r, "cuArray3DCreate_v2(%zux%zux%zu) array=%p", d ? d->Width : 0, d ? d->Height : 0,
                d ? d->Depth : 0, r == CUDA_SUCCESS ? static_cast<void*>(*pHandle) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d,
                                                       unsigned int numMipmapLevels) {
  CUresult r = sd::create_array(reinterpret_cast<void**>(pHandle), d, numMipmapLevels, true);
  return traced(r, "cuMipmappedArrayCreate(levels=%u) array=%p", numMipmapLevels,
                r == CUDA_SUCCESS ? static_cast<void*>(*pHandle) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuArrayDestroy(CUarray hArray) {
  return traced(sd::destroy_array(hArray, false), "cuArrayDestroy(%p)", static_cast<void*>(hArray));
}

STANDIN_CU_API CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  return traced(sd::destroy_array(hMipmappedArray, true), "cuMipmappedArrayDestroy(%p)",
                static_cast<void*>(hMipmappedArray));
}

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

STANDIN_CU_API CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  CUresult r = CUDA_SUCCESS;
  std::vector<std::uintptr_t> freed;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    sd::Graph* g = sd::valid_graph(hGraph);
    if (g == nullptr) {
      r = CUDA_ERROR_INVALID_VALUE;
    } else {
      for (std::uintptr_t address : g->nodes) {
        auto it = st.allocations.find(address);
        if (it == st.allocations.end()) continue;
        const int device = it->second.device;
        sd::regraph(st, device, sd::gs().used[static_cast<std::size_t>(device)] - it->second.size);
        st.allocations.erase(it);
        freed.push_back(address);
      }
      sd::gs().graphs.erase(g);
      g->magic = 0;
      delete g;
    }
  }
  for (std::uintptr_t address : freed) std::free(reinterpret_cast<void*>(address));
  return traced(r, "cuGraphDestroy(%p) nodes freed=%zu", static_cast<void*>(hGraph), freed.size());
}

STANDIN_CU_API CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                       const CUgraphNode* dependencies, size_t numDependencies,
                                                       CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
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
  return traced(r, "cuGraphAddMemAllocNode(graph=%p, bytesize=%zu) dptr=%#llx", static_cast<void*>(hGraph),
                nodeParams ? nodeParams->bytesize : 0, r == CUDA_SUCCESS ? nodeParams->dptr : 0ULL);
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
    {
      sd::State& st = sd::state();
      std::lock_guard<std::mutex> lock(st.mu);
      if (sd::valid_graph(hGraph) == nullptr) r = CUDA_ERROR_INVALID_VALUE;
    }
    if (r == CUDA_SUCCESS) r = sd::graph_free(static_cast<std::uintptr_t>(dptr));
    if (r == CUDA_SUCCESS) {
      sd::State& st = sd::state();
      std::lock_guard<std::mutex> lock(st.mu);
      *phGraphNode = sd::new_node();
    }
  }
  return traced(r, "cuGraphAddMemFreeNode(graph=%p, dptr=%#llx)", static_cast<void*>(hGraph), dptr);
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGraphMemTrim(CUdevice device) {
  CUresult r = !sd::initialized() ? CUDA_ERROR_NOT_INITIALIZED
               : !sd::valid_device(device) ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
  return traced(r, "cuDeviceGraphMemTrim(%d)", device);  // nothing is cached beyond live nodes
}

STANDIN_CU_API CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  CUresult r = CUDA_SUCCESS;
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
    cuuint64_t v = 0;
    switch (attr) {
      case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: v = g.used[d]; break;
      case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: v = g.used_high[d]; break;
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: v = g.reserved[d]; break;
      case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: v = g.reserved_high[d]; break;
      default: r = CUDA_ERROR_INVALID_VALUE;
    }
    if (r == CUDA_SUCCESS) *static_cast<cuuint64_t*>(value) = v;
  }
  return traced(r, "cuDeviceGetGraphMemAttribute(%d, attr=%d)", device, static_cast<int>(attr));
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
  return traced(begin_capture(hStream, mode), "cuStreamBeginCapture_v2(%p, mode=%d)", static_cast<void*>(hStream),
                static_cast<int>(mode));
}

STANDIN_CU_API CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  CUresult r = CUDA_SUCCESS;
  if (!sd::initialized()) {
    r = CUDA_ERROR_NOT_INITIALIZED;
  } else if (phGraph == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    sd::State& st = sd::state();
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = sd::gs().capturing.find(reinterpret_cast<sd::Stream*>(hStream));
    if (it == sd::gs().capturing.end()) {
      r = CUDA_ERROR_ILLEGAL_STATE;
    } else {
      auto* stream = reinterpret_cast<sd::Stream*>(hStream);
      if (sd::gs().invalidated.erase(stream) != 0) {
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;  // the capture ends without a graph
      } else {
        *phGraph = reinterpret_cast<CUgraph>(it->second);
      }
      sd::gs().capturing.erase(it);
      sd::gs().capture_modes.erase(stream);
    }
  }
  return traced(r, "cuStreamEndCapture(%p) graph=%p", static_cast<void*>(hStream),
                r == CUDA_SUCCESS ? static_cast<void*>(*phGraph) : nullptr);
}

STANDIN_CU_API CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return traced(capture_info(hStream, captureStatus, nullptr, nullptr), "cuStreamIsCapturing(%p)",
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
