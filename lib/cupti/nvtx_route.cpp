// NVTX's injection entry point, InitializeInjectionNvtx2: NVTX calls it once, at the program's first
// NVTX call, in the library named by NVTX_INJECTION64_PATH (`vramtrace run` names this library).
// Who receives NVTX's calls:
//   the preload backend        the library's own slots (nvtx/injection.cpp);
//   the CUPTI backend          CUPTI: NVTX is handed to libcupti's InitializeInjectionNvtx2, and
//                              CUPTI reports each call to the subscriber in its NVTX callback domain
//                              (nvtx_callbacks.cpp). The libcupti is the subscriber's own (found and
//                              subscribed now when NVTX comes before cuInit), so NVTX and the
//                              subscriber share one copy of CUPTI, and the domains and strings the
//                              program creates at its first NVTX calls are seen. The library's own
//                              slots stay unused, unless CUPTI cannot take NVTX (not found, held by
//                              another tool, no NVTX callbacks): then they receive it, as with the
//                              preload backend.
// 1: attached; 0 (tracing off in this process): NVTX sets every entry point to its no-op.
#include <atomic>

#include "core/config.h"
#include "core/log.h"
#include "core/tracker.h"
#include "cupti/backend.h"
#include "cupti/subscriber.h"
#include "nvtx/injection.h"

namespace vramtrace::cupti {
namespace {

// The same choice as initialize_injection's (injection.cpp), made when NVTX may come first: CUPTI when
// asked for, or, unset, when the library is only the driver's injection (not preloaded). A library
// that NVTX alone loaded (no CUDA_INJECTION64_PATH) keeps NVTX's calls itself.
bool cupti_chosen() {
    const Config &c = config();
    return c.backend == 2 || (c.backend == 0 && loaded_by_injection_only());
}

} // namespace
} // namespace vramtrace::cupti

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
    using namespace vramtrace;
    if (tracker() == nullptr) return 0; // tracing is off in this process
    if (cupti::cupti_chosen()) {
        cupti::SubscribeResult r;
        if (cupti::NvtxInitFn init = cupti::subscribe_for_nvtx(&r)) {
            if (init(reinterpret_cast<cupti::NvtxGetTableFn>(get_table)) != 0) {
                log_debug("NVTX: handed to CUPTI (%s), %zu NVTX callbacks", r.library, r.nvtx_callbacks);
                return 1;
            }
            log_warning("NVTX: %s declined NVTX (InitializeInjectionNvtx2 returned 0); vramtrace takes NVTX's calls "
                        "itself", r.library);
        } else {
            log_debug("NVTX: not through CUPTI (%s); vramtrace takes NVTX's calls itself",
                      r.why[0] != 0 ? r.why : r.nvtx_why);
        }
    }
    return nvtx::initialize_injection(get_table);
}
