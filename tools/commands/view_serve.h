// `vramtrace view --serve`: the HTML report served over HTTP to this machine only, for a GPU
// machine reached by ssh (forward the port: ssh -L PORT:127.0.0.1:PORT HOST).
#pragma once

#include <string>

namespace vramtrace::cli {

// Serves `page` on 127.0.0.1:`port` (0: a free port the kernel picks) until SIGINT or SIGTERM,
// answering only GET /TOKEN/ (TOKEN: 128 random bits, in the URL printed on stdout) with a Host of
// 127.0.0.1:PORT or localhost:PORT; anything else gets 403 (404 for another path under the token).
// One connection at a time, each closed after its answer; a client that stalls is dropped after
// 10 s. Returns an exit status: 0 when a signal ended it, 1 when the socket could not be made.
int serve_page(const std::string &page, int port);

} // namespace vramtrace::cli
