// `vramtrace export --format FORMAT [--output PATH] [--at exit|peak] [--device N] [--base OLD] SNAPSHOT`:
// a snapshot in a format that other tools open (tools/export/, docs/exports.md).
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include <unistd.h>

#include "commands/cli_options.h"
#include "commands/export_request.h"
#include "common/cli.h"
#include "common/output_file.h"
#include "export/export.h"
#include "input/offline_symbolize.h"
#include "dump/atomic_file.h"
#include "snapshot/device_range.h"
#include "report/text_safety.h"
#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

const char *const kExportHelp =
    "usage: vramtrace export --format FORMAT [options] SNAPSHOT\n"
    "\n"
    "Writes a snapshot in a format that other tools open (docs/exports.md):\n"
    "  chrome   Chrome Trace Event JSON for ui.perfetto.dev / chrome://tracing: tracked bytes per\n"
    "           device over time, allocations, frees, OOMs and marks (needs the event history)\n"
    "  folded   folded stacks with bytes, for flamegraph.pl --countname=bytes, inferno, speedscope\n"
    "  pprof    gzip'd profile.proto for pprof -http / go tool pprof (inuse_objects, inuse_space)\n"
    "  pickle   PyTorch's memory snapshot pickle for pytorch.org/memory_viz and\n"
    "           torch.cuda._memory_viz (each allocation one segment)\n"
    "  html     one self-contained interactive page: the active memory timeline per device, the\n"
    "           composition at any time (flame graph, top call sites), pools; with --base, a compare\n"
    "\n"
    "options:\n"
    "  -f, --format FORMAT   one of the above (required)\n"
    "  -o, --output PATH     write to PATH (default: standard output; html, pickle and pprof\n"
    "                        refuse a terminal)\n"
    "  --at exit|peak        folded, pprof, html: weigh what was live at the dump (exit; default for\n"
    "                        folded and pprof) or at each device's peak (peak; default for html)\n"
    "  --device N            only device ordinal N (-1: host-pinned memory)\n"
    "  --base OLD            html: a compare page of OLD (the base) and SNAPSHOT: the difference by\n"
    "                        call site and the two timelines aligned\n"
    "  -h, --help            show this help\n"
    "\n"
    "SNAPSHOT '-' is read from standard input. Notes (no event history, records left out) go to\n"
    "stderr as warnings.\n"
    "Exit status: 0 success, 1 the file is missing, unreadable or not a valid snapshot, it lacks what\n"
    "the options need, or the output could not be written, 2 usage error.\n";

bool export_to_memory(const std::string &path, const std::string &base_path, exporter::Format format,
                      const exporter::Options &options, std::string *data, std::vector<std::string> *notes) {
    std::string error;
    snapshot::Snapshot snapshot, base;
    if (!snapshot::read_snapshot_file(path, &snapshot, &error) || (!base_path.empty() && !snapshot::read_snapshot_file(base_path, &base, &error))) {
        log_error(error);
        return false;
    }
    symbolize_offline(snapshot, path); // a crash snapshot: name its frames from the files on disk
    if (!base_path.empty()) symbolize_offline(base, base_path);
    try {
        if (!exporter::export_snapshot(snapshot, format, options, data, notes, &error)) {
            log_error(path + ": " + error);
            return false;
        }
        if (!base_path.empty()) {
            notes->clear();
            *data = exporter::export_html_compare(base, snapshot, options, notes);
        }
    } catch (const std::bad_alloc &) {
        log_error(path + ": out of memory while exporting");
        return false;
    }
    return true;
}

int take_page_option(OptionReader &opts, exporter::Options &options, std::string &base_path) {
    std::string_view value;
    if (opts.with_value("--base", &value)) {
        if (value.empty()) return opts.error("--base needs a snapshot file");
        base_path = value;
        return 0;
    }
    if (opts.with_value("--at", &value)) {
        if (value == "exit") options.at = exporter::At::Exit;
        else if (value == "peak") options.at = exporter::At::Peak;
        else return opts.error("--at takes exit or peak, got '" + report::shown_value(value) + "'");
        return 0;
    }
    if (opts.with_value("--device", &value)) {
        int device = 0;
        auto res = std::from_chars(value.data(), value.data() + value.size(), device);
        if (value.empty() || res.ec != std::errc() || res.ptr != value.data() + value.size() || device < -1 ||
            device > snapshot::kMaxDeviceOrdinal)
            return opts.error("--device takes a device ordinal, 0 to " + std::to_string(snapshot::kMaxDeviceOrdinal) +
                              " (or -1 for host memory), got '" + report::shown_value(value) + "'");
        options.device = device;
        return 0;
    }
    return -1;
}

namespace {

// Where an export of `snapshot` could go: its name with the format's extension instead of .json,
// in the current directory ("run.html" for dir/run.json; "snapshot.html" for standard input).
std::string suggested_output(const std::string &snapshot, exporter::Format format) {
    std::string name = is_stdout_path(snapshot) ? std::string("snapshot") : std::string(snapshot::path_basename(snapshot));
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
    const char *extension = format == exporter::Format::Html     ? ".html"
                            : format == exporter::Format::Pickle ? ".pickle"
                            : format == exporter::Format::Pprof  ? ".pb.gz"
                            : format == exporter::Format::Chrome ? ".trace.json"
                                                                 : ".folded";
    return report::shown_value(name + extension);
}

} // namespace

int export_command(int argc, char **argv) {
    OptionReader opts(argc, argv, "export", kExportHelp);
    exporter::Options options;
    std::string format_name, output, path, base_path;
    bool have_format = false, have_path = false;
    while (opts.next()) {
        std::string_view value;
        if (opts.positional()) {
            if (have_path) return opts.error("more than one snapshot given");
            path = opts.arg();
            have_path = true;
        } else if (opts.is("-h") || opts.is("--help")) {
            return write_stdout(kExportHelp) ? kExitOk : kExitFailure;
        } else if (opts.with_value("--format", &value) || opts.with_value("-f", &value)) {
            format_name = value;
            have_format = true;
        } else if (opts.with_value("--output", &value) || opts.with_value("-o", &value)) {
            if (value.empty()) return opts.error("--output needs a path");
            output = value;
        } else if (int taken = take_page_option(opts, options, base_path); taken >= 0) {
            if (taken > 0) return taken;
        } else if (!opts.failed()) {
            return opts.unknown();
        }
    }
    if (opts.failed()) return kExitUsage;
    if (!have_format) return opts.error("--format is required (" + std::string(exporter::format_names()) + ")");
    exporter::Format format;
    if (!exporter::parse_format(format_name, &format))
        return opts.error("unknown format '" + format_name + "' (formats: " + exporter::format_names() + ")");
    if (options.at && (format == exporter::Format::Chrome || format == exporter::Format::Pickle))
        return opts.error("--at applies to folded, pprof and html only");
    if (!have_path) return opts.error("no snapshot file given");
    if (!base_path.empty() && format != exporter::Format::Html) return opts.error("--base applies to html only");
    // Pages and binary files are for a browser or a tool, never for a terminal.
    if ((output.empty() || is_stdout_path(output)) && ::isatty(STDOUT_FILENO) == 1 &&
        (exporter::is_binary(format) || format == exporter::Format::Html))
        return opts.error("the " + format_name + " format is not for a terminal: give --output PATH (-o " +
                          suggested_output(path, format) + ") or redirect stdout");

    // An output that cannot be written is said before the work, in one line.
    if (!output.empty() && !is_stdout_path(output)) {
        if (std::string refusal = output_refusal(output); !refusal.empty()) {
            log_error(refusal);
            return kExitFailure;
        }
    }
    std::string data;
    std::vector<std::string> notes;
    std::string error;
    if (!export_to_memory(path, base_path, format, options, &data, &notes)) return kExitFailure;
    for (const std::string &note : notes) log_warning(path + ": " + note);
    if (!write_output(output.empty() ? std::string("-") : output, data, &error)) {
        log_error(error);
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace vramtrace::cli
