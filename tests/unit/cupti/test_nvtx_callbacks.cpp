// CUPTI's NVTX callbacks into the NVTX tables, driven the way CUPTI drives them: a CUpti_NvtxData
// whose functionParams point at the real parameter structs of generated_nvtx_meta.h and whose
// functionReturnValue holds CUPTI's own handle, passed to the very callback function the library
// subscribes. The handles are arbitrary numbers, as CUPTI's are to vramtrace.
#include <catch2/catch.hpp>

#include <string>
#include <thread>

#define NVTX_NO_IMPL
#include <cupti_callbacks.h>
#include <cupti_nvtx_cbid.h>
#include <generated_nvtx_meta.h>

#include "cupti/cupti_callback.h"
#include "nvtx/categories.h"
#include "nvtx/intervals.h"
#include "nvtx/range_table.h"
#include "nvtx/thread_ranges.h"

using namespace vramtrace;

namespace {

template <class P, class R = int> void call(CUpti_nvtx_api_trace_cbid cbid, const P &params, const R *result = nullptr) {
    CUpti_NvtxData data{"nvtx", &params, result};
    int sink = 0; // NVTX callbacks use no sink; the driver domain's userdata stands here
    cupti::callback_function()(&sink, CUPTI_CB_DOMAIN_NVTX, cbid, &data);
}

// "domain:name[category] > ..." of a range stack id.
std::string chain(uint16_t id) {
    std::string out;
    nvtx::StackNode n;
    for (uint16_t at = id; nvtx::stack_node(at, &n); at = n.parent) {
        char category[nvtx::kMaxNameBytes];
        nvtx::category_text(n.domain, n.category, category);
        std::string frame = std::string(nvtx::domain_name(n.domain)) + ":" + nvtx::name_text(n.name) +
                            (category[0] ? "[" + std::string(category) + "]" : "");
        out = frame + (out.empty() ? "" : " > " + out);
    }
    return out;
}

nvtxEventAttributes_t attributes(uint32_t category) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = category;
    return a;
}

struct DomainNameCategoryA_params {
    nvtxDomainHandle_t domain;
    uint32_t category;
    const char *name;
};
struct DomainCreateW_params {
    const wchar_t *name;
};

} // namespace

TEST_CASE("cupti nvtx: CUPTI's handles are mapped to vramtrace's domains, strings, categories and ranges") {
    nvtx::reset_tables_for_testing();
    nvtx::reset_categories_for_testing();
    std::thread([] {
        nvtx::reset_thread_for_testing();
        auto ml = reinterpret_cast<nvtxDomainHandle_t>(uintptr_t{0x7f0010});
        call(CUPTI_CBID_NVTX_nvtxDomainCreateA, nvtxDomainCreateA_params{"ml"}, &ml);
        auto forward = reinterpret_cast<nvtxStringHandle_t>(uintptr_t{0x7f0020});
        call(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, nvtxDomainRegisterStringA_params{ml, "forward"}, &forward);
        call(CUPTI_CBID_NVTX_nvtxDomainNameCategoryA, DomainNameCategoryA_params{ml, 7, "phase"});
        call(CUPTI_CBID_NVTX_nvtxNameCategoryW, nvtxNameCategoryW_params{3, L"w\u00efde"});

        int level = 0;
        call(CUPTI_CBID_NVTX_nvtxRangePushA, nvtxRangePushA_params{"step, seq = 4"}, &level);
        CHECK(chain(nvtx::current_range_stack()) == ":step");
        nvtxEventAttributes_t a = attributes(7);
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = forward;
        call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, nvtxDomainRangePushEx_params{ml, {&a}}, &level);
        CHECK(chain(nvtx::current_range_stack()) == ":step > ml:forward[phase]");
        nvtxEventAttributes_t w = attributes(3);
        w.messageType = NVTX_MESSAGE_TYPE_UNICODE;
        w.message.unicode = L"b\u00e4ck";
        call(CUPTI_CBID_NVTX_nvtxRangePushEx, nvtxRangePushEx_params{&w}, &level);
        // The default domain's push under an open later domain: the chain is rebuilt in order.
        CHECK(chain(nvtx::current_range_stack()) == ":step > :b?ck[w?de] > ml:forward[phase]");
        call(CUPTI_CBID_NVTX_nvtxRangePop, nvtxRangePop_params{nullptr}, &level);
        call(CUPTI_CBID_NVTX_nvtxDomainRangePop, nvtxDomainRangePop_params{ml}, &level);
        CHECK(chain(nvtx::current_range_stack()) == ":step");

        // A handle CUPTI never reported (made before the subscription) is the default domain; a string
        // it never reported is an unnamed range; category 7 of the default domain has no name.
        auto unknown = reinterpret_cast<nvtxDomainHandle_t>(uintptr_t{0x7f0990});
        nvtxEventAttributes_t u = attributes(7);
        u.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        u.message.registered = reinterpret_cast<nvtxStringHandle_t>(uintptr_t{0x7f0998});
        call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, nvtxDomainRangePushEx_params{unknown, {&u}}, &level);
        CHECK(chain(nvtx::current_range_stack()) == ":step > :[7]");
        call(CUPTI_CBID_NVTX_nvtxDomainRangePop, nvtxDomainRangePop_params{unknown}, &level);
        call(CUPTI_CBID_NVTX_nvtxRangePop, nvtxRangePop_params{nullptr}, &level);
        CHECK(nvtx::current_range_stack() == 0);

        // Wide domain names and strings (the W struct's string member is declared const char *).
        auto wd = reinterpret_cast<nvtxDomainHandle_t>(uintptr_t{0x7f0030});
        call(CUPTI_CBID_NVTX_nvtxDomainCreateW, DomainCreateW_params{L"gpu\u00df"}, &wd);
        auto ws = reinterpret_cast<nvtxStringHandle_t>(uintptr_t{0x7f0040});
        const wchar_t *text = L"optim";
        call(CUPTI_CBID_NVTX_nvtxDomainRegisterStringW,
             nvtxDomainRegisterStringW_params{wd, reinterpret_cast<const char *>(text)}, &ws);
        nvtxEventAttributes_t r = attributes(0);
        r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        r.message.registered = ws;
        call(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, nvtxDomainRangePushEx_params{wd, {&r}}, &level);
        CHECK(chain(nvtx::current_range_stack()) == "gpu?:optim");
        call(CUPTI_CBID_NVTX_nvtxDomainRangePop, nvtxDomainRangePop_params{wd}, &level);

        // Start/end: CUPTI's range id names our interval at its end; an id it never reported is
        // ignored.
        uint32_t before = nvtx::interval_count();
        nvtxRangeId_t id = 5001;
        nvtxEventAttributes_t e = attributes(7);
        e.messageType = NVTX_MESSAGE_TYPE_ASCII;
        e.message.ascii = "epoch";
        call(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, nvtxDomainRangeStartEx_params{ml, {&e}}, &id);
        REQUIRE(nvtx::interval_count() == before + 1);
        const nvtx::Interval &v = nvtx::interval_at(before);
        CHECK(std::string(nvtx::domain_name(v.domain)) == "ml");
        CHECK(std::string(nvtx::name_text(v.name)) == "epoch");
        CHECK(v.category == 7);
        call(CUPTI_CBID_NVTX_nvtxRangeEnd, nvtxRangeEnd_params{4242});
        CHECK(v.end_ns == 0);
        call(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, nvtxDomainRangeEnd_params{ml, {5001}});
        CHECK(v.end_ns != 0);
    }).join();
}
