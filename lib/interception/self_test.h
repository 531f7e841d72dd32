// Checks, with real look-ups, that each interposition layer hands out our wrappers, and says once on
// stderr when one is not installed (e.g. the library was dlopen'ed instead of preloaded, or another
// preloaded library took the symbols first). With VRAMTRACE_DEBUG=1 it also says which layers work.
#pragma once

namespace vramtrace {

// At start: exported definitions and the dlsym hook.
void self_test_at_start();
// The first time the driver is found: the dlsym and cuGetProcAddress layers against the real driver.
void self_test_with_driver();

} // namespace vramtrace
