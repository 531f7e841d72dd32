#include "input/live_client.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "live/protocol.h"
#include "live/socket_dir.h"
#include "report/text_safety.h"

namespace vramtrace::cli {
namespace {

uint64_t now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

// A connected socket, or -1 with errno.
int connect_to(const std::string &path) {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

// Whether a socket is left by a process that is gone: its pid does not exist, or nothing listens.
bool stale(const LiveEndpoint &e) {
    if (kill(e.pid, 0) != 0 && errno == ESRCH) return true;
    int fd = connect_to(e.socket);
    if (fd >= 0) {
        close(fd);
        return false;
    }
    return errno == ECONNREFUSED;
}

// The uid of the process at the other end of a connected socket (the one that called listen), or
// false with errno.
bool peer_uid(int fd, uid_t *uid) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
    *uid = cred.uid;
    return true;
}

} // namespace

bool peer_uid_allowed(uid_t peer, uid_t self) { return peer == 0 || peer == self; }

std::vector<LiveEndpoint> find_live_processes(std::vector<std::string> *warnings) {
    std::vector<LiveEndpoint> out;
    std::string dir = live::socket_directory();
    std::string why;
    if (access(dir.c_str(), F_OK) != 0 && errno == ENOENT) return out; // nobody served yet
    if (!live::check_directory(dir, false, &why)) {
        warnings->push_back(why);
        return out;
    }
    DIR *d = opendir(dir.c_str());
    if (d == nullptr) return out;
    while (dirent *entry = readdir(d)) {
        pid_t pid = live::pid_of_socket_name(entry->d_name);
        if (pid == 0) continue;
        LiveEndpoint e{pid, dir + "/" + entry->d_name};
        if (!live::check_socket(e.socket, &why)) {
            if (!why.empty()) warnings->push_back(why);
            continue;
        }
        if (stale(e)) {
            unlink(e.socket.c_str());
            continue;
        }
        out.push_back(std::move(e));
    }
    closedir(d);
    std::sort(out.begin(), out.end(), [](const LiveEndpoint &a, const LiveEndpoint &b) { return a.pid < b.pid; });
    return out;
}

namespace {
// Why a pid has no socket, in the words that fit: gone (or never there), or running untraced.
std::string no_server_text(pid_t pid, const std::string &socket) {
    const std::string p = "process " + std::to_string(pid);
    if (kill(pid, 0) != 0 && errno == ESRCH) return "no " + p + " on this host (it has exited, or never ran)";
    std::string name;
    if (FILE *f = fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "r")) {
        char buf[64] = {};
        if (fgets(buf, sizeof buf, f) != nullptr) name = buf;
        fclose(f);
        if (!name.empty() && name.back() == '\n') name.pop_back();
    }
    return p + (name.empty() ? "" : " (" + report::one_line(name) + ")") +
           " runs but is not traced: no live view (no " + socket +
           "; a traced process serves one from its first CUDA allocation unless VRAMTRACE_LIVE=0)";
}
} // namespace

bool live_endpoint_of(pid_t pid, LiveEndpoint *out, std::string *error) {
    std::string dir = live::socket_directory();
    // A pid that is not running has nothing to serve, whatever the directory holds.
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        *error = no_server_text(pid, live::socket_path(dir, pid));
        return false;
    }
    // No directory: no traced process of this user has served yet.
    struct stat st{};
    if (lstat(dir.c_str(), &st) != 0 && errno == ENOENT) {
        *error = no_server_text(pid, live::socket_path(dir, pid));
        return false;
    }
    if (!live::check_directory(dir, false, error)) return false;
    out->pid = pid;
    out->socket = live::socket_path(dir, pid);
    if (!live::check_socket(out->socket, error)) {
        if (error->empty()) *error = no_server_text(pid, out->socket);
        return false;
    }
    if (stale(*out)) {
        unlink(out->socket.c_str());
        if (kill(pid, 0) != 0 && errno == ESRCH)
            *error = "process " + std::to_string(pid) + " is gone (its socket " + out->socket + " was removed)";
        else
            *error = "process " + std::to_string(pid) + " serves no live view any more (nothing listens on " +
                     out->socket + "; removed)";
        return false;
    }
    return true;
}

bool live_request(const LiveEndpoint &endpoint, const char *request, std::string *answer, std::string *error,
                  int timeout_ms, size_t max_bytes) {
    answer->clear();
    int fd = connect_to(endpoint.socket);
    if (fd < 0) {
        *error = endpoint.socket + ": cannot connect (" + strerror(errno) + ")";
        return false;
    }
    // The path checks say who made the socket file, not who listens on it: the process that
    // answers must be root or this user too, as the server accepts only this user's viewers.
    uid_t peer = 0;
    if (!peer_uid(fd, &peer)) {
        *error = endpoint.socket + ": cannot tell who serves it (" + strerror(errno) + "); not used";
        close(fd);
        return false;
    }
    if (!peer_uid_allowed(peer, getuid())) {
        *error = endpoint.socket + ": served by a process of uid " + std::to_string(peer) + ", neither root nor uid " +
                 std::to_string(getuid()) + "; not used";
        close(fd);
        return false;
    }
    const uint64_t deadline = now_ms() + uint64_t(timeout_ms);
    size_t len = strlen(request);
    if (send(fd, request, len, MSG_NOSIGNAL) != ssize_t(len)) {
        *error = endpoint.socket + ": cannot send the request (" + strerror(errno) + ")";
        close(fd);
        return false;
    }
    char buf[65536];
    for (;;) {
        uint64_t now = now_ms();
        if (now >= deadline) {
            *error = endpoint.socket + ": no complete answer within " + std::to_string(timeout_ms) + " ms";
            close(fd);
            return false;
        }
        pollfd p{fd, POLLIN, 0};
        int rc = poll(&p, 1, int(deadline - now));
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) continue;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            *error = endpoint.socket + ": " + strerror(errno);
            close(fd);
            return false;
        }
        if (n == 0) break;
        if (answer->size() + size_t(n) > max_bytes) {
            *error = endpoint.socket + ": the answer is longer than " + std::to_string(max_bytes) +
                     " bytes, the most a reading holds; refused";
            answer->clear();
            answer->shrink_to_fit();
            close(fd);
            return false;
        }
        answer->append(buf, size_t(n));
    }
    close(fd);
    if (answer->empty()) {
        *error = endpoint.socket + ": the process closed the connection without an answer";
        return false;
    }
    return true;
}

} // namespace vramtrace::cli
