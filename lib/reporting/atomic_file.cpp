#include "reporting/atomic_file.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"

namespace vramtrace {
namespace {

// While a report is written, SIGXFSZ (a write past RLIMIT_FSIZE) must not kill the host program,
// whose default action for it is to dump core. The signal is blocked in the writing thread only, so
// the write fails with EFBIG instead, and a SIGXFSZ our own write raised is taken off the pending
// set before the mask is restored. The program's signal dispositions are never changed; a SIGXFSZ
// that was already pending before we started is left alone.
class FileSizeSignalBlock {
public:
    FileSizeSignalBlock() {
        sigemptyset(&xfsz_);
        sigaddset(&xfsz_, SIGXFSZ);
        sigset_t pending;
        sigemptyset(&pending);
        was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
        // sigprocmask changes the calling thread's mask only (as pthread_sigmask does) and binds to
        // libc's oldest symbol version.
        blocked_ = sigprocmask(SIG_BLOCK, &xfsz_, &old_) == 0;
    }
    ~FileSizeSignalBlock() {
        if (!blocked_) return;
        int saved = errno;
        sigset_t pending;
        sigemptyset(&pending);
        if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1) {
            timespec zero{0, 0};
            while (sigtimedwait(&xfsz_, nullptr, &zero) < 0 && errno == EINTR) {
            }
        }
        sigprocmask(SIG_SETMASK, &old_, nullptr);
        errno = saved;
    }
    FileSizeSignalBlock(const FileSizeSignalBlock &) = delete;
    FileSizeSignalBlock &operator=(const FileSizeSignalBlock &) = delete;

private:
    sigset_t xfsz_{}, old_{};
    bool was_pending_ = false;
    bool blocked_ = false;
};

constexpr int kTempAttempts = 16;

} // namespace

std::string temporary_name_for(const std::string &path, long pid, int attempt) {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmp = dir + "." + base + ".tmp." + std::to_string(pid);
    if (attempt > 0) tmp += "." + std::to_string(attempt) + "-" + std::to_string(monotonic_ns() % 1000000007ull);
    return tmp;
}

bool write_file_atomically(const std::string &path, bool (*fill)(int, void *, std::string *), void *ctx,
                           std::string *error, unsigned mode) {
    int saved_errno = errno;
    FileSizeSignalBlock no_sigxfsz;
    std::string tmp;
    int fd = -1;
    // A name that already exists (someone else's file, a symlink planted in a shared directory, a
    // leftover of a process with our pid) is never opened: O_EXCL|O_NOFOLLOW fail on it, and we try
    // another name.
    for (int attempt = 0; attempt < kTempAttempts && fd < 0; ++attempt) {
        tmp = temporary_name_for(path, static_cast<long>(getpid()), attempt);
        fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        *error = "cannot create " + tmp + ": " + strerror(errno);
        errno = saved_errno;
        return false;
    }
    if (mode != 0600 && fchmod(fd, static_cast<mode_t>(mode)) != 0) {
        *error = "cannot set the mode of " + tmp + ": " + strerror(errno);
        close(fd);
        unlink(tmp.c_str());
        errno = saved_errno;
        return false;
    }
    bool ok = fill(fd, ctx, error);
    if (close(fd) != 0 && ok) {
        *error = "cannot write " + tmp + ": " + strerror(errno);
        ok = false;
    }
    if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
        *error = "cannot rename " + tmp + " to " + path + ": " + strerror(errno);
        ok = false;
    }
    if (!ok) unlink(tmp.c_str());
    errno = saved_errno;
    return ok;
}

} // namespace vramtrace
