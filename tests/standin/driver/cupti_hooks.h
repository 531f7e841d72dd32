// What the stand-in driver does for CUPTI (tests/standin/cupti, docs/cupti.md "Tests"):
//   - at cuInit, loads the library named by CUDA_INJECTION64_PATH and calls its InitializeInjection
//     once, as NVIDIA's driver does;
//   - the memory entry points below call the API callback that the stand-in libcupti registered
//     (standin_set_api_callback, exported for it alone) at their entry and exit, with a
//     CUpti_CallbackData whose functionParams is the call's <name>_params struct of
//     generated_cuda_meta.h. The libcupti decides which callback ids reach its subscriber.
// Without a registered callback nothing changes: one atomic load per wrapped call.
#pragma once

#include "driver_internal.h"

#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <generated_cuda_meta.h>

namespace standin_driver {

// Called by cuInit once it succeeded.
void load_injection();

// One wrapped call: the constructor makes the entry callback, done() the exit callback.
class ApiCall {
 public:
  ApiCall(CUpti_CallbackId cbid, const char* name, const void* params);
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;
  CUresult done(CUresult r);

 private:
  CUpti_CallbackFunc fn_ = nullptr;
  void* userdata_ = nullptr;
  CUpti_CallbackId cbid_ = 0;
  CUresult result_ = CUDA_SUCCESS;
  std::uint64_t correlation_ = 0;  // the subscriber's, kept from entry to exit
  CUpti_CallbackData data_{};
};

}  // namespace standin_driver

// In an entry point, before any work: declares the call's parameter struct (the function's
// parameters, in order) and makes the entry callback; end with `return standin_api_call_.done(r)`.
#define STANDIN_API_CALL(name, ...)                   \
  name##_params standin_api_params_{__VA_ARGS__};     \
  standin_driver::ApiCall standin_api_call_(CUPTI_DRIVER_TRACE_CBID_##name, #name, &standin_api_params_)
