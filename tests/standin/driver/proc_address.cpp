// cuGetProcAddress (CUDA 11.3 ABI) and cuGetProcAddress_v2 (CUDA 12.0 ABI).
//
// One table lists every entry point this library exports: (base name, CUDA version that
// introduced that ABI variant, per-thread-default-stream variant?, the exported function). A
// look-up returns the newest variant introduced at or before the requested version; with
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (flags 2) a _ptsz/_ptds variant wins where one
// exists. The addresses are taken inside this -Bsymbolic library, so they are exactly what
// dlsym(handle, "<exported name>") returns, never an interposer's same-named export.
#include "driver_internal.h"

#include <cstring>

namespace standin_driver {
namespace {

struct ProcEntry {
  const char* symbol;   // base name as passed to cuGetProcAddress
  int version;          // CUDA version that introduced this ABI variant
  bool per_thread;      // _ptsz / _ptds variant (only returned with flags 2)
  void* fn;             // the exported function
  const char* exported; // its exported name (for traces)
};

#define SD_PROC(base, version, per_thread, fn) \
  ProcEntry { base, version, per_thread, reinterpret_cast<void*>(&fn), #fn }

const ProcEntry kProcTable[] = {
    SD_PROC("cuGetErrorString", 6000, false, cuGetErrorString),
    SD_PROC("cuGetErrorName", 6000, false, cuGetErrorName),
    SD_PROC("cuInit", 2000, false, cuInit),
    SD_PROC("cuDriverGetVersion", 2020, false, cuDriverGetVersion),
    SD_PROC("cuDeviceGet", 2000, false, cuDeviceGet),
    SD_PROC("cuDeviceGetCount", 2000, false, cuDeviceGetCount),
    SD_PROC("cuDeviceGetName", 2000, false, cuDeviceGetName),
    SD_PROC("cuDeviceGetUuid", 9020, false, cuDeviceGetUuid),
    SD_PROC("cuDeviceGetUuid", 11040, false, cuDeviceGetUuid_v2),
    SD_PROC("cuDeviceTotalMem", 2000, false, cuDeviceTotalMem),
    SD_PROC("cuDeviceTotalMem", 3020, false, cuDeviceTotalMem_v2),
    SD_PROC("cuDeviceGetAttribute", 2000, false, cuDeviceGetAttribute),
    SD_PROC("cuDeviceGetPCIBusId", 4010, false, cuDeviceGetPCIBusId),
    SD_PROC("cuDevicePrimaryCtxRetain", 7000, false, cuDevicePrimaryCtxRetain),
    SD_PROC("cuDevicePrimaryCtxRelease", 7000, false, cuDevicePrimaryCtxRelease),
    SD_PROC("cuDevicePrimaryCtxRelease", 11000, false, cuDevicePrimaryCtxRelease_v2),
    SD_PROC("cuDevicePrimaryCtxReset", 7000, false, cuDevicePrimaryCtxReset),
    SD_PROC("cuDevicePrimaryCtxReset", 11000, false, cuDevicePrimaryCtxReset_v2),
    SD_PROC("cuDevicePrimaryCtxGetState", 7000, false, cuDevicePrimaryCtxGetState),
    SD_PROC("cuCtxCreate", 2000, false, cuCtxCreate),
    SD_PROC("cuCtxCreate", 3020, false, cuCtxCreate_v2),
    SD_PROC("cuCtxCreate", 11040, false, cuCtxCreate_v3),
    SD_PROC("cuCtxCreate", 12050, false, cuCtxCreate_v4),
    SD_PROC("cuCtxDestroy", 2000, false, cuCtxDestroy),
    SD_PROC("cuCtxDestroy", 4000, false, cuCtxDestroy_v2),
    SD_PROC("cuCtxPushCurrent", 2000, false, cuCtxPushCurrent),
    SD_PROC("cuCtxPushCurrent", 4000, false, cuCtxPushCurrent_v2),
    SD_PROC("cuCtxPopCurrent", 2000, false, cuCtxPopCurrent),
    SD_PROC("cuCtxPopCurrent", 4000, false, cuCtxPopCurrent_v2),
    SD_PROC("cuCtxGetApiVersion", 3020, false, cuCtxGetApiVersion),
    SD_PROC("cuCtxSetCurrent", 4000, false, cuCtxSetCurrent),
    SD_PROC("cuCtxGetCurrent", 4000, false, cuCtxGetCurrent),
    SD_PROC("cuCtxGetDevice", 2000, false, cuCtxGetDevice),
    SD_PROC("cuCtxGetDevice", 13000, false, cuCtxGetDevice_v2),
    SD_PROC("cuCtxSynchronize", 2000, false, cuCtxSynchronize),
    SD_PROC("cuCtxSynchronize", 13000, false, cuCtxSynchronize_v2),
    SD_PROC("cuMemGetInfo", 2000, false, cuMemGetInfo),
    SD_PROC("cuMemGetInfo", 3020, false, cuMemGetInfo_v2),
    SD_PROC("cuMemAlloc", 2000, false, cuMemAlloc),
    SD_PROC("cuMemAlloc", 3020, false, cuMemAlloc_v2),
    SD_PROC("cuMemFree", 2000, false, cuMemFree),
    SD_PROC("cuMemFree", 3020, false, cuMemFree_v2),
    SD_PROC("cuMemAllocHost", 2000, false, cuMemAllocHost),
    SD_PROC("cuMemAllocHost", 3020, false, cuMemAllocHost_v2),
    SD_PROC("cuMemHostAlloc", 2020, false, cuMemHostAlloc),
    SD_PROC("cuMemFreeHost", 2000, false, cuMemFreeHost),
    SD_PROC("cuMemAllocManaged", 6000, false, cuMemAllocManaged),
    SD_PROC("cuMemAllocAsync", 11020, false, cuMemAllocAsync),
    SD_PROC("cuMemAllocAsync", 11020, true, cuMemAllocAsync_ptsz),
    SD_PROC("cuMemFreeAsync", 11020, false, cuMemFreeAsync),
    SD_PROC("cuMemFreeAsync", 11020, true, cuMemFreeAsync_ptsz),
    SD_PROC("cuMemAllocPitch", 2000, false, cuMemAllocPitch),
    SD_PROC("cuMemAllocPitch", 3020, false, cuMemAllocPitch_v2),
    SD_PROC("cuMemGetAddressRange", 2000, false, cuMemGetAddressRange),
    SD_PROC("cuMemGetAddressRange", 3020, false, cuMemGetAddressRange_v2),
    SD_PROC("cuMemHostRegister", 4000, false, cuMemHostRegister),
    SD_PROC("cuMemHostRegister", 6050, false, cuMemHostRegister_v2),
    SD_PROC("cuMemHostUnregister", 4000, false, cuMemHostUnregister),
    SD_PROC("cuIpcGetMemHandle", 4010, false, cuIpcGetMemHandle),
    SD_PROC("cuIpcOpenMemHandle", 4010, false, cuIpcOpenMemHandle),
    SD_PROC("cuIpcOpenMemHandle", 11000, false, cuIpcOpenMemHandle_v2),
    SD_PROC("cuIpcCloseMemHandle", 4010, false, cuIpcCloseMemHandle),
    SD_PROC("cuDeviceGetDefaultMemPool", 11020, false, cuDeviceGetDefaultMemPool),
    SD_PROC("cuMemPoolCreate", 11020, false, cuMemPoolCreate),
    SD_PROC("cuMemPoolDestroy", 11020, false, cuMemPoolDestroy),
    SD_PROC("cuMemPoolTrimTo", 11020, false, cuMemPoolTrimTo),
    SD_PROC("cuMemPoolGetAttribute", 11020, false, cuMemPoolGetAttribute),
    SD_PROC("cuMemAllocFromPoolAsync", 11020, false, cuMemAllocFromPoolAsync),
    SD_PROC("cuMemAllocFromPoolAsync", 11020, true, cuMemAllocFromPoolAsync_ptsz),
    SD_PROC("cuMemGetAllocationGranularity", 10020, false, cuMemGetAllocationGranularity),
    SD_PROC("cuMemCreate", 10020, false, cuMemCreate),
    SD_PROC("cuMemRelease", 10020, false, cuMemRelease),
    SD_PROC("cuMemAddressReserve", 10020, false, cuMemAddressReserve),
    SD_PROC("cuMemAddressFree", 10020, false, cuMemAddressFree),
    SD_PROC("cuMemMap", 10020, false, cuMemMap),
    SD_PROC("cuMemUnmap", 10020, false, cuMemUnmap),
    SD_PROC("cuMemSetAccess", 10020, false, cuMemSetAccess),
    SD_PROC("cuMemGetAllocationPropertiesFromHandle", 10020, false, cuMemGetAllocationPropertiesFromHandle),
    SD_PROC("cuMemRetainAllocationHandle", 11000, false, cuMemRetainAllocationHandle),
    SD_PROC("cuMemExportToShareableHandle", 10020, false, cuMemExportToShareableHandle),
    SD_PROC("cuMemImportFromShareableHandle", 10020, false, cuMemImportFromShareableHandle),
    SD_PROC("cuArrayCreate", 3020, false, cuArrayCreate_v2),
    SD_PROC("cuArray3DCreate", 3020, false, cuArray3DCreate_v2),
    SD_PROC("cuArrayDestroy", 2000, false, cuArrayDestroy),
    SD_PROC("cuMipmappedArrayCreate", 5000, false, cuMipmappedArrayCreate),
    SD_PROC("cuMipmappedArrayDestroy", 5000, false, cuMipmappedArrayDestroy),
    SD_PROC("cuGraphCreate", 10000, false, cuGraphCreate),
    SD_PROC("cuGraphDestroy", 10000, false, cuGraphDestroy),
    SD_PROC("cuGraphAddMemAllocNode", 11040, false, cuGraphAddMemAllocNode),
    SD_PROC("cuGraphAddMemFreeNode", 11040, false, cuGraphAddMemFreeNode),
    SD_PROC("cuDeviceGraphMemTrim", 11040, false, cuDeviceGraphMemTrim),
    SD_PROC("cuDeviceGetGraphMemAttribute", 11040, false, cuDeviceGetGraphMemAttribute),
    SD_PROC("cuDeviceSetGraphMemAttribute", 11040, false, cuDeviceSetGraphMemAttribute),
    SD_PROC("cuGraphInstantiate", 10000, false, cuGraphInstantiate),
    SD_PROC("cuGraphInstantiate", 11000, false, cuGraphInstantiate_v2),
    SD_PROC("cuGraphInstantiate", 12000, false, cuGraphInstantiateWithFlags),
    SD_PROC("cuGraphInstantiateWithFlags", 11040, false, cuGraphInstantiateWithFlags),
    SD_PROC("cuGraphInstantiateWithParams", 12000, false, cuGraphInstantiateWithParams),
    SD_PROC("cuGraphInstantiateWithParams", 12000, true, cuGraphInstantiateWithParams_ptsz),
    SD_PROC("cuGraphUpload", 11010, false, cuGraphUpload),
    SD_PROC("cuGraphUpload", 11010, true, cuGraphUpload_ptsz),
    SD_PROC("cuGraphLaunch", 10000, false, cuGraphLaunch),
    SD_PROC("cuGraphLaunch", 10000, true, cuGraphLaunch_ptsz),
    SD_PROC("cuGraphExecDestroy", 10000, false, cuGraphExecDestroy),
    SD_PROC("cuStreamBeginCapture", 10000, false, cuStreamBeginCapture),
    SD_PROC("cuStreamBeginCapture", 10000, true, cuStreamBeginCapture_ptsz),
    SD_PROC("cuStreamBeginCapture", 10010, false, cuStreamBeginCapture_v2),
    SD_PROC("cuStreamBeginCapture", 10010, true, cuStreamBeginCapture_v2_ptsz),
    SD_PROC("cuStreamEndCapture", 10000, false, cuStreamEndCapture),
    SD_PROC("cuStreamEndCapture", 10000, true, cuStreamEndCapture_ptsz),
    SD_PROC("cuStreamIsCapturing", 10000, false, cuStreamIsCapturing),
    SD_PROC("cuStreamIsCapturing", 10000, true, cuStreamIsCapturing_ptsz),
    SD_PROC("cuStreamGetCaptureInfo", 10010, false, cuStreamGetCaptureInfo),
    SD_PROC("cuStreamGetCaptureInfo", 10010, true, cuStreamGetCaptureInfo_ptsz),
    SD_PROC("cuStreamGetCaptureInfo", 11030, false, cuStreamGetCaptureInfo_v2),
    SD_PROC("cuStreamGetCaptureInfo", 11030, true, cuStreamGetCaptureInfo_v2_ptsz),
    SD_PROC("cuStreamGetCaptureInfo", 12030, false, cuStreamGetCaptureInfo_v3),
    SD_PROC("cuStreamGetCaptureInfo", 12030, true, cuStreamGetCaptureInfo_v3_ptsz),
    SD_PROC("cuMemcpy", 4000, false, cuMemcpy),
    SD_PROC("cuMemcpy", 7000, true, cuMemcpy_ptds),
    SD_PROC("cuMemsetD8", 2000, false, cuMemsetD8),
    SD_PROC("cuMemsetD8", 3020, false, cuMemsetD8_v2),
    SD_PROC("cuMemsetD8", 7000, true, cuMemsetD8_v2_ptds),
    SD_PROC("cuPointerGetAttribute", 4000, false, cuPointerGetAttribute),
    SD_PROC("cuStreamCreate", 2000, false, cuStreamCreate),
    SD_PROC("cuStreamDestroy", 2000, false, cuStreamDestroy),
    SD_PROC("cuStreamDestroy", 4000, false, cuStreamDestroy_v2),
    SD_PROC("cuStreamSynchronize", 2000, false, cuStreamSynchronize),
    SD_PROC("cuStreamSynchronize", 7000, true, cuStreamSynchronize_ptsz),
    SD_PROC("cuStreamGetDevice", 12080, false, cuStreamGetDevice),
    SD_PROC("cuStreamGetDevice", 12080, true, cuStreamGetDevice_ptsz),
    SD_PROC("cuGetProcAddress", 11030, false, cuGetProcAddress),
    SD_PROC("cuGetProcAddress", 12000, false, cuGetProcAddress_v2),
};

#undef SD_PROC

struct Lookup {
  CUresult result;                       // CUDA_SUCCESS or an argument error
  CUdriverProcAddressQueryResult status;
  const ProcEntry* entry;                // nullptr unless status is SUCCESS
};

Lookup lookup(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  if (symbol == nullptr || pfn == nullptr) return {CUDA_ERROR_INVALID_VALUE, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, nullptr};
  if (symbol[0] == '\0') return {CUDA_ERROR_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, nullptr};
  const cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if ((flags & ~kKnownFlags) != 0 || flags == kKnownFlags || cudaVersion > kDriverVersion) {
    return {CUDA_ERROR_INVALID_VALUE, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, nullptr};
  }
  const bool want_per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  bool known = false;
  const ProcEntry* best = nullptr;
  const ProcEntry* best_pt = nullptr;
  for (const ProcEntry& e : kProcTable) {
    if (std::strcmp(e.symbol, symbol) != 0) continue;
    known = true;
    if (e.version > cudaVersion) continue;
    if (e.per_thread) {
      if (want_per_thread && (best_pt == nullptr || e.version > best_pt->version)) best_pt = &e;
    } else if (best == nullptr || e.version > best->version) {
      best = &e;
    }
  }
  if (!known) return {CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, nullptr};
  const ProcEntry* pick = best;
  if (best_pt != nullptr && (best == nullptr || best_pt->version >= best->version)) pick = best_pt;
  if (pick == nullptr) return {CUDA_SUCCESS, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, nullptr};
  return {CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, pick};
}

}  // namespace
}  // namespace standin_driver

namespace sd = standin_driver;

// CUDA 12.0 ABI. Unknown symbol or too old a version: CUDA_SUCCESS, *pfn = NULL and the reason in
// *symbolStatus (which may be NULL). "" answers CUDA_ERROR_NOT_FOUND (cudart's probe call).
STANDIN_CU_API CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                                    cuuint64_t flags, CUdriverProcAddressQueryResult* symbolStatus) {
  const sd::Lookup l = sd::lookup(symbol, pfn, cudaVersion, flags);
  if (pfn != nullptr) *pfn = l.entry != nullptr ? l.entry->fn : nullptr;
  if (symbolStatus != nullptr) *symbolStatus = l.status;
  sd::trace("cuGetProcAddress_v2(\"%s\", %d, %llu) -> %s pfn=%s status=%d", symbol ? symbol : "(null)",
            cudaVersion, static_cast<unsigned long long>(flags), sd::result_name(l.result),
            l.entry != nullptr ? l.entry->exported : "NULL", static_cast<int>(l.status));
  return l.result;
}

// CUDA 11.3 ABI: no status out-parameter; a symbol it cannot return answers CUDA_ERROR_NOT_FOUND
// with *pfn = NULL, as the 11.x drivers did.
STANDIN_CU_API CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  sd::Lookup l = sd::lookup(symbol, pfn, cudaVersion, flags);
  if (l.result == CUDA_SUCCESS && l.entry == nullptr) l.result = CUDA_ERROR_NOT_FOUND;
  if (pfn != nullptr) *pfn = l.entry != nullptr ? l.entry->fn : nullptr;
  sd::trace("cuGetProcAddress(\"%s\", %d, %llu) -> %s pfn=%s", symbol ? symbol : "(null)", cudaVersion,
            static_cast<unsigned long long>(flags), sd::result_name(l.result),
            l.entry != nullptr ? l.entry->exported : "NULL");
  return l.result;
}
