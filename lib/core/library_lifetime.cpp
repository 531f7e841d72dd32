// The library's constructor and destructor: start tracking as soon as we are loaded, and write the
// exit report as late as possible. Preloaded libraries are finalized after the program's own
// destructors and atexit handlers, so memory those free is not reported as leaked.
#include "core/tracker.h"
#include "interception/self_test.h"
#include "reporting/dumper.h"

namespace {

__attribute__((constructor(101))) void vramtrace_library_start() {
    vramtrace::initialize();
    vramtrace::self_test_at_start();
}

__attribute__((destructor(101))) void vramtrace_library_end() { vramtrace::dump_at_exit(); }

} // namespace
