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
  // The further allocation families.
  EXPECT_PROC("cuMemAllocPitch", 3020, 0, "cuMemAllocPitch_v2");
  EXPECT_PROC("cuMemAllocPitch", 3010, 0, "cuMemAllocPitch");
  EXPECT_PROC("cuMemGetAddressRange", 3020, 0, "cuMemGetAddressRange_v2");
  EXPECT_PROC("cuMemGetAddressRange", 2000, 0, "cuMemGetAddressRange");
  EXPECT_PROC("cuMemHostRegister", 6050, 0, "cuMemHostRegister_v2");
  EXPECT_PROC("cuMemHostRegister", 6000, 0, "cuMemHostRegister");
  EXPECT_PROC("cuMemHostUnregister", 4000, 0, "cuMemHostUnregister");
  EXPECT_PROC("cuIpcGetMemHandle", 4010, 0, "cuIpcGetMemHandle");
  EXPECT_PROC("cuIpcOpenMemHandle", 11000, 0, "cuIpcOpenMemHandle_v2");
  EXPECT_PROC("cuIpcOpenMemHandle", 10020, 0, "cuIpcOpenMemHandle");
  EXPECT_PROC("cuIpcCloseMemHandle", 4010, 0, "cuIpcCloseMemHandle");
  EXPECT_PROC("cuDeviceGetDefaultMemPool", 11020, 0, "cuDeviceGetDefaultMemPool");
  EXPECT_PROC("cuMemPoolCreate", 11020, 0, "cuMemPoolCreate");
  EXPECT_PROC("cuMemPoolDestroy", 11020, 0, "cuMemPoolDestroy");
  EXPECT_PROC("cuMemPoolTrimTo", 11020, 0, "cuMemPoolTrimTo");
  EXPECT_PROC("cuMemPoolGetAttribute", 11020, 0, "cuMemPoolGetAttribute");
  EXPECT_PROC("cuMemAllocFromPoolAsync", 11020, 0, "cuMemAllocFromPoolAsync");
  EXPECT_PROC("cuMemAllocFromPoolAsync", 12000, 2, "cuMemAllocFromPoolAsync_ptsz");
  EXPECT_PROC("cuMemGetAllocationGranularity", 10020, 0, "cuMemGetAllocationGranularity");
  EXPECT_PROC("cuMemCreate", 10020, 0, "cuMemCreate");
  EXPECT_PROC("cuMemRelease", 10020, 0, "cuMemRelease");
  EXPECT_PROC("cuMemAddressReserve", 10020, 0, "cuMemAddressReserve");
  EXPECT_PROC("cuMemAddressFree", 10020, 0, "cuMemAddressFree");
  EXPECT_PROC("cuMemMap", 13000, 2, "cuMemMap");
  EXPECT_PROC("cuMemUnmap", 10020, 0, "cuMemUnmap");
  EXPECT_PROC("cuMemSetAccess", 10020, 0, "cuMemSetAccess");
  EXPECT_PROC("cuMemGetAllocationPropertiesFromHandle", 10020, 0, "cuMemGetAllocationPropertiesFromHandle");
  EXPECT_PROC_NONE("cuIpcOpenMemHandle", 4000, 0, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_PROC_NONE("cuMemAllocFromPoolAsync", 11010, 2, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_PROC_NONE("cuMemCreate", 10010, 0, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_PROC_NONE("cuMemAllocPitch_v2", 13000, 0, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
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

size_t range_size(CUdeviceptr p) {
  auto get = driver_fn<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute");
  size_t size = 0;
  if (get(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) != CUDA_SUCCESS) return 0;
  return size;
}

// Free bytes of `dev` as cuMemGetInfo_v2 reports them (with dev's primary context current).
size_t free_bytes(int dev) {
  CUcontext ctx = nullptr;
  CUcontext previous = nullptr;
  size_t free = 0;
  size_t total = 0;
  driver_fn<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent")(&previous);
  driver_fn<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain")(&ctx, dev);
  driver_fn<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent")(ctx);
  if (driver_fn<PFN_cuMemGetInfo_v3020>("cuMemGetInfo_v2")(&free, &total) != CUDA_SUCCESS) free = 0;
  driver_fn<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent")(previous);
  driver_fn<PFN_cuDevicePrimaryCtxRelease_v11000>("cuDevicePrimaryCtxRelease_v2")(dev);
  return free;
}

// Pitched allocations, pools, host registration, IPC, address ranges and VMM (README: "Further
// allocation families"). Leaves nothing behind.
void family_checks() {
  auto ctxSetCurrent = driver_fn<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent");
  auto retain = driver_fn<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain");
  auto release = driver_fn<PFN_cuDevicePrimaryCtxRelease_v11000>("cuDevicePrimaryCtxRelease_v2");
  auto memAlloc = driver_fn<PFN_cuMemAlloc_v3020>("cuMemAlloc_v2");
  auto memFree = driver_fn<PFN_cuMemFree_v3020>("cuMemFree_v2");
  auto memAllocAsync = driver_fn<PFN_cuMemAllocAsync_v11020>("cuMemAllocAsync");
  auto memFreeAsync = driver_fn<PFN_cuMemFreeAsync_v11020>("cuMemFreeAsync");
  auto memAllocManaged = driver_fn<PFN_cuMemAllocManaged_v6000>("cuMemAllocManaged");
  auto memsetD8 = driver_fn<PFN_cuMemsetD8_v3020>("cuMemsetD8_v2");
  auto copy = driver_fn<PFN_cuMemcpy_v4000>("cuMemcpy");
  auto pointerGet = driver_fn<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute");
  auto allocPitch = driver_fn<PFN_cuMemAllocPitch_v3020>("cuMemAllocPitch_v2");
  using LegacyAllocPitch = CUresult (*)(unsigned int*, unsigned int*, unsigned int, unsigned int, unsigned int);
  using LegacyFree = CUresult (*)(unsigned int);
  auto legacyAllocPitch = driver_fn<LegacyAllocPitch>("cuMemAllocPitch");
  auto legacyFree = driver_fn<LegacyFree>("cuMemFree");
  auto defaultPool = driver_fn<PFN_cuDeviceGetDefaultMemPool_v11020>("cuDeviceGetDefaultMemPool");
  auto poolCreate = driver_fn<PFN_cuMemPoolCreate_v11020>("cuMemPoolCreate");
  auto poolDestroy = driver_fn<PFN_cuMemPoolDestroy_v11020>("cuMemPoolDestroy");
  auto poolTrim = driver_fn<PFN_cuMemPoolTrimTo_v11020>("cuMemPoolTrimTo");
  auto poolGet = driver_fn<PFN_cuMemPoolGetAttribute_v11020>("cuMemPoolGetAttribute");
  auto fromPool = driver_fn<PFN_cuMemAllocFromPoolAsync_v11020>("cuMemAllocFromPoolAsync");
  auto fromPoolPtsz = driver_fn<PFN_cuMemAllocFromPoolAsync_v11020_ptsz>("cuMemAllocFromPoolAsync_ptsz");
  auto hostRegister = driver_fn<PFN_cuMemHostRegister_v6050>("cuMemHostRegister_v2");
  auto legacyHostRegister = driver_fn<PFN_cuMemHostRegister_v6050>("cuMemHostRegister");  // same ABI
  auto hostUnregister = driver_fn<PFN_cuMemHostUnregister_v4000>("cuMemHostUnregister");
  auto ipcGet = driver_fn<PFN_cuIpcGetMemHandle_v4010>("cuIpcGetMemHandle");
  auto ipcOpen = driver_fn<PFN_cuIpcOpenMemHandle_v11000>("cuIpcOpenMemHandle_v2");
  auto legacyIpcOpen = driver_fn<PFN_cuIpcOpenMemHandle_v11000>("cuIpcOpenMemHandle");  // same ABI
  auto ipcClose = driver_fn<PFN_cuIpcCloseMemHandle_v4010>("cuIpcCloseMemHandle");
  auto addressRange = driver_fn<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange_v2");
  auto granularityOf = driver_fn<PFN_cuMemGetAllocationGranularity_v10020>("cuMemGetAllocationGranularity");
  auto memCreate = driver_fn<PFN_cuMemCreate_v10020>("cuMemCreate");
  auto memRelease = driver_fn<PFN_cuMemRelease_v10020>("cuMemRelease");
  auto reserve = driver_fn<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
  auto addressFree = driver_fn<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
  auto memMap = driver_fn<PFN_cuMemMap_v10020>("cuMemMap");
  auto memUnmap = driver_fn<PFN_cuMemUnmap_v10020>("cuMemUnmap");
  auto setAccess = driver_fn<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
  auto propsOf = driver_fn<PFN_cuMemGetAllocationPropertiesFromHandle_v10020>("cuMemGetAllocationPropertiesFromHandle");
  EXPECT(reinterpret_cast<void*>(legacyHostRegister) != reinterpret_cast<void*>(hostRegister) &&
         reinterpret_cast<void*>(legacyIpcOpen) != reinterpret_cast<void*>(ipcOpen));

  CUcontext ctx0 = nullptr;
  CUcontext ctx1 = nullptr;
  EXPECT(retain(&ctx0, 0) == CUDA_SUCCESS && retain(&ctx1, 1) == CUDA_SUCCESS);
  EXPECT(ctxSetCurrent(ctx0) == CUDA_SUCCESS);
  const size_t total0 = free_bytes(0);
  const size_t total1 = free_bytes(1);
  constexpr size_t kMiB = size_t{1} << 20;

  // ---- pitched: pitch = width rounded up to 512, bytes = pitch * height ----
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  EXPECT(allocPitch(&pitched, &pitch, 1000, 3, 4) == CUDA_SUCCESS && pitch == 1024 && range_size(pitched) == 3072);
  EXPECT(free_bytes(0) == total0 - 3072 && pointer_ordinal(reinterpret_cast<void*>(pitched)) == 0);
  EXPECT(memsetD8(pitched, 1, 3072) == CUDA_SUCCESS);
  pitch = 77;
  CUdeviceptr untouched = 0x1234;
  EXPECT(allocPitch(&untouched, &pitch, 1000, 3, 3) == CUDA_ERROR_INVALID_VALUE && untouched == 0x1234 && pitch == 77);
  EXPECT(allocPitch(&untouched, &pitch, 0, 3, 4) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(allocPitch(&untouched, nullptr, 16, 3, 4) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memFree(pitched) == CUDA_SUCCESS && free_bytes(0) == total0);
  unsigned int small = 0;
  unsigned int small_pitch = 0;
  EXPECT(legacyAllocPitch(&small, &small_pitch, 100, 2, 8) == CUDA_SUCCESS && small != 0 && small_pitch == 512 &&
         range_size(small) == 1024);
  EXPECT(legacyFree(small) == CUDA_SUCCESS);
  std::thread([&] {
    CUdeviceptr d = 0;
    size_t p = 0;
    EXPECT(allocPitch(&d, &p, 64, 1, 4) == CUDA_ERROR_INVALID_CONTEXT);
  }).join();

  // ---- pools: the default pool per device; reserved = used rounded up to 2 MiB ----
  CUmemoryPool pool0 = nullptr;
  CUmemoryPool pool0b = nullptr;
  CUmemoryPool pool1 = nullptr;
  EXPECT(defaultPool(&pool0, 0) == CUDA_SUCCESS && defaultPool(&pool0b, 0) == CUDA_SUCCESS && pool0 == pool0b);
  EXPECT(defaultPool(&pool1, 1) == CUDA_SUCCESS && pool1 != pool0);
  EXPECT(defaultPool(&pool1, 99) == CUDA_ERROR_INVALID_DEVICE);
  CUdeviceptr async = 0;
  EXPECT(memAllocAsync(&async, 1000, nullptr) == CUDA_SUCCESS);  // device 0's default pool
  cuuint64_t used = 0;
  cuuint64_t reserved = 0;
  EXPECT(poolGet(pool0, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_SUCCESS && used == 1000);
  EXPECT(poolGet(pool0, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS && reserved == 2 * kMiB);
  EXPECT(free_bytes(0) == total0 - 2 * kMiB);
  CUmemoryPool owner = nullptr;
  EXPECT(pointerGet(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, async) == CUDA_SUCCESS && owner == pool0);
  EXPECT(memFree(async) == CUDA_SUCCESS);  // pool memory may go back through cuMemFree_v2
  EXPECT(poolGet(pool0, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_SUCCESS && used == 0);
  EXPECT(poolGet(pool0, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS && reserved == 0);
  EXPECT(poolGet(pool0, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &used) == CUDA_SUCCESS && used >= 1000);
  EXPECT(free_bytes(0) == total0);
  EXPECT(poolDestroy(pool0) == CUDA_ERROR_INVALID_VALUE);  // default pools stay

  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 1;
  props.maxSize = 4 * kMiB;
  CUmemoryPool mine = nullptr;
  EXPECT(poolCreate(&mine, &props) == CUDA_SUCCESS && mine != nullptr && mine != pool1);
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  EXPECT(fromPool(&a, 3 * kMiB, mine, nullptr) == CUDA_SUCCESS);  // ordered on device 0's stream 0
  EXPECT(pointer_ordinal(reinterpret_cast<void*>(a)) == 1);       // memory of the pool's device
  CUdeviceptr over = 0x5678;
  EXPECT(fromPool(&over, 2 * kMiB, mine, nullptr) == CUDA_ERROR_OUT_OF_MEMORY && over == 0x5678);  // maxSize
  EXPECT(fromPoolPtsz(&b, 64 * 1024, mine, CU_STREAM_PER_THREAD) == CUDA_SUCCESS);
  EXPECT(poolGet(mine, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS && reserved == 4 * kMiB);
  EXPECT(poolGet(mine, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_SUCCESS && used == 3 * kMiB + 64 * 1024);
  EXPECT(free_bytes(1) == total1 - 4 * kMiB);
  int reuse = 0;
  EXPECT(poolGet(mine, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse) == CUDA_SUCCESS && reuse == 1);
  EXPECT(poolGet(mine, static_cast<CUmemPool_attribute>(99), &used) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(poolTrim(mine, 0) == CUDA_SUCCESS);
  EXPECT(poolDestroy(mine) == CUDA_SUCCESS);  // with live allocations: they stay valid
  EXPECT(fromPool(&over, 4096, mine, nullptr) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(poolGet(mine, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(poolDestroy(mine) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memFreeAsync(a, nullptr) == CUDA_SUCCESS && memFree(b) == CUDA_SUCCESS);
  EXPECT(free_bytes(1) == total1);
  props.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
  EXPECT(poolCreate(&mine, &props) == CUDA_ERROR_INVALID_VALUE);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.id = 99;
  EXPECT(poolCreate(&mine, &props) == CUDA_ERROR_INVALID_DEVICE);

  // ---- host registration: the caller's memory, counted against no device ----
  alignas(4096) static unsigned char host[64 * 1024];
  EXPECT(hostRegister(host, sizeof host, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS && free_bytes(0) == total0);
  unsigned int type = 0;
  void* host_ptr = nullptr;
  EXPECT(pointerGet(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(host + 10)) ==
             CUDA_SUCCESS &&
         type == CU_MEMORYTYPE_HOST);
  EXPECT(pointerGet(&host_ptr, CU_POINTER_ATTRIBUTE_HOST_POINTER, reinterpret_cast<CUdeviceptr>(host)) ==
             CUDA_SUCCESS &&
         host_ptr == host);
  EXPECT(hostRegister(host + 4096, 4096, 0) == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT(hostUnregister(host + 4096) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);  // interior
  EXPECT(hostUnregister(host) == CUDA_SUCCESS);
  EXPECT(hostUnregister(host) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT(hostRegister(host, 0, 0) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(hostRegister(host, sizeof host, 0x100) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(legacyHostRegister(host, 100, 0) == CUDA_SUCCESS && hostUnregister(host) == CUDA_SUCCESS);
  std::thread([&] { EXPECT(hostRegister(host, 100, 0) == CUDA_ERROR_INVALID_CONTEXT); }).join();

  // ---- IPC: an import is a distinct address; from 64 KiB on it maps the exporter's pages ----
  CUdeviceptr exported = 0;
  EXPECT(memAlloc(&exported, 10000) == CUDA_SUCCESS);
  EXPECT(memsetD8(exported, 0x21, 10000) == CUDA_SUCCESS);
  CUipcMemHandle handle{};
  EXPECT(ipcGet(&handle, exported) == CUDA_SUCCESS);
  EXPECT(ipcGet(&handle, exported + 256) == CUDA_ERROR_INVALID_VALUE);  // not an allocation's start
  CUdeviceptr imported = 0;
  EXPECT(ipcOpen(&imported, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS && imported != 0 &&
         imported != exported);
  CUdeviceptr base = 0;
  size_t size = 0;
  EXPECT(addressRange(&base, &size, imported + 5) == CUDA_SUCCESS && base == imported && size == 10000);
  EXPECT(addressRange(nullptr, &size, exported + 9999) == CUDA_SUCCESS && size == 10000);
  EXPECT(addressRange(&base, nullptr, exported + 10000) == CUDA_ERROR_NOT_FOUND);
  EXPECT(pointer_ordinal(reinterpret_cast<void*>(imported)) == 0 && free_bytes(0) == total0 - 10000);
  unsigned char bytes[16] = {};
  // Under 64 KiB: a copy of the bytes as they were when opened.
  EXPECT(copy(reinterpret_cast<CUdeviceptr>(bytes), imported + 9984, 16) == CUDA_SUCCESS && bytes[15] == 0x21);
  EXPECT(memsetD8(imported, 0x44, 1) == CUDA_SUCCESS &&
         copy(reinterpret_cast<CUdeviceptr>(bytes), exported, 1) == CUDA_SUCCESS && bytes[0] == 0x21);
  {
    CUdeviceptr big = 0;
    CUdeviceptr view = 0;
    CUipcMemHandle big_handle{};
    EXPECT(memAlloc(&big, kMiB + 100) == CUDA_SUCCESS && ipcGet(&big_handle, big) == CUDA_SUCCESS);
    EXPECT(ipcOpen(&view, big_handle, 0) == CUDA_SUCCESS && view != big && range_size(view) == kMiB + 100);
    EXPECT(memsetD8(big + kMiB, 0x33, 100) == CUDA_SUCCESS &&
           copy(reinterpret_cast<CUdeviceptr>(bytes), view + kMiB + 84, 16) == CUDA_SUCCESS && bytes[15] == 0x33);
    EXPECT(memsetD8(view, 0x44, 1) == CUDA_SUCCESS &&
           copy(reinterpret_cast<CUdeviceptr>(bytes), big, 1) == CUDA_SUCCESS && bytes[0] == 0x44);
    EXPECT(memFree(big) == CUDA_SUCCESS);  // the exporter goes first: the import still reads its bytes
    EXPECT(copy(reinterpret_cast<CUdeviceptr>(bytes), view, 1) == CUDA_SUCCESS && bytes[0] == 0x44);
    EXPECT(ipcClose(view) == CUDA_SUCCESS);
  }
  CUdeviceptr again = 0;
  EXPECT(ipcOpen(&again, handle, 0) == CUDA_SUCCESS && again == imported);  // same context: same pointer
  EXPECT(ctxSetCurrent(ctx1) == CUDA_SUCCESS);
  CUdeviceptr from1 = 0;
  EXPECT(legacyIpcOpen(&from1, handle, 1) == CUDA_SUCCESS && from1 != imported && from1 != exported);
  EXPECT(ipcClose(from1) == CUDA_SUCCESS);
  EXPECT(ctxSetCurrent(ctx0) == CUDA_SUCCESS);
  EXPECT(memFree(imported) == CUDA_ERROR_INVALID_VALUE);  // imports go back through cuIpcCloseMemHandle
  EXPECT(ipcClose(imported) == CUDA_SUCCESS && addressRange(&base, &size, imported) == CUDA_SUCCESS);
  EXPECT(ipcClose(imported) == CUDA_SUCCESS && addressRange(&base, &size, imported) == CUDA_ERROR_NOT_FOUND);
  EXPECT(ipcClose(imported) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(ipcOpen(&again, handle, 2) == CUDA_ERROR_INVALID_VALUE);
  CUipcMemHandle garbage{};
  EXPECT(ipcOpen(&again, garbage, 0) == CUDA_ERROR_INVALID_HANDLE);
  std::thread([&] {
    CUdeviceptr d = 0;
    EXPECT(ipcOpen(&d, handle, 0) == CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(addressRange(&base, &size, exported) == CUDA_ERROR_INVALID_CONTEXT);
  }).join();
  EXPECT(memFree(exported) == CUDA_SUCCESS);
  EXPECT(ipcOpen(&again, handle, 0) == CUDA_ERROR_INVALID_HANDLE);  // freed since
  EXPECT(memAllocAsync(&async, 4096, nullptr) == CUDA_SUCCESS);
  EXPECT(ipcGet(&handle, async) == CUDA_ERROR_INVALID_VALUE && memFree(async) == CUDA_SUCCESS);
  CUdeviceptr managed = 0;
  EXPECT(memAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  EXPECT(ipcGet(&handle, managed) == CUDA_ERROR_INVALID_VALUE && memFree(managed) == CUDA_SUCCESS);
  EXPECT(free_bytes(0) == total0);

  // ---- VMM: counted on prop->location.id's device whatever the thread's context ----
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  size_t granularity = 0;
  EXPECT(granularityOf(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == CUDA_SUCCESS &&
         granularity == 2 * kMiB);
  EXPECT(granularityOf(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS &&
         granularity == 2 * kMiB);
  CUmemGenericAllocationHandle h = 0;
  std::thread([&] {  // no current context on this thread
    CUmemGenericAllocationHandle bad = 0x77;
    CUmemAllocationProp wrong = prop;
    wrong.location.id = 99;
    EXPECT(memCreate(&bad, 2 * granularity, &wrong, 0) == CUDA_ERROR_INVALID_DEVICE && bad == 0x77);
    EXPECT(granularityOf(&granularity, &wrong, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_ERROR_INVALID_DEVICE);
    EXPECT(memCreate(&bad, kMiB, &prop, 0) == CUDA_ERROR_INVALID_VALUE);             // not a granule multiple
    EXPECT(memCreate(&bad, 2 * granularity, &prop, 1) == CUDA_ERROR_INVALID_VALUE);  // flags
    EXPECT(memCreate(&bad, total1 + granularity, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY && bad == 0x77);
    EXPECT(memCreate(&h, 2 * granularity, &prop, 0) == CUDA_SUCCESS && h != 0);
  }).join();
  EXPECT(free_bytes(1) == total1 - 2 * granularity && free_bytes(0) == total0);
  CUmemAllocationProp got{};
  EXPECT(propsOf(&got, h) == CUDA_SUCCESS && got.location.id == 1 && got.type == CU_MEM_ALLOCATION_TYPE_PINNED);

  CUdeviceptr va = 0;
  CUdeviceptr other_va = 0;
  EXPECT(reserve(&va, 4 * granularity, 0, 0, 0) == CUDA_SUCCESS && va % granularity == 0);
  EXPECT(reserve(&other_va, granularity, 0, 0, 0) == CUDA_SUCCESS &&
         (other_va + granularity <= va || other_va >= va + 4 * granularity));
  EXPECT(reserve(&va, 4097, 0, 0, 0) == CUDA_ERROR_INVALID_VALUE);  // not a page multiple
  EXPECT(memMap(va, 2 * granularity, 0, h, 0) == CUDA_SUCCESS);
  EXPECT(memMap(va + granularity, granularity, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);  // mapped already
  EXPECT(memMap(va + 2 * granularity, granularity, 2 * granularity, h, 0) == CUDA_ERROR_INVALID_VALUE);  // offset
  EXPECT(memMap(va + 3 * granularity, 2 * granularity, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);  // past reservation
  EXPECT(memMap(reinterpret_cast<CUdeviceptr>(host), granularity, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memMap(va + 2 * granularity, granularity, granularity, h, 0) == CUDA_SUCCESS);  // second view, offset
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  EXPECT(setAccess(va, 3 * granularity, &access, 1) == CUDA_SUCCESS);
  EXPECT(setAccess(va, 4 * granularity, &access, 1) == CUDA_ERROR_INVALID_VALUE);  // last granule unmapped
  access.location.id = 99;
  EXPECT(setAccess(va, granularity, &access, 1) == CUDA_ERROR_INVALID_DEVICE);
  EXPECT(pointer_ordinal(reinterpret_cast<void*>(va + 5)) == 1 && range_size(va) == 2 * granularity);
  EXPECT(addressRange(&base, &size, va + granularity + 1) == CUDA_SUCCESS && base == va && size == 2 * granularity);
  // Both views show the same physical bytes.
  EXPECT(memsetD8(va + granularity, 0x5c, 16) == CUDA_SUCCESS &&
         copy(reinterpret_cast<CUdeviceptr>(bytes), va + 2 * granularity, 16) == CUDA_SUCCESS && bytes[7] == 0x5c);
  EXPECT(memFree(va) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(free_bytes(1) == total1 - 2 * granularity);  // mappings hold no memory of their own
  EXPECT(memUnmap(va, granularity) == CUDA_ERROR_INVALID_VALUE);  // part of a mapping
  EXPECT(addressFree(va, 4 * granularity) == CUDA_ERROR_INVALID_VALUE);  // still mapped
  EXPECT(memUnmap(va, 3 * granularity) == CUDA_SUCCESS);  // both mappings, back to back
  EXPECT(range_size(va) == 0 && free_bytes(1) == total1 - 2 * granularity);  // the handle still holds it
  // Released while mapped: the memory lives (and counts) until the last unmap.
  EXPECT(memMap(va, 2 * granularity, 0, h, 0) == CUDA_SUCCESS);
  EXPECT(memRelease(h) == CUDA_SUCCESS && memRelease(h) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(propsOf(&got, h) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memMap(va + 2 * granularity, granularity, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(memsetD8(va, 0x11, 2 * granularity) == CUDA_SUCCESS && free_bytes(1) == total1 - 2 * granularity);
  EXPECT(memUnmap(va, 2 * granularity) == CUDA_SUCCESS && free_bytes(1) == total1);
  EXPECT(addressFree(va, 2 * granularity) == CUDA_ERROR_INVALID_VALUE);  // size must match
  EXPECT(addressFree(va, 4 * granularity) == CUDA_SUCCESS);
  EXPECT(addressFree(va, 4 * granularity) == CUDA_ERROR_INVALID_VALUE);
  EXPECT(addressFree(other_va, granularity) == CUDA_SUCCESS);
  EXPECT(memRelease(0x1234) == CUDA_ERROR_INVALID_VALUE);

  EXPECT(free_bytes(0) == total0 && free_bytes(1) == total1);
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

  // The further families through the runtime (device 1 is current).
  EXPECT(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 12000, cudaEnableDefault, &status) == cudaSuccess &&
         fn == sym("cuMemCreate"));
  EXPECT(cudaGetDriverEntryPointByVersion("cuMemAllocFromPoolAsync", &fn, 12000, cudaEnablePerThreadDefaultStream,
                                          &status) == cudaSuccess &&
         fn == sym("cuMemAllocFromPoolAsync_ptsz"));
  size_t pitch = 0;
  EXPECT(cudaMallocPitch(&p, &pitch, 100, 7) == cudaSuccess && pitch == 512 && range_size(reinterpret_cast<CUdeviceptr>(p)) == 3584 &&
         pointer_ordinal(p) == 1);
  EXPECT(cudaFree(p) == cudaSuccess);
  EXPECT(cudaMallocPitch(&p, &pitch, 0, 7) == cudaSuccess && p == nullptr);
  cudaPitchedPtr volume{};
  EXPECT(cudaMalloc3D(&volume, cudaExtent{100, 3, 5}) == cudaSuccess && volume.pitch == 512 && volume.xsize == 100 &&
         volume.ysize == 3 && range_size(reinterpret_cast<CUdeviceptr>(volume.ptr)) == 512 * 3 * 5);
  EXPECT(cudaFree(volume.ptr) == cudaSuccess);

  cudaMemPool_t pool = nullptr;
  EXPECT(cudaDeviceGetDefaultMemPool(&pool, 1) == cudaSuccess && pool != nullptr);
  EXPECT(cudaDeviceGetDefaultMemPool(&pool, 64) == cudaErrorInvalidDevice);
  (void)cudaGetLastError();
  EXPECT(cudaMallocAsync(&p, 5000, nullptr) == cudaSuccess);
  cuuint64_t used = 0;
  cuuint64_t reserved = 0;
  EXPECT(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess && used == 5000);
  EXPECT(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
         reserved == (size_t{2} << 20));
  EXPECT(cudaFreeAsync(p, nullptr) == cudaSuccess);
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t mine = nullptr;
  EXPECT(cudaMemPoolCreate(&mine, &props) == cudaSuccess);
  EXPECT(cudaMallocFromPoolAsync(&p, 3000, mine, nullptr) == cudaSuccess && pointer_ordinal(p) == 0);
  EXPECT(cudaMemPoolGetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess && used == 3000);
  EXPECT(cudaMemPoolTrimTo(mine, 0) == cudaSuccess);
  EXPECT(cudaFree(p) == cudaSuccess && cudaMemPoolDestroy(mine) == cudaSuccess);
  EXPECT(cudaMemPoolDestroy(mine) == cudaErrorInvalidValue);
  (void)cudaGetLastError();

  alignas(64) static unsigned char host_buffer[8192];
  EXPECT(cudaHostRegister(host_buffer, sizeof host_buffer, cudaHostRegisterMapped) == cudaSuccess);
  EXPECT(cudaHostRegister(host_buffer, 16, cudaHostRegisterDefault) == cudaErrorHostMemoryAlreadyRegistered);
  EXPECT(cudaHostUnregister(host_buffer) == cudaSuccess);
  EXPECT(cudaHostUnregister(host_buffer) == cudaErrorHostMemoryNotRegistered);
  (void)cudaGetLastError();

  void* exported = nullptr;
  void* imported = nullptr;
  cudaIpcMemHandle_t handle{};
  EXPECT(cudaMalloc(&exported, 4096) == cudaSuccess && cudaIpcGetMemHandle(&handle, exported) == cudaSuccess);
  EXPECT(cudaIpcOpenMemHandle(&imported, handle, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess &&
         imported != nullptr && imported != exported && range_size(reinterpret_cast<CUdeviceptr>(imported)) == 4096);
  EXPECT(cudaFree(imported) == cudaErrorInvalidValue);
  (void)cudaGetLastError();
  EXPECT(cudaIpcCloseMemHandle(imported) == cudaSuccess && cudaFree(exported) == cudaSuccess);
}

}  // namespace

int main() {
  g_driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (g_driver == nullptr) {
    std::fprintf(stderr, "standin_prog_contract: dlopen(libcuda.so.1): %s\n", dlerror());
    return 1;
  }
  driver_checks();
  family_checks();
  runtime_checks();
  std::printf("standin_prog_contract: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
