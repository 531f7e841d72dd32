// Finds and dlopens libcupti (only when the CUPTI backend is chosen), subscribes the translation's
// callback and enables the driver-API callbacks it follows.
#pragma once

#include <cstddef>

namespace vramtrace::cupti {

struct SubscribeResult {
    bool ok = false;
    size_t callbacks = 0;        // callback ids enabled
    const char *library = "";    // the libcupti used (a path or soname)
    char why[256] = {};          // when !ok: one line, e.g. who holds CUPTI already
};

SubscribeResult subscribe();

} // namespace vramtrace::cupti
