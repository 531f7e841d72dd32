// The library's own NVTX slots (injection.cpp): what InitializeInjectionNvtx2 does when vramtrace,
// not CUPTI, receives NVTX's calls (cupti/nvtx_route.cpp chooses).
#pragma once

#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>

namespace vramtrace::nvtx {

// Fills the core and core2 slots vramtrace follows. 1: attached; 0: the table was not usable.
int initialize_injection(NvtxGetExportTableFunc_t get_table);

} // namespace vramtrace::nvtx
