// Memory the driver frees or keeps without a matching free call, one scenario per run (argv[1]):
//   reset     cudaMalloc, cudaMallocHost and a stream-ordered cudaMallocAsync; cudaDeviceReset; a
//             cudaMalloc of the same size (the stand-in rewinds its allocator, so it gets the first
//             one's address back; a real driver may or may not), is freed, and one more
//             allocation is left live
//   destroy   two created contexts on device 0 and the primary context; cuCtxDestroy of the first
//   release   the driver API alone: one primary retain, allocations, its last release (on the
//             last device: device 1 of the stand-in's two)
//   vmm       a handle mapped twice and released before both unmaps; a handle with a reference
//             taken by cuMemRetainAllocationHandle; a handle exported and imported again; a
//             reservation left in place
//   graph     a graph with a memory node instantiated and launched (graph memory grows), its
//             allocation freed outside the graph, then cudaDeviceGraphMemTrim
//   exit      cudaMalloc left live; with STANDIN_CUDART_RELEASE_AT_EXIT=1 the runtime's exit
//             handler releases the primary context, which must end nothing: the exit report
//             still lists the allocation
// Oracle lines, from the program's own bookkeeping:
//   expect-live <bytes> <api> <device> <function> <file>:<line>      left live at exit
//   expect-teardown <api> <cause> <device> <ended-count> <ended-device-bytes> <ended-host-bytes>
//   checkpoint <name> <file> <key>=<bytes> ...                        a vramtrace_dump taken here
// Every return code is checked; exits 0. Built for the stand-in (tests/e2e/programs) and by nvcc
// for a real GPU (tests/gpu/run_lifecycle.sh).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "expect_live.h"

// Plain static functions (no anonymous namespace): the oracle names call sites by their bare name.

static void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "standin_prog_lifecycle: line %d: %s failed: %s\n", line, what, cudaGetErrorName(e));
    std::exit(1);
  }
}
static void check_cu(CUresult r, const char* what, int line) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "standin_prog_lifecycle: line %d: %s failed: CUresult %d\n", line, what, static_cast<int>(r));
    std::exit(1);
  }
}
static void require(bool ok, const char* what, int line) {
  if (!ok) {
    std::fprintf(stderr, "standin_prog_lifecycle: line %d: expectation failed: %s\n", line, what);
    std::exit(1);
  }
}
#define CHECK(x) check((x), #x, __LINE__)
#define CHECK_CU(x) check_cu((x), #x, __LINE__)
#define REQUIRE(x) require((x), #x, __LINE__)

// vramtrace_dump when the library is loaded (preloaded, or loaded by the driver through
// CUDA_INJECTION64_PATH, RTLD_LOCAL); the line names the file either way.
static void checkpoint(const char* name, const std::string& figures) {
  using Dump = int (*)(const char*);
  auto dump = reinterpret_cast<Dump>(dlsym(RTLD_DEFAULT, "vramtrace_dump"));
  const char* injected = std::getenv("CUDA_INJECTION64_PATH");
  if (dump == nullptr && injected != nullptr)
    if (void* lib = dlopen(injected, RTLD_NOW | RTLD_NOLOAD)) dump = reinterpret_cast<Dump>(dlsym(lib, "vramtrace_dump"));
  std::string path = std::string("checkpoint-") + name + ".json";
  if (dump != nullptr && dump(path.c_str()) != 0) std::fprintf(stderr, "vramtrace_dump(%s) failed\n", path.c_str());
  std::printf("checkpoint %s %s %s\n", name, path.c_str(), figures.c_str());
}

static constexpr size_t kMiB = size_t{1} << 20;

static STANDIN_NOINLINE void* device_alloc(size_t bytes, int line_out[1]) {
  void* p = nullptr;
  line_out[0] = __LINE__ + 1;
  CHECK(cudaMalloc(&p, bytes));
  return p;
}

static int scenario_reset() {
  CHECK(cudaSetDevice(0));
  int line = 0;
  void* a = device_alloc(3 * kMiB, &line);
  void* host = nullptr;
  CHECK(cudaMallocHost(&host, 2 * kMiB));
  void* async = nullptr;
  int async_line = __LINE__ + 1;
  CHECK(cudaMallocAsync(&async, 5 * kMiB, nullptr));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaDeviceReset());
  // Ended by the reset: the device allocation (3 MiB) and the pinned host memory (2 MiB), not the
  // pool allocation.
  std::printf("expect-teardown cuDevicePrimaryCtxReset_v2 context_reset 0 2 %zu %zu\n", 3 * kMiB, 2 * kMiB);
  CHECK(cudaSetDevice(0));
  void* b = device_alloc(3 * kMiB, &line);
  // When the address comes back, the old record must not stand for the new one.
  std::printf("reused-address %s\n", b == a ? "same" : "different");
  CHECK(cudaFree(b));
  int leak_line = 0;
  device_alloc(kMiB, &leak_line);
  print_expect_live(kMiB, "cudaMalloc", 0, "device_alloc", __FILE__, leak_line);
  print_expect_live(5 * kMiB, "cudaMallocAsync", 0, "scenario_reset", __FILE__, async_line);
  return 0;
}

static STANDIN_NOINLINE CUdeviceptr driver_alloc(size_t bytes, int* line) {
  CUdeviceptr p = 0;
  *line = __LINE__ + 1;
  CHECK_CU(cuMemAlloc_v2(&p, bytes));
  return p;
}

static int scenario_destroy() {
  CHECK_CU(cuInit(0));
  CUdevice dev = 0;
  CHECK_CU(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CHECK_CU(cuDevicePrimaryCtxRetain(&primary, dev));
  CHECK_CU(cuCtxSetCurrent(primary));
  int line_p = 0, line_1 = 0, line_2 = 0;
  driver_alloc(kMiB, &line_p);
  CUcontext first = nullptr, second = nullptr;
  CHECK_CU(cuCtxCreate(&first, nullptr, 0, dev));
  driver_alloc(2 * kMiB, &line_1);
  driver_alloc(2 * kMiB, &line_1);
  CHECK_CU(cuCtxCreate(&second, nullptr, 0, dev));
  driver_alloc(4 * kMiB, &line_2);
  CHECK_CU(cuCtxDestroy_v2(first));
  std::printf("expect-teardown cuCtxDestroy_v2 context_destroy 0 2 %zu 0\n", 4 * kMiB);
  CHECK_CU(cuCtxSetCurrent(second));
  print_expect_live(kMiB, "cuMemAlloc_v2", 0, "driver_alloc", __FILE__, line_p);
  print_expect_live(4 * kMiB, "cuMemAlloc_v2", 0, "driver_alloc", __FILE__, line_2);
  return 0;
}

static int scenario_release() {
  CHECK_CU(cuInit(0));
  int count = 0;
  CHECK_CU(cuDeviceGetCount(&count));
  const int dev = count - 1;
  CUcontext primary = nullptr;
  CHECK_CU(cuDevicePrimaryCtxRetain(&primary, dev));
  CHECK_CU(cuCtxSetCurrent(primary));
  int line = 0;
  CUdeviceptr a = driver_alloc(6 * kMiB, &line);
  CUdeviceptr b = driver_alloc(kMiB, &line);
  CHECK_CU(cuMemFree_v2(b));
  CHECK_CU(cuCtxSetCurrent(nullptr));
  CHECK_CU(cuDevicePrimaryCtxRelease(dev));
  unsigned flags = 0;
  int active = -1;
  CHECK_CU(cuDevicePrimaryCtxGetState(dev, &flags, &active));
  REQUIRE(active == 0);
  std::printf("expect-teardown cuDevicePrimaryCtxRelease_v2 context_release %d 1 %zu 0\n", dev, 6 * kMiB);
  // A new generation of the same primary context (the stand-in hands the old address out again).
  CHECK_CU(cuDevicePrimaryCtxRetain(&primary, dev));
  CHECK_CU(cuCtxSetCurrent(primary));
  int leak_line = 0;
  CUdeviceptr c = driver_alloc(6 * kMiB, &leak_line);
  std::printf("reused-address %s\n", c == a ? "same" : "different");
  print_expect_live(6 * kMiB, "cuMemAlloc_v2", dev, "driver_alloc", __FILE__, leak_line);
  return 0;
}

static CUmemAllocationProp vmm_prop(bool shareable) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  if (shareable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

static std::string figures(size_t physical, size_t mapped, size_t reserved) {
  return "physical=" + std::to_string(physical) + " mapped=" + std::to_string(mapped) +
         " reserved=" + std::to_string(reserved);
}

static int scenario_vmm() {
  CHECK_CU(cuInit(0));
  CUcontext primary = nullptr;
  CHECK_CU(cuDevicePrimaryCtxRetain(&primary, 0));
  CHECK_CU(cuCtxSetCurrent(primary));
  const size_t g = 2 * kMiB;
  CUmemAllocationProp prop = vmm_prop(false);
  CUdeviceptr va = 0;
  CHECK_CU(cuMemAddressReserve(&va, 8 * g, 0, 0, 0));
  // One handle mapped twice, released before either unmap.
  CUmemGenericAllocationHandle twice = 0;
  CHECK_CU(cuMemCreate(&twice, g, &prop, 0));
  CHECK_CU(cuMemMap(va, g, 0, twice, 0));
  CHECK_CU(cuMemMap(va + g, g, 0, twice, 0));
  CHECK_CU(cuMemRelease(twice));
  checkpoint("released-mapped-twice", figures(g, 2 * g, 8 * g));
  CHECK_CU(cuMemUnmap(va, g));
  checkpoint("one-mapping-left", figures(g, g, 8 * g));
  CHECK_CU(cuMemUnmap(va + g, g));
  checkpoint("both-unmapped", figures(0, 0, 8 * g));
  // A retained reference outlives the release and the unmap.
  CUmemGenericAllocationHandle kept = 0, ref = 0;
  CHECK_CU(cuMemCreate(&kept, 2 * g, &prop, 0));
  CHECK_CU(cuMemMap(va + 2 * g, 2 * g, 0, kept, 0));
  CHECK_CU(cuMemRetainAllocationHandle(&ref, reinterpret_cast<void*>(va + 2 * g)));
  REQUIRE(ref == kept);
  CHECK_CU(cuMemRelease(kept));
  CHECK_CU(cuMemUnmap(va + 2 * g, 2 * g));
  checkpoint("retained-only", figures(2 * g, 0, 8 * g));
  CHECK_CU(cuMemRelease(ref));
  checkpoint("retained-released", figures(0, 0, 8 * g));
  // Exported and imported again: the import is listed, never counted.
  CUmemAllocationProp sprop = vmm_prop(true);
  CUmemGenericAllocationHandle exported = 0, imported = 0;
  int line = __LINE__ + 1;
  CHECK_CU(cuMemCreate(&exported, g, &sprop, 0));
  int fd = -1;
  CHECK_CU(cuMemExportToShareableHandle(&fd, exported, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  int import_line = __LINE__ + 1;
  CHECK_CU(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CHECK_CU(cuMemMap(va + 6 * g, g, 0, imported, 0));
  checkpoint("imported", figures(g, g, 8 * g));
  print_expect_live(g, "cuMemCreate", 0, "scenario_vmm", __FILE__, line);
  // Listed, not counted: the import (the exporter's memory, its size learnt from the mapping). The
  // reservation left in place is address space, in the checkpoints' reserved= figures.
  print_expect_live(g, "cuMemImportFromShareableHandle", 0, "scenario_vmm", __FILE__, import_line);
  return 0;
}

static int scenario_graph() {
  CHECK(cudaSetDevice(0));
  cudaGraph_t graph = nullptr;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaMemAllocNodeParams params{};
  params.poolProps.allocType = cudaMemAllocationTypePinned;
  params.poolProps.location.type = cudaMemLocationTypeDevice;
  params.poolProps.location.id = 0;
  params.bytesize = 6 * kMiB;
  cudaGraphNode_t node = nullptr;
  CHECK(cudaGraphAddMemAllocNode(&node, graph, nullptr, 0, &params));
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, nullptr));
  CHECK(cudaDeviceSynchronize());
  auto attr = [](cudaGraphMemAttributeType a) {
    unsigned long long v = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, a, &v));
    return static_cast<size_t>(v);
  };
  checkpoint("launched", "graph_reserved=" + std::to_string(attr(cudaGraphMemAttrReservedMemCurrent)) +
                             " graph_used=" + std::to_string(attr(cudaGraphMemAttrUsedMemCurrent)));
  CHECK(cudaFree(params.dptr));  // a graph's allocation freed outside it: back to the graph pool
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaDeviceGraphMemTrim(0));
  checkpoint("trimmed", "graph_reserved=" + std::to_string(attr(cudaGraphMemAttrReservedMemCurrent)) +
                            " graph_used=" + std::to_string(attr(cudaGraphMemAttrUsedMemCurrent)));
  return 0;
}

static int scenario_exit() {
  CHECK(cudaSetDevice(0));
  int line = 0;
  device_alloc(7 * kMiB, &line);
  print_expect_live(7 * kMiB, "cudaMalloc", 0, "device_alloc", __FILE__, line);
  return 0;
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string which = argc > 1 ? argv[1] : "";
  if (which == "reset") return scenario_reset();
  if (which == "destroy") return scenario_destroy();
  if (which == "release") return scenario_release();
  if (which == "vmm") return scenario_vmm();
  if (which == "graph") return scenario_graph();
  if (which == "exit") return scenario_exit();
  std::fprintf(stderr, "usage: standin_prog_lifecycle reset|destroy|release|vmm|graph|exit\n");
  return 2;
}
