// lib/device/cuda_abi.h restates part of the CUDA ABI so that the library builds without the
// toolkit. This file holds every restated constant, type size and struct layout against the real
// headers (CUDA_VERSION of the toolkit the tests build with): a difference fails the build here,
// naming the value (two pointer constants are compared when the program runs). The program prints
// how many were compared, for the ctest log.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define VT_CUDA_ABI_NAMESPACE_ONLY
#include "device/cuda_abi.h"

namespace vt = vramtrace::cuda;

namespace {

int g_checks = 0;
int g_differ = 0;
#define VT_SAME(ours, theirs)                                \
    static_assert((ours) == (theirs), #ours " != " #theirs); \
    ++g_checks
// A pointer constant (CU_STREAM_LEGACY is a cast) cannot be compared at compile time.
#define VT_SAME_AT_RUN_TIME(ours, theirs)                                 \
    if ((ours) != (theirs)) {                                             \
        fprintf(stderr, "cuda_abi.h: %s != %s\n", #ours, #theirs);       \
        ++g_differ;                                                       \
    }                                                                     \
    ++g_checks
#define VT_SIZE(ours, theirs) VT_SAME(sizeof(ours), sizeof(theirs))
#define VT_MEMBER(ours, theirs, a, b) VT_SAME(offsetof(ours, a), offsetof(theirs, b))

int count() {
    // Types: the same size (an enum is passed as int, a handle as a pointer).
    VT_SIZE(vt::CUresult, ::CUresult);
    VT_SIZE(vt::cudaError_t, ::cudaError_t);
    static_assert(std::is_same_v<vt::CUdeviceptr, ::CUdeviceptr>, "CUdeviceptr");
    VT_SIZE(vt::CUdevice, ::CUdevice);
    VT_SIZE(vt::CUcontext, ::CUcontext);
    VT_SIZE(vt::CUstream, ::CUstream);
    VT_SIZE(vt::cudaStream_t, ::cudaStream_t);
    static_assert(std::is_same_v<vt::cuuint64_t, ::cuuint64_t>, "cuuint64_t");
    VT_SIZE(vt::CUdriverProcAddressQueryResult, ::CUdriverProcAddressQueryResult);
    VT_SIZE(vt::CUmemoryPool, ::CUmemoryPool);
    VT_SIZE(vt::cudaMemPool_t, ::cudaMemPool_t);
    static_assert(std::is_same_v<vt::CUmemGenericAllocationHandle, ::CUmemGenericAllocationHandle>, "handle");
    VT_SIZE(vt::CUarray, ::CUarray);
    VT_SIZE(vt::CUmipmappedArray, ::CUmipmappedArray);
    VT_SIZE(vt::cudaArray_t, ::cudaArray_t);
    VT_SIZE(vt::cudaMipmappedArray_t, ::cudaMipmappedArray_t);
    VT_SIZE(vt::CUgraph, ::CUgraph);
    VT_SIZE(vt::CUgraphNode, ::CUgraphNode);
    VT_SIZE(vt::cudaGraph_t, ::cudaGraph_t);
    VT_SIZE(vt::cudaGraphNode_t, ::cudaGraphNode_t);
    VT_SIZE(vt::CUgraphExec, ::CUgraphExec);
    VT_SIZE(vt::CUmemAllocationHandleType, ::CUmemAllocationHandleType);
    // CUdeviceptr_v1 is declared by cuda.h only for the driver's own build: the 32-bit pointer.
    VT_SIZE(vt::CUdeviceptr_v1, uint32_t);

    // Structs: size and every member's offset.
    VT_SIZE(vt::cudaPitchedPtr, ::cudaPitchedPtr);
    VT_MEMBER(vt::cudaPitchedPtr, ::cudaPitchedPtr, ptr, ptr);
    VT_MEMBER(vt::cudaPitchedPtr, ::cudaPitchedPtr, pitch, pitch);
    VT_MEMBER(vt::cudaPitchedPtr, ::cudaPitchedPtr, xsize, xsize);
    VT_MEMBER(vt::cudaPitchedPtr, ::cudaPitchedPtr, ysize, ysize);
    VT_SIZE(vt::cudaExtent, ::cudaExtent);
    VT_MEMBER(vt::cudaExtent, ::cudaExtent, width, width);
    VT_MEMBER(vt::cudaExtent, ::cudaExtent, height, height);
    VT_MEMBER(vt::cudaExtent, ::cudaExtent, depth, depth);
    VT_SIZE(vt::cudaIpcMemHandle_t, ::cudaIpcMemHandle_t);
    VT_SIZE(vt::CUipcMemHandle, ::CUipcMemHandle);
    VT_SIZE(vt::CUmemLocation, ::CUmemLocation);
    VT_MEMBER(vt::CUmemLocation, ::CUmemLocation, type, type);
    VT_MEMBER(vt::CUmemLocation, ::CUmemLocation, id, id);
    // The prefix of CUmemAllocationProp that the hooks read.
    VT_MEMBER(vt::CUmemAllocationPropPrefix, ::CUmemAllocationProp, type, type);
    VT_MEMBER(vt::CUmemAllocationPropPrefix, ::CUmemAllocationProp, requestedHandleTypes, requestedHandleTypes);
    VT_MEMBER(vt::CUmemAllocationPropPrefix, ::CUmemAllocationProp, location, location);
    static_assert(sizeof(vt::CUmemAllocationPropPrefix) <= sizeof(::CUmemAllocationProp), "prefix");
    VT_SIZE(vt::cudaChannelFormatDesc, ::cudaChannelFormatDesc);
    VT_MEMBER(vt::cudaChannelFormatDesc, ::cudaChannelFormatDesc, x, x);
    VT_MEMBER(vt::cudaChannelFormatDesc, ::cudaChannelFormatDesc, w, w);
    VT_MEMBER(vt::cudaChannelFormatDesc, ::cudaChannelFormatDesc, f, f);
    VT_SIZE(vt::CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR);
    VT_MEMBER(vt::CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, Width, Width);
    VT_MEMBER(vt::CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, Height, Height);
    VT_MEMBER(vt::CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, Format, Format);
    VT_MEMBER(vt::CUDA_ARRAY_DESCRIPTOR, ::CUDA_ARRAY_DESCRIPTOR, NumChannels, NumChannels);
    VT_SIZE(vt::CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR);
    VT_MEMBER(vt::CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Width, Width);
    VT_MEMBER(vt::CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Height, Height);
    VT_MEMBER(vt::CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Depth, Depth);
    VT_MEMBER(vt::CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Format, Format);
    VT_MEMBER(vt::CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, NumChannels, NumChannels);
    VT_MEMBER(vt::CUDA_ARRAY3D_DESCRIPTOR, ::CUDA_ARRAY3D_DESCRIPTOR, Flags, Flags);
    VT_SIZE(vt::CUmemPoolPropsPrefix, ::CUmemPoolProps);
    VT_SIZE(vt::CUmemPoolPropsPrefix, ::cudaMemPoolProps);
    VT_MEMBER(vt::CUmemPoolPropsPrefix, ::CUmemPoolProps, allocType, allocType);
    VT_MEMBER(vt::CUmemPoolPropsPrefix, ::CUmemPoolProps, handleTypes, handleTypes);
    VT_MEMBER(vt::CUmemPoolPropsPrefix, ::CUmemPoolProps, location, location);
    VT_MEMBER(vt::CUmemPoolPropsPrefix, ::CUmemPoolProps, win32SecurityAttributes, win32SecurityAttributes);
    VT_MEMBER(vt::CUmemPoolPropsPrefix, ::CUmemPoolProps, maxSize, maxSize);
    VT_MEMBER(vt::CUmemPoolPropsPrefix, ::CUmemPoolProps, usage, usage);
    VT_MEMBER(vt::CUmemPoolPropsPrefix, ::cudaMemPoolProps, location, location);
    VT_SIZE(vt::MemAllocNodeParams, ::CUDA_MEM_ALLOC_NODE_PARAMS);
    VT_SIZE(vt::MemAllocNodeParams, ::cudaMemAllocNodeParams);
    VT_MEMBER(vt::MemAllocNodeParams, ::CUDA_MEM_ALLOC_NODE_PARAMS, poolProps, poolProps);
    VT_MEMBER(vt::MemAllocNodeParams, ::CUDA_MEM_ALLOC_NODE_PARAMS, accessDescs, accessDescs);
    VT_MEMBER(vt::MemAllocNodeParams, ::CUDA_MEM_ALLOC_NODE_PARAMS, accessDescCount, accessDescCount);
    VT_MEMBER(vt::MemAllocNodeParams, ::CUDA_MEM_ALLOC_NODE_PARAMS, bytesize, bytesize);
    VT_MEMBER(vt::MemAllocNodeParams, ::CUDA_MEM_ALLOC_NODE_PARAMS, dptr, dptr);
    VT_MEMBER(vt::MemAllocNodeParams, ::cudaMemAllocNodeParams, bytesize, bytesize);
    VT_MEMBER(vt::MemAllocNodeParams, ::cudaMemAllocNodeParams, dptr, dptr);

    // Constants.
    VT_SAME(vt::kMemLocationTypeDevice, CU_MEM_LOCATION_TYPE_DEVICE);
    VT_SAME(vt::kPointerAttributeDeviceOrdinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
    VT_SAME(vt::kArray3DLayered, CUDA_ARRAY3D_LAYERED);
    VT_SAME(vt::kArray3DLayered, cudaArrayLayered);
    VT_SAME(vt::kArray3DCubemap, CUDA_ARRAY3D_CUBEMAP);
    VT_SAME(vt::kArray3DCubemap, cudaArrayCubemap);
    VT_SAME(vt::kStreamCaptureStatusActive, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    VT_SAME(vt::kStreamCaptureStatusActive, cudaStreamCaptureStatusActive);
    VT_SAME_AT_RUN_TIME(vt::kStreamLegacy, reinterpret_cast<uintptr_t>(CU_STREAM_LEGACY));
    VT_SAME_AT_RUN_TIME(vt::kStreamPerThread, reinterpret_cast<uintptr_t>(CU_STREAM_PER_THREAD));
    VT_SAME(vt::kPoolAttrReservedMemCurrent, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    VT_SAME(vt::kPoolAttrReservedMemHigh, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH);
    VT_SAME(vt::kPoolAttrUsedMemCurrent, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    VT_SAME(vt::kPoolAttrUsedMemHigh, CU_MEMPOOL_ATTR_USED_MEM_HIGH);
    VT_SAME(vt::kPoolAttrReservedMemCurrent, cudaMemPoolAttrReservedMemCurrent);
    VT_SAME(vt::kPoolAttrUsedMemHigh, cudaMemPoolAttrUsedMemHigh);
    VT_SAME(vt::kGraphMemAttrUsedMemCurrent, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
    VT_SAME(vt::kGraphMemAttrUsedMemHigh, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH);
    VT_SAME(vt::kGraphMemAttrReservedMemCurrent, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
    VT_SAME(vt::kGraphMemAttrReservedMemHigh, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH);
    VT_SAME(vt::kSuccess, CUDA_SUCCESS);
    VT_SAME(vt::kSuccess, cudaSuccess);
    VT_SAME(vt::kDriverOutOfMemory, CUDA_ERROR_OUT_OF_MEMORY);
    VT_SAME(vt::kRuntimeOutOfMemory, cudaErrorMemoryAllocation);
    VT_SAME(vt::kDriverUnknown, CUDA_ERROR_UNKNOWN);
    VT_SAME(vt::kRuntimeUnknown, cudaErrorUnknown);
    return g_checks;
}

} // namespace

int main() {
    int n = count();
    printf("cuda_abi.h: %d values compared with the headers of CUDA %d.%d, %d differ\n", n, CUDA_VERSION / 1000,
           CUDA_VERSION % 1000 / 10, g_differ);
    return g_differ == 0 ? 0 : 1;
}
