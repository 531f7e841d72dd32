/* NVTX push/pop for vramtrace.phase() in Python, built with the CUDA toolkit's NVTX3 headers: the
 * first call loads NVTX_INJECTION64_PATH (libvramtrace.so under `vramtrace run`, or Nsight Systems'
 * injection), so a phase is an ordinary NVTX range to every tool that listens. Exports only these. */
#include <nvtx3/nvToolsExt.h>

#define VT_EXPORT __attribute__((visibility("default")))

VT_EXPORT int vramtrace_py_range_push(const char *name) { return nvtxRangePushA(name); }
VT_EXPORT int vramtrace_py_range_pop(void) { return nvtxRangePop(); }
