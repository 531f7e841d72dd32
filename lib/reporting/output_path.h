// Expands the placeholders of VRAMTRACE_OUTPUT: %p (pid), %h (host name), %% (a percent sign).
// An unknown placeholder is kept as written.
#pragma once

#include <string>

namespace vramtrace {

std::string expand_output_path(const char *pattern, long pid, const char *host);

} // namespace vramtrace
