// `vramtrace summary [--top N] [--frames N] SNAPSHOT`: the summary of a snapshot file, on stdout.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/cli_options.h"
#include "analysis/merge_core.h"
#include "common/cli.h"
#include "input/snapshot_input.h"
#include "input/summary_input.h"
#include "report/summary_format.h"
#include "report/text_format.h"

namespace vramtrace::cli {

const char *const kSummaryHelp =
    "usage: vramtrace summary [--top N] [--frames N] SNAPSHOT\n"
    "\n"
    "Prints the summary of a snapshot written by libvramtrace.so, the one the library prints on\n"
    "stderr at exit. It starts with the answer: each device's peak and when it was reached (the\n"
    "vramtrace_mark before it, the NVTX range open, the call site allocating), the call sites\n"
    "holding most at the peak, what was still live split into held since start, grew and the\n"
    "rest (docs/cli.md gives the rule), out-of-memory failures by the error's name, and a hint\n"
    "for PyTorch's caching allocator. The detail follows: per device the current, peak, total\n"
    "allocated and total freed memory (by kind and size class where the event history allows),\n"
    "what nvidia-smi counts beyond it, the call sites at each device's peak, memory pools, and\n"
    "the live allocations by class with their sizes. The file is streamed: memory grows with its\n"
    "distinct call stacks and sizes, and by 32 bytes per live allocation. A progress line is\n"
    "drawn on stderr while reading when stderr is a terminal. SNAPSHOT '-' is standard input.\n"
    "\n"
    "options:\n"
    "  --top N       list N call sites per table (default 10; 0 = all)\n"
    "  --frames N    name each call site with N frames, from the call site outwards (default\n"
    "                1: the call site alone; 2 adds its caller, ...): a helper's callers apart\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit status: 0 success, 1 failed: the file is missing, unreadable or not a valid snapshot,\n"
    "or the output could not be written, 2 usage error.\n";

namespace {

// Names each call site with its callers, "site <- caller <- ...", so that every table of the
// summary groups by the first `frames` frames from the call site outwards.
void name_with_callers(snapshot::Snapshot &s, size_t frames) {
    for (snapshot::Stack &st : s.stacks) {
        const snapshot::Frame *site = s.call_site_frame(st);
        if (!site) continue;
        std::string label = st.site_label.empty() ? report::describe_frame(s, *site) : st.site_label;
        for (size_t k = 1; k < frames && size_t(st.call_site) + k < st.frames.size(); ++k) {
            uint32_t f = st.frames[size_t(st.call_site) + k];
            if (f < s.frames.size()) label += " <- " + report::describe_frame(s, s.frames[f]);
        }
        st.site_label = std::move(label);
    }
}

} // namespace

int summary_command(int argc, char **argv) {
    report::SummaryOptions options;
    size_t frames = 1;
    std::vector<std::string> paths;
    OptionReader opts(argc, argv, "summary", kSummaryHelp);
    while (opts.next()) {
        if (opts.positional()) {
            paths.emplace_back(opts.arg());
            continue;
        }
        std::string_view value;
        if (opts.is("-h") || opts.is("--help")) return write_stdout(kSummaryHelp) ? kExitOk : kExitFailure;
        if (opts.with_value("--top", &value)) {
            if (!parse_count(value, options.top_n))
                return opts.error("--top needs a number, got '" + std::string(value) + "'");
        } else if (opts.with_value("--frames", &value)) {
            if (!parse_count(value, frames) || frames < 1 || frames > 256)
                return opts.error("--frames needs a number from 1 to 256, got '" + std::string(value) + "'");
        } else {
            return opts.unknown();
        }
    }
    if (opts.failed()) return kExitUsage;
    if (paths.size() > 1) return usage_error("summary: more than one snapshot given", "summary");
    if (paths.empty()) return usage_error("summary: no snapshot file given", "summary");
    const std::string &path = paths.front();

    // Streamed and folded (input/summary_input.h): memory grows with the distinct stacks and sizes,
    // not with the number of allocations or events. A crash snapshot gets its frames named on the
    // way.
    SummaryInput input;
    std::string error;
    Progress progress(Progress::enabled_for_stderr());
    bool read = read_summary_input_file(path, &progress, &input, &error);
    progress.done();
    if (!read) {
        log_error(error);
        return kExitFailure;
    }
    if (frames > 1) name_with_callers(input.head, frames);
    std::string text = report::format_summary(input.head, input.body, options);
    if (text.empty()) {
        log_error(path + ": out of memory while formatting the summary");
        return kExitFailure;
    }
    // A merged snapshot: how its ranks compare, as merge printed it.
    if (!input.head.imbalance.empty()) {
        Imbalance imbalance;
        imbalance.roles = input.head.imbalance;
        imbalance.outliers = input.head.imbalance_outliers;
        std::string section = format_imbalance_text(imbalance, options.top_n, [&](uint32_t id) {
            const snapshot::Stack *stack = input.head.find_stack(id);
            return stack ? stack_key(input.head, *stack, SiteKeyOptions{}) : std::string(kNoStackKey);
        });
        // Each line begins as the summary's own lines do.
        for (size_t at = 0; at < section.size();) {
            size_t nl = section.find('\n', at);
            std::string_view line(section.data() + at, (nl == std::string::npos ? section.size() : nl) - at);
            text += line.empty() ? "vramtrace:\n" : "vramtrace: " + std::string(line) + "\n";
            at = nl == std::string::npos ? section.size() : nl + 1;
        }
    }
    return write_stdout(text) ? kExitOk : kExitFailure;
}

} // namespace vramtrace::cli
