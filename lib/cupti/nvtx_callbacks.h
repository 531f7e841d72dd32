// CUPTI's NVTX callback domain (CUPTI_CB_DOMAIN_NVTX): with the CUPTI backend, NVTX's injection
// library is libcupti itself (NVTX_INJECTION64_PATH names it: docs/nvtx.md), which reports every
// NVTX call to its subscriber with the call's parameters (CUpti_NvtxData: the <name>_params structs
// of generated_nvtx_meta.h) and its return value. Each call we follow becomes the same nvtx/
// nvtx_calls.h call the library's own injection makes, with CUPTI's handles mapped to our ids.
// Declared without CUPTI's types, as cupti_callback.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vramtrace::cupti {

// One NVTX callback: `cbid` a CUpti_nvtx_api_trace_cbid, `data` its CUpti_NvtxData. Ids that are
// not ours are ignored.
void translate_nvtx(uint32_t cbid, const void *data);

// The NVTX callback ids the backend enables. Writes at most `capacity`; returns how many there are.
size_t subscribed_nvtx_callbacks(uint32_t *out, size_t capacity);

} // namespace vramtrace::cupti
