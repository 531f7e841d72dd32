// Checks the stand-in driver and runtime against the contract the interposer's tests rely on
// (tests/standin/README.md): cuGetProcAddress variant selection and its agreement with dlsym,
// behaviour before cuInit, per-thread contexts, device attribution, out-of-memory, frees of
// unknown pointers, and the runtime's device selection and entry-point queries.
// Exits 0 when every check passes; leaks nothing. Needs at least 2 stand-in devices.
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {

int g_checks = 0;
int g_failures = 0;

void expect(bool ok, const char* what, int line) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::fprintf(stderr, "standin_prog_contract: line %d: FAILED: %s\n", line, what);
  }
}

#define EXPECT(cond) expect((cond), #cond, __LINE__)

void* g_driver = nullptr;

void* sym(const char* name) { return dlsym(g_driver, name); }

PFN_cuGetProcAddress_v12000 gpa = nullptr;
PFN_cuGetProcAddress_v11030 gpa_legacy = nullptr;

template <typename Fn>
Fn driver_fn(const char* exported) {
  return reinterpret_cast<Fn>(sym(exported));
}

// cuGetProcAddress_v2(symbol, version, flags) must give exactly dlsym(exported) (or NULL).
void expect_proc(const char* symbol, int version, cuuint64_t flags, const char* exported,
                 CUdriverProcAddressQueryResult want_status, int line) {
  void* fn = reinterpret_cast<void*>(0x1);
  CUdriverProcAddressQueryResult status = static_cast<CUdriverProcAddressQueryResult>(99);
  CUresult r = gpa(symbol, &fn, version, flags, &status);
  char what[256];
  std::snprintf(what, sizeof what, "cuGetProcAddress_v2(\"%s\", %d, %llu) -> %s", symbol, version,
                static_cast<unsigned long long>(flags), exported ? exported : "NULL");
  void* want = exported != nullptr ? sym(exported) : nullptr;
  expect(r == CUDA_SUCCESS && fn == want && status == want_status && (exported == nullptr || want != nullptr), what,
         line);
}

#define EXPECT_PROC(symbol, version, flags, exported) \
  expect_proc(symbol, version, flags, exported, CU_GET_PROC_ADDRESS_SUCCESS, __LINE__)
#define EXPECT_PROC_NONE(symbol, version, flags, status) expect_proc(symbol, version, flags, nullptr, status, __LINE__)

int pointer_ordinal(const void* p) {
  auto get = driver_fn<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute");
  int ordinal = -100;
  if (get(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return -99;
  return ordinal;
}

void driver_checks() {
  gpa = driver_fn<PFN_cuGetProcAddress_v12000>("cuGetProcAddress_v2");
  gpa_legacy = driver_fn<PFN_cuGetProcAddress_v11030>("cuGetProcAddress");
  EXPECT(gpa != nullptr && gpa_legacy != nullptr);
  if (gpa == nullptr || gpa_legacy == nullptr) return;

  // Before cuInit: only cuGetProcAddress*, cuInit, cuDriverGetVersion (and the error strings) work.
  int version = 0;
  EXPECT(driver_fn<PFN_cuDriverGetVersion_v2020>("cuDriverGetVersion")(&version) == CUDA_SUCCESS && version == 13000);
  CUdeviceptr untouched = 0x1234;
  EXPECT(driver_fn<PFN_cuMemAlloc_v3020>("cuMemAlloc_v2")(&untouched, 16) == CUDA_ERROR_NOT_INITIALIZED);
  EXPECT(untouched == 0x1234);
  int count = -1;
  EXPECT(driver_fn<PFN_cuDeviceGetCount_v2000>("cuDeviceGetCount")(&count) == CUDA_ERROR_NOT_INITIALIZED);
  CUdevice dev = -1;
  EXPECT(driver_fn<PFN_cuCtxGetDevice_v2000>("cuCtxGetDevice")(&dev) == CUDA_ERROR_NOT_INITIALIZED);

  // Variant selection: base name + version, flags 2 for the per-thread variants.
  EXPECT_PROC("cuInit", 2000, 0, "cuInit");
  EXPECT_PROC("cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
  EXPECT_PROC("cuMemAlloc", 13000, 0, "cuMemAlloc_v2");
  EXPECT_PROC("cuMemAlloc", 13000, 2, "cuMemAlloc_v2");
  EXPECT_PROC("cuMemAlloc", 2000, 0, "cuMemAlloc");
  EXPECT_PROC("cuMemAlloc", 3010, 0, "cuMemAlloc");
  EXPECT_PROC("cuMemFree", 3020, 0, "cuMemFree_v2");
  EXPECT_PROC("cuMemFree", 2000, 0, "cuMemFree");
  EXPECT_PROC("cuMemAllocHost", 3020, 0, "cuMemAllocHost_v2");
  EXPECT_PROC("cuMemAllocHost", 2000, 0, "cuMemAllocHost");
  EXPECT_PROC("cuMemHostAlloc", 2020, 0, "cuMemHostAlloc");
  EXPECT_PROC("cuMemFreeHost", 2000, 0, "cuMemFreeHost");
  EXPECT_PROC("cuMemAllocManaged", 6000, 0, "cuMemAllocManaged");
  EXPECT_PROC("cuMemAllocAsync", 11020, 0, "cuMemAllocAsync");
  EXPECT_PROC("cuMemAllocAsync", 11020, 1, "cuMemAllocAsync");
  EXPECT_PROC("cuMemAllocAsync", 11020, 2, "cuMemAllocAsync_ptsz");
  EXPECT_PROC("cuMemFreeAsync", 12000, 2, "cuMemFreeAsync_ptsz");
  EXPECT_PROC("cuMemFreeAsync", 12000, 0, "cuMemFreeAsync");
  EXPECT_PROC("cuMemGetInfo", 3020, 0, "cuMemGetInfo_v2");
  EXPECT_PROC("cuMemcpy", 4000, 2, "cuMemcpy");
  EXPECT_PROC("cuMemcpy", 7000, 2, "cuMemcpy_ptds");
  EXPECT_PROC("cuMemsetD8", 3020, 2, "cuMemsetD8_v2");
  EXPECT_PROC("cuMemsetD8", 7000, 2, "cuMemsetD8_v2_ptds");
  EXPECT_PROC("cuStreamSynchronize", 7000, 2, "cuStreamSynchronize_ptsz");
  EXPECT_PROC("cuStreamDestroy", 4000, 0, "cuStreamDestroy_v2");
  EXPECT_PROC("cuCtxGetDevice", 2000, 0, "cuCtxGetDevice");
  EXPECT_PROC("cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2");
  EXPECT_PROC("cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2");
  EXPECT_PROC("cuDeviceGetUuid", 11040, 0, "cuDeviceGetUuid_v2");
  EXPECT_PROC("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
  EXPECT_PROC("cuGetProcAddress", 11080, 0, "cuGetProcAddress");
  EXPECT_PROC("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
  EXPECT_PROC_NONE("cuMemAlloc", 1000, 0, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_PROC_NONE("cuMemAllocAsync", 11010, 0, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_PROC_NONE("cuNoSuchEntryPoint", 13000, 0, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_PROC_NONE("cuMemAlloc_v2", 13000, 0, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);  // base names only

  void* fn = reinterpret_cast<void*>(0x1);
  EXPECT(gpa("", &fn, 13000, 0, nullptr) == CUDA_ERROR_NOT_FOUND && fn == nullptr);
  fn = reinterpret_cast<void*>(0x1);
  EXPECT(gpa("cuNoSuchEntryPoint", &fn, 13000, 0, nullptr) == CUDA_SUCCESS && fn == nullptr);  // NULL status ok
  EXPECT(gpa("cuMemAlloc", &fn, 13000, 0, nullptr) == CUDA_SUCCESS && fn == sym("cuMemAlloc_v2"));
  EXPECT(gpa("cuMemAlloc", &fn, 13010, 0, nullptr) == CUDA_ERROR_INVALID_VALUE);  // newer than the driver
  EXPECT(gpa("cuMemAlloc", &fn, 13000, 4, nullptr) == CUDA_ERROR_INVALID_VALUE);  // unknown flag
  EXPECT(gpa_legacy("cuMemAllocAsync", &fn, 11020, 2) == CUDA_SUCCESS && fn == sym("cuMemAllocAsync_ptsz"));
  EXPECT(gpa_legacy("cuNoSuchEntryPoint", &fn, 11030, 0) == CUDA_ERROR_NOT_FOUND && fn == nullptr);

  // Initialised.
  EXPECT(driver_fn<PFN_cuInit_v2000>("cuInit")(0) == CUDA_SUCCESS);
  EXPECT(driver_fn<PFN_cuDeviceGetCount_v2000>("cuDeviceGetCount")(&count) == CUDA_SUCCESS && count >= 2);
  if (count < 2) return;

  auto memAlloc = driver_fn<PFN_cuMemAlloc_v3020>("cuMemAlloc_v2");
  auto memFree = driver_fn<PFN_cuMemFree_v3020>("cuMemFree_v2");
  auto memAllocAsync = driver_fn<PFN_cuMemAllocAsync_v11020>("cuMemAllocAsync");
  auto memFreeAsync = driver_fn<PFN_cuMemFreeAsync_v11020>("cuMemFreeAsync");
  auto memAllocHost = driver_fn<PFN_cuMemAllocHost_v3020>("cuMemAllocHost_v2");
  auto memFreeHost = driver_fn<PFN_cuMemFreeHost_v2000>("cuMemFreeHost");
  auto memGetInfo = driver_fn<PFN_cuMemGetInfo_v3020>("cuMemGetInfo_v2");
  auto ctxSetCurrent = driver_fn<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent");
  auto ctxGetDevice = driver_fn<PFN_cuCtxGetDevice_v2000>("cuCtxGetDevice");
  auto retain = driver_fn<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain");
  auto release = driver_fn<PFN_cuDevicePrimaryCtxRelease_v11000>("cuDevicePrimaryCtxRelease_v2");
  auto streamCreate = driver_fn<PFN_cuStreamCreate_v2000>("cuStreamCreate");
  auto streamDestroy = driver_fn<PFN_cuStreamDestroy_v4000>("cuStreamDestroy_v2");
  auto uuidOf = driver_fn<PFN_cuDeviceGetUuid_v11040>("cuDeviceGetUuid_v2");
  auto busId = driver_fn<PFN_cuDeviceGetPCIBusId_v4010>("cuDeviceGetPCIBusId");

  // No current context on this thread yet.
  EXPECT(ctxGetDevice(&dev) == CUDA_ERROR_INVALID_CONTEXT);
  CUdeviceptr d = 0x1234;
  EXPECT(memAlloc(&d, 64) == CUDA_ERROR_INVALID_CONTEXT && d == 0x1234);

  CUcontext ctx0 = nullptr;
  CUcontext ctx1 = nullptr;
  EXPECT(retain(&ctx0, 0) == CUDA_SUCCESS && retain(&ctx1, 1) == CUDA_SUCCESS && ctx0 != ctx1);
  EXPECT(ctxSetCurrent(ctx1) == CUDA_SUCCESS);
  EXPECT(ctxGetDevice(&dev) == CUDA_SUCCESS && dev == 1);
  CUstream stream1 = nullptr;
  EXPECT(streamCreate(&stream1, 0) == CUDA_SUCCESS);
  CUdeviceptr on1 = 0;
  EXPECT(memAlloc(&on1, 1000) == CUDA_SUCCESS && on1 % 256 == 0);
  EXPECT(pointer_ordinal(reinterpret_cast<void*>(on1)) == 1);

  EXPECT(ctxSetCurrent(ctx0) == CUDA_SUCCESS);
  size_t free0 = 0;
  size_t total0 = 0;
  EXPECT(memGetInfo(&free0, &total0) == CUDA_SUCCESS && free0 == total0);
  CUdeviceptr on0 = 0;
  EXPECT(memAlloc(&on0, 1000) == CUDA_SUCCESS && on0 % 256 == 0 && on0 != on1);
  EXPECT(pointer_ordinal(reinterpret_cast<void*>(on0)) == 0);
  size_t free_after = 0;
  EXPECT(memGetInfo(&free_after, &total0) == CUDA_SUCCESS && free_after == free0 - 1000);
  // Interior pointers resolve to their allocation.
  EXPECT(pointer_ordinal(reinterpret_cast<void*>(on0 + 999)) == 0);
  EXPECT(pointer_ordinal(reinterpret_cast<void*>(on0 + 1000)) == -99 || on0 + 1000 == on1);

  // Stream-ordered: the stream's device (1), or the current context's for stream 0 (0).
  CUdeviceptr async1 = 0;
  CUdeviceptr async0 = 0;
  EXPECT(memAllocAsync(&async1, 2048, stream1) == CUDA_SUCCESS && pointer_ordinal(reinterpret_cast<void*>(async1)) == 1);
  EXPECT(memAllocAsync(&async0, 4096, nullptr) == CUDA_SUCCESS && pointer_ordinal(reinterpret_cast<void*>(async0)) == 0);
  EXPECT(memFreeAsync(async1, stream1) == CUDA_SUCCESS);
  EXPECT(memFreeAsync(async0, nullptr) == CUDA_SUCCESS);

  // Out of memory leaves the out-parameter alone.
  d = 0xabcd00;
  EXPECT(memAlloc(&d, total0 + 1) == CUDA_ERROR_OUT_OF_MEMORY && d == 0xabcd00);
  d = 0xabcd00;
  EXPECT(memAlloc(&d, free_after + 1) == CUDA_ERROR_OUT_OF_MEMORY && d == 0xabcd00);

  // Pinned host memory counts against no device.
  void* pinned = nullptr;
  EXPECT(memAllocHost(&pinned, 1 << 20) == CUDA_SUCCESS && pinned != nullptr);
  size_t free_pinned = 0;
  EXPECT(memGetInfo(&free_pinned, &total0) == CUDA_SUCCESS && free_pinned == free_after);

  // Frees: unknown / interior / wrong kind -> CUDA_ERROR_INVALID_VALUE; 0 -> success.
  int local = 0;
  EXPECT(memFree(reinterpret_cast<CUdeviceptr>(&local)) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memFree(on0 + 256) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memFree(reinterpret_cast<CUdeviceptr>(pinned)) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memFreeHost(reinterpret_cast<void*>(on0)) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memFree(0) == CUDA_SUCCESS);
  EXPECT(memFree(on0) == CUDA_SUCCESS);
  EXPECT(memFree(on0) == CUDA_ERROR_INVALID_VALUE);  // double free
  EXPECT(memFree(on1) == CUDA_SUCCESS);              // freed from another device's context: fine
  EXPECT(memFreeHost(pinned) == CUDA_SUCCESS);
  EXPECT(memGetInfo(&free_after, &total0) == CUDA_SUCCESS && free_after == total0);

  // The legacy 32-bit cuMemAlloc is a different function with its own ABI.
  using LegacyAlloc = CUresult (*)(unsigned int*, unsigned int);
  using LegacyFree = CUresult (*)(unsigned int);
  auto legacyAlloc = driver_fn<LegacyAlloc>("cuMemAlloc");
  auto legacyFree = driver_fn<LegacyFree>("cuMemFree");
  unsigned int small = 0;
  EXPECT(legacyAlloc != nullptr && reinterpret_cast<void*>(legacyAlloc) != reinterpret_cast<void*>(memAlloc));
  EXPECT(legacyAlloc(&small, 4096) == CUDA_SUCCESS && small != 0 && small % 256 == 0);
  EXPECT(legacyFree(small) == CUDA_SUCCESS);

  EXPECT(streamDestroy(stream1) == CUDA_SUCCESS);
  EXPECT(streamDestroy(stream1) == CUDA_ERROR_INVALID_HANDLE);

  // Stable, distinct fake UUIDs and PCI bus ids.
  CUuuid u0a{}, u0b{}, u1{};
  EXPECT(uuidOf(&u0a, 0) == CUDA_SUCCESS && uuidOf(&u0b, 0) == CUDA_SUCCESS && uuidOf(&u1, 1) == CUDA_SUCCESS);
  EXPECT(std::memcmp(&u0a, &u0b, sizeof u0a) == 0 && std::memcmp(&u0a, &u1, sizeof u0a) != 0);
  char bus[32] = {};
  EXPECT(busId(bus, sizeof bus, 1) == CUDA_SUCCESS && std::strlen(bus) == 12);

  // The current context is per thread.
  std::thread([&] {
    CUdevice other = -1;
    EXPECT(ctxGetDevice(&other) == CUDA_ERROR_INVALID_CONTEXT);
  }).join();

  const char* text = nullptr;
  EXPECT(driver_fn<PFN_cuGetErrorString_v6000>("cuGetErrorString")(CUDA_ERROR_OUT_OF_MEMORY, &text) == CUDA_SUCCESS &&
         text != nullptr);

  EXPECT(ctxSetCurrent(nullptr) == CUDA_SUCCESS);
  EXPECT(release(0) == CUDA_SUCCESS && release(1) == CUDA_SUCCESS);
}

void runtime_checks() {
  int count = 0;
  EXPECT(cudaGetDeviceCount(&count) == cudaSuccess && count >= 2);
  int dev = -1;
  EXPECT(cudaGetDevice(&dev) == cudaSuccess && dev == 0);
  int version = 0;
  EXPECT(cudaRuntimeGetVersion(&version) == cudaSuccess && version == 13000);
  EXPECT(cudaDriverGetVersion(&version) == cudaSuccess && version == 13000);

  // Entry points come from the driver's cuGetProcAddress: the very addresses dlsym gives.
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  EXPECT(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &status) == cudaSuccess &&
         fn == sym("cuMemAlloc_v2") && status == cudaDriverEntryPointSuccess);
  EXPECT(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 11020, cudaEnablePerThreadDefaultStream, &status) ==
             cudaSuccess &&
         fn == sym("cuMemAllocAsync_ptsz"));
  EXPECT(cudaGetDriverEntryPointByVersion("cuNoSuchEntryPoint", &fn, 13000, cudaEnableDefault, &status) ==
             cudaSuccess &&
         fn == nullptr && status == cudaDriverEntryPointSymbolNotFound);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // deprecated in 13.0, still exported
  EXPECT(cudaGetDriverEntryPoint("cuMemFree", &fn, cudaEnableDefault, &status) == cudaSuccess &&
         fn == sym("cuMemFree_v2"));
#pragma GCC diagnostic pop

  // Device selection per thread; an allocation lands on the thread's device.
  EXPECT(cudaSetDevice(1) == cudaSuccess);
  EXPECT(cudaGetDevice(&dev) == cudaSuccess && dev == 1);
  void* p = nullptr;
  EXPECT(cudaMalloc(&p, 4096) == cudaSuccess && pointer_ordinal(p) == 1);
  EXPECT(cudaFree(p) == cudaSuccess);
  EXPECT(cudaSetDevice(99) == cudaErrorInvalidDevice);
  EXPECT(cudaGetLastError() == cudaErrorInvalidDevice);
  EXPECT(cudaGetLastError() == cudaSuccess);
  std::thread([] {
    int d = -1;
    void* q = nullptr;
    EXPECT(cudaGetDevice(&d) == cudaSuccess && d == 0);
    EXPECT(cudaMalloc(&q, 4096) == cudaSuccess && pointer_ordinal(q) == 0);
    EXPECT(cudaFree(q) == cudaSuccess);
  }).join();

  // Pinned memory: the runtime path through cuMemAllocHost_v2 / cuMemHostAlloc.
  void* h = nullptr;
  EXPECT(cudaMallocHost(&h, 1000) == cudaSuccess && h != nullptr);
  EXPECT(cudaFree(h) == cudaErrorInvalidValue);
  EXPECT(cudaFreeHost(h) == cudaSuccess);
  EXPECT(cudaHostAlloc(&h, 1000, cudaHostAllocMapped) == cudaSuccess && cudaFreeHost(h) == cudaSuccess);

  // Errors.
  int local = 0;
  EXPECT(cudaFree(&local) == cudaErrorInvalidValue);
  (void)cudaGetLastError();
  EXPECT(std::strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
  EXPECT(cudaGetErrorString(cudaErrorMemoryAllocation) != nullptr);

  // Copies and sets go through the driver and really move bytes.
  void* a = nullptr;
  void* b = nullptr;
  EXPECT(cudaMalloc(&a, 256) == cudaSuccess && cudaMalloc(&b, 256) == cudaSuccess);
  EXPECT(cudaMemset(a, 0x7f, 256) == cudaSuccess);
  EXPECT(cudaMemcpy(b, a, 256, cudaMemcpyDeviceToDevice) == cudaSuccess);
  unsigned char host[256] = {};
  EXPECT(cudaMemcpy(host, b, 256, cudaMemcpyDeviceToHost) == cudaSuccess && host[0] == 0x7f && host[255] == 0x7f);
  EXPECT(cudaMemset(a, 0, 257) == cudaErrorInvalidValue);  // runs past the allocation
  (void)cudaGetLastError();
  EXPECT(cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess);
  EXPECT(cudaDeviceSynchronize() == cudaSuccess);
}

}  // namespace

int main() {
  g_driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (g_driver == nullptr) {
    std::fprintf(stderr, "standin_prog_contract: dlopen(libcuda.so.1): %s\n", dlerror());
    return 1;
  }
  driver_checks();
  runtime_checks();
  std::printf("standin_prog_contract: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
