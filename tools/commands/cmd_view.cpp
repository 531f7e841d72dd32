// `vramtrace view [--base OLD] [--at exit|peak] [--device N] [--no-open] [--serve [--port N]]
// SNAPSHOT`: the HTML report written to a new temporary file, whose path is printed; with a display
// (DISPLAY or WAYLAND_DISPLAY) it is opened with xdg-open too. --serve serves it on 127.0.0.1
// instead (view_serve.h).
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands/cli_options.h"
#include "commands/export_request.h"
#include "commands/view_serve.h"
#include "common/cli.h"
#include "common/output_file.h"
#include "snapshot/device_range.h"
#include "report/text_safety.h"

extern char **environ;

namespace vramtrace::cli {

const char *const kViewHelp =
    "usage: vramtrace view [options] SNAPSHOT\n"
    "\n"
    "Writes the interactive HTML report of SNAPSHOT (the same page as 'vramtrace export --format\n"
    "html') to a new file vramtrace-view-XXXXXX.html in $TMPDIR (else /tmp) and prints its path.\n"
    "When there is a display (DISPLAY or WAYLAND_DISPLAY set) the file is opened with xdg-open.\n"
    "SNAPSHOT '-' is read from standard input.\n"
    "\n"
    "options:\n"
    "  --base OLD            a compare page of OLD (the base) and SNAPSHOT\n"
    "  --at exit|peak        what the static tables weigh (default: peak)\n"
    "  --device N            only device ordinal N (-1: host-pinned memory)\n"
    "  --no-open             never run xdg-open, only print the path\n"
    "  --serve               serve the page on 127.0.0.1 instead of writing a file: prints a URL\n"
    "                        with a random token (other requests get 403), until Ctrl-C; from\n"
    "                        another machine: ssh -L PORT:127.0.0.1:PORT HOST, then open the URL\n"
    "  --port N              with --serve: the port (default 0: a free one)\n"
    "  -h, --help            show this help\n"
    "\n"
    "Exit status: 0 success (also when xdg-open fails: the path is printed), 1 the snapshot is\n"
    "missing or invalid or the file could not be written, 2 usage error.\n";

namespace {

// Runs xdg-open PATH and waits for it; false when it could not be run or failed.
bool open_in_browser(const std::string &path) {
    const char *argv[] = {"xdg-open", path.c_str(), nullptr};
    pid_t pid = 0;
    if (posix_spawnp(&pid, "xdg-open", nullptr, nullptr, const_cast<char **>(argv), environ) != 0) return false;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

int view_command(int argc, char **argv) {
    OptionReader opts(argc, argv, "view", kViewHelp);
    exporter::Options options;
    std::string path, base_path;
    bool have_path = false, no_open = false, serve = false;
    int port = 0;
    while (opts.next()) {
        std::string_view value;
        if (opts.positional()) {
            if (have_path) return opts.error("more than one snapshot given");
            path = opts.arg();
            have_path = true;
        } else if (opts.is("-h") || opts.is("--help")) {
            return write_stdout(kViewHelp) ? kExitOk : kExitFailure;
        } else if (opts.is("--no-open")) {
            no_open = true;
        } else if (opts.is("--serve")) {
            serve = true;
        } else if (opts.with_value("--port", &value)) {
            size_t n = 0;
            if (!parse_count(value, n) || n > 65535) return opts.error("--port needs a port number (0 to 65535), got '" + std::string(value) + "'");
            port = int(n);
        } else if (int taken = take_page_option(opts, options, base_path); taken >= 0) {
            if (taken > 0) return taken;
        } else if (!opts.failed()) {
            return opts.unknown();
        }
    }
    if (opts.failed()) return kExitUsage;
    if (!have_path) return opts.error("no snapshot file given");
    if (port != 0 && !serve) return opts.error("--port goes with --serve");

    std::string data;
    std::vector<std::string> notes;
    if (!export_to_memory(path, base_path, exporter::Format::Html, options, &data, &notes)) return kExitFailure;
    for (const std::string &note : notes) log_warning(path + ": " + note);
    if (serve) return serve_page(data, port);

    const char *tmp = std::getenv("TMPDIR");
    std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/vramtrace-view-XXXXXX.html";
    // mkstemps creates the file exclusively (O_EXCL, mode 0600): a planted name is never followed.
    int fd = ::mkstemps(name.data(), 5);
    if (fd < 0) {
        log_error("cannot create a file in " + std::string(tmp && *tmp ? tmp : "/tmp") + ": " + std::strerror(errno));
        return kExitFailure;
    }
    bool written = write_all_to(fd, data);
    int saved = errno;
    if (::close(fd) != 0 && written) {
        written = false;
        saved = errno;
    }
    if (!written) {
        log_error(report::shown_value(name) + ": " + std::strerror(saved));
        ::unlink(name.c_str());
        return kExitFailure;
    }
    if (!write_stdout(name + "\n")) return kExitFailure;
    const char *display = std::getenv("DISPLAY"), *wayland = std::getenv("WAYLAND_DISPLAY");
    if (!no_open && ((display && *display) || (wayland && *wayland)) && !open_in_browser(name))
        log_warning("xdg-open could not open the page; open " + report::shown_value(name, 4096) + " in a browser");
    return kExitOk;
}

} // namespace vramtrace::cli
