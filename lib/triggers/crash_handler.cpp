// The fatal-signal handler (rules in crash_handler.h). Everything the handler touches was prepared
// at install time or is a system call that POSIX lists as async-signal-safe (open, write, close,
// rename, unlink, sigaction, pthread_sigmask, raise/tgkill, nanosleep), plus mmap/munmap in the
// writer (plain system calls on Linux, no user-space lock).
#include "triggers/crash_handler.h"

#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <string>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/process_identity.h"
#include "core/thread_state.h"
#include "core/tracker.h"
#include "dump/atomic_file.h"
#include "dump/output_path.h"
#include "triggers/crash_writer.h"
#include "triggers/prometheus.h"
#include "triggers/termination_signals.h"

namespace vramtrace::crash {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
constexpr const char *kSignalNames[] = {"SIGSEGV", "SIGBUS", "SIGABRT", "SIGFPE", "SIGILL"};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];
constexpr size_t kPathBytes = 4096;
// How long a thread that crashes while another one writes the snapshot waits for it.
constexpr int kWaitForWriterMs = 10000;

struct sigaction g_previous[kSignalCount];
bool g_installed[kSignalCount];

// Prepared at install, and again in a forked child (its pid is in the name).
char g_path[kPathBytes];
char g_temp[2][kPathBytes + 64];
pid_t g_path_pid = 0;
// The output is a character device or FIFO: written in place, no temporary file, no rename.
bool g_in_place = false;
CrashProcess g_process;

enum : int { kIdle, kWriting, kDone };
std::atomic<int> g_state{kIdle};
std::atomic<uint32_t> g_writer_tid{0};
sigjmp_buf g_abandon;
volatile sig_atomic_t g_abandon_armed = 0;
int g_fd = -1;
const char *g_open_temp = nullptr;

int signal_index(int sig) {
    for (int i = 0; i < kSignalCount; ++i)
        if (kSignals[i] == sig) return i;
    return -1;
}

uint32_t thread_id() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

bool copy_string(char *dst, size_t cap, const std::string &src) {
    if (src.size() >= cap) return false;
    memcpy(dst, src.data(), src.size());
    dst[src.size()] = 0;
    return true;
}

// The output path and the two temporary names (atomic_file.h's first two), for this pid. Called at
// install and in a forked child (glibc's malloc is usable there: it resets its locks at fork).
void prepare_paths() {
    g_path_pid = 0;
    std::string path = trigger_output_path("crash", -1);
    pid_t pid = getpid();
    if (!copy_string(g_path, sizeof g_path, path) ||
        !copy_string(g_temp[0], sizeof g_temp[0], temporary_name_for(path, pid, 0)) ||
        !copy_string(g_temp[1], sizeof g_temp[1], temporary_name_for(path, pid, 1))) {
        log_warning("the crash snapshot path is longer than %zu bytes; no crash snapshot will be written",
                    kPathBytes - 1);
        return;
    }
    g_in_place = output_written_in_place(path);
    g_path_pid = pid;
}

void after_fork_in_child() {
    g_state.store(kIdle, std::memory_order_relaxed);
    g_writer_tid.store(0, std::memory_order_relaxed);
    g_abandon_armed = 0;
    g_fd = -1;
    bool any = false;
    for (bool installed : g_installed) any = any || installed;
    if (any) prepare_paths();
}

// ---- messages: one line on stderr, assembled in a static buffer ----
char g_line[kPathBytes + 256];
size_t g_line_len = 0;
void line_add(const char *s) {
    while (*s && g_line_len + 2 < sizeof g_line) g_line[g_line_len++] = *s++;
}
void line_add_u64(uint64_t v) {
    char tmp[24];
    size_t i = sizeof tmp;
    tmp[--i] = 0;
    do {
        tmp[--i] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v);
    line_add(tmp + i);
}
// strerror may translate (gettext: malloc, locks): a few names by hand, else the number.
void line_add_errno(int err) {
    switch (err) {
    case ENOSPC: return line_add("no space left on device");
    case EDQUOT: return line_add("disk quota exceeded");
    case EACCES: return line_add("permission denied");
    case ENOENT: return line_add("no such file or directory");
    case EROFS: return line_add("read-only file system");
    case EFBIG: return line_add("file too large");
    case EIO: return line_add("input/output error");
    case ENOMEM: return line_add("out of memory");
    case EEXIST: return line_add("file exists");
    default: line_add("errno "); line_add_u64(uint64_t(err));
    }
}
void line_start(int i) {
    g_line_len = 0;
    line_add("vramtrace: ");
    line_add(kSignalNames[i]);
    line_add(": ");
}
void line_emit() {
    g_line[g_line_len++] = '\n';
    for (size_t off = 0; off < g_line_len;) {
        ssize_t n = ::write(STDERR_FILENO, g_line + off, g_line_len - off);
        if (n > 0) off += size_t(n);
        else if (!(n < 0 && errno == EINTR)) break;
    }
}

// ---- the snapshot ----

// "-" (standard output), or a character device or FIFO at the output (decided at install, outside
// the handler), is written in place, without waiting for a FIFO's reader; -1 when the path holds
// something else now.
int open_in_place() {
    if (g_path[0] == '-' && g_path[1] == 0) return ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3); // "-": stdout
    int fd = ::open(g_path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        ::close(fd);
        errno = EEXIST;
        return -1;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

// Whether the rename may replace what is at the output now: nothing, a regular file or a symlink,
// never a device, FIFO, socket or directory.
bool may_replace_output() {
    struct stat st {};
    return ::lstat(g_path, &st) != 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode);
}

int open_temp() {
    if (g_in_place) {
        g_open_temp = nullptr;
        return open_in_place();
    }
    for (const char *name : g_temp) {
        int fd = ::open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            g_open_temp = name;
            return fd;
        }
        if (errno != EEXIST) return -1;
    }
    return -1;
}

void write_snapshot(const Tracker &t, int i) {
    // SIGXFSZ (file size limit) would end the process by another signal: ignore it while writing,
    // so the write fails with EFBIG instead.
    struct sigaction ignore {}, saved_xfsz {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    bool xfsz_saved = triggers::real_sigaction(SIGXFSZ, &ignore, &saved_xfsz) == 0;

    sigset_t faults, before;
    sigemptyset(&faults);
    for (int s : kSignals) sigaddset(&faults, s);
    pthread_sigmask(SIG_BLOCK, nullptr, &before);
    if (sigsetjmp(g_abandon, 1) == 0) {
        // A fault while the fault signals are blocked would end the process at once, by the new
        // signal: unblock them, so that a second fault comes back here (siglongjmp) instead.
        pthread_sigmask(SIG_UNBLOCK, &faults, nullptr);
        g_abandon_armed = 1;
        g_fd = open_temp();
        if (g_fd < 0) {
            int err = errno;
            g_abandon_armed = 0;
            line_start(i);
            line_add("crash snapshot not written: cannot create ");
            line_add(g_in_place ? g_path : g_temp[0]);
            line_add(": ");
            line_add_errno(err);
            line_emit();
        } else {
            CrashWriteResult r = write_crash_snapshot(t, g_process, kSignalNames[i], g_fd);
            g_abandon_armed = 0;
            bool ok = r.written && ::close(g_fd) == 0;
            if (!r.written) ::close(g_fd);
            g_fd = -1;
            int err = r.error_number ? r.error_number : errno;
            if (ok && g_open_temp && !may_replace_output()) ok = false, err = EEXIST;
            if (ok && g_open_temp && ::rename(g_open_temp, g_path) != 0) ok = false, err = errno;
            line_start(i);
            if (ok) {
                line_add("crash snapshot written to ");
                line_add(g_path);
                line_add(" (");
                line_add_u64(r.allocations);
                line_add(" live allocations");
                if (ReentrancyGuard::inside()) line_add("; the crashing thread was inside an intercepted CUDA call");
                line_add(")");
            } else {
                if (g_open_temp) ::unlink(g_open_temp);
                line_add("crash snapshot not written: ");
                line_add_errno(err);
            }
            line_emit();
        }
    } else {
        // Back from a second fault inside the writer.
        if (g_fd >= 0) ::close(g_fd);
        if (g_open_temp) ::unlink(g_open_temp);
        g_fd = -1;
        line_start(i);
        line_add("crash snapshot abandoned: a second fault while writing it");
        line_emit();
    }
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (xfsz_saved) triggers::real_sigaction(SIGXFSZ, &saved_xfsz, nullptr);
}

void wait_for_writer() {
    for (int ms = 0; ms < kWaitForWriterMs && g_state.load(std::memory_order_acquire) == kWriting; ms += 10) {
        timespec ts{0, 10 * 1000 * 1000};
        nanosleep(&ts, nullptr);
    }
}

void dump_once(int i, uint32_t tid) {
    if (!cuda_seen()) return;
    Tracker *t = tracker(); // ready whenever cuda_seen(): no initialisation happens here
    if (t == nullptr) return;
    int expected = kIdle;
    if (!g_state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) {
        if (expected == kWriting && g_writer_tid.load(std::memory_order_acquire) != tid) wait_for_writer();
        return;
    }
    g_writer_tid.store(tid, std::memory_order_release);
    // First the textfile's last reading (a few writes): it is what fleet alerts read.
    triggers::write_prometheus_textfile_from_signal();
    if (g_path_pid != 0 && g_path_pid == getpid()) {
        write_snapshot(*t, i);
    } else {
        line_start(i);
        line_add("crash snapshot not written: no output path for this process");
        line_emit();
    }
    g_state.store(kDone, std::memory_order_release);
}

// ---- what happens to the signal afterwards ----

// A fault raised by the kernel for the instruction that was running (not sent by kill/raise/abort):
// returning from the handler runs that instruction again, which raises it again.
bool kernel_fault(int sig, const siginfo_t *info) { return info != nullptr && info->si_code > 0 && sig != SIGABRT; }

void reset_to_default(int sig) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
}

void end_by_default(int sig, const siginfo_t *info) {
    reset_to_default(sig);
    if (kernel_fault(sig, info)) return; // the instruction faults again, now with the default action
    // Sent by a process: send it again to this thread. It is blocked while this handler runs, so it
    // is delivered, with the default action, when the handler returns.
    syscall(SYS_tgkill, getpid(), thread_id(), sig);
}

void pass_on(int sig, int i, siginfo_t *info, void *context) {
    const struct sigaction &prev = g_previous[i];
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_DFL) return end_by_default(sig, info);
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN) {
        // Not installed over SIG_IGN; should it happen, do what the kernel does for an ignored signal.
        if (kernel_fault(sig, info)) reset_to_default(sig);
        return;
    }
    // As the kernel would run the previous handler: its mask, SA_NODEFER and SA_RESETHAND.
    if (prev.sa_flags & SA_RESETHAND) reset_to_default(sig);
    sigset_t mask;
    if (context != nullptr) mask = static_cast<ucontext_t *>(context)->uc_sigmask;
    else pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    for (int s = 1; s < NSIG; ++s)
        if (sigismember(&prev.sa_mask, s) == 1) sigaddset(&mask, s);
    if (!(prev.sa_flags & SA_NODEFER)) sigaddset(&mask, sig);
    pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    if (prev.sa_flags & SA_SIGINFO) prev.sa_sigaction(sig, info, context);
    else prev.sa_handler(sig);
    // Returning restores the interrupted mask (the kernel's sigreturn).
}

void on_fatal_signal(int sig, siginfo_t *info, void *context) {
    const int saved_errno = errno;
    const int i = signal_index(sig);
    if (i < 0) return;
    const uint32_t tid = thread_id();
    if (g_state.load(std::memory_order_acquire) == kWriting && g_writer_tid.load(std::memory_order_acquire) == tid &&
        g_abandon_armed) {
        g_abandon_armed = 0;
        siglongjmp(g_abandon, 1); // a fault inside our own writer: give the snapshot up
    }
    // A previous handler may be one that recovers (we cannot know): the snapshot is written before
    // it runs all the same. Previous SIG_DFL always ends the process.
    dump_once(i, tid);
    pass_on(sig, i, info, context);
    errno = saved_errno;
}

} // namespace

void install_crash_handlers() {
    if (!config().crash_dump || tracker() == nullptr) return;
    g_process.host = host_name();
    g_process.rank = launcher_rank();
    g_process.page_size = getauxval(AT_PAGESZ) ? getauxval(AT_PAGESZ) : 4096;
    g_process.stack_depth = config().stack_depth;
    prepare_paths();
    static bool atfork_registered = false;
    if (!atfork_registered) {
        atfork_registered = true;
        pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    }
    for (int i = 0; i < kSignalCount; ++i) {
        if (g_installed[i]) continue;
        struct sigaction current {};
        if (sigaction(kSignals[i], nullptr, &current) != 0) continue;
        if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
        struct sigaction ours {};
        ours.sa_sigaction = &on_fatal_signal;
        ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&ours.sa_mask);
        // Filled before ours is in place, so a signal on another thread right after the swap
        // already finds the previous action (the swap's own copy is the same, barring a race with
        // another sigaction of this signal).
        g_previous[i] = current;
        if (sigaction(kSignals[i], &ours, &g_previous[i]) == 0) g_installed[i] = true;
    }
    log_debug("crash snapshots: handlers installed; a crash writes %s", g_path);
}

} // namespace vramtrace::crash
