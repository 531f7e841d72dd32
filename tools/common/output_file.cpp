#include "common/output_file.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "dump/atomic_file.h"

namespace vramtrace::cli {

bool write_all_to(int fd, std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return false;
        }
        done += size_t(n);
    }
    return true;
}

bool write_output(const std::string &path, bool (*fill)(int, void *, std::string *), void *ctx, std::string *error) {
    OutputFileOptions options;
    options.mode = 0600;
    options.dash_is_stdout = true;
    std::string why;
    if (write_output_file(path, fill, ctx, &why, options)) return true;
    std::string shown = is_stdout_path(path) ? "standard output" : path;
    // The writer's messages name the file already; those of fill do not.
    *error = why.find(path) != std::string::npos && !is_stdout_path(path) ? why : shown + ": " + why;
    return false;
}

namespace {

bool fill_data(int fd, void *ctx, std::string *error) {
    if (write_all_to(fd, *static_cast<std::string_view *>(ctx))) return true;
    *error = std::string("cannot write: ") + std::strerror(errno);
    return false;
}

} // namespace

bool write_output(const std::string &path, std::string_view data, std::string *error) {
    return write_output(path, &fill_data, &data, error);
}

} // namespace vramtrace::cli
