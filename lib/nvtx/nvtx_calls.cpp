// The NVTX calls vramtrace follows, for both entries (see nvtx_calls.h).
#include "nvtx/nvtx_calls.h"

#include <cstddef>

#include "core/tracker.h"
#include "nvtx/categories.h"
#include "nvtx/handle_map.h"
#include "nvtx/intervals.h"
#include "nvtx/range_table.h"
#include "nvtx/thread_ranges.h"

namespace vramtrace::nvtx {
namespace {

// CUPTI's handles -> our ids (+1 for domains, so that the default domain 0 is a value too).
HandleMap<kMaxDomains * 4> g_cupti_domains;
HandleMap<kMaxNames * 2> g_cupti_strings;
HandleMap<kMaxIntervals * 2> g_cupti_ranges;

uint64_t key_of(const void *handle) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle)); }

// Wide text reduced to ASCII: every character outside 1..126 becomes '?'.
void narrow(const wchar_t *text, char (&out)[kMaxNameBytes]) {
    size_t n = 0;
    for (; text != nullptr && text[n] != 0 && n < kMaxNameBytes - 1; ++n)
        out[n] = text[n] > 0 && text[n] < 0x7f ? static_cast<char>(text[n]) : '?';
    out[n] = 0;
}

} // namespace

namespace detail {
uint16_t cupti_domain(nvtxDomainHandle_t domain) {
    uint64_t v = g_cupti_domains.get(key_of(domain));
    return v == 0 ? 0 : static_cast<uint16_t>(v - 1);
}
uint32_t cupti_string(nvtxStringHandle_t handle) { return static_cast<uint32_t>(g_cupti_strings.get(key_of(handle))); }
} // namespace detail

uint32_t wide_name(const wchar_t *message) {
    char text[kMaxNameBytes];
    narrow(message, text);
    char normalised[kMaxNameBytes];
    size_t m = normalise_message(text, normalised);
    return intern_normalised(normalised, m);
}


void end(Handles handles, uint64_t range_id) {
    end_interval(handles == Handles::Cupti ? g_cupti_ranges.get(range_id) : range_id);
}

void mark(EventName name) { record_mark(name_text(name.name)); }

uint16_t create_domain_a(const char *name) { return create_domain(name); }
uint16_t create_domain_w(const wchar_t *name) {
    char text[kMaxNameBytes];
    narrow(name, text);
    return create_domain(text);
}

uint32_t register_string_a(const char *text) { return intern_name(text); }
uint32_t register_string_w(const wchar_t *text) { return wide_name(text); }

void name_category_a(uint16_t domain, uint32_t category, const char *name) { name_category(domain, category, name); }
void name_category_w(uint16_t domain, uint32_t category, const wchar_t *name) {
    char text[kMaxNameBytes];
    narrow(name, text);
    name_category(domain, category, text);
}

void cupti_domain_created(nvtxDomainHandle_t handle, uint16_t domain) {
    g_cupti_domains.put(key_of(handle), uint64_t{domain} + 1);
}
void cupti_string_registered(nvtxStringHandle_t handle, uint32_t name) {
    g_cupti_strings.put(key_of(handle), name);
}
void cupti_range_started(nvtxRangeId_t cupti_id, uint64_t our_id) { g_cupti_ranges.put(cupti_id, our_id); }

} // namespace vramtrace::nvtx
