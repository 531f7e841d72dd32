#include "dump/run_notes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "dump/output_path.h"

namespace vramtrace {
namespace {

// The notes directory, opened only when it is a directory of this user that nobody else can enter.
int open_notes_dir() {
    const char *dir = config().run_notes;
    if (dir == nullptr) return -1;
    int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void write_note(const char *kind, const std::string &text) {
    const int saved = errno;
    int dir = open_notes_dir();
    if (dir >= 0) {
        char name[64];
        std::snprintf(name, sizeof name, "%s.%ld", kind, static_cast<long>(::getpid()));
        int fd = ::openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
        if (fd >= 0) {
            ssize_t n = ::write(fd, text.data(), text.size());
            (void)n;
            ::close(fd);
        }
        ::close(dir);
    }
    errno = saved;
}

// "DIR/signal." for note_signal_received, which adds the pid itself (a fork child has its own).
char g_signal_note[4096];
size_t g_signal_note_len = 0;

} // namespace

void note_signal_received(int signo) {
    if (g_signal_note_len == 0) return;
    const int saved = errno;
    char path[sizeof g_signal_note + 24];
    memcpy(path, g_signal_note, g_signal_note_len);
    size_t n = g_signal_note_len;
    char digits[24];
    size_t d = 0;
    for (unsigned long pid = static_cast<unsigned long>(::getpid()); d == 0 || pid != 0; pid /= 10)
        digits[d++] = static_cast<char>('0' + pid % 10);
    while (d > 0) path[n++] = digits[--d];
    path[n] = 0;
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd >= 0) {
        char text[8];
        size_t t = 0;
        if (signo >= 10) text[t++] = static_cast<char>('0' + signo / 10 % 10);
        text[t++] = static_cast<char>('0' + signo % 10);
        text[t++] = '\n';
        ssize_t w = ::write(fd, text, t);
        (void)w;
        ::close(fd);
    }
    errno = saved;
}

void note_library_loaded() {
    if (config().run_notes == nullptr) return;
    int dir = open_notes_dir();
    if (dir < 0) return;
    ::close(dir);
    const char *notes = config().run_notes;
    size_t len = strlen(notes);
    if (len + sizeof "/signal." < sizeof g_signal_note) {
        memcpy(g_signal_note, notes, len);
        memcpy(g_signal_note + len, "/signal.", sizeof "/signal.");
        g_signal_note_len = len + sizeof "/signal." - 1;
    }
    char comm[64] = {0};
    int fd = ::open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = ::read(fd, comm, sizeof comm - 1);
        ::close(fd);
        if (n > 0 && comm[n - 1] == '\n') comm[n - 1] = 0;
    }
    write_note("loaded", std::string(comm) + "\n");
}

void note_first_allocation(bool periodic) {
    if (config().run_notes == nullptr) return;
    std::string text;
    if (periodic) text += "periodic " + trigger_output_path("periodic", -1) + "\n";
    if (config().crash_dump) text += "crash " + trigger_output_path("crash", -1) + "\n";
    write_note("cuda", text);
}

void note_exit_report(const std::string &path, const snapshot::Snapshot &snapshot) {
    if (config().run_notes == nullptr) return;
    const snapshot::DeviceTotals *top = nullptr;
    for (const snapshot::DeviceTotals &d : snapshot.devices)
        if (top == nullptr || d.peak_bytes > top->peak_bytes) top = &d;
    std::string text = "written " + path + "\n";
    if (top != nullptr) text += "peak " + std::to_string(top->peak_bytes) + "\non " + std::to_string(top->device) + "\n";
    if (!snapshot.process.signal.empty()) text += "signal " + snapshot.process.signal + "\n";
    write_note("report", text);
}

} // namespace vramtrace
