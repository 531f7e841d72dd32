// Stream creation and destruction: the real call's result, errno and out-parameter are the
// program's; the hook only tells the stream-device memory (device/stream_devices.h) that handles
// may have changed, whether or not the call succeeded, after it returned. It does so on every path,
// recording or not, so that the memory is right whenever recording starts.
#include "device/stream_devices.h"
#include "interception/hook_scope.h"

namespace vramtrace::hooks {
namespace {

template <class Call> CUresult noted(Call &&call) {
    CUresult rc = call();
    int saved_errno = errno;
    streams_changed();
    errno = saved_errno;
    return rc;
}

} // namespace

#define VT_STREAM_LIFETIME(name, params, call_args)            \
    CUresult name(Reach, VT_EXPAND params) {                  \
        auto real = VT_REAL(name);                            \
        if (real == nullptr) return cuda::kDriverUnknown;     \
        return noted([&] { return real call_args; });         \
    }
VT_STREAM_LIFETIME(cuStreamCreate, (CUstream * phStream, unsigned int Flags), (phStream, Flags))
VT_STREAM_LIFETIME(cuStreamCreateWithPriority, (CUstream * phStream, unsigned int flags, int priority),
                   (phStream, flags, priority))
VT_STREAM_LIFETIME(cuGreenCtxStreamCreate, (CUstream * phStream, void *greenCtx, unsigned int flags, int priority),
                   (phStream, greenCtx, flags, priority))
VT_STREAM_LIFETIME(cuStreamDestroy, (CUstream hStream), (hStream))
VT_STREAM_LIFETIME(cuStreamDestroy_v2, (CUstream hStream), (hStream))

} // namespace vramtrace::hooks
