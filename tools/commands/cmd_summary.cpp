// `vramtrace summary [--top N] SNAPSHOT`: the summary of a snapshot file, on stdout.
#include <string>
#include <string_view>

#include "commands/cli_options.h"
#include "analysis/merge_core.h"
#include "common/cli.h"
#include "input/snapshot_input.h"
#include "input/summary_input.h"
#include "report/summary_format.h"

namespace vramtrace::cli {

const char *const kSummaryHelp =
    "usage: vramtrace summary [--top N] SNAPSHOT\n"
    "\n"
    "Prints the summary of a snapshot written by libvramtrace.so: per device the current, peak,\n"
    "total allocated and total freed memory (also by kind and by size class, small < 1 MiB and\n"
    "large >= 1 MiB, where the snapshot's event history allows), what nvidia-smi counts beyond it,\n"
    "the top call sites by live bytes and at each device's peak, out-of-memory failures, memory\n"
    "pools, and the allocations still live (leaks, for a snapshot taken at exit). It is the summary\n"
    "the library prints on stderr at exit. The file is streamed: memory grows with its distinct\n"
    "call stacks and allocation sizes, not with its number of allocations or events. A progress\n"
    "line is drawn on stderr while reading when stderr is a terminal. SNAPSHOT '-' is read from\n"
    "standard input.\n"
    "\n"
    "options:\n"
    "  --top N       list N call sites per table (default 10; 0 = all)\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit status: 0 success, 1 the file is missing, unreadable or not a valid snapshot,\n"
    "2 usage error.\n";

int summary_command(int argc, char **argv) {
    report::SummaryOptions options;
    std::string path;
    bool have_path = false, options_done = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (!options_done && (arg == "-h" || arg == "--help")) return write_stdout(kSummaryHelp) ? kExitOk : kExitFailure;
        if (!options_done && arg == "--") {
            options_done = true;
            continue;
        }
        if (!options_done && (arg == "--top" || arg.rfind("--top=", 0) == 0)) {
            std::string_view value;
            if (arg == "--top") {
                if (i + 1 >= argc) return usage_error("summary: --top needs a number", "summary");
                value = argv[++i];
            } else {
                value = arg.substr(6);
            }
            if (!parse_count(value, options.top_n))
                return usage_error("summary: --top needs a number, got '" + std::string(value) + "'", "summary");
            continue;
        }
        if (!options_done && arg.size() > 1 && arg[0] == '-')
            return usage_error("summary: unknown option '" + std::string(arg) + "'", "summary");
        if (have_path) return usage_error("summary: more than one snapshot given", "summary");
        path = arg;
        have_path = true;
    }
    if (!have_path) return usage_error("summary: no snapshot file given", "summary");

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
            const report::Stack *stack = input.head.find_stack(id);
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
