// Writes a report so that no reader ever sees half of it and no one else's file is followed or
// clobbered: a new temporary file beside the target (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), filled,
// closed, then renamed over the target. On any failure the temporary file is removed. A symlink or
// file already at the target is replaced by the rename, never followed or written through. The
// temporary name is ".NAME.tmp.PID" in the target's directory; when that exists (it is not ours)
// further names ".NAME.tmp.PID.N-RANDOM" are tried, never opening an existing one. SIGXFSZ is held
// off in the writing thread while writing (a full RLIMIT_FSIZE gives an error, not a dead program).
#pragma once

#include <string>

namespace vramtrace {

// fill(fd, error) writes the content and returns false (with a message) on failure.
// mode: the file's permission bits; 0600 (the default) is subject to the umask like any new file,
// any other mode is set exactly with fchmod (a Prometheus textfile, 0644, must stay readable by
// node_exporter whatever the program's umask).
bool write_file_atomically(const std::string &path, bool (*fill)(int fd, void *ctx, std::string *error),
                           void *ctx, std::string *error, unsigned mode = 0600);

// The temporary name of the given attempt (0: ".NAME.tmp.PID"), for the tests.
std::string temporary_name_for(const std::string &path, long pid, int attempt);

} // namespace vramtrace
