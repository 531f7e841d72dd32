// VRAMTRACE_PROMETHEUS_TEXTFILE: the reporter writes the process's counters in the Prometheus text
// format (lib/triggers/prometheus_text.h) every VRAMTRACE_PROMETHEUS_PERIOD seconds, atomically
// (temporary file + rename) with mode 0644 (node_exporter usually runs as another user; the file
// holds only counters and labels). The path takes the placeholders of VRAMTRACE_OUTPUT. The file is
// removed at normal exit, so that a dead process does not keep exporting the memory it held.
#pragma once

namespace vramtrace::triggers {

void write_prometheus_textfile();  // reporter thread
void remove_prometheus_textfile(); // after the exit report

} // namespace vramtrace::triggers
