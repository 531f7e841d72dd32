#include "device/driver_queries.h"

#include <atomic>
#include <cstddef>

#include "device/cuda_abi.h"
#include "device/real_functions.h"

namespace vramtrace {
namespace {

template <class Fn> Fn driver_function(std::atomic<void *> &slot, const char *name) {
    void *p = slot.load(std::memory_order_acquire);
    if (p == nullptr) {
        p = driver_symbol(name);
        if (p != nullptr) slot.store(p, std::memory_order_release);
    }
    return reinterpret_cast<Fn>(p);
}

std::atomic<void *> g_mem_get_info{nullptr}, g_device_get{nullptr}, g_device_total_mem{nullptr};

} // namespace

bool current_device_memory_info(uint64_t *free_bytes, uint64_t *total_bytes) {
    auto get = driver_function<cuda::CUresult (*)(size_t *, size_t *)>(g_mem_get_info, "cuMemGetInfo_v2");
    size_t free_b = 0, total_b = 0;
    if (get == nullptr || get(&free_b, &total_b) != cuda::kSuccess) return false;
    *free_bytes = free_b;
    *total_bytes = total_b;
    return true;
}

bool device_total_memory(int ordinal, uint64_t *total_bytes) {
    auto get = driver_function<cuda::CUresult (*)(cuda::CUdevice *, int)>(g_device_get, "cuDeviceGet");
    auto total = driver_function<cuda::CUresult (*)(size_t *, cuda::CUdevice)>(g_device_total_mem,
                                                                              "cuDeviceTotalMem_v2");
    cuda::CUdevice device = 0;
    size_t bytes = 0;
    if (get == nullptr || total == nullptr || get(&device, ordinal) != cuda::kSuccess ||
        total(&bytes, device) != cuda::kSuccess)
        return false;
    *total_bytes = bytes;
    return true;
}

} // namespace vramtrace
