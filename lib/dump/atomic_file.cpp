#include "dump/atomic_file.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"

namespace vramtrace {

bool fill_from_string(int fd, void *ctx, std::string *error) {
    const std::string &text = *static_cast<const std::string *>(ctx);
    for (size_t done = 0; done < text.size();) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *error = std::string("write: ") + strerror(errno);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

namespace {

// While a report is written, SIGXFSZ (a write past RLIMIT_FSIZE) and SIGPIPE (a FIFO whose reader
// went away) must not kill the host program, whose default actions for them are to dump core and to
// terminate. Both are blocked in the writing thread only, so the write fails with EFBIG or EPIPE
// instead, and one that our own write raised is taken off the pending set before the mask is
// restored. The program's signal dispositions are never changed; a signal that was already pending
// before we started is left alone.
class WriteSignalBlock {
public:
    WriteSignalBlock() {
        sigemptyset(&blocked_set_);
        sigemptyset(&was_pending_);
        sigset_t pending;
        sigemptyset(&pending);
        bool have_pending = sigpending(&pending) == 0;
        for (int sig : kSignals) {
            sigaddset(&blocked_set_, sig);
            if (have_pending && sigismember(&pending, sig) == 1) sigaddset(&was_pending_, sig);
        }
        // sigprocmask changes the calling thread's mask only (as pthread_sigmask does) and binds to
        // libc's oldest symbol version.
        blocked_ = sigprocmask(SIG_BLOCK, &blocked_set_, &old_) == 0;
    }
    ~WriteSignalBlock() {
        if (!blocked_) return;
        int saved = errno;
        sigset_t pending;
        sigemptyset(&pending);
        if (sigpending(&pending) == 0) {
            for (int sig : kSignals) {
                if (sigismember(&was_pending_, sig) == 1 || sigismember(&pending, sig) != 1) continue;
                sigset_t one;
                sigemptyset(&one);
                sigaddset(&one, sig);
                timespec zero{0, 0};
                while (sigtimedwait(&one, nullptr, &zero) < 0 && errno == EINTR) {
                }
            }
        }
        sigprocmask(SIG_SETMASK, &old_, nullptr);
        errno = saved;
    }
    WriteSignalBlock(const WriteSignalBlock &) = delete;
    WriteSignalBlock &operator=(const WriteSignalBlock &) = delete;

private:
    static constexpr int kSignals[] = {SIGXFSZ, SIGPIPE};
    sigset_t blocked_set_{}, old_{}, was_pending_{};
    bool blocked_ = false;
};

constexpr int kTempAttempts = 16;

std::string directory_of(const std::string &path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

// A symlink that we follow to a device or FIFO: no one but root or us can have put it there or can
// swap it (its directory is ours or root's, and not writable by others unless sticky).
bool trusted_symlink(const std::string &path, const struct stat &link) {
    uid_t me = geteuid();
    if (link.st_uid != 0 && link.st_uid != me) return false;
    struct stat dir {};
    if (lstat(directory_of(path).c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) return false;
    if (dir.st_uid != 0 && dir.st_uid != me) return false;
    return (dir.st_mode & (S_IWGRP | S_IWOTH)) == 0 || (dir.st_mode & S_ISVTX) != 0;
}

const char *refused_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISBLK(mode)) return "a block device";
    return nullptr;
}

bool in_place_kind(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode); }

// How the target is written.
enum class Plan { Replace, InPlace, InPlaceFollowing, Refuse };

Plan plan_for(const std::string &path, std::string *refusal) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return Plan::Replace; // absent (or unreachable: the create says why)
    if (S_ISLNK(st.st_mode)) {
        struct stat target {};
        if (!trusted_symlink(path, st) || stat(path.c_str(), &target) != 0) return Plan::Replace;
        if (in_place_kind(target.st_mode)) return Plan::InPlaceFollowing;
        if (const char *kind = refused_kind(target.st_mode)) {
            *refusal = path + " leads to " + kind + ": not written";
            return Plan::Refuse;
        }
        return Plan::Replace;
    }
    if (in_place_kind(st.st_mode)) return Plan::InPlace;
    if (const char *kind = refused_kind(st.st_mode)) {
        *refusal = path + " is " + kind + ": not written";
        return Plan::Refuse;
    }
    return Plan::Replace;
}

// Unlinks the temporary file only while it is still the one we created.
void remove_temporary(const std::string &tmp, const struct stat &ours) {
    struct stat now {};
    if (lstat(tmp.c_str(), &now) == 0 && S_ISREG(now.st_mode) && now.st_dev == ours.st_dev &&
        now.st_ino == ours.st_ino)
        unlink(tmp.c_str());
}

// Opens a character device or FIFO for writing in place. 1: opened (*fd), 0: the target turned out
// to be a regular file (replace it instead), -1: failed (*error set).
int open_in_place(const std::string &path, bool follow, const OutputFileOptions &options, int *fd,
                  std::string *error) {
    int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
    struct stat st {};
    bool fifo = stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
    if (fifo && options.fifo_without_waiting) flags |= O_NONBLOCK;
    int f = -1;
    do {
        f = open(path.c_str(), flags);
    } while (f < 0 && errno == EINTR);
    if (f < 0) {
        if (errno == ELOOP && !follow) return 0; // a symlink now: it is replaced, not followed
        *error = errno == ENXIO && fifo ? path + ": a FIFO with no reader: not written"
                                        : "cannot open " + path + ": " + strerror(errno);
        return -1;
    }
    if (fstat(f, &st) != 0 || !in_place_kind(st.st_mode)) {
        int err = errno;
        close(f);
        if (S_ISREG(st.st_mode)) return 0;
        const char *kind = refused_kind(st.st_mode);
        *error = kind ? path + " is " + kind + ": not written" : "cannot open " + path + ": " + strerror(err);
        return -1;
    }
    if (flags & O_NONBLOCK) fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
    *fd = f;
    return 1;
}

} // namespace

std::string temporary_name_for(const std::string &path, long pid, int attempt) {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmp = dir + "." + base + ".tmp." + std::to_string(pid);
    if (attempt > 0) tmp += "." + std::to_string(attempt) + "-" + std::to_string(monotonic_ns() % 1000000007ull);
    return tmp;
}

std::string output_refusal(const std::string &path) {
    std::string refusal;
    return plan_for(path, &refusal) == Plan::Refuse ? refusal : std::string();
}

bool output_written_in_place(const std::string &path) {
    if (path == "-") return true;
    std::string refusal;
    Plan plan = plan_for(path, &refusal);
    return plan == Plan::InPlace || plan == Plan::InPlaceFollowing;
}

bool write_output_file(const std::string &path, bool (*fill)(int, void *, std::string *), void *ctx,
                       std::string *error, const OutputFileOptions &options, WrittenFile *written) {
    int saved_errno = errno;
    WriteSignalBlock no_sigxfsz_sigpipe;
    WrittenFile result;
    auto done = [&](bool ok) {
        if (ok && written) *written = result;
        errno = saved_errno;
        return ok;
    };
    if (options.dash_is_stdout && path == "-") return done(fill(STDOUT_FILENO, ctx, error));

    Plan plan = plan_for(path, error);
    if (plan == Plan::Refuse) return done(false);
    if (plan == Plan::InPlace || plan == Plan::InPlaceFollowing) {
        int fd = -1;
        int opened = open_in_place(path, plan == Plan::InPlaceFollowing, options, &fd, error);
        if (opened < 0) return done(false);
        if (opened > 0) {
            bool ok = fill(fd, ctx, error);
            if (close(fd) != 0 && ok && errno != EINTR) {
                *error = "cannot write " + path + ": " + strerror(errno);
                ok = false;
            }
            return done(ok);
        }
    }

    // Messages name the target, the path the user knows; the temporary name is ours alone.
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
        *error = "cannot write " + path + ": " + strerror(errno);
        return done(false);
    }
    struct stat ours {};
    if (fstat(fd, &ours) != 0) {
        *error = "cannot write " + path + ": " + strerror(errno);
        close(fd);
        unlink(tmp.c_str()); // just created with O_EXCL, in the same call
        return done(false);
    }
    if (options.mode != 0600 && fchmod(fd, static_cast<mode_t>(options.mode)) != 0) {
        *error = "cannot set the mode of " + path + ": " + strerror(errno);
        close(fd);
        remove_temporary(tmp, ours);
        return done(false);
    }
    bool ok = fill(fd, ctx, error);
    if (close(fd) != 0 && ok) {
        *error = "cannot write " + path + ": " + strerror(errno);
        ok = false;
    }
    if (ok) {
        // Never renamed over a non-regular file that appeared at the target meanwhile.
        struct stat now {};
        if (lstat(path.c_str(), &now) == 0 && !S_ISREG(now.st_mode) && !S_ISLNK(now.st_mode)) {
            const char *kind = refused_kind(now.st_mode);
            *error = path + " is " + (kind ? kind : S_ISFIFO(now.st_mode) ? "a FIFO" : "a character device") +
                     " now: not replaced";
            ok = false;
        }
    }
    if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
        *error = "cannot write " + path + ": " + strerror(errno);
        ok = false;
    }
    if (!ok) {
        remove_temporary(tmp, ours);
        return done(false);
    }
    result.created = true;
    result.dev = static_cast<uint64_t>(ours.st_dev);
    result.ino = static_cast<uint64_t>(ours.st_ino);
    return done(true);
}

bool write_file_atomically(const std::string &path, bool (*fill)(int, void *, std::string *), void *ctx,
                           std::string *error, unsigned mode) {
    OutputFileOptions options;
    options.mode = mode;
    options.fifo_without_waiting = true;
    options.dash_is_stdout = true;
    return write_output_file(path, fill, ctx, error, options);
}

bool remove_written_file(const std::string &path, const WrittenFile &written) {
    if (!written.created) return false;
    int saved = errno;
    struct stat st {};
    bool same = lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_dev) == written.dev &&
                uint64_t(st.st_ino) == written.ino;
    bool removed = same && unlink(path.c_str()) == 0;
    errno = saved;
    return removed;
}

} // namespace vramtrace
