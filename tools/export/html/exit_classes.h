// What was live at the dump, for the report's headline cards and its "live at exit" table: the
// live allocations in the summary's three classes (held since start, grew, the rest:
// lib/report/live_classes.h, one rule for the summary and the page), by call site.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "export/export.h"
#include "snapshot/snapshot_model.h"

namespace vramtrace::exporter::html {

// The JSON member value {"basis", "classes": [[bytes, allocations] x 3], "sites": [[class,
// location, [devices], bytes, allocations, intervals, colour key], ...]}: the colour key is the
// call-site text the page colours the site's bands by (the location without its via); basis
// "marks", "run_tenths" or
// "none" (how the run was cut, live_classes.h); classes in the order held since start, grew, the
// rest; sites as report::classify_live orders them within each class, their location an index
// that `string` gives (the page's string table). Only the devices `options` keeps.
std::string exit_classes_json(const snapshot::Snapshot &snapshot, const Options &options,
                              const std::function<int(std::string_view)> &string);

} // namespace vramtrace::exporter::html
