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

// The log written so far, to stdout.
void print_log(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[16384];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) write_all(STDOUT_FILENO, buf, size_t(n));
    ::close(fd);
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
    std::string log_path = expand_pid(log_pattern, pid);
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (log < 0) {
        log_error("run --live: " + log_path + ": " + std::strerror(errno) + "; the program's output is not kept");
    }
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
            print_log(log_path);
            copier.echo = true;
        }
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        copy.join();
    } else {
        copy.join();
        print_log(log_path);
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
