#include "core/recording_backend.h"

namespace vramtrace {

std::atomic<bool> g_preload_hooks_record{true};

} // namespace vramtrace
