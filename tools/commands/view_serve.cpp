// The report over HTTP on the loopback interface (view_serve.h).
#include "commands/view_serve.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cli.h"

namespace vramtrace::cli {
namespace {

constexpr int kClientTimeoutMs = 10000;
constexpr size_t kMaxRequest = 16384;

bool random_token(std::string *out) {
    unsigned char bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += size_t(n);
    }
    static const char kHex[] = "0123456789abcdef";
    out->clear();
    for (unsigned char b : bytes) *out += kHex[b >> 4], *out += kHex[b & 15];
    return true;
}

// Compares without stopping at the first difference, so the time taken says nothing of the token.
bool same_secret(const std::string &a, const std::string &b) {
    if (a.size() != b.size()) return false;
    unsigned diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= unsigned(a[i] ^ b[i]);
    return diff == 0;
}

bool send_all(int fd, const std::string &data) {
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += size_t(n);
    }
    return true;
}

void answer(int fd, int status, const char *reason, const std::string &type, const std::string &body) {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + type +
                       "\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
                       "Referrer-Policy: no-referrer\r\nConnection: close\r\n\r\n";
    send_all(fd, head) && send_all(fd, body);
}

// Reads the request head (up to the blank line), at most kMaxRequest bytes, within the timeout.
bool read_head(int fd, std::string *head) {
    char buf[4096];
    while (head->find("\r\n\r\n") == std::string::npos) {
        if (head->size() > kMaxRequest) return false;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, kClientTimeoutMs) <= 0) return false;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        head->append(buf, size_t(n));
    }
    return true;
}

// The value of header `name` (lowercase) in a request head, "" when absent.
std::string header(const std::string &head, const std::string &name) {
    size_t at = head.find("\r\n");
    while (at != std::string::npos && at + 2 < head.size()) {
        size_t end = head.find("\r\n", at + 2);
        std::string line = head.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
        size_t colon = line.find(':');
        if (colon != std::string::npos) {
            std::string key = line.substr(0, colon);
            for (char &c : key) c = char(tolower(static_cast<unsigned char>(c)));
            if (key == name) {
                size_t v = line.find_first_not_of(" \t", colon + 1);
                return v == std::string::npos ? "" : line.substr(v, line.find_last_not_of(" \t") + 1 - v);
            }
        }
        at = end;
    }
    return "";
}

void serve_one(int fd, const std::string &page, const std::string &token, int port) {
    std::string head;
    if (!read_head(fd, &head)) return;
    std::string line = head.substr(0, head.find("\r\n"));
    size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string::npos || sp2 <= sp1) return answer(fd, 400, "Bad Request", "text/plain", "bad request\n");
    std::string method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    // A Host other than this port's loopback names (a page elsewhere that resolved its own name to
    // 127.0.0.1) is refused, so that no other site can read the report through the browser.
    const std::string host = header(head, "host"), p = std::to_string(port);
    if (host != "127.0.0.1:" + p && host != "localhost:" + p)
        return answer(fd, 403, "Forbidden", "text/plain", "forbidden: the Host is not this machine's loopback\n");
    std::string path = target.substr(0, target.find('?'));
    std::string given = path.size() > 1 ? path.substr(1, path.find('/', 1) == std::string::npos ? std::string::npos : path.find('/', 1) - 1) : "";
    if (!same_secret(given, token))
        return answer(fd, 403, "Forbidden", "text/plain", "forbidden: the URL's token is missing or wrong\n");
    if (method != "GET" && method != "HEAD") return answer(fd, 405, "Method Not Allowed", "text/plain", "GET only\n");
    if (path != "/" + token + "/" && path != "/" + token) return answer(fd, 404, "Not Found", "text/plain", "not found\n");
    answer(fd, 200, "OK", "text/html; charset=utf-8", method == "HEAD" ? std::string() : page);
}

} // namespace

int serve_page(const std::string &page, int port) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0) {
        log_error(std::string("view: cannot make a socket: ") + std::strerror(errno));
        return kExitFailure;
    }
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(ls, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 || listen(ls, 16) != 0 ||
        getsockname(ls, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
        log_error("view: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno));
        close(ls);
        return kExitFailure;
    }
    port = ntohs(addr.sin_port);
    std::string token;
    if (!random_token(&token)) {
        log_error(std::string("view: no random bytes for the URL's token: ") + std::strerror(errno));
        close(ls);
        return kExitFailure;
    }
    // Ctrl-C and SIGTERM end the loop through a signalfd, so that the socket is closed in order.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, nullptr);
    int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/" + token + "/";
    if (!write_stdout(url + "\n")) return kExitFailure;
    log_line("view: serving the report on 127.0.0.1 only, until Ctrl-C; from another machine: ssh -L " +
             std::to_string(port) + ":127.0.0.1:" + std::to_string(port) + " THIS_HOST, then open the URL");
    for (;;) {
        pollfd fds[2] = {{ls, POLLIN, 0}, {sfd, POLLIN, 0}};
        if (poll(fds, sfd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (sfd >= 0 && (fds[1].revents & POLLIN)) break;
        if (!(fds[0].revents & POLLIN)) continue;
        int c = accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        timeval tv{kClientTimeoutMs / 1000, 0};
        setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        serve_one(c, page, token, port);
        shutdown(c, SHUT_WR);
        close(c);
    }
    close(ls);
    if (sfd >= 0) close(sfd);
    log_line("view: stopped serving");
    return kExitOk;
}

} // namespace vramtrace::cli
