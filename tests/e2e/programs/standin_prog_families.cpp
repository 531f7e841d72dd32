// Every allocation family beyond plain cudaMalloc, each allocating, some freeing, some leaking:
//   pitched      cudaMallocPitch, cudaMalloc3D                          (device 0)
//   pools        cudaMemPoolCreate + cudaMallocFromPoolAsync(_ptsz), the default pool, a pool
//                created and destroyed                                   (device 0)
//   registered   cudaHostRegister of the program's own buffers           (device -1)
//   IPC          cudaIpcGetMemHandle of a live cudaMalloc buffer, opened and closed once, then
//                opened again and left open                              (device 0)
//   VMM          on a worker thread that has NO current context (no cudaSetDevice, no runtime
//                call): cuMemCreate on device 1 (prop->location.id), cuMemAddressReserve,
//                cuMemMap, cuMemSetAccess; driver entry points from cudaGetDriverEntryPointByVersion
// Prints, from its own bookkeeping, for each allocation left live:
//   expect-live <bytes> <api> <device> <function> <file>:<line>
// for each live VMM mapping (a mapping holds no memory of its own: not an expect-live line):
//   expect-mapping <va-hex> <bytes> <handle-hex>
// and for each pool it leaves alive (index = order in which the program obtained it):
//   expect-pool <pool-index> reserved <bytes> used <bytes>
// Every return code is checked; exits 0. Needs 2 devices. (Opening an IPC handle in the process
// that exported it is something only the stand-in allows; a real driver refuses it.)
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "expect_live.h"

// Declared by cuda_runtime_api.h only for per-thread-default-stream builds.
extern "C" cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                                              cudaStream_t stream);

namespace {

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "standin_prog_families: line %d: %s failed: %s\n", line, what, cudaGetErrorName(e));
    std::exit(1);
  }
}

void check_cu(CUresult r, const char* what, int line) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "standin_prog_families: line %d: %s failed: CUresult %d\n", line, what, static_cast<int>(r));
    std::exit(1);
  }
}

void require(bool ok, const char* what, int line) {
  if (!ok) {
    std::fprintf(stderr, "standin_prog_families: line %d: expectation failed: %s\n", line, what);
    std::exit(1);
  }
}

struct Live {
  size_t bytes;
  const char* api;
  int device;
  const char* function;
  int line;
};
struct Mapping {
  CUdeviceptr va;
  size_t bytes;
  CUmemGenericAllocationHandle handle;
};

std::vector<Live> g_live;
std::vector<Mapping> g_mappings;
std::vector<cudaMemPool_t> g_pools;

void record(size_t bytes, const char* api, int device, const char* function, int line) {
  g_live.push_back(Live{bytes, api, device, function, line});
}

// Driver entry points for the VMM family, through the runtime's stored cuGetProcAddress.
struct Vmm {
  PFN_cuCtxGetCurrent_v4000 ctxGetCurrent;
  PFN_cuMemGetAllocationGranularity_v10020 getGranularity;
  PFN_cuMemCreate_v10020 create;
  PFN_cuMemRelease_v10020 release;
  PFN_cuMemAddressReserve_v10020 addressReserve;
  PFN_cuMemAddressFree_v10020 addressFree;
  PFN_cuMemMap_v10020 map;
  PFN_cuMemUnmap_v10020 unmap;
  PFN_cuMemSetAccess_v10020 setAccess;
};
Vmm g_vmm{};

void* entry_point(const char* symbol, unsigned int version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  check(cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &status), symbol, __LINE__);
  require(fn != nullptr && status == cudaDriverEntryPointSuccess, symbol, __LINE__);
  return fn;
}

template <typename Fn>
void load(Fn& slot, const char* symbol, unsigned int version) {
  slot = reinterpret_cast<Fn>(entry_point(symbol, version));
}

constexpr size_t kPitchWidth = 1000;
constexpr size_t kPitchHeight = 300;
constexpr cudaExtent kVolume{700, 20, 12};
constexpr size_t kPoolKeptBytes = (3u << 20) + 100;
constexpr size_t kPoolPtszBytes = 64u << 10;
constexpr size_t kDefaultPoolBytes = 2000000;
constexpr size_t kRegisteredBuffer = 256u << 10;
constexpr size_t kRegisteredBytes = 200000;  // less than the buffer: the registered length counts
constexpr size_t kIpcBytes = (5u << 20) + 512;
constexpr int kVmmDevice = 1;

}  // namespace

#define CUDA_CHECK(call) check((call), #call, __LINE__)
#define CU_CHECK(call) check_cu((call), #call, __LINE__)
#define REQUIRE(cond) require((cond), #cond, __LINE__)

STANDIN_NOINLINE void allocate_pitched() {
  void* freed = nullptr;
  size_t freed_pitch = 0;
  CUDA_CHECK(cudaMallocPitch(&freed, &freed_pitch, 4000, 10));
  REQUIRE(freed_pitch >= 4000);
  void* kept = nullptr;
  size_t pitch = 0;
  const int line = __LINE__; CUDA_CHECK(cudaMallocPitch(&kept, &pitch, kPitchWidth, kPitchHeight));
  REQUIRE(pitch >= kPitchWidth);
  CUDA_CHECK(cudaMemset(kept, 0x22, pitch * kPitchHeight));
  CUDA_CHECK(cudaFree(freed));
  record(pitch * kPitchHeight, "cudaMallocPitch", 0, __func__, line);

  cudaPitchedPtr scratch{};
  CUDA_CHECK(cudaMalloc3D(&scratch, cudaExtent{64, 4, 4}));
  cudaPitchedPtr volume{};
  const int line3d = __LINE__; CUDA_CHECK(cudaMalloc3D(&volume, kVolume));
  REQUIRE(volume.ptr != nullptr && volume.pitch >= kVolume.width);
  CUDA_CHECK(cudaFree(scratch.ptr));
  record(volume.pitch * kVolume.height * kVolume.depth, "cudaMalloc3D", 0, __func__, line3d);
}

STANDIN_NOINLINE void allocate_from_pools(cudaStream_t stream) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  g_pools.push_back(pool);  // pool 0

  void* kept = nullptr;
  const int line = __LINE__; CUDA_CHECK(cudaMallocFromPoolAsync(&kept, kPoolKeptBytes, pool, stream));
  void* freed_async = nullptr;
  CUDA_CHECK(cudaMallocFromPoolAsync(&freed_async, 1u << 20, pool, stream));
  CUDA_CHECK(cudaFreeAsync(freed_async, stream));
  void* freed_sync = nullptr;
  CUDA_CHECK(cudaMallocFromPoolAsync(&freed_sync, 512u << 10, pool, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaFree(freed_sync));  // a pool allocation may go back through cudaFree too
  void* kept_ptsz = nullptr;
  const int line_ptsz = __LINE__; CUDA_CHECK(cudaMallocFromPoolAsync_ptsz(&kept_ptsz, kPoolPtszBytes, pool, cudaStreamPerThread));
  CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  record(kPoolKeptBytes, "cudaMallocFromPoolAsync", 0, __func__, line);
  record(kPoolPtszBytes, "cudaMallocFromPoolAsync_ptsz", 0, __func__, line_ptsz);

  cudaMemPool_t default_pool = nullptr;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  g_pools.push_back(default_pool);  // pool 1
  void* from_default = nullptr;
  const int line_default = __LINE__; CUDA_CHECK(cudaMallocFromPoolAsync(&from_default, kDefaultPoolBytes, default_pool, stream));
  record(kDefaultPoolBytes, "cudaMallocFromPoolAsync", 0, __func__, line_default);

  // A pool that comes and goes, empty when destroyed.
  cudaMemPool_t short_lived = nullptr;
  CUDA_CHECK(cudaMemPoolCreate(&short_lived, &props));
  void* brief = nullptr;
  CUDA_CHECK(cudaMallocFromPoolAsync(&brief, 4096, short_lived, stream));
  CUDA_CHECK(cudaFreeAsync(brief, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemPoolDestroy(short_lived));
}

STANDIN_NOINLINE void register_host_buffers() {
  void* temporary = std::aligned_alloc(4096, 64u << 10);
  REQUIRE(temporary != nullptr);
  CUDA_CHECK(cudaHostRegister(temporary, 64u << 10, cudaHostRegisterDefault));
  CUDA_CHECK(cudaHostUnregister(temporary));
  std::free(temporary);

  // Stays registered (and allocated) until exit.
  void* buffer = std::aligned_alloc(4096, kRegisteredBuffer);
  REQUIRE(buffer != nullptr);
  const int line = __LINE__; CUDA_CHECK(cudaHostRegister(buffer, kRegisteredBytes, cudaHostRegisterPortable));
  record(kRegisteredBytes, "cudaHostRegister", -1, __func__, line);

  int not_registered = 0;
  REQUIRE(cudaHostUnregister(&not_registered) == cudaErrorHostMemoryNotRegistered);
  REQUIRE(cudaGetLastError() == cudaErrorHostMemoryNotRegistered);
}

STANDIN_NOINLINE void share_over_ipc() {
  void* exported = nullptr;
  const int line_src = __LINE__; CUDA_CHECK(cudaMalloc(&exported, kIpcBytes));
  record(kIpcBytes, "cudaMalloc", 0, __func__, line_src);
  cudaIpcMemHandle_t handle{};
  CUDA_CHECK(cudaIpcGetMemHandle(&handle, exported));

  void* once = nullptr;
  CUDA_CHECK(cudaIpcOpenMemHandle(&once, handle, cudaIpcMemLazyEnablePeerAccess));
  REQUIRE(once != nullptr && once != exported);
  CUDA_CHECK(cudaIpcCloseMemHandle(once));

  void* imported = nullptr;
  const int line = __LINE__; CUDA_CHECK(cudaIpcOpenMemHandle(&imported, handle, cudaIpcMemLazyEnablePeerAccess));
  REQUIRE(imported != nullptr && imported != exported);
  record(kIpcBytes, "cudaIpcOpenMemHandle", 0, __func__, line);
}

// Runs on a std::thread that never called cudaSetDevice nor any runtime function.
STANDIN_NOINLINE void vmm_worker() {
  CUcontext current = reinterpret_cast<CUcontext>(0x1);
  CU_CHECK(g_vmm.ctxGetCurrent(&current));
  REQUIRE(current == nullptr);

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = kVmmDevice;
  size_t granularity = 0;
  CU_CHECK(g_vmm.getGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  REQUIRE(granularity != 0);
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

  // A whole cycle that leaves nothing behind.
  CUmemGenericAllocationHandle temporary = 0;
  CU_CHECK(g_vmm.create(&temporary, granularity, &prop, 0));
  CUdeviceptr temporary_va = 0;
  CU_CHECK(g_vmm.addressReserve(&temporary_va, granularity, 0, 0, 0));
  CU_CHECK(g_vmm.map(temporary_va, granularity, 0, temporary, 0));
  CU_CHECK(g_vmm.setAccess(temporary_va, granularity, &access, 1));
  CU_CHECK(g_vmm.unmap(temporary_va, granularity));
  CU_CHECK(g_vmm.release(temporary));
  CU_CHECK(g_vmm.addressFree(temporary_va, granularity));

  // Kept: 2 granules of device 1, mapped at the start of a 4-granule reservation.
  const size_t bytes = 2 * granularity;
  CUmemGenericAllocationHandle handle = 0;
  const int line = __LINE__; CU_CHECK(g_vmm.create(&handle, bytes, &prop, 0));
  CUdeviceptr va = 0;
  CU_CHECK(g_vmm.addressReserve(&va, 4 * granularity, 0, 0, 0));
  CU_CHECK(g_vmm.map(va, bytes, 0, handle, 0));
  CU_CHECK(g_vmm.setAccess(va, bytes, &access, 1));
  record(bytes, "cuMemCreate", kVmmDevice, __func__, line);
  g_mappings.push_back(Mapping{va, bytes, handle});
}

int main() {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  REQUIRE(count >= 2);
  CUDA_CHECK(cudaSetDevice(0));
  load(g_vmm.ctxGetCurrent, "cuCtxGetCurrent", 4000);
  load(g_vmm.getGranularity, "cuMemGetAllocationGranularity", 10020);
  load(g_vmm.create, "cuMemCreate", 10020);
  load(g_vmm.release, "cuMemRelease", 10020);
  load(g_vmm.addressReserve, "cuMemAddressReserve", 10020);
  load(g_vmm.addressFree, "cuMemAddressFree", 10020);
  load(g_vmm.map, "cuMemMap", 10020);
  load(g_vmm.unmap, "cuMemUnmap", 10020);
  load(g_vmm.setAccess, "cuMemSetAccess", 10020);

  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  allocate_pitched();
  allocate_from_pools(stream);
  register_host_buffers();
  share_over_ipc();
  std::thread(vmm_worker).join();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaDeviceSynchronize());

  std::printf("standin_prog_families: pitched, pools, registered, IPC, VMM\n");
  for (const Live& l : g_live) print_expect_live(l.bytes, l.api, l.device, l.function, __FILE__, l.line);
  for (const Mapping& m : g_mappings) {
    std::printf("expect-mapping %#llx %zu %#llx\n", static_cast<unsigned long long>(m.va), m.bytes,
                static_cast<unsigned long long>(m.handle));
  }
  for (size_t i = 0; i < g_pools.size(); ++i) {
    cuuint64_t reserved = 0;
    cuuint64_t used = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(g_pools[i], cudaMemPoolAttrReservedMemCurrent, &reserved));
    CUDA_CHECK(cudaMemPoolGetAttribute(g_pools[i], cudaMemPoolAttrUsedMemCurrent, &used));
    std::printf("expect-pool %zu reserved %llu used %llu\n", i, static_cast<unsigned long long>(reserved),
                static_cast<unsigned long long>(used));
  }
  return 0;
}
