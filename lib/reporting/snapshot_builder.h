// Builds the report model from the live tracker: copies the live set, the stacks it references and
// the counters, then symbolizes the frames. Runs at dump time, never on the hot path; it allocates
// with the host's malloc, which is safe there (never inside a signal handler).
#pragma once

#include <string>

#include "core/tracker.h"
#include "reporting/report_model.h"

namespace vramtrace {

report::Snapshot build_snapshot(const Tracker &tracker, const char *reason);

} // namespace vramtrace
