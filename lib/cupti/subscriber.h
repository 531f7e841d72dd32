// Finds and dlopens libcupti (only when the CUPTI backend is chosen), subscribes the translation's
// callback and enables the driver-API callbacks it follows, and the NVTX callbacks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vramtrace::cupti {

struct SubscribeResult {
    bool ok = false;
    size_t callbacks = 0;        // driver-API callback ids enabled
    size_t nvtx_callbacks = 0;   // NVTX callback ids enabled (nvtx_callbacks.h)
    char nvtx_why[160] = {};     // when not all of them: one line
    const char *library = "";    // the libcupti used (a path or soname)
    char why[256] = {};          // when !ok: one line, e.g. who holds CUPTI already
};

// At the driver's InitializeInjection: subscribes (unless NVTX's entry did already) and enables the
// driver-API callbacks. ok: CUPTI records allocations.
SubscribeResult subscribe();

// At NVTX's InitializeInjectionNvtx2 under the CUPTI backend: subscribes (unless the driver's entry
// did already, or it failed) and returns libcupti's own InitializeInjectionNvtx2, to which NVTX is
// handed so that CUPTI reports its calls; nullptr when CUPTI cannot take them (*result says why).
using NvtxGetTableFn = const void *(*)(uint32_t export_table_id); // NvtxGetExportTableFunc_t
using NvtxInitFn = int (*)(NvtxGetTableFn get_table);                // InitializeInjectionNvtx2
NvtxInitFn subscribe_for_nvtx(SubscribeResult *result);

} // namespace vramtrace::cupti
