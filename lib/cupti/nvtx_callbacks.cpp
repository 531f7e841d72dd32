// CUPTI's NVTX callbacks into the NVTX tables (see nvtx_callbacks.h).
//
// What CUPTI reports and vramtrace follows: marks, push/pop, start/end, domain creation, registered
// strings and category names, in the default domain and in named ones. What it does not pass: the
// memory API (nvToolsExtMem.h has no CUPTI callback id: its calls go to libcupti's
// InitializeInjectionNvtxExtension, not to subscribers), so no pool regions are recorded through
// CUPTI; resource naming (nvtxName{OsThread,CuDevice,...}) and the sync API are CUPTI's but not
// followed here.
#include "cupti/nvtx_callbacks.h"

#define NVTX_NO_IMPL
#include <cupti_callbacks.h>
#include <cupti_nvtx_cbid.h>  // no include guard: included here only
#include <generated_nvtx_meta.h>

#include <cwchar>

#include "nvtx/nvtx_calls.h"

namespace vramtrace::cupti {
namespace {

namespace n = nvtx;
constexpr n::Handles kCupti = n::Handles::Cupti;

// generated_nvtx_meta.h has no parameter structs for these; CUPTI's structs are the function's
// parameters in order (nvToolsExt.h).
struct DomainNameCategoryA_params {
    nvtxDomainHandle_t domain;
    uint32_t category;
    const char *name;
};
struct DomainNameCategoryW_params {
    nvtxDomainHandle_t domain;
    uint32_t category;
    const wchar_t *name;
};
struct DomainCreateW_params {
    const wchar_t *name;
};

template <class T> const T *params(const CUpti_NvtxData *d) { return static_cast<const T *>(d->functionParams); }
template <class T> bool returned(const CUpti_NvtxData *d, T *out) {
    if (d->functionReturnValue == nullptr) return false;
    *out = *static_cast<const T *>(d->functionReturnValue);
    return true;
}

void started(const CUpti_NvtxData *d, uint64_t ours) {
    nvtxRangeId_t theirs = 0;
    if (ours != 0 && returned(d, &theirs)) n::cupti_range_started(theirs, ours);
}

const uint32_t kFollowed[] = {
    CUPTI_CBID_NVTX_nvtxMarkA,
    CUPTI_CBID_NVTX_nvtxMarkW,
    CUPTI_CBID_NVTX_nvtxMarkEx,
    CUPTI_CBID_NVTX_nvtxRangeStartA,
    CUPTI_CBID_NVTX_nvtxRangeStartW,
    CUPTI_CBID_NVTX_nvtxRangeStartEx,
    CUPTI_CBID_NVTX_nvtxRangeEnd,
    CUPTI_CBID_NVTX_nvtxRangePushA,
    CUPTI_CBID_NVTX_nvtxRangePushW,
    CUPTI_CBID_NVTX_nvtxRangePushEx,
    CUPTI_CBID_NVTX_nvtxRangePop,
    CUPTI_CBID_NVTX_nvtxNameCategoryA,
    CUPTI_CBID_NVTX_nvtxNameCategoryW,
    CUPTI_CBID_NVTX_nvtxDomainMarkEx,
    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
    CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
    CUPTI_CBID_NVTX_nvtxDomainRangePop,
    CUPTI_CBID_NVTX_nvtxDomainNameCategoryA,
    CUPTI_CBID_NVTX_nvtxDomainNameCategoryW,
    CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
    CUPTI_CBID_NVTX_nvtxDomainRegisterStringW,
    CUPTI_CBID_NVTX_nvtxDomainCreateA,
    CUPTI_CBID_NVTX_nvtxDomainCreateW,
};

} // namespace

void translate_nvtx(uint32_t cbid, const void *data) {
    const auto *d = static_cast<const CUpti_NvtxData *>(data);
    if (d == nullptr || d->functionParams == nullptr) return;
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxMarkA: n::mark({n::ascii_name(params<nvtxMarkA_params>(d)->message), 0}); break;
    case CUPTI_CBID_NVTX_nvtxMarkW: n::mark({n::wide_name(params<nvtxMarkW_params>(d)->message), 0}); break;
    case CUPTI_CBID_NVTX_nvtxMarkEx: n::mark(n::event_name(kCupti, params<nvtxMarkEx_params>(d)->eventAttrib)); break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
        started(d, n::start(0, {n::ascii_name(params<nvtxRangeStartA_params>(d)->message), 0}));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
        started(d, n::start(0, {n::wide_name(params<nvtxRangeStartW_params>(d)->message), 0}));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        started(d, n::start(0, n::event_name(kCupti, params<nvtxRangeStartEx_params>(d)->eventAttrib)));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd: n::end(kCupti, params<nvtxRangeEnd_params>(d)->id); break;
    case CUPTI_CBID_NVTX_nvtxRangePushA: n::push(0, {n::ascii_name(params<nvtxRangePushA_params>(d)->message), 0}); break;
    case CUPTI_CBID_NVTX_nvtxRangePushW: n::push(0, {n::wide_name(params<nvtxRangePushW_params>(d)->message), 0}); break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
        n::push(0, n::event_name(kCupti, params<nvtxRangePushEx_params>(d)->eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePop: n::pop(0); break;
    case CUPTI_CBID_NVTX_nvtxNameCategoryA: {
        auto *p = params<nvtxNameCategoryA_params>(d);
        n::name_category_a(0, p->category, p->name);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxNameCategoryW: {
        auto *p = params<nvtxNameCategoryW_params>(d);
        n::name_category_w(0, p->category, p->name);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx:
        n::mark(n::event_name(kCupti, params<nvtxDomainMarkEx_params>(d)->core.eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
        auto *p = params<nvtxDomainRangeStartEx_params>(d);
        started(d, n::start(n::domain_of(kCupti, p->domain), n::event_name(kCupti, p->core.eventAttrib)));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: n::end(kCupti, params<nvtxDomainRangeEnd_params>(d)->core.id); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        auto *p = params<nvtxDomainRangePushEx_params>(d);
        n::push(n::domain_of(kCupti, p->domain), n::event_name(kCupti, p->core.eventAttrib));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        n::pop(n::domain_of(kCupti, params<nvtxDomainRangePop_params>(d)->domain));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainNameCategoryA: {
        auto *p = params<DomainNameCategoryA_params>(d);
        n::name_category_a(n::domain_of(kCupti, p->domain), p->category, p->name);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainNameCategoryW: {
        auto *p = params<DomainNameCategoryW_params>(d);
        n::name_category_w(n::domain_of(kCupti, p->domain), p->category, p->name);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
        nvtxStringHandle_t handle = nullptr;
        uint32_t name = n::register_string_a(params<nvtxDomainRegisterStringA_params>(d)->string);
        if (returned(d, &handle)) n::cupti_string_registered(handle, name);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW: {
        // The header declares this struct's string as const char *; the call's text is wide.
        auto *text = reinterpret_cast<const wchar_t *>(params<nvtxDomainRegisterStringW_params>(d)->string);
        nvtxStringHandle_t handle = nullptr;
        uint32_t name = n::register_string_w(text);
        if (returned(d, &handle)) n::cupti_string_registered(handle, name);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
        nvtxDomainHandle_t handle = nullptr;
        uint16_t domain = n::create_domain_a(params<nvtxDomainCreateA_params>(d)->name);
        if (returned(d, &handle)) n::cupti_domain_created(handle, domain);
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainCreateW: {
        nvtxDomainHandle_t handle = nullptr;
        uint16_t domain = n::create_domain_w(params<DomainCreateW_params>(d)->name);
        if (returned(d, &handle)) n::cupti_domain_created(handle, domain);
        break;
    }
    default: break;
    }
}

size_t subscribed_nvtx_callbacks(uint32_t *out, size_t capacity) {
    size_t n = sizeof kFollowed / sizeof kFollowed[0];
    for (size_t i = 0; i < n && i < capacity; ++i) out[i] = kFollowed[i];
    return n;
}

} // namespace vramtrace::cupti
