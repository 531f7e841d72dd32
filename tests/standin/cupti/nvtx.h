// Between the stand-in libcupti's NVTX injection (nvtx.cpp) and its subscriber (cupti.cpp).
#pragma once

#include <cupti_callbacks.h>
#include <cupti_nvtx_cbid.h>  // no include guard: included here only

// Passes one NVTX call to the subscriber when it enabled `cbid` (data: a CUpti_NvtxData).
void standin_cupti_report_nvtx(CUpti_nvtx_api_trace_cbid cbid, const CUpti_NvtxData* data);
