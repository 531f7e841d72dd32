// CUPTI's side of the stand-in driver: the injection library and the API callback (cupti_hooks.h).
#include "cupti_hooks.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

namespace standin_driver {
namespace {

std::atomic<CUpti_CallbackFunc> g_callback{nullptr};
std::atomic<void*> g_userdata{nullptr};
std::atomic<std::uint32_t> g_next_correlation{1};

}  // namespace

void load_injection() {
  static std::atomic<bool> loaded{false};
  if (loaded.exchange(true)) return;
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr || *path == 0) return;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    trace("injection %s not loaded: %s", path, dlerror());
    return;
  }
  auto init = reinterpret_cast<int (*)(void)>(dlsym(h, "InitializeInjection"));
  if (init == nullptr) {
    trace("injection %s has no InitializeInjection", path);
    return;
  }
  int ok = init();
  trace("InitializeInjection() of %s -> %d", path, ok);
}

ApiCall::ApiCall(CUpti_CallbackId cbid, const char* name, const void* params) {
  fn_ = g_callback.load(std::memory_order_acquire);
  if (fn_ == nullptr) return;
  userdata_ = g_userdata.load(std::memory_order_acquire);
  cbid_ = cbid;
  data_.callbackSite = CUPTI_API_ENTER;
  data_.functionName = name;
  data_.functionParams = params;
  data_.functionReturnValue = &result_;
  data_.correlationData = &correlation_;
  data_.correlationId = g_next_correlation.fetch_add(1, std::memory_order_relaxed);
  fn_(userdata_, CUPTI_CB_DOMAIN_DRIVER_API, cbid_, &data_);
}

CUresult ApiCall::done(CUresult r) {
  if (fn_ == nullptr) return r;
  result_ = r;
  data_.callbackSite = CUPTI_API_EXIT;
  fn_(userdata_, CUPTI_CB_DOMAIN_DRIVER_API, cbid_, &data_);
  return r;
}

}  // namespace standin_driver

// For the stand-in libcupti only (found with dlsym; not a CUDA name). fn = nullptr unregisters.
extern "C" __attribute__((visibility("default"))) void standin_set_api_callback(CUpti_CallbackFunc fn,
                                                                                void* userdata) {
  standin_driver::g_userdata.store(userdata, std::memory_order_release);
  standin_driver::g_callback.store(fn, std::memory_order_release);
}
