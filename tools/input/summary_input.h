// Reading a snapshot for `vramtrace summary` in bounded memory: the file is streamed, its small
// members are kept (process, devices, modules, frames, stacks, peaks, OOMs, pools, the event
// history's header) and its two long arrays are folded as they come into a report::SummaryBody
// (live allocations with equal stack, device, kind, api and size as one entry with a count; events
// replayed into per-device figures). Memory: the kept members, which grow with the distinct frames
// and stacks and not with the allocations; about 80 bytes per distinct (stack, device, kind, api,
// size) of the live allocations; 8 bytes per live allocation (its time, for the exit-time classes);
// about 32 bytes per event of the history kept (marks and allocations, for the headline); a few
// hundred bytes per device and memory kind; one id per
// distinct stack named by allocations and by events (for the cross-reference check); and the
// reading buffer (kInputBufferBytes). Formatting the report then takes about 200 bytes per folded
// entry at its peak (the call-site tables list every size). The summary printed is byte for byte
// the one report::format_summary prints for the whole snapshot.
#pragma once

#include <iosfwd>
#include <string>

#include "input/snapshot_input.h"
#include "snapshot/snapshot_model.h"
#include "report/summary_format.h"

namespace vramtrace::cli {

struct SummaryInput {
    snapshot::Snapshot head;    // everything but allocations and events.events
    report::SummaryBody body; // those two, folded
};

// Reads `in` (named `name` in errors) into *out, checks the cross references read_snapshot_file
// checks (same messages), and names the frames of a crash snapshot (symbolize_offline). False with
// *error = "NAME: what is wrong" (one line); *out is then empty.
bool read_summary_input(std::istream &in, const std::string &name, SummaryInput *out, std::string *error);
// The same for the file at `path`, read through stream_snapshot_file with progress (may be null).
bool read_summary_input_file(const std::string &path, Progress *progress, SummaryInput *out, std::string *error);

} // namespace vramtrace::cli
