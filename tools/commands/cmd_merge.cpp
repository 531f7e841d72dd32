// `vramtrace merge [options] FILES...|DIR...`: many snapshots folded into one report (and optionally
// one merged snapshot file). The work is in analysis/merge_*.cpp.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/merge_core.h"
#include "commands/cli_options.h"
#include "common/cli.h"
#include "common/output_file.h"
#include "input/snapshot_input.h"
#include "dump/atomic_file.h"

#ifndef VRAMTRACE_VERSION
#define VRAMTRACE_VERSION "unknown"
#endif

namespace vramtrace::cli {

const char *const kMergeHelp =
    "usage: vramtrace merge [options] FILES...|DIR...\n"
    "\n"
    "Folds the snapshots of many processes (the ranks of a job, the processes of a node, merged\n"
    "snapshots too) into one report: a table of the processes (host, pid, rank, devices, current\n"
    "and peak bytes, allocations live at the dump, which are leaks for a snapshot taken at exit),\n"
    "a table of the devices (matched by UUID where the snapshots carry one, else by host +\n"
    "ordinal), how the ranks compare per device role (each rank's GPU; host-pinned memory):\n"
    "the minimum, median and maximum of their current and peak bytes, the ranks whose peak is\n"
    "an outlier (modified z-score from the median absolute deviation beyond 3.5, the scale at\n"
    "least 1% of the median and 1 MiB) and the call sites that make each heavier than the\n"
    "median rank, the call sites of all inputs by live bytes, and, when an input has NVTX ranges,\n"
    "the live bytes and the bytes at the peaks of each range stack per device role. A directory\n"
    "stands for the *.json files in it (not its subdirectories, not hidden files), in natural\n"
    "order (rank2 before rank10). Each file is streamed: memory holds the distinct frames and\n"
    "stacks of all inputs and one row per process, never the allocations.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   also write the merged snapshot to FILE: a snapshot every command\n"
    "                      reads (summary, diff, merge), with every live allocation of every\n"
    "                      input, the process table and the ranks compared (which summary and\n"
    "                      export --format html show); a new 0600 file beside FILE renamed into\n"
    "                      place (a character device or FIFO is written in place, '-' is standard\n"
    "                      output, and then no report is printed); a temporary file beside FILE\n"
    "                      (in $TMPDIR for those) holds the allocations while the inputs are read\n"
    "  -q, --quiet         print no report (with --output)\n"
    "  --top N             list the N call sites with the most live bytes, per outlier rank the\n"
    "                      N most above the median, and per device role the N range stacks\n"
    "                      most at the peaks (default 10; 0 = all)\n"
    "  --frames N          frames per call-site key, from the call site outwards (default 1)\n"
    "  --no-lines          call-site keys without line numbers (see 'vramtrace diff --help')\n"
    "  -h, --help          show this help\n"
    "\n"
    "A progress line is drawn on stderr while reading when stderr is a terminal. A file '-' is\n"
    "read from standard input.\n"
    "\n"
    "Exit status: 0 success, 1 an input is missing, unreadable or not a valid snapshot, or the\n"
    "output could not be written (nothing is written then), 2 usage error.\n";

namespace {

// Natural order: runs of digits compare by value ("rank2" < "rank10").
bool natural_less(const std::string &a, const std::string &b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
        if (da && db) {
            size_t ie = i, je = j;
            while (ie < a.size() && a[ie] >= '0' && a[ie] <= '9') ++ie;
            while (je < b.size() && b[je] >= '0' && b[je] <= '9') ++je;
            size_t is = i, js = j; // skip leading zeros
            while (is + 1 < ie && a[is] == '0') ++is;
            while (js + 1 < je && b[js] == '0') ++js;
            if (ie - is != je - js) return ie - is < je - js;
            int c = a.compare(is, ie - is, b, js, je - js);
            if (c != 0) return c < 0;
            i = ie, j = je;
            continue;
        }
        if (a[i] != b[j]) return a[i] < b[j];
        ++i, ++j;
    }
    if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
    return a < b;
}

bool same_file(const struct stat &a, const struct stat &b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The inputs named by the arguments, and for each whether a directory listing gave it (such a file
// may be skipped, a file named by the user may not); false (after logging) when a directory cannot
// be listed or holds no *.json file.
bool expand_inputs(const std::vector<std::string> &args, const std::string &output, std::vector<std::string> *files,
                   std::vector<bool> *listed) {
    struct stat out_st {};
    bool have_out = !output.empty() && ::stat(output.c_str(), &out_st) == 0;
    for (const std::string &arg : args) {
        struct stat st {};
        if (::stat(arg.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            files->push_back(arg); // the reader reports what is wrong with it
            listed->push_back(false);
            continue;
        }
        DIR *dir = ::opendir(arg.c_str());
        if (!dir) {
            log_error(arg + ": cannot list the directory: " + std::strerror(errno));
            return false;
        }
        std::vector<std::string> names;
        errno = 0;
        while (dirent *e = ::readdir(dir)) {
            std::string name = e->d_name;
            if (name.empty() || name[0] == '.' || name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0)
                continue;
            std::string path = arg + (arg.back() == '/' ? "" : "/") + name;
            struct stat fst {};
            if (::stat(path.c_str(), &fst) != 0 || !S_ISREG(fst.st_mode)) continue;
            if (have_out && same_file(fst, out_st)) continue; // a merged file from an earlier run
            names.push_back(name);
        }
        int err = errno;
        ::closedir(dir);
        if (err != 0) {
            log_error(arg + ": cannot list the directory: " + std::strerror(err));
            return false;
        }
        if (names.empty()) {
            log_error(arg + ": no snapshot files (*.json) in this directory");
            return false;
        }
        std::sort(names.begin(), names.end(), natural_less);
        for (const std::string &name : names) {
            files->push_back(arg + (arg.back() == '/' ? "" : "/") + name);
            listed->push_back(true);
        }
    }
    return true;
}

std::string directory_of(const std::string &path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string base_of(const std::string &path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A new file for the spool (mkstemp), or -1 after logging: beside `target`, whose file system is
// meant to hold the output, or in $TMPDIR (else /tmp) when the target is standard output, a
// character device or a FIFO, whose directory is no place for scratch files.
int temp_beside(const std::string &target, const char *what, std::string *path) {
    std::string dir = directory_of(target);
    if (is_stdout_path(target) || output_written_in_place(target)) {
        const char *tmpdir = std::getenv("TMPDIR");
        dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
    }
    std::string pattern = dir + "/." + base_of(target) + "." + what + ".XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    int fd = ::mkstemp(buf.data());
    if (fd < 0) {
        log_error(target + ": cannot create a temporary file in " + dir + ": " + std::strerror(errno));
        return -1;
    }
    *path = buf.data();
    return fd;
}

struct MergedOutput {
    Merger *merger;
    const std::vector<std::string> *command_line;
};

// Writes the merged snapshot; a regular file is synced before it is renamed into place.
bool fill_merged(int fd, void *ctx, std::string *error) {
    auto *m = static_cast<MergedOutput *>(ctx);
    if (!m->merger->write_snapshot(fd, *m->command_line, VRAMTRACE_VERSION, error)) return false;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::fsync(fd) != 0) {
        *error = std::string("write failed: ") + std::strerror(errno);
        return false;
    }
    return true;
}

int merge_main(int argc, char **argv) {
    SiteKeyOptions keys;
    size_t top = 10;
    bool quiet = false;
    std::string output;
    std::vector<std::string> args;
    OptionReader opts(argc, argv, "merge", kMergeHelp);
    while (opts.next()) {
        if (opts.positional()) {
            args.emplace_back(opts.arg());
            continue;
        }
        std::string_view value;
        if (opts.is("-h") || opts.is("--help")) return write_stdout(kMergeHelp) ? kExitOk : kExitFailure;
        if (opts.is("-q") || opts.is("--quiet")) {
            quiet = true;
        } else if (read_site_key_option(opts, keys)) {
            continue;
        } else if (opts.with_value("--output", &value) || opts.with_value("-o", &value)) {
            if (value.empty()) return opts.error("--output needs a non-empty path");
            output = value;
        } else if (opts.with_value("--top", &value)) {
            if (!parse_count(value, top)) return opts.error("--top needs a number, got '" + std::string(value) + "'");
        } else {
            return opts.unknown();
        }
    }
    if (opts.failed()) return kExitUsage;
    if (args.empty()) return usage_error("merge: no snapshot files or directories given", "merge");
    if (quiet && output.empty()) return usage_error("merge: --quiet without --output would do nothing", "merge");
    if (is_stdout_path(output)) quiet = true; // the merged snapshot takes standard output

    // An output that cannot be written is said before the work, in one line.
    if (!output.empty() && !is_stdout_path(output)) {
        if (std::string refusal = output_refusal(output); !refusal.empty()) {
            log_error(refusal);
            return kExitFailure;
        }
    }
    std::vector<std::string> files;
    std::vector<bool> listed;
    if (!expand_inputs(args, output, &files, &listed)) return kExitFailure;

    // The spool for the allocations, unlinked at once: it disappears with the process.
    std::FILE *spool = nullptr;
    if (!output.empty()) {
        std::string spool_path;
        int fd = temp_beside(output, "spool", &spool_path);
        if (fd < 0) return kExitFailure;
        ::unlink(spool_path.c_str());
        spool = ::fdopen(fd, "w+");
        if (!spool) {
            log_error(output + ": cannot use a temporary file: " + std::strerror(errno));
            ::close(fd);
            return kExitFailure;
        }
    }
    struct SpoolCloser {
        std::FILE *f;
        ~SpoolCloser() {
            if (f) std::fclose(f);
        }
    } spool_closer{spool};

    Merger merger(keys, spool);
    size_t skipped = 0;
    Progress progress(Progress::enabled_for_stderr());
    for (size_t i = 0; i < files.size(); ++i) {
        progress.set_file_number(i + 1, files.size());
        std::string error;
        bool not_snapshot = false;
        if (!merger.add_file(files[i], &progress, &error, listed[i] ? &not_snapshot : nullptr)) {
            progress.done();
            if (not_snapshot) {
                // A directory of snapshots also holds what was made of them (an export's
                // trace.json, a tool's config): each such file is said once and left out.
                log_warning(error + "; skipped");
                ++skipped;
                continue;
            }
            log_error(error);
            return kExitFailure;
        }
    }
    progress.done();
    if (merger.files() == 0) {
        log_error(skipped == 1 ? std::string("no snapshot to merge: the one file read is not a snapshot")
                               : "no snapshot to merge: none of the " + std::to_string(skipped) +
                                     " files read is a snapshot");
        return kExitFailure;
    }
    // A few lines say what repeats; many identical inputs (a test's copies of one file) need no more.
    constexpr size_t kWarningsShown = 3;
    const std::vector<std::string> &warnings = merger.warnings();
    for (size_t i = 0; i < warnings.size() && i < kWarningsShown; ++i) log_warning(warnings[i]);
    if (warnings.size() > kWarningsShown)
        log_warning("and " + std::to_string(warnings.size() - kWarningsShown) + " more processes counted twice");

    if (!output.empty()) {
        std::vector<std::string> command_line{"vramtrace"};
        for (int i = 0; i < argc; ++i) command_line.emplace_back(argv[i]);
        MergedOutput merged{&merger, &command_line};
        std::string error;
        if (!write_output(output, &fill_merged, &merged, &error)) {
            log_error(error);
            return kExitFailure;
        }
    }
    if (!quiet && !write_stdout(format_merge_text(merger, top, keys))) return kExitFailure;
    return kExitOk;
}

} // namespace

int merge_command(int argc, char **argv) {
    return run_reporting_exceptions("merge", kExitFailure, merge_main, argc, argv);
}

} // namespace vramtrace::cli
