// Allocations that the CUPTI backend follows, through the shared runtime (tests/e2e/
// test_cupti_injection.cpp): device memory on devices 0 and 1, stream-ordered memory on a created
// stream, page-locked host memory both ways (device -1: host); one of each is freed again; VMM
// through the driver entry points cudart hands out: one create/reserve/map/unmap/release cycle, and
// a handle on device 1 left mapped. Prints an expect-live line (runtime API names; cuMemCreate for
// the handle) for every allocation left and an expect-mapping line for the mapping, and exits 0;
// every return code is checked.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "expect_live.h"

namespace {

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "standin_prog_injection: line %d: %s failed: %s\n", line, what, cudaGetErrorName(e));
    std::exit(1);
  }
}
#define CHECK(call) check((call), #call, __LINE__)

void cu_check(CUresult r, const char* what, int line) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "standin_prog_injection: line %d: %s failed: %d\n", line, what, static_cast<int>(r));
    std::exit(1);
  }
}
#define CU_CHECK(call) cu_check((call), #call, __LINE__)

template <typename Fn>
Fn driver_function(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  CHECK(cudaGetDriverEntryPointByVersion(symbol, &fn, 10020, cudaEnableDefault, &status));
  if (fn == nullptr || status != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "standin_prog_injection: no driver entry point %s\n", symbol);
    std::exit(1);
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

// Outside the anonymous namespace: the e2e harness compares plain function names.

STANDIN_NOINLINE void device_memory() {
  void *kept = nullptr, *freed = nullptr, *other = nullptr;
  CHECK(cudaSetDevice(0));
  CHECK(cudaMalloc(&kept, 3000000));
  print_expect_live(3000000, "cudaMalloc", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaMalloc(&freed, 12345));
  CHECK(cudaFree(freed));
  CHECK(cudaSetDevice(1));
  CHECK(cudaMalloc(&other, 65536));
  print_expect_live(65536, "cudaMalloc", 1, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaSetDevice(0));
}

STANDIN_NOINLINE void stream_ordered(cudaStream_t s) {
  void *kept = nullptr, *freed = nullptr;
  CHECK(cudaMallocAsync(&kept, 700000, s));
  print_expect_live(700000, "cudaMallocAsync", 0, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaMallocAsync(&freed, 4096, s));
  CHECK(cudaFreeAsync(freed, s));
  CHECK(cudaStreamSynchronize(s));
}

STANDIN_NOINLINE void host_memory() {
  void *pinned = nullptr, *mapped = nullptr, *freed = nullptr;
  CHECK(cudaMallocHost(&pinned, 8192));
  print_expect_live(8192, "cudaMallocHost", -1, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaHostAlloc(&mapped, 20000, cudaHostAllocPortable));
  print_expect_live(20000, "cudaHostAlloc", -1, __func__, __FILE__, __LINE__ - 1);
  CHECK(cudaMallocHost(&freed, 512));
  CHECK(cudaFreeHost(freed));
}

STANDIN_NOINLINE void vmm_memory() {
  auto create = driver_function<PFN_cuMemCreate_v10020>("cuMemCreate");
  auto release = driver_function<PFN_cuMemRelease_v10020>("cuMemRelease");
  auto reserve = driver_function<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
  auto address_free = driver_function<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
  auto map = driver_function<PFN_cuMemMap_v10020>("cuMemMap");
  auto unmap = driver_function<PFN_cuMemUnmap_v10020>("cuMemUnmap");
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  const size_t granule = size_t{2} << 20;
  // Nothing left of this one.
  CUmemGenericAllocationHandle gone = 0;
  CUdeviceptr gone_va = 0;
  CU_CHECK(create(&gone, granule, &prop, 0));
  CU_CHECK(reserve(&gone_va, granule, 0, 0, 0));
  CU_CHECK(map(gone_va, granule, 0, gone, 0));
  CU_CHECK(unmap(gone_va, granule));
  CU_CHECK(release(gone));
  CU_CHECK(address_free(gone_va, granule));
  // Kept, and mapped at the start of a two-granule reservation.
  CUmemGenericAllocationHandle kept = 0;
  CUdeviceptr va = 0;
  CU_CHECK(create(&kept, granule, &prop, 0));
  print_expect_live(granule, "cuMemCreate", 1, __func__, __FILE__, __LINE__ - 1);
  CU_CHECK(reserve(&va, 2 * granule, 0, 0, 0));
  CU_CHECK(map(va, granule, 0, kept, 0));
  std::printf("expect-mapping %#llx %zu %#llx\n", static_cast<unsigned long long>(va), granule,
              static_cast<unsigned long long>(kept));
}

int main() {
  std::printf("standin_prog_injection: device, stream-ordered, page-locked host and VMM memory\n");
  cudaStream_t s = nullptr;
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamCreate(&s));
  device_memory();
  stream_ordered(s);
  host_memory();
  vmm_memory();
  std::fflush(stdout);
  return 0;
}
