// Reading a snapshot (and a base for the compare page) and exporting it in memory, shared by
// `vramtrace export` and `vramtrace view`.
#pragma once

#include <string>
#include <vector>

#include "commands/cli_options.h"
#include "export/export.h"

namespace vramtrace::cli {

// Reads `path` (and `base_path` when not empty: an html compare page), names the frames of crash
// snapshots, exports. On failure the error is logged (one line) and false returned.
bool export_to_memory(const std::string &path, const std::string &base_path, exporter::Format format,
                      const exporter::Options &options, std::string *data, std::vector<std::string> *notes);

// The options of the page that `vramtrace export` and `vramtrace view` share: --base FILE,
// --at exit|peak, --device N (-1: host memory). -1: the current argument is none of them; 0: taken
// into `options` / `base_path`; else the exit code of the usage error, which opts has reported.
int take_page_option(OptionReader &opts, exporter::Options &options, std::string &base_path);

} // namespace vramtrace::cli
