// `vramtrace export`: a snapshot (snapshot model) written in formats that other tools open.
//
//   chrome  Chrome Trace Event JSON (chrome://tracing, ui.perfetto.dev): tracked bytes per device
//           over time as counter tracks, allocations/frees/OOMs/marks as instant events
//   folded  folded stacks, root first, "a;b;c BYTES" per line (flamegraph.pl, inferno, speedscope)
//   pprof   gzip-compressed perftools.profiles.Profile (pprof, go tool pprof)
//   pickle  PyTorch's memory snapshot pickle (pytorch.org/memory_viz, torch.cuda._memory_viz)
//   html    one self-contained interactive page: the active memory timeline per device, the
//           composition at any time (icicle graph, top call sites), pools; or a compare of two
//
// Each exporter takes a whole snapshot::Snapshot and returns the file's bytes; notes that the user
// should see (history missing, records left out) go to `notes`, one line each, without prefix.
// Formats and field mappings: docs/exports.md. Nothing here throws but std::bad_alloc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot_model.h"

namespace vramtrace::exporter {

enum class Format { Chrome, Folded, Pprof, Pickle, Html };

// "chrome" -> Format::Chrome, ...; false for any other name.
bool parse_format(std::string_view name, Format *out);
// The names parse_format accepts, comma-separated, for messages.
const char *format_names();
// Whether the format is binary (not to be written to a terminal).
bool is_binary(Format format);

enum class At { Exit, Peak };

struct Options {
    // What folded, pprof and html weigh: the allocations live at the dump (Exit) or what was live
    // at each device's peak (Peak, from Snapshot::peaks). html defaults to Peak when unset.
    std::optional<At> at;
    // Only this device ordinal (-1 host-pinned); all devices when unset.
    std::optional<int> device;
};

// Returns false with *error (one line) when the snapshot lacks what the options ask for (e.g.
// --at peak on a snapshot without peak composition, a --device that the snapshot does not have).
bool export_snapshot(const snapshot::Snapshot &snapshot, Format format, const Options &options,
                     std::string *out, std::vector<std::string> *notes, std::string *error);

// The exporters themselves (export_snapshot checks the options, then calls one).
std::string export_chrome(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes);
std::string export_folded(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes);
// The protobuf before compression (tests compare it byte for byte) and the gzip'd file.
std::string export_pprof_uncompressed(const snapshot::Snapshot &snapshot, const Options &options,
                                      std::vector<std::string> *notes);
std::string export_pprof(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes);
std::string export_pickle(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes);
std::string export_html(const snapshot::Snapshot &snapshot, const Options &options, std::vector<std::string> *notes);
// The compare page (`export --format html --base OLD NEW`): the difference by call site and both
// timelines aligned; notes are prefixed "base: " / "new: ".
std::string export_html_compare(const snapshot::Snapshot &base, const snapshot::Snapshot &snapshot, const Options &options,
                                std::vector<std::string> *notes);

} // namespace vramtrace::exporter
