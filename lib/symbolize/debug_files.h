// Where the debug information of a module is: a separate debug file found locally only (never
// over the network), by build id under /usr/lib/debug, then by its .gnu_debuglink name beside the
// file, in .debug/ beside it and under /usr/lib/debug/<dir>.
//
// Every candidate is opened as symbolize/regular_file.h says (never waiting on a FIFO, a regular
// file only). A candidate in a directory that someone other than root and this process's user can
// add names to (symbolize/regular_file.h, others_can_write: a shared or sticky directory holding
// a loaded library) is used only when it is not a symlink and is owned by root or this user: any
// user could have planted it there.
#pragma once

#include <string>

namespace vramtrace::symbolize {

std::string directory_of(const std::string &path); // "." for a bare name, "/" for the root
bool readable(const std::string &path);

// An opened debug file: fd (the caller closes it) and the path it was found at; fd -1 when none.
struct DebugFile {
    int fd = -1;
    std::string path;
};

// The debug file for `path` (build id and debuglink as the module's), opened; a candidate with a
// build id other than the module's is skipped.
DebugFile open_debug_file(const std::string &path, const std::string &build_id, const std::string &debuglink);

} // namespace vramtrace::symbolize
