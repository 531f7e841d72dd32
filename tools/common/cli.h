// Shared by the vramtrace subcommands: entry points, diagnostics and exit codes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vramtrace::cli {

// Exit codes of every vramtrace command (`vramtrace run` returns the program's own status instead,
// see commands/cmd_run.cpp).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // bad input file, output error
inline constexpr int kExitUsage = 2;      // unknown command or option, missing argument
inline constexpr int kExitGateFailed = 3; // `diff --fail-if-growth`: the growth exceeded the limit

// Subcommands: args[0] is the subcommand's name; each returns the process exit code.
int run_command(int argc, char **argv);
int summary_command(int argc, char **argv);
int diff_command(int argc, char **argv);
int merge_command(int argc, char **argv);
int export_command(int argc, char **argv);
int view_command(int argc, char **argv);
int top_command(int argc, char **argv);

// Runs a subcommand's body; an exception that escapes it becomes one error line ("COMMAND: out of
// memory", "COMMAND: what it says") and the exit code `failure`.
int run_reporting_exceptions(std::string_view command, int failure, int (*body)(int argc, char **argv), int argc,
                             char **argv);

// Help texts (printed on stdout by --help).
extern const char *const kRunHelp;
extern const char *const kSummaryHelp;
extern const char *const kDiffHelp;
extern const char *const kMergeHelp;
extern const char *const kExportHelp;
extern const char *const kViewHelp;
extern const char *const kTopHelp;

// Diagnostics on stderr, one line each: "vramtrace: error: ...", "vramtrace: warning: ...".
void setup_logging();
void log_error(std::string_view message);
void log_warning(std::string_view message);
// "vramtrace: MESSAGE" on stderr (a result, not a diagnostic: `run`'s verdict line).
void log_line(std::string_view message);
// Logs "MESSAGE (see 'vramtrace HELP_FOR --help')" as an error and returns kExitUsage.
int usage_error(std::string_view message, std::string_view help_for = {});

// " (did you mean 'X'?)" for the candidate nearest to `word`: at most 2 edits away (insertions,
// deletions, substitutions, swaps of neighbours), or the only candidate that starts with it;
// "" when none is that close.
std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates);
// The long options ("--name") a help text lists, in order of first appearance.
std::vector<std::string> long_options_of(std::string_view help);
// The commands, in the order the usage lists them.
const std::vector<std::string> &command_names();
// Logs "COMMAND: unknown option 'ARG' (did you mean '--X'?) (see 'vramtrace COMMAND --help')",
// the suggestion from the long options `help` (the command's help text; may be null) lists, and
// returns kExitUsage.
int unknown_option(std::string_view command, std::string_view arg, const char *help);

// Writes text to stdout; false (after logging an error) when it could not be written.
bool write_stdout(std::string_view text);

} // namespace vramtrace::cli
