#include "serve/live_server.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/tracker.h"
#include "dump/dumper.h"
#include "dump/output_path.h"
#include "live/protocol.h"
#include "live/socket_dir.h"
#include "serve/live_reading.h"

namespace vramtrace::serve {
namespace {

constexpr int kMaxClients = 16;

struct Client {
    int fd = -1;
    char request[live::kMaxRequestBytes];
    size_t request_len = 0;
    int answer = -1;        // memfd holding the answer, sent from `sent` to `answer_len`
    off_t sent = 0;
    off_t answer_len = 0;
    uint64_t accepted = 0;  // order of acceptance: the oldest is evicted when all slots are taken
};

std::atomic<int> g_wake_fd{-1};
std::atomic<bool> g_serving{false}; // the socket file is ours to remove at exit
int g_listen_fd = -1;
// The file to remove at exit: plain storage, since the exit path runs after static destructors.
char g_socket_path[sizeof(sockaddr_un::sun_path)];
dev_t g_socket_dev = 0;    // ... and its identity, so that only our own file is removed
ino_t g_socket_ino = 0;
Client g_clients[kMaxClients];
uint64_t g_accept_paused_until_ns = 0; // CLOCK_MONOTONIC; see accept_clients
// The identity of the listening socket and the eventfd: a program that closes every descriptor
// and opens others may have put something of its own under their numbers.
struct FdIdentity {
    dev_t dev = 0;
    ino_t ino = 0;
};
FdIdentity g_listen_id, g_wake_id;

FdIdentity identity_of(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return {};
    return {st.st_dev, st.st_ino};
}
bool still_ours(int fd, const FdIdentity &id) {
    FdIdentity now = identity_of(fd);
    return now.ino != 0 && now.dev == id.dev && now.ino == id.ino;
}
uint64_t g_accepted = 0;
uint64_t g_live_snapshots = 0;

void close_client(Client &c) {
    if (c.fd >= 0) close(c.fd);
    if (c.answer >= 0) close(c.answer);
    c = Client{};
}

int new_memfd() {
    return static_cast<int>(syscall(SYS_memfd_create, "vramtrace-live", 1u /* MFD_CLOEXEC */));
}

// A small answer of its own (the snapshot command's): {"format":...,"snapshot":"PATH"} or an error.
void write_small_answer(int fd, const char *member, const std::string &text) {
    std::string out = std::string("{\"format\":\"") + live::kFormatName + "\",\"version\":" +
                      std::to_string(live::kProtocolVersion) + ",\"" + member + "\":\"";
    for (char ch : text) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (static_cast<unsigned char>(ch) < 0x20) continue;
        out += ch;
    }
    out += "\"}\n";
    for (size_t done = 0; done < out.size();) {
        ssize_t n = write(fd, out.data() + done, out.size() - done);
        if (n <= 0) return;
        done += size_t(n);
    }
}

// Builds the answer to a complete request line into a memfd.
void answer_request(Client &c) {
    std::string line(c.request, c.request_len);
    int fd = new_memfd();
    if (fd < 0) {
        close_client(c);
        return;
    }
    Tracker *t = tracker();
    if (t == nullptr) {
        write_small_answer(fd, "error", "tracking is off");
    } else if (line == live::kRequestReading || line == live::kRequestReadingHistory) {
        ReadingOptions options;
        options.history = line == live::kRequestReadingHistory;
        options.live_snapshots = g_live_snapshots;
        write_reading(*t, fd, options);
    } else if (line == live::kRequestSnapshot) {
        std::string path = trigger_output_path("live", static_cast<int>(g_live_snapshots + 1));
        if (dump_snapshot(path.c_str(), "live", false) == 0) {
            ++g_live_snapshots;
            log_line("live snapshot written to %s", path.c_str());
            write_small_answer(fd, "snapshot", path);
        } else {
            write_small_answer(fd, "error", "cannot write " + path);
        }
    } else {
        write_small_answer(fd, "error", "unknown request");
    }
    c.answer = fd;
    c.sent = 0;
    c.answer_len = lseek(fd, 0, SEEK_END);
    if (c.answer_len < 0) close_client(c);
}

// Sends what the socket takes now; closes the connection when all is sent or the viewer is gone.
void send_answer(Client &c) {
    while (c.sent < c.answer_len) {
        ssize_t n = sendfile(c.fd, c.answer, &c.sent, size_t(c.answer_len - c.sent));
        if (n > 0) continue;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return; // poll says when it takes more
        break; // EPIPE, ECONNRESET: the viewer went away
    }
    close_client(c);
}

void read_request(Client &c) {
    for (;;) {
        ssize_t n = recv(c.fd, c.request + c.request_len, sizeof c.request - c.request_len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            close_client(c); // closed before asking
            return;
        }
        c.request_len += size_t(n);
        if (memchr(c.request, '\n', c.request_len) != nullptr) {
            size_t end = size_t(static_cast<char *>(memchr(c.request, '\n', c.request_len)) - c.request) + 1;
            c.request_len = end; // anything after the first line is ignored
            answer_request(c);
            if (c.fd >= 0) send_answer(c);
            return;
        }
        if (c.request_len == sizeof c.request) {
            close_client(c); // no line within the limit: not a viewer
            return;
        }
    }
}

void accept_clients() {
    for (;;) {
        int fd = accept4(g_listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            // Out of descriptors or memory: the pending connection stays, and the socket would
            // poll readable at once; it is left out of the poll for a second instead.
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                g_accept_paused_until_ns = monotonic_ns() + 1000000000ull;
            return; // EAGAIN: none left
        }
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
            close(fd);
            continue;
        }
        Client *slot = nullptr;
        for (Client &c : g_clients)
            if (c.fd < 0) {
                slot = &c;
                break;
            }
        if (slot == nullptr) { // every slot taken: the oldest connection gives way
            slot = &g_clients[0];
            for (Client &c : g_clients)
                if (c.accepted < slot->accepted) slot = &c;
            close_client(*slot);
        }
        slot->fd = fd;
        slot->accepted = ++g_accepted;
    }
}

// The program closed a descriptor of ours (a daemon closing every descriptor, say): its number
// may be the program's now, so it is never closed or used again, and with the socket or the wake
// descriptor gone the server stops (its file stays until a viewer finds nobody listening).
void descriptor_lost(int fd) {
    for (Client &c : g_clients)
        if (c.fd == fd || c.answer == fd) {
            if (c.fd != fd && c.fd >= 0) close(c.fd);
            if (c.answer != fd && c.answer >= 0) close(c.answer);
            c = Client{};
        }
    if (fd == g_listen_fd || fd == g_wake_fd.load(std::memory_order_relaxed)) {
        log_warning("live view off: the program closed its socket");
        g_listen_fd = -1;
        g_wake_fd.store(-1, std::memory_order_release);
    }
}

bool live_enabled() { return config().live; }

} // namespace

bool start_live_server() {
    if (g_listen_fd >= 0 || !live_enabled()) return g_listen_fd >= 0;
    std::string dir = live::socket_directory();
    std::string why;
    if (!live::check_directory(dir, true, &why)) {
        log_warning("live view off: %s", why.c_str());
        return false;
    }
    std::string path = live::socket_path(dir, getpid());
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) {
        log_warning("live view off: %s: path too long for a socket", path.c_str());
        return false;
    }
    // A file already there: a socket of ours left by a dead process with this pid is replaced;
    // anything else (a symlink, another user's file, not a socket) is refused.
    struct stat st {};
    if (lstat(path.c_str(), &st) == 0) {
        if (!live::check_socket(path, &why)) {
            log_warning("live view off: %s", why.c_str());
            return false;
        }
        unlink(path.c_str());
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_warning("live view off: socket: %s", strerror(errno));
        return false;
    }
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    // The socket's mode is set on its path between bind and listen, never through the umask: the
    // umask is the whole process's, and a host thread creating a file meanwhile would get our mode.
    // bind gives the path 0777 less the program's umask for a moment; nobody else can reach it
    // then, since the directory is ours with no access for group or others (checked above), and
    // before listen a connect is refused anyway. The path, not the descriptor: fchmod on a socket
    // descriptor changes the socket's own inode, not the file bind made. Inside that directory
    // nobody but us can put another file at the path between bind and fchmodat.
    const bool bound = bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
    int err = bound ? 0 : errno;
    const char *step = "bind";
    if (err == 0 && fchmodat(AT_FDCWD, path.c_str(), 0600, 0) != 0) {
        step = "chmod";
        err = errno;
    }
    if (err == 0 && listen(fd, kMaxClients) != 0) {
        step = "listen";
        err = errno;
    }
    if (err != 0) {
        if (bound) unlink(path.c_str());
        log_warning("live view off: %s: %s: %s", path.c_str(), step, strerror(err));
        close(fd);
        return false;
    }
    if (lstat(path.c_str(), &st) == 0) g_socket_dev = st.st_dev, g_socket_ino = st.st_ino;
    int wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake < 0) {
        log_warning("live view off: eventfd: %s", strerror(errno));
        close(fd);
        unlink(path.c_str());
        return false;
    }
    memcpy(g_socket_path, path.c_str(), path.size() + 1);
    g_listen_id = identity_of(fd);
    g_wake_id = identity_of(wake);
    g_listen_fd = fd;
    g_wake_fd.store(wake, std::memory_order_release);
    g_serving.store(true, std::memory_order_release);
    log_debug("live view on %s", path.c_str());
    return true;
}

bool live_server_running() { return g_listen_fd >= 0; }

bool serve_until(uint64_t timeout_ns) {
    if (g_listen_fd < 0) return false;
    if (!still_ours(g_listen_fd, g_listen_id) || !still_ours(g_wake_fd.load(std::memory_order_relaxed), g_wake_id)) {
        descriptor_lost(g_listen_fd);
        return false;
    }
    pollfd fds[2 + kMaxClients];
    Client *owner[2 + kMaxClients] = {};
    int n = 0;
    fds[n++] = {g_wake_fd.load(std::memory_order_relaxed), POLLIN, 0};
    uint64_t now = monotonic_ns();
    bool accepting = now >= g_accept_paused_until_ns;
    if (!accepting && g_accept_paused_until_ns - now < timeout_ns) timeout_ns = g_accept_paused_until_ns - now;
    // Left out while paused: -1 is ignored by poll.
    fds[n++] = {accepting ? g_listen_fd : -1, POLLIN, 0};
    for (Client &c : g_clients) {
        if (c.fd < 0) continue;
        owner[n] = &c;
        fds[n++] = {c.fd, short(c.answer >= 0 ? POLLOUT : POLLIN), 0};
    }
    uint64_t ms = (timeout_ns + 999999) / 1000000;
    int rc = poll(fds, nfds_t(n), ms > 3600000 ? 3600000 : int(ms));
    if (rc <= 0) return true;
    for (int i = 0; i < n; ++i)
        if (fds[i].revents & POLLNVAL) descriptor_lost(fds[i].fd);
    if (g_listen_fd < 0) return true;
    if (fds[0].revents & POLLIN) {
        uint64_t count;
        while (read(fds[0].fd, &count, sizeof count) > 0) {
        }
    }
    for (int i = 2; i < n; ++i) {
        Client &c = *owner[i];
        if (fds[i].revents == 0 || (fds[i].revents & POLLNVAL) || c.fd != fds[i].fd) continue;
        if (c.answer >= 0) send_answer(c);
        else if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_request(c);
    }
    if (fds[1].revents & POLLIN) accept_clients();
    return true;
}

void wake_live_server() {
    int fd = g_wake_fd.load(std::memory_order_acquire);
    if (fd < 0) return;
    int saved = errno;
    uint64_t one = 1;
    ssize_t ignored = write(fd, &one, sizeof one);
    (void)ignored;
    errno = saved;
}

void stop_live_server() {
    // Only the file goes: the reporter may be serving a connection right now, and the descriptors
    // close with the process.
    if (!g_serving.exchange(false, std::memory_order_acq_rel)) return;
    struct stat st {};
    if (lstat(g_socket_path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == g_socket_dev && st.st_ino == g_socket_ino)
        unlink(g_socket_path);
}

void live_server_after_fork_in_child() {
    if (g_listen_fd >= 0) close(g_listen_fd);
    g_listen_fd = -1;
    for (Client &c : g_clients) {
        if (c.fd >= 0) close(c.fd);
        if (c.answer >= 0) close(c.answer);
        c = Client{};
    }
    int wake = g_wake_fd.exchange(-1);
    if (wake >= 0) close(wake);
    g_serving.store(false, std::memory_order_relaxed);
    g_socket_path[0] = 0;
    g_listen_id = g_wake_id = FdIdentity{};
    g_live_snapshots = 0;
}

} // namespace vramtrace::serve
