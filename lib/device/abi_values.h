// A CUDA argument as the 64-bit value a record keeps: handles and host pointers by their address,
// integers (CUdeviceptr, sizes, enums) by value. hooks.def's expressions and the hand-written hooks
// (interception/, cupti/) take every address, size and handle through these.
#pragma once

#include <cstdint>
#include <type_traits>

namespace vramtrace::cuda {

template <class T> constexpr uint64_t to_u64(T value) {
    if constexpr (std::is_pointer_v<T>) return reinterpret_cast<uint64_t>(value);
    else return static_cast<uint64_t>(value);
}

// What a call wrote to an out-parameter (a pointer, a CUdeviceptr, a pitch); 0 when out is null.
template <class T> uint64_t out(T *p) { return p ? to_u64(*p) : 0; }

} // namespace vramtrace::cuda
