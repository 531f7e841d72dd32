// cuGetProcAddress and cuGetProcAddress_v2: the way every cudart (static or shared) and
// cudaGetDriverEntryPoint(ByVersion) users obtain driver functions.
//
// We forward the call unchanged, then replace the returned pointer only when it is exactly the
// driver's own function for a row we wrap (compared with the driver's exported symbol of that exact
// variant), with our wrapper of the same ABI. So legacy vs _v2 and _ptsz variants keep their own
// semantics: we never choose a variant ourselves. Asking for "cuGetProcAddress" itself returns our
// wrapper by the same rule, so every later look-up comes through here too.
// Substitution ignores the reentrancy guard: cudart's lazy initialisation runs inside the first
// cudaMalloc we intercept, and the pointers it stores then must already be ours.
#include <cstring>

#include "core/config.h"
#include "core/tracker.h"
#include "interception/hook_table.h"
#include "device/real_functions.h"
#include "interception/self_test.h"

namespace vramtrace {
namespace {

void substitute(void **pfn) {
    const Config &c = config();
    if (c.disabled || !c.hook_procaddress || pfn == nullptr || *pfn == nullptr) return;
    self_test_with_driver(); // once; also caches the driver version so no dump ever calls CUDA
    for (int i = 1; i < kApiCount; ++i) {
        ApiId id = static_cast<ApiId>(i);
        if (api_info(id).family != HookFamily::Driver) continue;
        void *real = find_real(id);
        if (real != nullptr && *pfn == real) {
            *pfn = hook_info(id).handout;
            return;
        }
    }
}

// A CUDA runtime bootstraps by asking for "cuGetProcAddress" itself (docs/design.md): it registers
// its exit handlers around then, so the tracker's own exit handler is registered again after it.
void note_lookup(const char *symbol) {
    if (symbol != nullptr && std::strcmp(symbol, "cuGetProcAddress") == 0) note_runtime_bootstrap();
}

} // namespace

namespace hooks {

CUresult cuGetProcAddress(Reach, const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
    auto real = VT_REAL(cuGetProcAddress);
    if (real == nullptr) return cuda::kDriverUnknown;
    CUresult rc = real(symbol, pfn, cudaVersion, flags);
    if (rc == cuda::kSuccess) substitute(pfn);
    note_lookup(symbol);
    return rc;
}

CUresult cuGetProcAddress_v2(Reach, const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus) {
    auto real = VT_REAL(cuGetProcAddress_v2);
    if (real == nullptr) return cuda::kDriverUnknown;
    CUresult rc = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (rc == cuda::kSuccess) substitute(pfn);
    note_lookup(symbol);
    return rc;
}

} // namespace hooks
} // namespace vramtrace
