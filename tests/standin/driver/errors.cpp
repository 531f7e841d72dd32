// cuGetErrorString / cuGetErrorName for the stand-in driver. The descriptions are our own short
// wording; only the enumerator names follow cuda.h.
#include "driver_internal.h"

#include <cstdio>

namespace standin_driver {
namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     "API call is not supported in the installed CUDA driver"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_MAP_FAILED, "CUDA_ERROR_MAP_FAILED", "mapping failed"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "host memory range already registered"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "host memory range not registered"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(CUresult r) {
  for (const ErrorText& e : kErrors) {
    if (e.code == r) return &e;
  }
  return nullptr;
}

}  // namespace

const char* result_name(CUresult r) {
  if (const ErrorText* e = find_error(r)) return e->name;
  static thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "CUresult(%d)", static_cast<int>(r));
  return buf;
}

}  // namespace standin_driver

namespace sd = standin_driver;

// Both work before cuInit (they only read a table).
STANDIN_CU_API CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
  CUresult r = CUDA_SUCCESS;
  if (pStr == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (const sd::ErrorText* e = sd::find_error(error); e == nullptr) {
    *pStr = nullptr;
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    *pStr = e->text;
  }
  sd::trace("cuGetErrorString(%d) -> %s", static_cast<int>(error), sd::result_name(r));
  return r;
}

STANDIN_CU_API CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  CUresult r = CUDA_SUCCESS;
  if (pStr == nullptr) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else if (const sd::ErrorText* e = sd::find_error(error); e == nullptr) {
    *pStr = nullptr;
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    *pStr = e->name;
  }
  sd::trace("cuGetErrorName(%d) -> %s", static_cast<int>(error), sd::result_name(r));
  return r;
}
