// The few CUDA ABI types and constants the interceptors need, declared here instead of including
// cuda.h / cuda_runtime_api.h: those headers remap names with macros (cuMemAlloc -> cuMemAlloc_v2,
// _ptsz variants) that would rename our own exported definitions, and the library must build and
// load without the toolkit. tests/abi/cuda_abi_matches_headers.cpp compares every constant, the
// size of every type and the size and member offsets of every struct here with the real headers at
// build time (VT_CUDA_ABI_NAMESPACE_ONLY leaves out the global names below, which those headers
// declare themselves).
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

// CUDA arrays: opaque handles, and the descriptors their size is computed from.
using CUarray = void *;
using CUmipmappedArray = void *;
using cudaArray_t = void *;
using cudaMipmappedArray_t = void *;
struct cudaChannelFormatDesc {
    int x, y, z, w; // bits per component
    int f;          // enum cudaChannelFormatKind
};
struct CUDA_ARRAY_DESCRIPTOR {
    size_t Width;
    size_t Height;
    int Format; // CUarray_format
    unsigned int NumChannels;
};
struct CUDA_ARRAY3D_DESCRIPTOR {
    size_t Width;
    size_t Height;
    size_t Depth;
    int Format; // CUarray_format
    unsigned int NumChannels;
    unsigned int Flags;
};
inline constexpr unsigned kArray3DLayered = 0x01; // CUDA_ARRAY3D_LAYERED / cudaArrayLayered
inline constexpr unsigned kArray3DCubemap = 0x04; // CUDA_ARRAY3D_CUBEMAP / cudaArrayCubemap

// Graphs and stream-ordered pools.
using CUgraph = void *;
using CUgraphNode = void *;
using cudaGraph_t = void *;
using cudaGraphNode_t = void *;
struct CUmemPoolPropsPrefix { // CUmemPoolProps / cudaMemPoolProps: 88 bytes, we read the location
    int allocType;
    int handleTypes;
    CUmemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
};
// CUDA_MEM_ALLOC_NODE_PARAMS (v1) and cudaMemAllocNodeParams share this layout (the graph-node cases
// of tests/e2e/test_coverage_families.cpp pass them from a program built with the toolkit's headers).
struct MemAllocNodeParams {
    CUmemPoolPropsPrefix poolProps;
    const void *accessDescs;
    size_t accessDescCount;
    size_t bytesize; // in
    CUdeviceptr dptr; // out
};
static_assert(sizeof(CUmemPoolPropsPrefix) == 88 && sizeof(MemAllocNodeParams) == 120);
using CUgraphExec = void *;
using CUmemAllocationHandleType = int;
inline constexpr int kStreamCaptureStatusActive = 1;    // CU_STREAM_CAPTURE_STATUS_ACTIVE
inline constexpr uintptr_t kStreamLegacy = 0x1;         // CU_STREAM_LEGACY
inline constexpr uintptr_t kStreamPerThread = 0x2;      // CU_STREAM_PER_THREAD
inline constexpr int kPoolAttrReservedMemCurrent = 5;   // CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT
inline constexpr int kPoolAttrReservedMemHigh = 6;      // CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH
inline constexpr int kPoolAttrUsedMemCurrent = 7;       // CU_MEMPOOL_ATTR_USED_MEM_CURRENT
inline constexpr int kPoolAttrUsedMemHigh = 8;          // CU_MEMPOOL_ATTR_USED_MEM_HIGH
inline constexpr int kGraphMemAttrUsedMemCurrent = 0;   // CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT
inline constexpr int kGraphMemAttrUsedMemHigh = 1;      // CU_GRAPH_MEM_ATTR_USED_MEM_HIGH
inline constexpr int kGraphMemAttrReservedMemCurrent = 2; // CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT
inline constexpr int kGraphMemAttrReservedMemHigh = 3;  // CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH

inline constexpr int kSuccess = 0;                 // CUDA_SUCCESS, cudaSuccess
inline constexpr int kDriverOutOfMemory = 2;       // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr int kRuntimeOutOfMemory = 2;      // cudaErrorMemoryAllocation
inline constexpr int kDriverUnknown = 999;         // CUDA_ERROR_UNKNOWN
inline constexpr int kRuntimeUnknown = 999;        // cudaErrorUnknown

} // namespace vramtrace::cuda

#ifndef VT_CUDA_ABI_NAMESPACE_ONLY

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
using CUarray = vramtrace::cuda::CUarray;
using CUmipmappedArray = vramtrace::cuda::CUmipmappedArray;
using cudaArray_t = vramtrace::cuda::cudaArray_t;
using cudaMipmappedArray_t = vramtrace::cuda::cudaMipmappedArray_t;
using cudaChannelFormatDesc = vramtrace::cuda::cudaChannelFormatDesc;
using CUDA_ARRAY_DESCRIPTOR = vramtrace::cuda::CUDA_ARRAY_DESCRIPTOR;
using CUDA_ARRAY3D_DESCRIPTOR = vramtrace::cuda::CUDA_ARRAY3D_DESCRIPTOR;
using CUgraph = vramtrace::cuda::CUgraph;
using CUgraphNode = vramtrace::cuda::CUgraphNode;
using cudaGraph_t = vramtrace::cuda::cudaGraph_t;
using cudaGraphNode_t = vramtrace::cuda::cudaGraphNode_t;
using CUDA_MEM_ALLOC_NODE_PARAMS = vramtrace::cuda::MemAllocNodeParams;
using cudaMemAllocNodeParams = vramtrace::cuda::MemAllocNodeParams;
using CUmemPoolProps = vramtrace::cuda::CUmemPoolPropsPrefix;
using CUgraphExec = vramtrace::cuda::CUgraphExec;
using CUmemAllocationHandleType = vramtrace::cuda::CUmemAllocationHandleType;
using CUcontext = vramtrace::cuda::CUcontext;
using CUdevice = vramtrace::cuda::CUdevice;
// Only passed through, never read: incomplete on purpose.
struct CUexecAffinityParam;
struct CUctxCreateParams;
struct CUDA_GRAPH_INSTANTIATE_PARAMS;
using cudaMemPoolProps = vramtrace::cuda::CUmemPoolPropsPrefix;
#endif // VT_CUDA_ABI_NAMESPACE_ONLY
