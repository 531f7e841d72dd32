#include "commands/cmd_run_live.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <thread>
#include <unistd.h>

#include "commands/cmd_top.h"
#include "common/cli.h"

namespace vramtrace::cli {
namespace {

bool write_all(int fd, const char *data, size_t n) {
    if (fd < 0) return false;
    while (n > 0) {
        ssize_t w = ::write(fd, data, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        data += w;
        n -= size_t(w);
    }
    return true;
}

// Copies the pty's output to the log (and, once `echo` is set, to stdout too) until the program
// and everything it started have closed the terminal.
struct Copier {
    int master = -1, log = -1;
    std::mutex mutex;
    bool echo = false;
    void run() {
        char buf[16384];
        for (;;) {
            ssize_t n = ::read(master, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return; // EIO: no writer left
            std::lock_guard<std::mutex> lock(mutex);
            write_all(log, buf, size_t(n));
            if (echo) write_all(STDOUT_FILENO, buf, size_t(n));
        }
    }
};

// The log written so far, to stdout: read through the descriptor the log was made with, never
// by its name again (which someone may have replaced since).
void print_log(int log) {
    if (log < 0) return;
    char buf[16384];
    for (off_t at = 0;;) {
        ssize_t n = ::pread(log, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        write_all(STDOUT_FILENO, buf, size_t(n));
        at += n;
    }
}

// The name to try after `path` was taken: "DIR/NAME.N.EXT" (N from 1), or "DIR/NAME.N" when the
// file name has no extension.
std::string numbered_name(const std::string &path, int n) {
    size_t slash = path.rfind('/');
    size_t dot = path.rfind('.');
    size_t base = slash == std::string::npos ? 0 : slash + 1;
    if (dot == std::string::npos || dot <= base) return path + "." + std::to_string(n);
    return path.substr(0, dot) + "." + std::to_string(n) + path.substr(dot);
}

// The log: always a new file of ours (O_EXCL: never another user's file, a FIFO or a symlink's
// target), mode 0600 whatever the umask; when the name is taken, the next numbered name (up to
// 100). *used gets the name made; -1 (said on stderr) when none could be made.
int create_log(const std::string &wanted, std::string *used) {
    constexpr int kTries = 100;
    for (int i = 0; i <= kTries; ++i) {
        std::string name = i == 0 ? wanted : numbered_name(wanted, i);
        int fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) {
            log_error("run --live: " + name + ": " + std::strerror(errno) + "; the program's output is not kept");
            return -1;
        }
        ::fchmod(fd, 0600);
        if (i > 0) log_warning("run --live: " + wanted + " exists; the program's output goes to " + name);
        *used = name;
        return fd;
    }
    log_error("run --live: " + wanted + " and " + std::to_string(kTries) +
              " numbered names after it exist; the program's output is not kept");
    return -1;
}

std::string expand_pid(const std::string &pattern, pid_t pid) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
            out += std::to_string(pid);
            ++i;
        } else {
            out += pattern[i];
        }
    }
    return out;
}

} // namespace

int run_live(const char *program, char **argv, char **envp, const std::string &log_pattern, int *wait_status,
             volatile sig_atomic_t *child) {
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
        log_error(std::string("run --live: cannot make a pseudo-terminal: ") + std::strerror(errno));
        if (master >= 0) ::close(master);
        return -1;
    }
    std::string slave = ::ptsname(master);
    // The program's terminal is as large as ours, so its own output is laid out as it would be.
    struct winsize ws {};
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) ::ioctl(master, TIOCSWINSZ, &ws);

    // A session of its own with the pty as controlling terminal (glibc's posix_spawn runs setsid
    // before the file actions, so opening the slave then makes it the controlling terminal).
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, slave.c_str(), O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&actions, STDIN_FILENO, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, STDIN_FILENO, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t to_default;
    sigfillset(&to_default);
    posix_spawnattr_setsigdefault(&attr, &to_default);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
    pid_t pid = 0;
    int rc = ::posix_spawnp(&pid, program, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        ::close(master);
        return rc;
    }
    *child = pid;
    const std::string wanted = expand_pid(log_pattern, pid);
    std::string log_path = wanted;
    int log = create_log(wanted, &log_path);
    Copier copier;
    copier.master = master;
    copier.log = log;
    std::thread copy([&copier] { copier.run(); });

    TopOptions options;
    options.pid = pid;
    options.child = pid;
    options.log_path = log_path;
    int status = -1;
    top_tui(options, &status);
    if (status == -1) {
        // Left early: what the program wrote so far, then the rest as it comes.
        {
            std::lock_guard<std::mutex> lock(copier.mutex);
            print_log(log);
            copier.echo = true;
        }
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        copy.join();
    } else {
        copy.join();
        print_log(log);
    }
    ::close(master);
    if (log >= 0) {
        ::close(log);
        std::string note = "vramtrace: the program's output is in " + log_path + "\n";
        write_all(STDERR_FILENO, note.data(), note.size());
    }
    *wait_status = status;
    return 0;
}

} // namespace vramtrace::cli
