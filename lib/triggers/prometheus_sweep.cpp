#include "triggers/prometheus_sweep.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump/atomic_file.h"
#include "triggers/prometheus_text.h"

namespace vramtrace::triggers {
namespace {

// Reads at most `limit` bytes; false on a read error or when there is more.
bool read_all(int fd, size_t limit, std::string *out) {
    char buf[8192];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) return true;
        if (out->size() + size_t(n) > limit) return false;
        out->append(buf, size_t(n));
    }
}

bool read_small_file(const char *path, std::string *out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = read_all(fd, 4096, out);
    close(fd);
    return ok;
}

// /proc/PID/stat field 22 (starttime, clock ticks after boot); the command name (field 2) may hold
// spaces and parentheses, so the fields are counted from the last ')'.
enum class StatRead { Ok, Gone, Unknown };
StatRead start_ticks_of(const std::string &stat_path, uint64_t *ticks) {
    std::string text;
    int fd = open(stat_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || errno == ESRCH ? StatRead::Gone : StatRead::Unknown;
    bool ok = read_all(fd, 4096, &text);
    close(fd);
    if (!ok) return errno == ESRCH ? StatRead::Gone : StatRead::Unknown;
    size_t p = text.rfind(')');
    if (p == std::string::npos) return StatRead::Unknown;
    int field = 2;
    for (; p < text.size() && field < 22; ++p)
        if (text[p] == ' ') ++field;
    if (field != 22) return StatRead::Unknown;
    *ticks = strtoull(text.c_str() + p, nullptr, 10);
    return StatRead::Ok;
}

// (lstat of the path, not fstatat: the library's glibc floor has lstat: lib/start/glibc_compat.c.)
bool same_file(const std::string &path, const struct stat &st) {
    struct stat now {};
    return lstat(path.c_str(), &now) == 0 && S_ISREG(now.st_mode) && now.st_dev == st.st_dev && now.st_ino == st.st_ino;
}

// One directory entry: marked and/or removed as the rules say.
void sweep_one(int dir, const std::string &dir_path, const char *name, const SweepOptions &o, ProcessRunning running,
               SweepResult &result) {
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return;
    struct stat st {};
    std::string text;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
              size_t(st.st_size) <= kSweepMaxFileBytes && read_all(fd, kSweepMaxFileBytes, &text);
    close(fd);
    PrometheusFileHeader h;
    if (!ok || !parse_prometheus_header(text, &h) || h.host != o.host) return;
    if (h.ended_ms == 0 && running(h.pid, h.start_ticks, h.boot_id)) return;
    const std::string path = dir_path + "/" + name;
    uint64_t ended = h.ended_ms;
    if (ended == 0) {
        // Gone without a last word: its last update is the latest moment it is known to have run.
        ended = h.updated_ms != 0 ? h.updated_ms : 1;
        std::string marked;
        if (!mark_prometheus_ended(text, ended, &marked) || !same_file(path, st)) return;
        OutputFileOptions options;
        options.mode = 0644;
        options.fifo_without_waiting = true;
        std::string error;
        WrittenFile written;
        if (!write_output_file(path, &fill_from_string, &marked, &error, options, &written) || !written.created) return;
        ++result.marked;
        st.st_dev = dev_t(written.dev);
        st.st_ino = ino_t(written.ino);
    }
    if (o.now_ms >= ended && o.now_ms - ended >= o.keep_ms) {
        WrittenFile ours;
        ours.created = true;
        ours.dev = uint64_t(st.st_dev);
        ours.ino = uint64_t(st.st_ino);
        if (remove_written_file(path, ours)) ++result.removed;
    }
}

constexpr size_t kMaxPlaceholders = 6;

bool is_placeholder(const char *p) { return p[0] == '%' && (p[1] == 'p' || p[1] == 'h' || p[1] == 'r'); }

// A placeholder matches one or more characters other than '/'; "%%" matches '%'.
bool glob_match(const char *n, const char *p) {
    if (*p == 0) return *n == 0;
    if (is_placeholder(p)) {
        for (size_t k = 1; n[k - 1] != 0 && n[k - 1] != '/'; ++k)
            if (glob_match(n + k, p + 2)) return true;
        return false;
    }
    if (p[0] == '%' && p[1] == '%') return *n == '%' && glob_match(n + 1, p + 2);
    return *n == *p && glob_match(n + 1, p + 1);
}

} // namespace

bool process_running(long pid, uint64_t start_ticks, const std::string &boot_id) {
    if (!boot_id.empty()) {
        std::string now;
        if (read_small_file("/proc/sys/kernel/random/boot_id", &now)) {
            while (!now.empty() && (now.back() == '\n' || now.back() == ' ')) now.pop_back();
            if (now != boot_id) return false; // the host was rebooted since
        }
    }
    uint64_t ticks = 0;
    switch (start_ticks_of("/proc/" + std::to_string(pid) + "/stat", &ticks)) {
    case StatRead::Gone: return false;
    case StatRead::Unknown: return true;
    case StatRead::Ok: return ticks == start_ticks;
    }
    return true;
}

bool textfile_name_matches(const std::string &name, const std::string &pattern) {
    size_t placeholders = 0;
    for (size_t i = 0; i + 1 < pattern.size(); ++i)
        if (pattern[i] == '%' && (pattern[i + 1] == 'p' || pattern[i + 1] == 'h' || pattern[i + 1] == 'r')) ++placeholders;
    if (placeholders > kMaxPlaceholders || name.size() > 255) return false; // bounds the backtracking
    return glob_match(name.c_str(), pattern.c_str());
}

SweepResult sweep_textfile_directory(const SweepOptions &o, ProcessRunning running) {
    SweepResult result;
    int dir = open(o.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return result;
    DIR *d = fdopendir(dup(dir));
    if (d == nullptr) {
        close(dir);
        return result;
    }
    size_t seen = 0;
    while (dirent *e = readdir(d)) {
        if (++seen > kSweepMaxEntries) break;
        if (e->d_name[0] == '.') continue; // ".", "..", and the writers' temporary files
        if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
        if (!textfile_name_matches(e->d_name, o.name_pattern)) continue;
        sweep_one(dir, o.directory, e->d_name, o, running, result);
    }
    closedir(d);
    close(dir);
    return result;
}

uint64_t own_start_ticks() {
    uint64_t ticks = 0;
    if (start_ticks_of("/proc/self/stat", &ticks) != StatRead::Ok) return 0;
    return ticks;
}

std::string own_boot_id() {
    std::string id;
    if (!read_small_file("/proc/sys/kernel/random/boot_id", &id)) return "";
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    return id;
}

} // namespace vramtrace::triggers
