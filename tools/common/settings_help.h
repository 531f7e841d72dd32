// The VRAMTRACE_* settings table (lib/settings/settings.def) written out for people: the
// environment section of `vramtrace run --help` and docs/configuration.md, so neither can drift
// from what the library parses.
#pragma once

#include <string>

namespace vramtrace::cli {

// Lines of at most 100 columns: each user setting, its one-line help and its default.
std::string environment_help();
// docs/configuration.md, whole (tools/settings_doc.cpp prints it; a test compares).
std::string configuration_markdown();

} // namespace vramtrace::cli
