#include "commands/run_verdict.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapshot/snapshot_model.h"
#include "report/text_format.h"

namespace vramtrace::cli {
namespace {

// One note: its lines as "key value" pairs (loaded.PID holds one bare line, the command name).
struct Note {
    std::map<std::string, std::string> values;
    std::string first_line;
};

// Each kind's notes by pid. Notes are small files the library wrote; larger ones are not ours.
std::map<std::string, std::map<long, Note>> read_notes(const std::string &dir) {
    std::map<std::string, std::map<long, Note>> notes;
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr) return notes;
    while (dirent *e = ::readdir(d)) {
        std::string_view name = e->d_name;
        size_t dot = name.find('.');
        if (dot == std::string_view::npos) continue;
        char *end = nullptr;
        std::string pid_text(name.substr(dot + 1));
        long pid = std::strtol(pid_text.c_str(), &end, 10);
        if (pid_text.empty() || *end != 0) continue;
        int fd = ::openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        char buf[8192];
        ssize_t n = ::read(fd, buf, sizeof buf);
        ::close(fd);
        if (n < 0 || size_t(n) == sizeof buf) continue;
        Note note;
        std::string_view text(buf, size_t(n));
        bool first = true;
        while (!text.empty()) {
            size_t nl = text.find('\n');
            std::string_view line = text.substr(0, nl);
            text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
            if (first) note.first_line = std::string(line), first = false;
            size_t space = line.find(' ');
            if (space != std::string_view::npos)
                note.values[std::string(line.substr(0, space))] = std::string(line.substr(space + 1));
        }
        notes[std::string(name.substr(0, dot))][pid] = std::move(note);
    }
    ::closedir(d);
    return notes;
}

std::string signal_text(int sig) {
    const char *abbrev = ::sigabbrev_np(sig);
    return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string base_name(const char *path) {
    const char *slash = std::strrchr(path, '/');
    return slash != nullptr ? slash + 1 : path;
}

std::string processes(size_t n) { return std::to_string(n) + (n == 1 ? " process" : " processes"); }

bool exists(const std::string &path) {
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string device_name(const std::string &device) {
    if (device == "-1") return "host";
    return "cuda:" + device;
}

} // namespace

std::string make_notes_dir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/vramtrace-run-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) return {};
    return pattern; // mkdtemp makes it 0700
}

void remove_notes_dir(const std::string &dir) {
    if (dir.empty()) return;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (dirent *e = ::readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
                ::unlinkat(dirfd(d), e->d_name, 0);
        ::closedir(d);
    }
    ::rmdir(dir.c_str());
}

bool take_signal_note(const std::string &dir, pid_t pid) {
    if (dir.empty()) return false;
    std::string path = dir + "/signal." + std::to_string(pid);
    return ::unlink(path.c_str()) == 0;
}

std::string run_verdict(const std::string &dir, pid_t pid, const char *program, int status) {
    auto notes = read_notes(dir);
    const auto &loaded = notes["loaded"];
    const auto &cuda = notes["cuda"];
    const auto &reports = notes["report"];
    const std::string name = base_name(program);
    const bool killed = WIFSIGNALED(status);
    const std::string ended = killed ? "; " + name + " was ended by " + signal_text(WTERMSIG(status)) : "";
    if (!reports.empty()) {
        auto main = reports.find(pid);
        const Note &r = main != reports.end() ? main->second : reports.begin()->second;
        std::string text = "wrote " + (r.values.count("written") ? r.values.at("written") : std::string("a report"));
        if (reports.size() > 1) text += " and " + std::to_string(reports.size() - 1) + " more";
        text += " (";
        if (r.values.count("peak") && r.values.count("on")) {
            uint64_t peak = std::strtoull(r.values.at("peak").c_str(), nullptr, 10);
            text += "peak " + report::format_bytes(peak) + " on " + device_name(r.values.at("on")) + "; ";
        }
        text += processes(cuda.size() > reports.size() ? cuda.size() : reports.size()) + " traced)";
        return text + ended;
    }
    if (!cuda.empty()) {
        auto main = cuda.find(pid);
        const Note &c = main != cuda.end() ? main->second : cuda.begin()->second;
        auto value = [&](const char *key) { return c.values.count(key) ? c.values.at(key) : std::string(); };
        if (killed) {
            int sig = WTERMSIG(status);
            bool fatal = sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE || sig == SIGILL;
            if (fatal && exists(value("crash")))
                return name + " crashed (" + signal_text(sig) + "); crash snapshot: " + value("crash");
            std::string text = name + " was killed by " + signal_text(sig) + " before it could write";
            if (exists(value("periodic"))) return text + "; last periodic snapshot: " + value("periodic");
            return text + " (set VRAMTRACE_PERIOD=30 to keep a periodic snapshot)";
        }
        return name + " used CUDA but wrote no report (see the warnings above)";
    }
    size_t children = loaded.size() - (loaded.count(pid) ? 1 : 0);
    std::string text = "no CUDA allocation was seen in " + name;
    if (children > 0) text += " and its " + std::to_string(children) + (children == 1 ? " child process" : " child processes");
    text += ": nothing to report";
    const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (loaded.empty())
        text += " (the library was not loaded: a set-user-ID program or a static binary ignores LD_PRELOAD)";
    else if (visible != nullptr && *visible == 0)
        text += " (CUDA_VISIBLE_DEVICES is empty, so the program sees no GPU)";
    return text + ended;
}

} // namespace vramtrace::cli
