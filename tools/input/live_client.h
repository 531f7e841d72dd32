// The viewer's side of the live socket (docs/live.md): which traced processes serve on this host,
// and one request to one of them. Paths are checked as the server checks them
// (lib/live/socket_dir.h): a directory or socket that is a symlink, another user's, or open to
// others is refused with one warning line, never connected to.
#pragma once

#include <cstddef>
#include <string>
#include <sys/types.h>
#include <vector>

#include "live/protocol.h"

namespace vramtrace::cli {

struct LiveEndpoint {
    pid_t pid = 0;
    std::string socket;
};

// The processes serving now, ascending pid. Sockets of processes that are gone (nothing listens)
// are removed on the way. Refusals (a bad directory or socket path) are appended to *warnings.
std::vector<LiveEndpoint> find_live_processes(std::vector<std::string> *warnings);

// The endpoint of one pid: false with *error set (one line) when it has no usable socket.
bool live_endpoint_of(pid_t pid, LiveEndpoint *out, std::string *error);

// Sends `request` (a live/protocol.h line) and reads the answer to the end, waiting at most
// timeout_ms in all and keeping at most max_bytes. False with *error = one line when it cannot,
// when the answer is longer, or when the process listening on the socket (SO_PEERCRED) is neither
// root nor of this user's uid.
bool live_request(const LiveEndpoint &endpoint, const char *request, std::string *answer, std::string *error,
                  int timeout_ms = 10000, size_t max_bytes = live::kMaxAnswerBytes);

// Whether a server of uid `peer` may answer a viewer of uid `self`: root, or the same user.
bool peer_uid_allowed(uid_t peer, uid_t self);

} // namespace vramtrace::cli
