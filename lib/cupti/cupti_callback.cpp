#include "cupti/cupti_callback.h"

#include <cerrno>

#include <cupti_callbacks.h>

#include "cupti/callback_translate.h"
#include "cupti/nvtx_callbacks.h"

namespace vramtrace::cupti {
namespace {

void on_callback(void *userdata, int domain, uint32_t cbid, const void *cbdata) {
    if (domain == CUPTI_CB_DOMAIN_NVTX && cbdata != nullptr) {
        int saved_errno = errno;
        translate_nvtx(cbid, cbdata);
        errno = saved_errno;
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || userdata == nullptr || cbdata == nullptr) return;
    const auto *data = static_cast<const CUpti_CallbackData *>(cbdata);
    Event ev;
    ev.cbid = cbid;
    ev.site = data->callbackSite == CUPTI_API_ENTER ? Site::Enter : Site::Exit;
    ev.params = data->functionParams;
    // Valid at exit only (cupti_callbacks.h).
    if (ev.site == Site::Exit && data->functionReturnValue != nullptr)
        ev.result = *static_cast<const CUresult *>(data->functionReturnValue);
    ev.correlation = data->correlationData;
    // The program sees errno as the driver left it, whatever our queries do.
    int saved_errno = errno;
    translate(ev, *static_cast<Sink *>(userdata));
    errno = saved_errno;
}

} // namespace

CallbackFn callback_function() { return &on_callback; }

} // namespace vramtrace::cupti
