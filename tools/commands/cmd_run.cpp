// `vramtrace run [--output PATH] [--no-summary] [--] PROGRAM [ARGS...]`: runs a program with
// libvramtrace.so preloaded and returns its exit status.
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands/cmd_run_live.h"
#include "commands/run_supervise.h"
#include "commands/run_verdict.h"
#include "common/cli.h"
#include "common/settings_help.h"
#include "settings/settings.h"

extern char **environ;

namespace vramtrace::cli {

const char *const kRunHelp =
    "usage: vramtrace run [--output PATH] [--no-summary] [--quiet] [--no-follow]\n"
    "                     [--backend=preload|cupti] [--live [--log PATH]] [--] PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with libvramtrace.so preloaded: the library is put first in LD_PRELOAD (the\n"
    "entries already there are kept), and traces every CUDA allocation of the program and of the\n"
    "programs it starts. At exit the program writes a snapshot (VRAMTRACE_OUTPUT, by default\n"
    "vramtrace-%p.json in the current directory) and prints a summary on stderr. Each traced\n"
    "process that used CUDA writes its own snapshot: keep %p in PATH so they do not overwrite\n"
    "each other.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH   where to write the snapshot; sets VRAMTRACE_OUTPUT=PATH ('-': the\n"
    "                      program's standard output, only for a program that writes nothing\n"
    "                      there: its own buffered output is flushed after the snapshot)\n"
    "                      (%p is replaced by the pid, %h by the host name, %r by the rank)\n"
    "  --no-summary        no summary on stderr; sets VRAMTRACE_SUMMARY=0 (the verdict line\n"
    "                      is still printed)\n"
    "  -q, --quiet         neither the summary nor the verdict line: stderr holds only what the\n"
    "                      program and vramtrace's warnings write\n"
    "  --no-follow         trace PROGRAM only, not the programs it starts or forks; sets\n"
    "                      VRAMTRACE_FOLLOW=0 (the library takes itself out of LD_PRELOAD)\n"
    "  --backend=NAME      preload (default): the library's hooks record; cupti: CUPTI's\n"
    "                      driver callbacks record (the driver loads the library through\n"
    "                      CUDA_INJECTION64_PATH; it is preloaded too, passive, and its hooks\n"
    "                      take over if CUPTI is held by another tool); docs/cupti.md\n"
    "  --live              the program on a pseudo-terminal of its own, the live view\n"
    "                      (vramtrace top) in this terminal until it ends; its output goes\n"
    "                      to the log file (--log), printed here at the end; q leaves the\n"
    "                      view early, the program's output then follows here (docs/live.md)\n"
    "  --log PATH          with --live: the log file (default vramtrace-run-%p.log; %p: the\n"
    "                      program's pid), always a new file, mode 0600: when PATH is\n"
    "                      taken, NAME.1.EXT, NAME.2.EXT, ... instead\n"
    "  -h, --help          show this help\n"
    "Options end at '--' or at the first argument that is not an option.\n"
    "\n"
    "NVTX: the program's NVTX ranges reach vramtrace through NVTX_INJECTION64_PATH, which run sets\n"
    "to the library unless another tool (Nsight Systems, ...) already holds it: then one line says\n"
    "so, that tool keeps NVTX and the snapshot has no ranges (docs/nvtx.md). With --backend=cupti\n"
    "the library hands NVTX to the libcupti it subscribes to, and follows CUPTI's NVTX callbacks.\n"
    "\n"
    "The library is looked for beside this executable, as installed: BINDIR/../lib/libvramtrace.so.\n"
    "\n"
    "Setuid and setgid programs: the dynamic loader ignores LD_PRELOAD for them, so nothing is\n"
    "traced; vramtrace says so before running one.\n"
    "\n"
    "Exit status: the program's own exit status, or 128+N when a signal N killed it (137 for\n"
    "SIGKILL); 127 when PROGRAM was not found, 126 when it could not be executed; 125 when\n"
    "vramtrace itself failed (libvramtrace.so not found, ...); 2 for a usage error.\n"
    "\n"
    "Signals: Ctrl-C (SIGINT) and SIGQUIT from the terminal reach the program directly; SIGINT,\n"
    "SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU and SIGALRM sent to vramtrace are passed\n"
    "on to it (once: not when it already got the same signal, as from timeout(1) or a scheduler\n"
    "signalling the whole job). A terminating signal makes the program write its exit report\n"
    "before it dies by that signal (docs/triggers.md, \"How a run ends\").\n"
    "\n"
    "The last line on stderr is the verdict: the report written (\"vramtrace: wrote PATH (peak\n"
    "3.10 GiB on cuda:0; 2 processes traced)\"), that no CUDA allocation was seen, or that the\n"
    "program was killed before it could write.\n";

namespace {

constexpr int kExitRunFailed = 125;
constexpr int kExitCannotExecute = 126;
constexpr int kExitNotFound = 127;
constexpr int kForwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

volatile sig_atomic_t g_child = 0;   // the program's pid once spawned

// --live: the view's signal handlers pass signals on to the program.
extern "C" void forward_signal(int sig) {
    int saved = errno;
    pid_t child = g_child;
    if (child > 0) ::kill(child, sig);
    errno = saved;
}

std::string self_executable() {
    std::vector<char> buf(PATH_MAX);
    for (;;) {
        ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size());
        if (n < 0) return {};
        if (size_t(n) < buf.size()) return std::string(buf.data(), size_t(n));
        buf.resize(buf.size() * 2);
    }
}

// LD_PRELOAD with `lib` first; the other entries (separated by ':' or ' ') are kept, minus `lib`.
std::string preload_list(const std::string &lib, const char *existing) {
    std::string out = lib;
    std::string_view rest = existing ? existing : "";
    while (!rest.empty()) {
        size_t end = rest.find_first_of(": ");
        std::string_view item = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (item.empty() || item == lib) continue;
        out += ':';
        out += item;
    }
    return out;
}

// The file posix_spawnp will run: PROGRAM itself when it has a '/', else the first executable
// regular file of that name in PATH (confstr's default path when PATH is unset). Empty: none.
std::string find_program(const char *program) {
    if (std::strchr(program, '/') != nullptr) return program;
    std::string path;
    if (const char *p = ::getenv("PATH")) {
        path = p;
    } else {
        size_t n = ::confstr(_CS_PATH, nullptr, 0);
        std::vector<char> buf(n > 0 ? n : 1);
        if (n > 0) ::confstr(_CS_PATH, buf.data(), n);
        path = buf.data();
    }
    std::string_view rest = path;
    for (;;) {
        size_t end = rest.find(':');
        std::string_view dir = rest.substr(0, end);
        std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + program;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        if (end == std::string_view::npos) return {};
        rest = rest.substr(end + 1);
    }
}

// Whether running this file changes the process's user or group (set-user-ID or set-group-ID bit
// naming someone else): the loader then runs in secure-execution mode and ignores LD_PRELOAD.
bool changes_identity(const std::string &file) {
    struct stat st {};
    if (file.empty() || ::stat(file.c_str(), &st) != 0) return false;
    return ((st.st_mode & S_ISUID) && st.st_uid != ::geteuid()) || ((st.st_mode & S_ISGID) && st.st_gid != ::getegid());
}

// Whether a path's file name starts with "libcupti" (the library's rule for a CUPTI it may use).
bool names_cupti(std::string_view path) {
    size_t slash = path.rfind('/');
    return path.substr(slash == std::string_view::npos ? 0 : slash + 1).rfind("libcupti", 0) == 0;
}

bool starts_with_name(const char *entry, std::string_view name) {
    return std::strncmp(entry, name.data(), name.size()) == 0 && entry[name.size()] == '=';
}


constexpr int kSpawnFailed = -1;

// The program under `run --live`: its own pty, the live view here (cmd_run_live.cpp); Ctrl-C in
// the view's terminal is passed on.
int run_live_program(const char *program, char **argv, char **envp, const std::string &log_pattern, int *status) {
    struct sigaction forward {};
    forward.sa_handler = forward_signal;
    forward.sa_flags = SA_RESTART;
    sigemptyset(&forward.sa_mask);
    for (int sig : kForwarded) ::sigaction(sig, &forward, nullptr);
    ::sigaction(SIGINT, &forward, nullptr);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGQUIT, &ignore, nullptr);
    int rc = run_live(program, argv, envp, log_pattern, status, &g_child);
    return rc < 0 ? kSpawnFailed : rc;
}

// The program started with the signals run supervises blocked here and at their defaults there
// (run_supervise.h); returns posix_spawnp's error, 0 once the program has ended.
int run_program(const char *program, char **argv, char **envp, const std::string &notes_dir, int *status) {
    const sigset_t supervised = supervised_signals();
    sigset_t previous;
    ::pthread_sigmask(SIG_BLOCK, &supervised, &previous);
    // Like system(): an ignored SIGINT or SIGQUIT stays ignored in the program.
    struct sigaction old_int {}, old_quit {};
    ::sigaction(SIGINT, nullptr, &old_int);
    ::sigaction(SIGQUIT, nullptr, &old_quit);
    sigset_t to_default = supervised;
    sigdelset(&to_default, SIGCHLD);
    if (old_int.sa_handler == SIG_IGN) sigdelset(&to_default, SIGINT);
    if (old_quit.sa_handler == SIG_IGN) sigdelset(&to_default, SIGQUIT);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigdefault(&attr, &to_default);
    posix_spawnattr_setsigmask(&attr, &previous);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = 0;
    int rc = ::posix_spawnp(&pid, program, nullptr, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        return rc;
    }
    g_child = pid;
    if (!supervise(pid, notes_dir, status)) {
        log_error(std::string("waiting for ") + program + ": " + std::strerror(errno));
        return kSpawnFailed;
    }
    return 0;
}

} // namespace

int run_command(int argc, char **argv) {
    const char *output = nullptr;
    bool no_summary = false;
    bool no_follow = false;
    bool quiet = false; // no summary and no verdict line
    bool live = false;
    std::string log_pattern = "vramtrace-run-%p.log";
    // Without --backend, the environment's VRAMTRACE_BACKEND (the library reads it too) decides.
    auto env_backend = settings::parse_backend(settings::text(settings::Id::backend));
    std::string_view backend = env_backend == 2 ? "cupti" : "preload";
    int first = 1;
    for (; first < argc; ++first) {
        std::string_view arg = argv[first];
        if (arg == "--") {
            ++first;
            break;
        }
        if (arg == "-h" || arg == "--help") return write_stdout(std::string(kRunHelp) + "\n" + environment_help()) ? kExitOk : kExitFailure;
        if (arg == "--no-summary") {
            no_summary = true;
        } else if (arg == "-q" || arg == "--quiet") {
            no_summary = true;
            quiet = true;
        } else if (arg == "--no-follow") {
            no_follow = true;
        } else if (arg == "--live") {
            live = true;
        } else if (arg == "--log" || arg.rfind("--log=", 0) == 0) {
            if (arg == "--log") {
                if (first + 1 >= argc) return usage_error("run: --log needs a path", "run");
                log_pattern = argv[++first];
            } else {
                log_pattern = std::string(arg.substr(6));
            }
            if (log_pattern.empty()) return usage_error("run: --log needs a non-empty path", "run");
        } else if (arg == "--backend" || arg.rfind("--backend=", 0) == 0) {
            if (arg == "--backend") {
                if (first + 1 >= argc) return usage_error("run: --backend needs preload or cupti", "run");
                backend = argv[++first];
            } else {
                backend = arg.substr(10);
            }
            if (backend != "preload" && backend != "cupti")
                return usage_error("run: --backend must be preload or cupti, not '" + std::string(backend) + "'", "run");
        } else if (arg == "-o" || arg == "--output") {
            if (first + 1 >= argc) return usage_error("run: " + std::string(arg) + " needs a path", "run");
            output = argv[++first];
        } else if (arg.rfind("--output=", 0) == 0) {
            output = argv[first] + 9;
        } else if (arg.size() > 1 && arg[0] == '-') {
            return unknown_option("run", arg, kRunHelp);
        } else {
            break;
        }
        if (output && *output == '\0') return usage_error("run: --output needs a non-empty path", "run");
    }
    if (first >= argc) return usage_error("run: no program given", "run");
    if (log_pattern != "vramtrace-run-%p.log" && !live) return usage_error("run: --log goes with --live", "run");
    if (live && (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)))
        return usage_error("run: --live needs a terminal (its live view is drawn there)", "run");
    char **program_argv = argv + first;
    const char *program = program_argv[0];

    // The library, installed beside us: BINDIR/../lib/libvramtrace.so.
    std::string exe = self_executable();
    if (exe.empty()) {
        log_error(std::string("cannot find this executable's path (/proc/self/exe): ") + std::strerror(errno));
        return kExitRunFailed;
    }
    std::string lib =
        (std::filesystem::path(exe).parent_path() / ".." / "lib" / "libvramtrace.so").lexically_normal().string();
    struct stat st {};
    if (::stat(lib.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(lib.c_str(), R_OK) != 0) {
        log_error("preload library not found: " + lib + " (looked in ../lib beside " + exe + ")");
        return kExitRunFailed;
    }
    if (lib.find_first_of(": ") != std::string::npos) {
        log_error("cannot preload " + lib + ": LD_PRELOAD cannot hold a path with ':' or ' '");
        return kExitRunFailed;
    }

    // The program's environment: ours, with LD_PRELOAD and the settings asked for replaced.
    std::vector<std::string> env_strings;
    bool nvtx_held = false;
    for (char **e = environ; e && *e; ++e) {
        if (starts_with_name(*e, "NVTX_INJECTION64_PATH")) {
            std::string_view value = std::string_view(*e).substr(sizeof "NVTX_INJECTION64_PATH");
            if (value.empty() || value == lib) continue; // ours (or empty): set below
            if (backend == "cupti" && names_cupti(value)) {
                // A libcupti: NVTX goes to CUPTI, which the library subscribes to in that very file
                // (lib/cupti/subscriber.cpp), so the ranges are still followed.
                nvtx_held = true;
                env_strings.emplace_back(*e);
                continue;
            }
            log_warning("NVTX_INJECTION64_PATH is already set (" + std::string(value) +
                        "): NVTX goes to that tool; this run records no NVTX ranges");
            nvtx_held = true;
        }
        if (starts_with_name(*e, "LD_PRELOAD")) continue;
        if (output && starts_with_name(*e, "VRAMTRACE_OUTPUT")) continue;
        if (no_summary && starts_with_name(*e, "VRAMTRACE_SUMMARY")) continue;
        if (no_follow && starts_with_name(*e, "VRAMTRACE_FOLLOW")) continue;
        if (starts_with_name(*e, "VRAMTRACE_BACKEND")) continue;
        if (backend == "cupti" && starts_with_name(*e, "CUDA_INJECTION64_PATH")) {
            log_warning(std::string("--backend=cupti replaces ") + *e);
            continue;
        }
        env_strings.emplace_back(*e);
    }
    env_strings.push_back("LD_PRELOAD=" + preload_list(lib, ::getenv("LD_PRELOAD")));
    if (output) env_strings.push_back(std::string("VRAMTRACE_OUTPUT=") + output);
    if (no_summary) env_strings.push_back("VRAMTRACE_SUMMARY=0");
    if (no_follow) env_strings.push_back("VRAMTRACE_FOLLOW=0");
    // CUPTI: the driver loads the same library at cuInit and calls its InitializeInjection; the
    // preloaded copy is that same object (same path), passive unless CUPTI cannot be subscribed.
    env_strings.push_back("VRAMTRACE_BACKEND=" + std::string(backend));
    if (backend == "cupti") env_strings.push_back("CUDA_INJECTION64_PATH=" + lib);
    // NVTX: the program's first NVTX call loads this same library and calls InitializeInjectionNvtx2.
    if (!nvtx_held) env_strings.push_back("NVTX_INJECTION64_PATH=" + lib);
    std::vector<char *> envp;
    for (std::string &s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::string resolved = find_program(program);
    if (changes_identity(resolved))
        log_warning(resolved + " is set-user-ID or set-group-ID: the dynamic loader ignores LD_PRELOAD for it, "
                               "so vramtrace cannot trace it (no snapshot will be written)");

    std::string notes_dir = make_notes_dir();
    if (!notes_dir.empty()) {
        env_strings.push_back("VRAMTRACE_RUN_NOTES=" + notes_dir);
        envp.clear();
        for (std::string &s : env_strings) envp.push_back(s.data());
        envp.push_back(nullptr);
    }
    int status = 0;
    int rc = live ? run_live_program(program, program_argv, envp.data(), log_pattern, &status)
                  : run_program(program, program_argv, envp.data(), notes_dir, &status);
    if (rc == kSpawnFailed) {
        remove_notes_dir(notes_dir);
        return kExitRunFailed;
    }
    if (rc != 0) {
        remove_notes_dir(notes_dir);
        bool not_found = rc == ENOENT || rc == ENOTDIR;
        if (not_found && std::strchr(program, '/') == nullptr)
            log_error(std::string(program) + ": command not found");
        else
            log_error(std::string("cannot run ") + program + ": " + std::strerror(rc));
        return not_found ? kExitNotFound : kExitCannotExecute;
    }
    if (!notes_dir.empty() && !quiet) log_line(run_verdict(notes_dir, g_child, program, status));
    remove_notes_dir(notes_dir);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return kExitRunFailed;
}

} // namespace vramtrace::cli
