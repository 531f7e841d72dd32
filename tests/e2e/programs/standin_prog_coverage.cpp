// The coverage families of issue 3, on device 0 through the runtime:
//   arrays    cudaMallocArray, cudaMalloc3DArray, cudaMallocMipmappedArray (one array freed)
//   graphs    cudaGraphAddMemAllocNode in a graph kept alive, and in a graph destroyed
//   capture   cudaMallocAsync outside capture (the default pool), then inside a capture: one node
//             left, one allocated and freed within the capture (a free node frees nothing)
//   pools     cudaMemPoolCreate + cudaMallocFromPoolAsync
// Prints, from its own bookkeeping:
//   expect-live <bytes> <api> <device> <function> <file>:<line>   every record left (graph
//       memory nodes included: they are listed, as kind graph_pool, but not counted)
//   expect-kind <api> <kind>                                       the kind each api is recorded as
//   expect-pool <default|created|graph> <device> reserved <bytes> used <bytes>
//   expect-process-used <device> <bytes>   what the stand-in NVML reports (used + 300 MiB context)
// Exits 0; every return code is checked.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "expect_live.h"

namespace {

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "standin_prog_coverage: line %d: %s failed: %s\n", line, what, cudaGetErrorName(e));
    std::exit(1);
  }
}
#define CHECK(call) check((call), #call, __LINE__)

}  // namespace

// Outside the anonymous namespace: the e2e harness compares plain function names.

STANDIN_NOINLINE void allocate_arrays() {
  cudaChannelFormatDesc float4_desc = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
  cudaChannelFormatDesc uchar2_desc = cudaCreateChannelDesc(8, 8, 0, 0, cudaChannelFormatKindUnsigned);
  cudaChannelFormatDesc float1_desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaArray_t a2d = nullptr, a3d = nullptr, gone = nullptr;
  cudaMipmappedArray_t mip = nullptr;
  CHECK(cudaMallocArray(&a2d, &float4_desc, 256, 64, 0));
  print_expect_live(256 * 64 * 16, "cudaMallocArray", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaMalloc3DArray(&a3d, &uchar2_desc, cudaExtent{32, 32, 8}, 0));
  print_expect_live(32 * 32 * 8 * 2, "cudaMalloc3DArray", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaMallocMipmappedArray(&mip, &float1_desc, cudaExtent{64, 32, 0}, 3, 0));
  print_expect_live((64 * 32 + 32 * 16 + 16 * 8) * 4, "cudaMallocMipmappedArray", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaMallocArray(&gone, &float1_desc, 1000, 0, 0));
  CHECK(cudaFreeArray(gone));
  std::printf("expect-kind cudaMallocArray array\n");
}

static cudaMemAllocNodeParams node_params(size_t bytes) {
  cudaMemAllocNodeParams p{};
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = 0;
  p.bytesize = bytes;
  return p;
}

STANDIN_NOINLINE void add_graph_memory_nodes() {
  cudaGraph_t kept = nullptr, destroyed = nullptr;
  cudaGraphNode_t node = nullptr;
  CHECK(cudaGraphCreate(&kept, 0));
  cudaMemAllocNodeParams p = node_params(3 << 20);
  CHECK(cudaGraphAddMemAllocNode(&node, kept, nullptr, 0, &p));
  print_expect_live(3 << 20, "cudaGraphAddMemAllocNode", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaGraphCreate(&destroyed, 0));
  cudaMemAllocNodeParams q = node_params(1 << 20);
  CHECK(cudaGraphAddMemAllocNode(&node, destroyed, nullptr, 0, &q));
  CHECK(cudaGraphAddMemFreeNode(&node, destroyed, &node, 1, q.dptr));
  CHECK(cudaGraphDestroy(destroyed));
  std::printf("expect-kind cudaGraphAddMemAllocNode graph_pool\n");
}

STANDIN_NOINLINE void capture_stream_ordered(cudaStream_t s) {
  void *outside = nullptr, *kept = nullptr, *freed = nullptr;
  CHECK(cudaMallocAsync(&outside, 700000, s));
  print_expect_live(700000, "cudaMallocAsync", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMallocAsync(&kept, 1000000, s));
  print_expect_live(1000000, "cudaMallocAsync", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaMallocAsync(&freed, 500000, s));
  print_expect_live(500000, "cudaMallocAsync", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaFreeAsync(freed, s));  // a free node: the address stays the graph's
  cudaGraph_t captured = nullptr;
  CHECK(cudaStreamEndCapture(s, &captured));  // kept alive: its nodes stay
}

STANDIN_NOINLINE cudaMemPool_t allocate_from_created_pool(cudaStream_t s) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  CHECK(cudaMemPoolCreate(&pool, &props));
  void* p = nullptr;
  CHECK(cudaMallocFromPoolAsync(&p, 1000000, pool, s));
  print_expect_live(1000000, "cudaMallocFromPoolAsync", 0, __func__, __FILE__, __LINE__ - 1);
  return pool;
}

static void print_pool(const char* what, cudaMemPool_t pool) {
  unsigned long long reserved = 0, used = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  std::printf("expect-pool %s 0 reserved %llu used %llu\n", what, static_cast<unsigned long long>(reserved),
              static_cast<unsigned long long>(used));
}

int main() {
  std::printf("standin_prog_coverage: arrays, graph memory nodes, stream capture, pools\n");
  CHECK(cudaSetDevice(0));
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreate(&s));
  allocate_arrays();
  add_graph_memory_nodes();
  capture_stream_ordered(s);
  cudaMemPool_t created = allocate_from_created_pool(s);
  cudaMemPool_t default_pool = nullptr;
  CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  print_pool("default", default_pool);
  print_pool("created", created);
  unsigned long long graph_reserved = 0, graph_used = 0;
  CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &graph_reserved));
  CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &graph_used));
  std::printf("expect-pool graph 0 reserved %llu used %llu\n", static_cast<unsigned long long>(graph_reserved),
              static_cast<unsigned long long>(graph_used));
  size_t free_bytes = 0, total = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total));
  std::printf("expect-process-used 0 %zu\n", total - free_bytes + 314572800);
  std::fflush(stdout);
  return 0;
}
