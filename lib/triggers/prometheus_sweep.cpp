#include "triggers/prometheus_sweep.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "core/clock.h"
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

// A pattern compiled for glob_match: a placeholder is "one character, then any run of them", so the
// matcher needs only '?'- and '*'-like steps and no recursion.
enum class Step : unsigned char { Literal, AnyOne, AnyRun };
struct PatternStep {
    Step step;
    char literal;
};

std::vector<PatternStep> compile_pattern(const std::string &pattern) {
    std::vector<PatternStep> steps;
    steps.reserve(pattern.size() + 4);
    for (size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        if (c == '%' && i + 1 < pattern.size()) {
            char k = pattern[i + 1];
            if (k == 'p' || k == 'h' || k == 'r') {
                steps.push_back({Step::AnyOne, 0});
                steps.push_back({Step::AnyRun, 0});
                ++i;
                continue;
            }
            if (k == '%') {
                steps.push_back({Step::Literal, '%'});
                ++i;
                continue;
            }
        }
        steps.push_back({Step::Literal, c});
    }
    return steps;
}

// Iterative matching with a restart at the last run step: at most name length x pattern length
// steps, whatever the name (a backtracking matcher is exponential in the placeholders). The name is
// a file name: no '/', at most 255 bytes (name_matches checks both).
bool glob_match(std::string_view name, const std::vector<PatternStep> &steps) {
    size_t n = 0, p = 0;
    size_t run_step = SIZE_MAX, run_from = 0;
    while (n < name.size()) {
        if (p < steps.size() && steps[p].step == Step::AnyRun) {
            run_step = p++;
            run_from = n;
        } else if (p < steps.size() && (steps[p].step == Step::AnyOne || steps[p].literal == name[n])) {
            ++p;
            ++n;
        } else if (run_step != SIZE_MAX) {
            p = run_step + 1;
            n = ++run_from;
        } else {
            return false;
        }
    }
    while (p < steps.size() && steps[p].step == Step::AnyRun) ++p;
    return p == steps.size();
}

bool name_matches(std::string_view name, const std::vector<PatternStep> &steps) {
    // No file name is longer (NAME_MAX); a placeholder never spans a '/'.
    if (name.size() > 255 || name.find('/') != std::string_view::npos) return false;
    return glob_match(name, steps);
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
    return name_matches(name, compile_pattern(pattern));
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
    const std::vector<PatternStep> steps = compile_pattern(o.name_pattern);
    size_t seen = 0;
    while (dirent *e = readdir(d)) {
        if (++seen > kSweepMaxEntries || (o.should_stop != nullptr && o.should_stop()) ||
            (o.deadline_ns != 0 && monotonic_ns() >= o.deadline_ns)) {
            result.cut_short = true;
            break;
        }
        if (e->d_name[0] == '.') continue; // ".", "..", and the writers' temporary files
        if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
        if (!name_matches(e->d_name, steps)) continue;
        std::unique_lock<std::mutex> held;
        if (o.file_lock != nullptr) held = std::unique_lock<std::mutex>(*o.file_lock);
        if (o.should_stop != nullptr && o.should_stop()) {
            result.cut_short = true;
            break;
        }
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
