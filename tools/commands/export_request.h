// Reading a snapshot (and a base for the compare page) and exporting it in memory, shared by
// `vramtrace export` and `vramtrace view`.
#pragma once

#include <string>
#include <vector>

#include "export/export.h"

namespace vramtrace::cli {

// Reads `path` (and `base_path` when not empty: an html compare page), names the frames of crash
// snapshots, exports. On failure the error is logged (one line) and false returned.
bool export_to_memory(const std::string &path, const std::string &base_path, exporter::Format format,
                      const exporter::Options &options, std::string *data, std::vector<std::string> *notes);

} // namespace vramtrace::cli
