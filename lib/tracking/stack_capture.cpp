#include "tracking/stack_capture.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

// Linker-defined bounds of this shared object's image (resolved locally: the version script keeps
// every non-API symbol local).
extern "C" const char __ehdr_start;
extern "C" const char _end;

namespace vramtrace {

bool address_in_self(uintptr_t address) {
    return address >= reinterpret_cast<uintptr_t>(&__ehdr_start) &&
           address < reinterpret_cast<uintptr_t>(&_end);
}

uint32_t capture_stack(uintptr_t *out, uint32_t max_depth) {
    if (max_depth == 0) return 0;
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
    uint32_t depth = 0;
    bool leading = true; // skip our own frames only at the top of the stack
    // A bound on steps guards against a corrupt stack that loops.
    for (int steps = 0; depth < max_depth && steps < 1024 && unw_step(&cursor) > 0; ++steps) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if (leading && address_in_self(ip)) continue;
        leading = false;
        out[depth++] = static_cast<uintptr_t>(ip);
    }
    return depth;
}

} // namespace vramtrace
