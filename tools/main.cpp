// vramtrace: the command-line tool. Dispatches to one file per subcommand.
#include <cstring>
#include <string>
#include <string_view>

#include "common/cli.h"
#include "symbolize/frame_rules.h"

#ifndef VRAMTRACE_VERSION
#define VRAMTRACE_VERSION "unknown"
#endif
#ifndef VRAMTRACE_COMMIT
#define VRAMTRACE_COMMIT "unknown"
#endif
#ifndef VRAMTRACE_BUILD_TYPE
#define VRAMTRACE_BUILD_TYPE "unknown"
#endif
#ifndef VRAMTRACE_CUDA_HEADERS
#define VRAMTRACE_CUDA_HEADERS "unknown"
#endif

namespace {

constexpr const char *kUsage =
    "usage: vramtrace <command> [options] [arguments]\n"
    "\n"
    "Traces CUDA memory allocations of a program through an LD_PRELOAD library and reads the\n"
    "snapshots it writes.\n"
    "\n"
    "commands:\n"
    "  run [--output PATH] [--no-summary] [--no-follow] [--backend preload|cupti] [--live]\n"
    "      -- PROGRAM [ARGS...]\n"
    "                          run PROGRAM with libvramtrace.so preloaded (--live: on a pty of\n"
    "                          its own, with the live view in this terminal)\n"
    "  summary [--top N] [--frames N] SNAPSHOT\n"
    "                          print the summary of a snapshot file: the answer first (peak,\n"
    "                          what grew, what was held since start, OOMs), then the detail\n"
    "  diff [options] BASE NEW compare two snapshots per call site; a growth gate for CI\n"
    "  merge [options] FILES...|DIR\n"
    "                          one table per process and merged call sites of many snapshots,\n"
    "                          optionally written as one snapshot (--output)\n"
    "  export --format chrome|folded|pprof|pickle|html [options] SNAPSHOT\n"
    "                          a snapshot for Perfetto, flame graphs, pprof, PyTorch's\n"
    "                          memory_viz, or as one HTML page\n"
    "  top [--pid PID] [--once [--json]] [--snapshot]\n"
    "                          the live device memory of running traced processes (--snapshot\n"
    "                          --pid PID: ask one to write a snapshot now)\n"
    "  view [--base OLD] [--no-open] SNAPSHOT\n"
    "                          write the HTML report to a temporary file and print its path (or\n"
    "                          open it with xdg-open when there is a display)\n"
    "  help [COMMAND]          show this help, or a command's\n"
    "\n"
    "A SNAPSHOT (or BASE, NEW, FILES) of '-' is read from standard input.\n"
    "\n"
    "options:\n"
    "  -h, --help              show this help\n"
    "  -V, --version           show the version\n"
    "\n"
    "Exit status: 0 success, 1 failed (bad input, output error), 2 usage error, 3 `diff`'s\n"
    "growth gate failed; `run` returns the program's status (see 'vramtrace run --help').\n";

const char *command_help(std::string_view command) {
    using namespace vramtrace::cli;
    if (command == "run") return kRunHelp;
    if (command == "summary") return kSummaryHelp;
    if (command == "diff") return kDiffHelp;
    if (command == "merge") return kMergeHelp;
    if (command == "export") return kExportHelp;
    if (command == "top") return kTopHelp;
    if (command == "view") return kViewHelp;
    return nullptr;
}

int help(std::string_view command) {
    using namespace vramtrace::cli;
    if (command.empty() || command == "help") return write_stdout(kUsage) ? kExitOk : kExitFailure;
    if (const char *text = command_help(command)) return write_stdout(text) ? kExitOk : kExitFailure;
    return usage_error("unknown command '" + std::string(command) + "'" + did_you_mean(command, command_names()));
}

} // namespace

int main(int argc, char **argv) {
    using namespace vramtrace::cli;
    setup_logging();
    // The frame rules are read once, on first use; a user's file that cannot be used is said here.
    vramtrace::FrameRules::from_environment([](const char *message) { log_warning(message); });
    // A bare `vramtrace` is a request for the usage.
    if (argc < 2) return help({});
    std::string_view command = argv[1];
    if (command == "-h" || command == "--help") return help({});
    if (command == "help") {
        if (argc > 3) return usage_error("help takes at most one command");
        return help(argc == 3 ? std::string_view(argv[2]) : std::string_view());
    }
    if (command == "-V" || command == "--version") {
        // The first line alone is what help2man and scripts read as the version.
        return write_stdout("vramtrace " VRAMTRACE_VERSION "\n"
                            "commit " VRAMTRACE_COMMIT "\n"
                            "build type " VRAMTRACE_BUILD_TYPE "\n"
                            "CUDA headers " VRAMTRACE_CUDA_HEADERS "\n")
                   ? kExitOk
                   : kExitFailure;
    }
    if (command == "run") return run_command(argc - 1, argv + 1);
    if (command == "summary") return summary_command(argc - 1, argv + 1);
    if (command == "diff") return diff_command(argc - 1, argv + 1);
    if (command == "merge") return merge_command(argc - 1, argv + 1);
    if (command == "export") return export_command(argc - 1, argv + 1);
    if (command == "top") return top_command(argc - 1, argv + 1);
    if (command == "view") return view_command(argc - 1, argv + 1);
    if (!command.empty() && command[0] == '-')
        return usage_error("unknown option '" + std::string(command) + "'" +
                           did_you_mean(command, {"--help", "--version"}));
    return usage_error("unknown command '" + std::string(command) + "'" + did_you_mean(command, command_names()));
}
