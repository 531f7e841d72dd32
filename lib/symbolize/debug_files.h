// Where the debug information of a module is: a separate debug file found locally only (never
// over the network), by build id under /usr/lib/debug, then by its .gnu_debuglink name beside the
// file, in .debug/ beside it and under /usr/lib/debug/<dir>.
#pragma once

#include <string>

namespace vramtrace::symbolize {

std::string directory_of(const std::string &path); // "." for a bare name, "/" for the root
bool readable(const std::string &path);
// The debug file for `path` (build id and debuglink as the module's), "" when none; a candidate
// with a build id other than the module's is skipped.
std::string find_debug_file(const std::string &path, const std::string &build_id, const std::string &debuglink);

} // namespace vramtrace::symbolize
