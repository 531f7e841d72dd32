// The exported sigaction() and signal(): the program's view of the terminating signals'
// dispositions, with the library's handlers hidden (lib/triggers/termination_signals.h). Exported
// under glibc's version, GLIBC_2.2.5 (libvramtrace.map.in), which is what programs bind to.
#include <csignal>

#include "triggers/termination_signals.h"

#define VT_EXPORT __attribute__((visibility("default")))

extern "C" {

VT_EXPORT int sigaction(int signo, const struct sigaction *act, struct sigaction *old) {
    return vramtrace::triggers::program_sigaction(signo, act, old);
}

VT_EXPORT sighandler_t signal(int signo, sighandler_t handler) {
    return vramtrace::triggers::program_signal(signo, handler);
}

} // extern "C"
