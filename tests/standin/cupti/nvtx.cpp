// Stand-in libcupti as NVTX's injection library (NVTX_INJECTION64_PATH names it), as the real one
// is for CUPTI_CB_DOMAIN_NVTX: InitializeInjectionNvtx2 fills NVTX's core and core2 slots with this
// library's own implementation, and each call is reported to the subscriber (cupti.cpp) when it
// enabled that id, as a CUpti_NvtxData with the call's generated_nvtx_meta.h parameter struct and
// its return value. The handles are the stand-in's own: domains and registered strings are
// pointers into its tables, range ids count from 1001, so a subscriber must map them as it would
// real CUPTI's. Pushes return the level per thread and domain, pops the level ended or -1, as NVTX
// tools do. The memory extension is declined (InitializeInjectionNvtxExtension returns 0): no
// CUPTI callback id carries nvtxMem*.
#define NVTX_NO_IMPL
#include <cupti_callbacks.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExtMem.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <cwchar>
#include <mutex>

#include "nvtx.h"

namespace {

constexpr int kMaxDomains = 64;
constexpr int kMaxStrings = 4096;
constexpr int kTextBytes = 256;

struct Domain {
  char name[kTextBytes];
};
struct String {
  wchar_t text[kTextBytes];  // wide or narrow, as registered
};

Domain g_domains[kMaxDomains];
int g_domain_count = 0;
String g_strings[kMaxStrings];
int g_string_count = 0;
std::mutex g_lock;
std::atomic<uint64_t> g_next_range{1001};
thread_local int t_depth[kMaxDomains + 1];  // [0]: the default domain

int domain_index(nvtxDomainHandle_t d) {
  if (d == nullptr) return 0;
  auto* p = reinterpret_cast<Domain*>(d);
  if (p < g_domains || p >= g_domains + kMaxDomains) return 0;
  return static_cast<int>(p - g_domains) + 1;
}

template <class P, class R>
void report(CUpti_nvtx_api_trace_cbid cbid, const char* name, const P& params, const R* result) {
  CUpti_NvtxData data{name, &params, result};
  standin_cupti_report_nvtx(cbid, &data);
}

int push_level(nvtxDomainHandle_t d) { return t_depth[domain_index(d)]++; }
int pop_level(nvtxDomainHandle_t d) {
  int& depth = t_depth[domain_index(d)];
  if (depth == 0) return -1;
  return --depth;
}

nvtxDomainHandle_t create_domain(const char* name) {
  std::lock_guard<std::mutex> g(g_lock);
  for (int i = 0; i < g_domain_count; ++i)
    if (std::strcmp(g_domains[i].name, name) == 0) return reinterpret_cast<nvtxDomainHandle_t>(&g_domains[i]);
  if (g_domain_count == kMaxDomains) return nullptr;
  Domain& d = g_domains[g_domain_count++];
  std::snprintf(d.name, sizeof d.name, "%s", name);
  return reinterpret_cast<nvtxDomainHandle_t>(&d);
}

nvtxStringHandle_t register_string(const void* text, bool wide) {
  std::lock_guard<std::mutex> g(g_lock);
  if (g_string_count == kMaxStrings) return nullptr;
  String& s = g_strings[g_string_count++];
  for (int i = 0; i < kTextBytes - 1; ++i) {
    wchar_t c = wide ? static_cast<const wchar_t*>(text)[i] : static_cast<const char*>(text)[i];
    s.text[i] = c;
    if (c == 0) break;
  }
  return reinterpret_cast<nvtxStringHandle_t>(&s);
}

// ---- core ----
void NVTX_API mark_ex(const nvtxEventAttributes_t* a) { report(CUPTI_CBID_NVTX_nvtxMarkEx, "nvtxMarkEx", nvtxMarkEx_params{a}, (void*)nullptr); }
void NVTX_API mark_a(const char* m) { report(CUPTI_CBID_NVTX_nvtxMarkA, "nvtxMarkA", nvtxMarkA_params{m}, (void*)nullptr); }
void NVTX_API mark_w(const wchar_t* m) { report(CUPTI_CBID_NVTX_nvtxMarkW, "nvtxMarkW", nvtxMarkW_params{m}, (void*)nullptr); }
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* a) {
  nvtxRangeId_t id = g_next_range++;
  report(CUPTI_CBID_NVTX_nvtxRangeStartEx, "nvtxRangeStartEx", nvtxRangeStartEx_params{a}, &id);
  return id;
}
nvtxRangeId_t NVTX_API range_start_a(const char* m) {
  nvtxRangeId_t id = g_next_range++;
  report(CUPTI_CBID_NVTX_nvtxRangeStartA, "nvtxRangeStartA", nvtxRangeStartA_params{m}, &id);
  return id;
}
nvtxRangeId_t NVTX_API range_start_w(const wchar_t* m) {
  nvtxRangeId_t id = g_next_range++;
  report(CUPTI_CBID_NVTX_nvtxRangeStartW, "nvtxRangeStartW", nvtxRangeStartW_params{m}, &id);
  return id;
}
void NVTX_API range_end(nvtxRangeId_t id) { report(CUPTI_CBID_NVTX_nvtxRangeEnd, "nvtxRangeEnd", nvtxRangeEnd_params{id}, (void*)nullptr); }
int NVTX_API range_push_ex(const nvtxEventAttributes_t* a) {
  int level = push_level(nullptr);
  report(CUPTI_CBID_NVTX_nvtxRangePushEx, "nvtxRangePushEx", nvtxRangePushEx_params{a}, &level);
  return level;
}
int NVTX_API range_push_a(const char* m) {
  int level = push_level(nullptr);
  report(CUPTI_CBID_NVTX_nvtxRangePushA, "nvtxRangePushA", nvtxRangePushA_params{m}, &level);
  return level;
}
int NVTX_API range_push_w(const wchar_t* m) {
  int level = push_level(nullptr);
  report(CUPTI_CBID_NVTX_nvtxRangePushW, "nvtxRangePushW", nvtxRangePushW_params{m}, &level);
  return level;
}
int NVTX_API range_pop() {
  int level = pop_level(nullptr);
  report(CUPTI_CBID_NVTX_nvtxRangePop, "nvtxRangePop", nvtxRangePop_params{nullptr}, &level);
  return level;
}
void NVTX_API name_category_a(uint32_t category, const char* name) {
  report(CUPTI_CBID_NVTX_nvtxNameCategoryA, "nvtxNameCategoryA", nvtxNameCategoryA_params{category, name}, (void*)nullptr);
}
void NVTX_API name_category_w(uint32_t category, const wchar_t* name) {
  report(CUPTI_CBID_NVTX_nvtxNameCategoryW, "nvtxNameCategoryW", nvtxNameCategoryW_params{category, name}, (void*)nullptr);
}

// ---- core2 ----
// The parameter structs generated_nvtx_meta.h lacks: the function's parameters in order.
struct DomainNameCategoryA_params {
  nvtxDomainHandle_t domain;
  uint32_t category;
  const char* name;
};
struct DomainNameCategoryW_params {
  nvtxDomainHandle_t domain;
  uint32_t category;
  const wchar_t* name;
};
struct DomainCreateW_params {
  const wchar_t* name;
};

void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  report(CUPTI_CBID_NVTX_nvtxDomainMarkEx, "nvtxDomainMarkEx", nvtxDomainMarkEx_params{d, {a}}, (void*)nullptr);
}
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  nvtxRangeId_t id = g_next_range++;
  report(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, "nvtxDomainRangeStartEx", nvtxDomainRangeStartEx_params{d, {a}}, &id);
  return id;
}
void NVTX_API domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  report(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, "nvtxDomainRangeEnd", nvtxDomainRangeEnd_params{d, {id}}, (void*)nullptr);
}
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  int level = push_level(d);
  report(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, "nvtxDomainRangePushEx", nvtxDomainRangePushEx_params{d, {a}}, &level);
  return level;
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) {
  int level = pop_level(d);
  report(CUPTI_CBID_NVTX_nvtxDomainRangePop, "nvtxDomainRangePop", nvtxDomainRangePop_params{d}, &level);
  return level;
}
void NVTX_API domain_name_category_a(nvtxDomainHandle_t d, uint32_t category, const char* name) {
  report(CUPTI_CBID_NVTX_nvtxDomainNameCategoryA, "nvtxDomainNameCategoryA", DomainNameCategoryA_params{d, category, name},
         (void*)nullptr);
}
void NVTX_API domain_name_category_w(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
  report(CUPTI_CBID_NVTX_nvtxDomainNameCategoryW, "nvtxDomainNameCategoryW", DomainNameCategoryW_params{d, category, name},
         (void*)nullptr);
}
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t d, const char* s) {
  nvtxStringHandle_t h = register_string(s, false);
  report(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, "nvtxDomainRegisterStringA", nvtxDomainRegisterStringA_params{d, s}, &h);
  return h;
}
nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t d, const wchar_t* s) {
  nvtxStringHandle_t h = register_string(s, true);
  // The header's struct has a const char *: the wide text is passed in it, as CUPTI does.
  report(CUPTI_CBID_NVTX_nvtxDomainRegisterStringW, "nvtxDomainRegisterStringW",
         nvtxDomainRegisterStringW_params{d, reinterpret_cast<const char*>(s)}, &h);
  return h;
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  nvtxDomainHandle_t h = create_domain(name != nullptr ? name : "");
  report(CUPTI_CBID_NVTX_nvtxDomainCreateA, "nvtxDomainCreateA", nvtxDomainCreateA_params{name}, &h);
  return h;
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) {
  char narrow[kTextBytes] = {};
  for (int i = 0; name != nullptr && name[i] != 0 && i < kTextBytes - 1; ++i) narrow[i] = static_cast<char>(name[i]);
  nvtxDomainHandle_t h = create_domain(narrow);
  report(CUPTI_CBID_NVTX_nvtxDomainCreateW, "nvtxDomainCreateW", DomainCreateW_params{name}, &h);
  return h;
}

template <class Fn>
void set(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  if (get_table == nullptr) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr)
    return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || core == nullptr) return 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) || core2 == nullptr) return 0;
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
  set(core, core_size, NVTX_CBID_CORE_NameCategoryA, &name_category_a);
  set(core, core_size, NVTX_CBID_CORE_NameCategoryW, &name_category_w);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &domain_mark_ex);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_range_start_ex);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_range_end);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_range_push_ex);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_range_pop);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, &domain_name_category_a);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW, &domain_name_category_w);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &domain_register_string_a);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &domain_register_string_w);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
  set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
  return 1;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t*) { return 0; }
