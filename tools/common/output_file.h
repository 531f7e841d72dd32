// Where the CLI's --output goes: every file the CLI writes (export, merge --output) goes through the
// library's own writer (lib/dump/atomic_file.h): a new 0600 temporary file beside the target,
// created exclusively without following symlinks, renamed into place; a character device or FIFO
// written in place; a directory, socket or block device refused; "-" is standard output.
#pragma once

#include <string>
#include <string_view>

namespace vramtrace::cli {

// fill(fd, ctx, error) writes the content; false with a message on failure. On failure *error is
// one line naming the output.
bool write_output(const std::string &path, bool (*fill)(int fd, void *ctx, std::string *error), void *ctx,
                  std::string *error);

// The same for content already in memory.
bool write_output(const std::string &path, std::string_view data, std::string *error);

// Whether --output PATH means standard output ("-").
inline bool is_stdout_path(const std::string &path) { return path == "-"; }

// Writes all of data to fd (EINTR retried); false with errno set on failure.
bool write_all_to(int fd, std::string_view data);

} // namespace vramtrace::cli
