// Where reports go: the placeholders of VRAMTRACE_OUTPUT (and VRAMTRACE_PROMETHEUS_TEXTFILE), and the
// names of trigger snapshots next to the exit snapshot (docs/triggers.md).
//
// Placeholders: %p the pid, %h the host name, %r the rank (RANK, else SLURM_PROCID, else
// OMPI_COMM_WORLD_RANK, else PMI_RANK; "norank" when none is set), %% a percent sign. An unknown placeholder is kept as written.
// The host name and the rank become one file-name component: every byte outside [A-Za-z0-9._-]
// is replaced by '_', and a value made of dots alone too (RANK=../x gives ".._x").
#pragma once

#include <string>

namespace vramtrace {

// rank: the text that replaces %r (nullptr or "" -> "norank").
std::string expand_output_path(const char *pattern, long pid, const char *host, const char *rank);

// The trigger file for an expanded output path: its final ".json" (if any) replaced by
// ".REASON.json" (seq < 0) or ".REASON-SEQ.json"; without ".json" the suffix is appended.
//   ("out/vramtrace-12.json", "oom", 1) -> "out/vramtrace-12.oom-1.json"
//   ("out/vramtrace-12.json", "periodic", -1) -> "out/vramtrace-12.periodic.json"
std::string trigger_path_for(const std::string &expanded_output, const char *reason, int seq);

// The same for this process: VRAMTRACE_OUTPUT expanded with its pid, host and rank (as read at
// start, core/process_identity.h). Defined in dumper.cpp, beside the
// exit snapshot's own naming, so that this file stays free of process state (unit-tested alone).
std::string trigger_output_path(const char *reason, int seq);

// VRAMTRACE_OUTPUT expanded for this process (the exit snapshot's path). Defined in dumper.cpp.
std::string exit_output_path();

} // namespace vramtrace
