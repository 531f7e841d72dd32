// The few CUDA ABI types and constants the interceptors need, declared here instead of including
// cuda.h / cuda_runtime_api.h: those headers remap names with macros (cuMemAlloc -> cuMemAlloc_v2,
// _ptsz variants) that would rename our own exported definitions, and the library must build and
// load without the toolkit. tests/abi/abi_constants_test.cpp checks every value against the real
// headers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vramtrace::cuda {

using CUresult = int;      // enum cudaError_enum
using cudaError_t = int;   // enum cudaError
using CUdeviceptr = unsigned long long;
using CUdevice = int;
using CUcontext = void *;
using CUstream = void *;
using cudaStream_t = void *;
using cuuint64_t = uint64_t;
using CUdriverProcAddressQueryResult = int;

using CUdeviceptr_v1 = unsigned int; // the legacy 32-bit device pointer
using CUmemoryPool = void *;
using cudaMemPool_t = void *;
using CUmemGenericAllocationHandle = unsigned long long;

struct cudaPitchedPtr {
    void *ptr;
    size_t pitch;
    size_t xsize;
    size_t ysize;
};
struct cudaExtent {
    size_t width;
    size_t height;
    size_t depth;
};
struct cudaIpcMemHandle_t {
    char reserved[64];
};
struct CUipcMemHandle {
    char reserved[64];
};
struct CUmemLocation {
    int type; // CUmemLocationType
    int id;
};
inline constexpr int kMemLocationTypeDevice = 1; // CU_MEM_LOCATION_TYPE_DEVICE
// Only the leading members we read; the driver's struct is larger and only ever passed by pointer.
struct CUmemAllocationPropPrefix {
    int type;                 // CUmemAllocationType
    int requestedHandleTypes; // CUmemAllocationHandleType
    CUmemLocation location;
};
inline constexpr int kPointerAttributeDeviceOrdinal = 9; // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL

inline constexpr int kSuccess = 0;                 // CUDA_SUCCESS, cudaSuccess
inline constexpr int kDriverOutOfMemory = 2;       // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr int kRuntimeOutOfMemory = 2;      // cudaErrorMemoryAllocation
inline constexpr int kDriverUnknown = 999;         // CUDA_ERROR_UNKNOWN
inline constexpr int kRuntimeUnknown = 999;        // cudaErrorUnknown

} // namespace vramtrace::cuda

// C-linkage spellings used in the hook table's parameter lists.
using CUresult = vramtrace::cuda::CUresult;
using cudaError_t = vramtrace::cuda::cudaError_t;
using CUdeviceptr = vramtrace::cuda::CUdeviceptr;
using CUstream = vramtrace::cuda::CUstream;
using cudaStream_t = vramtrace::cuda::cudaStream_t;
using cuuint64_t = vramtrace::cuda::cuuint64_t;
using CUdriverProcAddressQueryResult = vramtrace::cuda::CUdriverProcAddressQueryResult;
using CUdeviceptr_v1 = vramtrace::cuda::CUdeviceptr_v1;
using CUmemoryPool = vramtrace::cuda::CUmemoryPool;
using cudaMemPool_t = vramtrace::cuda::cudaMemPool_t;
using CUmemGenericAllocationHandle = vramtrace::cuda::CUmemGenericAllocationHandle;
using cudaPitchedPtr = vramtrace::cuda::cudaPitchedPtr;
using cudaExtent = vramtrace::cuda::cudaExtent;
using cudaIpcMemHandle_t = vramtrace::cuda::cudaIpcMemHandle_t;
using CUipcMemHandle = vramtrace::cuda::CUipcMemHandle;
// Declared as an incomplete type on purpose: we read only its prefix (cuda_abi.h).
struct CUmemAllocationProp;
