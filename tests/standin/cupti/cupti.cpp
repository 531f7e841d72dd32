// Stand-in libcupti.so.13: the callback API that lib/cupti/subscriber.cpp uses, and NVTX's
// injection entry (nvtx.cpp), nothing more.
//   cuptiSubscribe_v2 / cuptiSubscribe   one subscriber per process; registers a dispatcher with the
//                                        stand-in driver (standin_set_api_callback, found with dlsym
//                                        in the libcuda.so.1 already loaded; a subscriber before
//                                        cuInit is registered at its first driver-domain enable)
//   cuptiEnableCallback / EnableDomain   which driver-API and NVTX callback ids reach the subscriber
//   InitializeInjectionNvtx2             NVTX's injection entry: NVTX calls are reported in
//                                        CUPTI_CB_DOMAIN_NVTX (nvtx.cpp)
//   cuptiUnsubscribe, cuptiGetResultString
// STANDIN_CUPTI_HELD_BY=<name>: another tool holds CUPTI; subscribing fails with
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and <name> is written to oldSubscriberName.
// Types and ids are the real headers'.
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>

#include "nvtx.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define STANDIN_CUPTI_API extern "C" __attribute__((visibility("default")))

struct CUpti_Subscriber_st {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  std::atomic<bool> enabled[CUPTI_DRIVER_TRACE_CBID_SIZE] = {};
  std::atomic<bool> nvtx_enabled[CUPTI_CBID_NVTX_SIZE] = {};
};

namespace {

using SetApiCallbackFn = void (*)(CUpti_CallbackFunc, void*);

CUpti_Subscriber_st g_subscriber;
std::atomic<bool> g_taken{false};

void copy_name(char* out, size_t size, const char* name) {
  if (out == nullptr || size == 0) return;
  std::snprintf(out, size, "%s", name);
}

void clear(CUpti_Subscriber_st& s) {
  for (auto& e : s.enabled) e.store(false, std::memory_order_relaxed);
  for (auto& e : s.nvtx_enabled) e.store(false, std::memory_order_relaxed);
}

SetApiCallbackFn driver_hook() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  auto fn = reinterpret_cast<SetApiCallbackFn>(dlsym(driver, "standin_set_api_callback"));
  dlclose(driver);  // the driver stays loaded: the process holds it
  return fn;
}

// What the driver calls at the entry and exit of every wrapped call.
void CUPTIAPI dispatch(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  auto* s = static_cast<CUpti_Subscriber_st*>(userdata);
  if (s == nullptr || domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return;
  if (!s->enabled[cbid].load(std::memory_order_relaxed) || s->callback == nullptr) return;
  s->callback(s->userdata, domain, cbid, cbdata);
}

std::atomic<bool> g_hooked{false};

// Registers the dispatcher with the stand-in driver once it is loaded (a subscriber may come before
// cuInit, as real CUPTI allows). False while the driver is not loaded.
bool hook_driver() {
  if (g_hooked.load()) return true;
  SetApiCallbackFn hook = driver_hook();
  if (hook == nullptr) return false;
  hook(&dispatch, &g_subscriber);
  g_hooked.store(true);
  return true;
}

CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata,
                      const char* name, char* old_name, size_t old_name_size) {
  if (subscriber == nullptr || callback == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* held_by = std::getenv("STANDIN_CUPTI_HELD_BY");
  if (held_by != nullptr && *held_by != 0) {
    copy_name(old_name, old_name_size, held_by);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  if (g_taken.exchange(true)) {
    copy_name(old_name, old_name_size, g_subscriber.name);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  clear(g_subscriber);
  g_subscriber.callback = callback;
  g_subscriber.userdata = userdata;
  copy_name(g_subscriber.name, sizeof g_subscriber.name, name);
  g_hooked.store(false);
  hook_driver();  // before cuInit the driver is not loaded yet: then at the first driver-domain enable
  *subscriber = &g_subscriber;
  return CUPTI_SUCCESS;
}

bool valid(CUpti_SubscriberHandle s) { return s == &g_subscriber && g_taken.load(); }


}  // namespace

void standin_cupti_report_nvtx(CUpti_nvtx_api_trace_cbid cbid, const CUpti_NvtxData* data) {
  CUpti_Subscriber_st& s = g_subscriber;
  if (!g_taken.load() || cbid <= CUPTI_CBID_NVTX_INVALID || cbid >= CUPTI_CBID_NVTX_SIZE) return;
  if (!s.nvtx_enabled[cbid].load(std::memory_order_relaxed) || s.callback == nullptr) return;
  s.callback(s.userdata, CUPTI_CB_DOMAIN_NVTX, cbid, data);
}

STANDIN_CUPTI_API CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                                         CUpti_CallbackFunc callback, void* userdata,
                                                         CUpti_SubscriberParams* pParams) {
  if (pParams != nullptr && pParams->structSize == 0) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* name = pParams != nullptr && pParams->subscriberName != nullptr ? pParams->subscriberName : "";
  return subscribe(subscriber, callback, userdata, name, pParams ? pParams->oldSubscriberName : nullptr,
                   pParams ? pParams->oldSubscriberSize : 0);
}

STANDIN_CUPTI_API CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                                      void* userdata) {
  return subscribe(subscriber, callback, userdata, "", nullptr, 0);
}

STANDIN_CUPTI_API CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  if (!valid(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (SetApiCallbackFn hook = driver_hook()) hook(nullptr, nullptr);
  g_hooked.store(false);
  clear(g_subscriber);
  g_taken.store(false);
  return CUPTI_SUCCESS;
}

STANDIN_CUPTI_API CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!valid(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    if (cbid == CUPTI_CBID_NVTX_INVALID || cbid >= CUPTI_CBID_NVTX_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
    subscriber->nvtx_enabled[cbid].store(enable != 0, std::memory_order_relaxed);
    return CUPTI_SUCCESS;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return CUPTI_ERROR_NOT_SUPPORTED;  // driver and NVTX only
  if (cbid == CUPTI_DRIVER_TRACE_CBID_INVALID || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!hook_driver()) return CUPTI_ERROR_NOT_INITIALIZED;
  subscriber->enabled[cbid].store(enable != 0, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

STANDIN_CUPTI_API CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                         CUpti_CallbackDomain domain) {
  if (!valid(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    for (uint32_t id = 1; id < CUPTI_CBID_NVTX_SIZE; ++id)
      subscriber->nvtx_enabled[id].store(enable != 0, std::memory_order_relaxed);
    return CUPTI_SUCCESS;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return CUPTI_ERROR_NOT_SUPPORTED;
  if (!hook_driver()) return CUPTI_ERROR_NOT_INITIALIZED;
  for (uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id)
    subscriber->enabled[id].store(enable != 0, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

STANDIN_CUPTI_API CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}
