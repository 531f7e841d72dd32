// Internals of the stand-in CUDA runtime. Every non-API function lives in namespace cudart (as in
// NVIDIA's static cudart), so a call-site classifier that skips frames named "cudart::..." and
// "cuda..." skips all of this library's frames.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

// STANDIN_CUDART_VISIBILITY is "default" for libcudart.so.13 and "hidden" for the static archive
// (NVIDIA's libcudart_static.a also defines its cuda* symbols hidden).
#ifndef STANDIN_CUDART_VISIBILITY
#define STANDIN_CUDART_VISIBILITY "default"
#endif
#define STANDIN_CUDART_API extern "C" __attribute__((visibility(STANDIN_CUDART_VISIBILITY)))

namespace cudart {

// Driver entry points, every one obtained through the driver's cuGetProcAddress (see
// driver_bootstrap.cpp for the exact sequence). A slot is null when the driver did not have it.
struct DriverTable {
  PFN_cuGetProcAddress_v12000 getProcAddress;  // the pointer ("cuGetProcAddress", 12000) returned
  PFN_cuInit_v2000 init;
  PFN_cuDriverGetVersion_v2020 driverGetVersion;
  PFN_cuDeviceGet_v2000 deviceGet;
  PFN_cuDeviceGetCount_v2000 deviceGetCount;
  PFN_cuDevicePrimaryCtxRetain_v7000 primaryCtxRetain;
  PFN_cuDevicePrimaryCtxRelease_v11000 primaryCtxRelease;
  PFN_cuDevicePrimaryCtxReset_v11000 primaryCtxReset;
  PFN_cuCtxGetApiVersion_v3020 ctxGetApiVersion;
  PFN_cuCtxSetCurrent_v4000 ctxSetCurrent;
  PFN_cuCtxGetCurrent_v4000 ctxGetCurrent;
  PFN_cuCtxGetDevice_v2000 ctxGetDevice;
  PFN_cuCtxSynchronize_v2000 ctxSynchronize;
  PFN_cuMemAlloc_v3020 memAlloc;
  PFN_cuMemFree_v3020 memFree;
  PFN_cuMemAllocAsync_v11020 memAllocAsync;
  PFN_cuMemAllocAsync_v11020_ptsz memAllocAsync_ptsz;
  PFN_cuMemFreeAsync_v11020 memFreeAsync;
  PFN_cuMemFreeAsync_v11020_ptsz memFreeAsync_ptsz;
  PFN_cuMemAllocManaged_v6000 memAllocManaged;
  PFN_cuMemAllocHost_v3020 memAllocHost;
  PFN_cuMemHostAlloc_v2020 memHostAlloc;
  PFN_cuMemFreeHost_v2000 memFreeHost;
  PFN_cuMemGetInfo_v3020 memGetInfo;
  PFN_cuMemcpy_v4000 memcpy;
  PFN_cuMemcpy_v7000_ptds memcpy_ptds;
  PFN_cuMemsetD8_v3020 memsetD8;
  PFN_cuMemsetD8_v7000_ptds memsetD8_ptds;
  PFN_cuStreamCreate_v2000 streamCreate;
  PFN_cuStreamDestroy_v4000 streamDestroy;
  PFN_cuStreamSynchronize_v2000 streamSynchronize;
  PFN_cuStreamSynchronize_v7000_ptsz streamSynchronize_ptsz;
  PFN_cuMemAllocPitch_v3020 memAllocPitch;
  PFN_cuDeviceGetDefaultMemPool_v11020 deviceGetDefaultMemPool;
  PFN_cuMemPoolCreate_v11020 memPoolCreate;
  PFN_cuMemPoolDestroy_v11020 memPoolDestroy;
  PFN_cuMemPoolTrimTo_v11020 memPoolTrimTo;
  PFN_cuMemPoolGetAttribute_v11020 memPoolGetAttribute;
  PFN_cuMemAllocFromPoolAsync_v11020 memAllocFromPoolAsync;
  PFN_cuMemAllocFromPoolAsync_v11020_ptsz memAllocFromPoolAsync_ptsz;
  PFN_cuMemHostRegister_v6050 memHostRegister;
  PFN_cuMemHostUnregister_v4000 memHostUnregister;
  PFN_cuIpcGetMemHandle_v4010 ipcGetMemHandle;
  PFN_cuIpcOpenMemHandle_v11000 ipcOpenMemHandle;
  PFN_cuIpcCloseMemHandle_v4010 ipcCloseMemHandle;
  PFN_cuArray3DCreate_v3020 array3DCreate;
  PFN_cuArrayDestroy_v2000 arrayDestroy;
  PFN_cuMipmappedArrayCreate_v5000 mipmappedArrayCreate;
  PFN_cuMipmappedArrayDestroy_v5000 mipmappedArrayDestroy;
  PFN_cuGraphCreate_v10000 graphCreate;
  PFN_cuGraphDestroy_v10000 graphDestroy;
  PFN_cuGraphAddMemAllocNode_v11040 graphAddMemAllocNode;
  PFN_cuGraphAddMemFreeNode_v11040 graphAddMemFreeNode;
  PFN_cuDeviceGraphMemTrim_v11040 deviceGraphMemTrim;
  PFN_cuDeviceGetGraphMemAttribute_v11040 deviceGetGraphMemAttribute;
  PFN_cuStreamBeginCapture_v10010 streamBeginCapture;
  PFN_cuStreamEndCapture_v10000 streamEndCapture;
  PFN_cuStreamIsCapturing_v10000 streamIsCapturing;
  PFN_cuGraphInstantiateWithFlags_v11040 graphInstantiateWithFlags;
  PFN_cuGraphInstantiateWithParams_v12000 graphInstantiateWithParams;
  PFN_cuGraphInstantiateWithParams_v12000_ptsz graphInstantiateWithParams_ptsz;
  PFN_cuGraphUpload_v11010 graphUpload;
  PFN_cuGraphUpload_v11010_ptsz graphUpload_ptsz;
  PFN_cuGraphLaunch_v10000 graphLaunch;
  PFN_cuGraphLaunch_v10000_ptsz graphLaunch_ptsz;
  PFN_cuGraphExecDestroy_v10000 graphExecDestroy;
  PFN_cuDeviceSetGraphMemAttribute_v11040 deviceSetGraphMemAttribute;
};

// Bootstraps on first use (thread-safe); afterwards returns the same result. On success *table
// points at the filled table.
cudaError_t driver(const DriverTable** table);

// STANDIN_CUDA_TRACE=1: a line on stderr prefixed "[standin-cudart] ".
void trace(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

cudaError_t map_error(CUresult r);

// Records err as the thread's last error (unless success) and returns it.
cudaError_t set_last_error(cudaError_t err);
cudaError_t take_last_error();
cudaError_t peek_last_error();

// Makes sure the calling thread has a current context: the one it has, or the primary context of
// the thread's device (cudaSetDevice; device 0 by default), retained once per process.
cudaError_t ensure_context(const DriverTable** table);
// The primary context of dev, retained on first request.
cudaError_t primary_context(const DriverTable* table, int dev, CUcontext* ctx);
// The device whose primary context the runtime retained as `ctx`, else -1.
int primary_device_of(CUcontext ctx);
// Releases every primary context this runtime retained (STANDIN_CUDART_RELEASE_AT_EXIT=1 registers
// it with atexit at bootstrap): the process's own exit as the last release.
void release_primary_contexts_at_exit();
int thread_device();           // -1 until cudaSetDevice on this thread
void set_thread_device(int dev);

}  // namespace cudart
