// NVTX start/end intervals (nvtxRangeStart/End) for the time axis of the interactive report: the
// snapshot's optional top-level member "nvtx_intervals" (docs/snapshot-format.md), an array of
// {"domain", "name", "start_ns", "end_ns", "start_thread", "end_thread"}, end_* absent while the
// interval was open at the dump, times CLOCK_MONOTONIC ns.
//
// The report model (lib/snapshot) does not carry the member, so the CLI reads it from the file's
// JSON here; the reader has already accepted the file as a snapshot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vramtrace::exporter::html {

struct NvtxInterval {
    std::string domain;                  // "" for NVTX's default domain
    std::string name;
    uint64_t start_ns = 0;               // CLOCK_MONOTONIC
    std::optional<uint64_t> end_ns;      // unset: still open at the dump
    uint32_t start_thread = 0;
    std::optional<uint32_t> end_thread;  // unset while open
};

// The intervals of the snapshot file at `path`, in the file's order. Returns false with *error (one
// line, for a note) when the file cannot be read again or the member is not an array of such
// records; *out is then empty. A file without the member gives true and no intervals. Only that
// member is kept while parsing, so memory stays that of the intervals.
bool read_nvtx_intervals(const std::string &path, std::vector<NvtxInterval> *out, std::string *error);

} // namespace vramtrace::exporter::html
