// Writes a report so that no reader ever sees half of it and no one else's file is followed or
// clobbered: a new temporary file beside the target (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), filled,
// closed, then renamed over the target. On any failure the temporary file is removed.
#pragma once

#include <string>

namespace vramtrace {

// fill(fd, error) writes the content and returns false (with a message) on failure.
bool write_file_atomically(const std::string &path, bool (*fill)(int fd, void *ctx, std::string *error),
                           void *ctx, std::string *error);

} // namespace vramtrace
