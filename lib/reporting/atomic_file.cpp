#include "reporting/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "core/clock.h"

namespace vramtrace {

bool write_file_atomically(const std::string &path, bool (*fill)(int, void *, std::string *), void *ctx,
                           std::string *error) {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmp = dir + "." + base + ".tmp." + std::to_string(getpid()) + "." +
                      std::to_string(monotonic_ns() % 1000000007ull);
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *error = "cannot create " + tmp + ": " + strerror(errno);
        return false;
    }
    bool ok = fill(fd, ctx, error);
    if (close(fd) != 0 && ok) {
        *error = "cannot write " + tmp + ": " + strerror(errno);
        ok = false;
    }
    if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
        *error = "cannot rename " + tmp + " to " + path + ": " + strerror(errno);
        ok = false;
    }
    if (!ok) unlink(tmp.c_str());
    return ok;
}

} // namespace vramtrace
