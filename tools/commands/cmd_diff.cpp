// `vramtrace diff [options] BASE NEW`: what changed between two snapshots, per call site, with an
// optional growth gate for CI. The work is in analysis/call_sites.cpp and analysis/diff_core.cpp.
#include <string>
#include <string_view>

#include "analysis/call_sites.h"
#include "analysis/diff_core.h"
#include "commands/cli_options.h"
#include "common/cli.h"
#include "input/snapshot_input.h"

namespace vramtrace::cli {

const char *const kDiffHelp =
    "usage: vramtrace diff [options] BASE NEW\n"
    "\n"
    "Compares two snapshots (or merged snapshots): the change in bytes and allocations live at\n"
    "exit, per device, per memory category and per call site, largest growth first. Call sites\n"
    "are matched by keys that survive ASLR and rebuilds: function, source file name and line, and\n"
    "module name where the frame has file:line, else module name + offset in the module; then the\n"
    "framework entry it went through (\"via\", docs/attribution.md). Sites with no live\n"
    "allocation in BASE are marked new, those with none in NEW gone. Where the snapshots record\n"
    "them, the bytes each site held at the devices' peaks and the out-of-memory failures are\n"
    "compared too. Both files are streamed:\n"
    "memory depends on their numbers of frames and stacks, not on their allocations.\n"
    "\n"
    "options:\n"
    "  --frames N              frames per key, from the call site outwards (default 1: the call\n"
    "                          site alone; 2 adds its caller, ... A short key groups more)\n"
    "  --no-lines              keys without line numbers or offsets of named functions, so that\n"
    "                          edits that move code within a file still match\n"
    "  --fail-if-growth LIMIT  exit with status 3 when the measured bytes grew by more than LIMIT:\n"
    "                          bytes (1048576, 10MiB, 1.5GiB, 500MB) or a percentage of BASE (5%)\n"
    "  --metric live|peak      what the limit applies to: live bytes at exit (default), or the sum\n"
    "                          of the devices' peak bytes\n"
    "  --site KEY              apply the limit to the call site KEY instead (the key as printed;\n"
    "                          without an exact match, every key containing KEY): its live bytes,\n"
    "                          or with --metric peak the bytes it held at the devices' peaks\n"
    "  --json                  print JSON (docs/cli.md) instead of text\n"
    "  --all                   also list the call sites that did not change\n"
    "  --top N                 list at most N call sites (default 0 = all)\n"
    "  -h, --help              show this help\n"
    "\n"
    "A progress line is drawn on stderr while reading when stderr is a terminal. BASE or NEW '-'\n"
    "is read from standard input.\n"
    "\n"
    "Exit status: 0 success (and the growth within LIMIT), 1 failed: a file is missing,\n"
    "unreadable or not a valid snapshot, or the output could not be written, 2 usage error\n"
    "(including a --site that matches no call site), 3 the growth exceeded LIMIT.\n";

namespace {

constexpr int kExitBadInput = kExitFailure;

int diff_main(int argc, char **argv) {
    SiteKeyOptions keys;
    DiffTextOptions text;
    bool json = false, have_limit = false, have_metric = false;
    GrowthLimit limit;
    GateMetric metric = GateMetric::Live;
    std::string site;
    bool have_site = false;
    std::vector<std::string> files;
    OptionReader opts(argc, argv, "diff", kDiffHelp);
    while (opts.next()) {
        if (opts.positional()) {
            files.emplace_back(opts.arg());
            continue;
        }
        std::string_view value;
        if (opts.is("-h") || opts.is("--help")) return write_stdout(kDiffHelp) ? kExitOk : kExitBadInput;
        if (opts.is("--json")) {
            json = true;
        } else if (opts.is("--all")) {
            text.all = true;
        } else if (read_site_key_option(opts, keys)) {
            continue;
        } else if (opts.with_value("--top", &value)) {
            if (!parse_count(value, text.top))
                return opts.error("--top needs a number, got '" + std::string(value) + "'");
        } else if (opts.with_value("--fail-if-growth", &value)) {
            std::string why;
            if (!parse_growth_limit(value, &limit, &why))
                return opts.error("--fail-if-growth: " + why + ", got '" + std::string(value) + "'");
            have_limit = true;
        } else if (opts.with_value("--metric", &value)) {
            if (value == "live") metric = GateMetric::Live;
            else if (value == "peak") metric = GateMetric::Peak;
            else return opts.error("--metric is live or peak, got '" + std::string(value) + "'");
            have_metric = true;
        } else if (opts.with_value("--site", &value)) {
            if (value.empty()) return opts.error("--site needs a call-site key");
            site = value;
            have_site = true;
        } else {
            return opts.unknown();
        }
    }
    if (opts.failed()) return kExitUsage;
    if (files.size() != 2)
        return usage_error(files.size() < 2 ? "diff: needs two snapshots, BASE and NEW"
                                            : "diff: more than two snapshots given",
                           "diff");
    if ((have_metric || have_site) && !have_limit)
        return usage_error("diff: --metric and --site go with --fail-if-growth", "diff");

    Progress progress(Progress::enabled_for_stderr());
    SnapshotSites base, now;
    std::string error;
    progress.set_file_number(1, 2);
    if (!collect_sites_from_file(files[0], keys, &progress, &base, &error)) {
        progress.done();
        log_error(error);
        return kExitBadInput;
    }
    progress.set_file_number(2, 2);
    if (!collect_sites_from_file(files[1], keys, &progress, &now, &error)) {
        progress.done();
        log_error(error);
        return kExitBadInput;
    }
    progress.done();

    DiffResult diff = compute_diff(base, now, keys);
    std::optional<GateResult> gate;
    if (have_limit) {
        std::string why;
        gate = apply_gate(diff, limit, metric, have_site ? std::string_view(site) : std::string_view(), &why);
        if (!gate) return usage_error("diff: " + why, "diff");
    }
    std::string out = json ? diff_json(base, now, diff, text, gate ? &*gate : nullptr, have_limit ? &limit : nullptr)
                                     .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                                 "\n"
                           : format_diff_text(base, now, diff, text, gate ? &*gate : nullptr);
    if (!write_stdout(out)) return kExitBadInput;
    if (gate && gate->exceeded) {
        log_error("diff: " + gate->verdict);
        return kExitGateFailed;
    }
    return kExitOk;
}

} // namespace

int diff_command(int argc, char **argv) {
    return run_reporting_exceptions("diff", kExitBadInput, diff_main, argc, argv);
}

} // namespace vramtrace::cli
