#include "core/recording_backend.h"

#include "core/tracker.h"

namespace vramtrace {

std::atomic<bool> g_preload_hooks_record{true};

void set_preload_hooks_record(bool on) {
    g_preload_hooks_record.store(on, std::memory_order_relaxed);
    refresh_recording_bits();
}

} // namespace vramtrace
