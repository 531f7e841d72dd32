// Writing reports from the running process: on request (vramtrace_dump) and at exit. Dumps are
// serialized with a mutex, which is never held while a CUDA function runs (a dump makes no CUDA
// call at all: the driver version was cached earlier).
#pragma once

namespace vramtrace {

// Writes a snapshot to path (nullptr: the configured VRAMTRACE_OUTPUT). Returns a VRAMTRACE_* code.
int dump_snapshot(const char *path, const char *reason, bool print_summary);

// The exit report: nothing when the process never touched CUDA.
void dump_at_exit();

} // namespace vramtrace
