// The function CUPTI calls (a CUpti_CallbackFunc): it reads the CUpti_CallbackData of a driver-API
// callback and hands it to translate() with the Sink passed as CUPTI's userdata. Declared without
// CUPTI's types so that the rest of the library never includes cuda.h (device/cuda_abi.h).
#pragma once

#include <cstdint>

namespace vramtrace::cupti {

// Same ABI as CUpti_CallbackFunc (CUpti_CallbackDomain is an int-sized enum, CUpti_CallbackId a
// uint32_t). userdata: a Sink *.
using CallbackFn = void (*)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
CallbackFn callback_function();

} // namespace vramtrace::cupti
