// What each NVTX call that vramtrace follows does to the NVTX tables, whichever entry delivered it:
// NVTX's injection interface (injection.cpp: our functions in NVTX's slots) or CUPTI's NVTX callback
// domain (cupti/nvtx_callbacks.cpp: CUPTI holds the slots and reports each call with its
// parameters). Both entries call these and nothing else, so a call means the same in both.
//
// Handles: the injection hands NVTX our own ids as handles (a domain handle is its domain id, a
// registered string's its name id, a start/end range id its interval id). Under CUPTI the handles
// are CUPTI's: the entry reports each one CUPTI hands back (the return value of nvtxDomainCreate*,
// nvtxDomainRegisterString*, nvtxRangeStart*) and later calls name it by that handle
// (handle_map.h). A handle that was never reported (made before vramtrace subscribed to CUPTI, or
// by another NVTX instance) counts as the default domain / an unnamed range / no range.
#pragma once

#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <cstdint>
#include <cwchar>

#include "nvtx/intervals.h"
#include "nvtx/range_table.h"
#include "nvtx/thread_ranges.h"

namespace vramtrace::nvtx {

enum class Handles : uint8_t { Ours, Cupti };

// A domain handle as a domain id (range_table.h): domain_of, below.
// The name id and category of an event's attributes (0, 0 for NULL or a struct too small).
struct EventName {
    uint32_t name = 0;
    uint32_t category = 0;
};
// event_name(handles, attributes): below.
// Messages as name ids: ASCII as given, wide characters reduced to ASCII ('?' for the rest).
inline uint32_t ascii_name(const char *message) { return intern_name(message); }
uint32_t wide_name(const wchar_t *message);

// nvtxRangePush* / nvtxDomainRangePushEx and the pops: the level, as NVTX returns it.
inline int push(uint16_t domain, EventName name) { return push_range(domain, name.name, name.category); }
inline int pop(uint16_t domain) { return pop_range(domain); }
// nvtxRangeStart* / nvtxDomainRangeStartEx: our interval id (intervals.h); End takes a handle.
inline uint64_t start(uint16_t domain, EventName name) { return start_interval(domain, name.name, name.category); }
void end(Handles handles, uint64_t range_id);
// nvtxMark* / nvtxDomainMarkEx: a mark event (core/tracker.h's record_mark).
void mark(EventName name);
// nvtxDomainCreateA/W: the domain id (the same id for the same name).
uint16_t create_domain_a(const char *name);
uint16_t create_domain_w(const wchar_t *name);
// nvtxDomainRegisterStringA/W: the name id.
uint32_t register_string_a(const char *text);
uint32_t register_string_w(const wchar_t *text);
// nvtxNameCategoryA/W (domain 0) and nvtxDomainNameCategoryA/W.
void name_category_a(uint16_t domain, uint32_t category, const char *name);
void name_category_w(uint16_t domain, uint32_t category, const wchar_t *name);

namespace detail {
uint16_t cupti_domain(nvtxDomainHandle_t domain);
uint32_t cupti_string(nvtxStringHandle_t handle);
} // namespace detail

// The injection's calls pay no call for the handles: ours are ids.
inline uint16_t domain_of(Handles handles, nvtxDomainHandle_t domain) {
    if (handles == Handles::Cupti) return detail::cupti_domain(domain);
    auto id = reinterpret_cast<uintptr_t>(domain);
    return id < domain_count() ? static_cast<uint16_t>(id) : 0;
}

inline EventName event_name(Handles handles, const nvtxEventAttributes_t *a) {
    EventName out;
    if (a == nullptr || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) return out;
    out.category = a->category;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: out.name = intern_name(a->message.ascii); break;
    case NVTX_MESSAGE_TYPE_UNICODE: out.name = wide_name(a->message.unicode); break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        if (handles == Handles::Cupti) {
            out.name = detail::cupti_string(a->message.registered);
        } else {
            auto id = reinterpret_cast<uintptr_t>(a->message.registered);
            out.name = id < kMaxNames ? static_cast<uint32_t>(id) : 0;
        }
        break;
    default: break;
    }
    return out;
}

// Under CUPTI: the handles CUPTI returned for a domain, a registered string, a start/end range.
void cupti_domain_created(nvtxDomainHandle_t handle, uint16_t domain);
void cupti_string_registered(nvtxStringHandle_t handle, uint32_t name);
void cupti_range_started(nvtxRangeId_t cupti_id, uint64_t our_id);

} // namespace vramtrace::nvtx
