// NVTX's injection entry point: a program that calls NVTX (the NVTX3 headers, libnvToolsExt)
// loads the library named by NVTX_INJECTION64_PATH at its first NVTX call and calls
// InitializeInjectionNvtx2 with NVTX's export table; we fill the callback slots of the core and
// core2 modules that vramtrace uses (push/pop, start/end, marks, domains, registered strings,
// category names), each one line into nvtx_calls.h, which CUPTI's NVTX callbacks call as well.
// Every slot left alone is set to NVTX's own no-op by NVTX itself, so an entry point we do not use
// costs what it costs without a tool. The exported InitializeInjectionNvtx2 is cupti/nvtx_route.cpp's,
// which decides between these slots and CUPTI's; the memory extension's entry is here: CUPTI passes
// none of the memory API on, so its slots are ours with either backend. A process whose tracing is
// off (VRAMTRACE_DISABLE=1, a --no-follow child) returns 0: NVTX then sets every slot to its no-op.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include <cstddef>
#include <cstdint>
#include <cwchar>

#include "core/tracker.h"
#include "nvtx/injection.h"
#include "nvtx/mem_regions.h"
#include "nvtx/nvtx_calls.h"

namespace vramtrace::nvtx {
namespace {

constexpr Handles kOurs = Handles::Ours;

// Our handles are ids (nvtx_calls.h).
template <class H> H handle(uintptr_t id) { return reinterpret_cast<H>(id); }

// ---- core module ----
void NVTX_API mark_ex(const nvtxEventAttributes_t *a) { mark(event_name(kOurs, a)); }
void NVTX_API mark_a(const char *m) { mark({ascii_name(m), 0}); }
void NVTX_API mark_w(const wchar_t *m) { mark({wide_name(m), 0}); }
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t *a) { return start(0, event_name(kOurs, a)); }
nvtxRangeId_t NVTX_API range_start_a(const char *m) { return start(0, {ascii_name(m), 0}); }
nvtxRangeId_t NVTX_API range_start_w(const wchar_t *m) { return start(0, {wide_name(m), 0}); }
void NVTX_API range_end(nvtxRangeId_t id) { end(kOurs, id); }
int NVTX_API range_push_ex(const nvtxEventAttributes_t *a) { return push(0, event_name(kOurs, a)); }
int NVTX_API range_push_a(const char *m) { return push(0, {ascii_name(m), 0}); }
int NVTX_API range_push_w(const wchar_t *m) { return push(0, {wide_name(m), 0}); }
int NVTX_API range_pop() { return pop(0); }
void NVTX_API name_category_a_slot(uint32_t category, const char *name) { name_category_a(0, category, name); }
void NVTX_API name_category_w_slot(uint32_t category, const wchar_t *name) { name_category_w(0, category, name); }

// ---- core2 module (domains) ----
void NVTX_API domain_mark_ex(nvtxDomainHandle_t, const nvtxEventAttributes_t *a) { mark(event_name(kOurs, a)); }
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    return start(domain_of(kOurs, d), event_name(kOurs, a));
}
void NVTX_API domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) { end(kOurs, id); }
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    return push(domain_of(kOurs, d), event_name(kOurs, a));
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) { return pop(domain_of(kOurs, d)); }
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t, const char *s) {
    return handle<nvtxStringHandle_t>(register_string_a(s));
}
nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t, const wchar_t *s) {
    return handle<nvtxStringHandle_t>(register_string_w(s));
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char *name) { return handle<nvtxDomainHandle_t>(create_domain_a(name)); }
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name) {
    return handle<nvtxDomainHandle_t>(create_domain_w(name));
}
void NVTX_API domain_name_category_a(nvtxDomainHandle_t d, uint32_t category, const char *name) {
    name_category_a(domain_of(kOurs, d), category, name);
}
void NVTX_API domain_name_category_w(nvtxDomainHandle_t d, uint32_t category, const wchar_t *name) {
    name_category_w(domain_of(kOurs, d), category, name);
}

template <class Fn> void set(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
    if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

bool attach(NvtxGetExportTableFunc_t get_table) {
    if (get_table == nullptr) return false;
    auto *callbacks = static_cast<const NvtxExportTableCallbacks *>(get_table(NVTX_ETID_CALLBACKS));
    if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
        callbacks->GetModuleFunctionTable == nullptr)
        return false;
    NvtxFunctionTable core = nullptr, core2 = nullptr;
    unsigned core_size = 0, core2_size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || core == nullptr) return false;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) || core2 == nullptr)
        return false;
    set(core, core_size, NVTX_CBID_CORE_MarkEx, &mark_ex);
    set(core, core_size, NVTX_CBID_CORE_MarkA, &mark_a);
    set(core, core_size, NVTX_CBID_CORE_MarkW, &mark_w);
    set(core, core_size, NVTX_CBID_CORE_RangeStartEx, &range_start_ex);
    set(core, core_size, NVTX_CBID_CORE_RangeStartA, &range_start_a);
    set(core, core_size, NVTX_CBID_CORE_RangeStartW, &range_start_w);
    set(core, core_size, NVTX_CBID_CORE_RangeEnd, &range_end);
    set(core, core_size, NVTX_CBID_CORE_RangePushEx, &range_push_ex);
    set(core, core_size, NVTX_CBID_CORE_RangePushA, &range_push_a);
    set(core, core_size, NVTX_CBID_CORE_RangePushW, &range_push_w);
    set(core, core_size, NVTX_CBID_CORE_RangePop, &range_pop);
    set(core, core_size, NVTX_CBID_CORE_NameCategoryA, &name_category_a_slot);
    set(core, core_size, NVTX_CBID_CORE_NameCategoryW, &name_category_w_slot);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &domain_mark_ex);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_range_start_ex);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_range_end);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_range_push_ex);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_range_pop);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &domain_register_string_a);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &domain_register_string_w);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, &domain_name_category_a);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW, &domain_name_category_w);
    return true;
}

// ---- the memory extension (nvToolsExtMem.h) ----
uint64_t heap_handle(nvtxMemHeapHandle_t heap) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(heap)); }

nvtxMemHeapHandle_t NVTX_API mem_heap_register(nvtxDomainHandle_t, const nvtxMemHeapDesc_t *desc) {
    uint64_t address = 0, size = 0;
    if (desc != nullptr && desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && desc->typeSpecificDesc != nullptr &&
        desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
        auto *range = static_cast<const nvtxMemVirtualRangeDesc_t *>(desc->typeSpecificDesc);
        address = reinterpret_cast<uintptr_t>(range->ptr);
        size = range->size;
    }
    return reinterpret_cast<nvtxMemHeapHandle_t>(static_cast<uintptr_t>(register_heap(address, size)));
}
void NVTX_API mem_heap_unregister(nvtxDomainHandle_t, nvtxMemHeapHandle_t heap) { unregister_heap(heap_handle(heap)); }
void NVTX_API mem_heap_reset(nvtxDomainHandle_t, nvtxMemHeapHandle_t heap) { reset_heap(heap_handle(heap)); }
void NVTX_API mem_regions_register(nvtxDomainHandle_t, const nvtxMemRegionsRegisterBatch_t *batch) {
    if (batch == nullptr || batch->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || batch->regionDescElements == nullptr ||
        batch->regionDescElementSize < sizeof(nvtxMemVirtualRangeDesc_t))
        return;
    auto *bytes = static_cast<const unsigned char *>(batch->regionDescElements);
    for (size_t i = 0; i < batch->regionCount; ++i) {
        auto *d = reinterpret_cast<const nvtxMemVirtualRangeDesc_t *>(bytes + i * batch->regionDescElementSize);
        uint64_t h = register_region(heap_handle(batch->heap), reinterpret_cast<uintptr_t>(d->ptr), d->size);
        if (batch->regionHandleElementsOut != nullptr)
            batch->regionHandleElementsOut[i] = reinterpret_cast<nvtxMemRegionHandle_t>(static_cast<uintptr_t>(h));
    }
}
void NVTX_API mem_regions_unregister(nvtxDomainHandle_t, const nvtxMemRegionsUnregisterBatch_t *batch) {
    if (batch == nullptr || batch->refElements == nullptr || batch->refElementSize < sizeof(nvtxMemRegionRef_t)) return;
    auto *bytes = reinterpret_cast<const unsigned char *>(batch->refElements);
    for (size_t i = 0; i < batch->refCount; ++i) {
        auto *ref = reinterpret_cast<const nvtxMemRegionRef_t *>(bytes + i * batch->refElementSize);
        if (batch->refType == NVTX_MEM_REGION_REF_TYPE_POINTER) unregister_region_at(reinterpret_cast<uintptr_t>(ref->pointer));
        else if (batch->refType == NVTX_MEM_REGION_REF_TYPE_HANDLE)
            unregister_region_handle(reinterpret_cast<uintptr_t>(ref->handle));
    }
}

bool attach_memory(nvtxExtModuleInfo_t *info) {
    if (info == nullptr || info->moduleId != NVTX_EXT_MODULEID_MEM || info->compatId != NVTX_EXT_COMPATID_MEM)
        return false;
    for (size_t k = 0; k < info->segmentsCount; ++k) {
        nvtxExtModuleSegment_t &seg = info->segments[k];
        auto put = [&](size_t id, auto fn) {
            if (id < seg.slotCount) seg.functionSlots[id] = reinterpret_cast<intptr_t>(fn);
        };
        put(NVTX3EXT_CBID_nvtxMemHeapRegister, &mem_heap_register);
        put(NVTX3EXT_CBID_nvtxMemHeapUnregister, &mem_heap_unregister);
        put(NVTX3EXT_CBID_nvtxMemHeapReset, &mem_heap_reset);
        put(NVTX3EXT_CBID_nvtxMemRegionsRegister, &mem_regions_register);
        put(NVTX3EXT_CBID_nvtxMemRegionsUnregister, &mem_regions_unregister);
    }
    return true;
}

} // namespace
} // namespace vramtrace::nvtx

// NVTX's extensions (the memory API) call this once per extension, at its first call. 1: attached
// (the slots left alone become NVTX's no-ops); 0: every slot of the extension is a no-op.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info) {
    if (vramtrace::tracker() == nullptr) return 0;
    return vramtrace::nvtx::attach_memory(info) ? 1 : 0;
}

namespace vramtrace::nvtx {
int initialize_injection(NvtxGetExportTableFunc_t get_table) { return attach(get_table) ? 1 : 0; }
} // namespace vramtrace::nvtx
