// The one routine that writes every file vramtrace writes (the library's snapshots and Prometheus
// textfile, the CLI's exports and merged snapshots): no reader ever sees half of a file, and no one
// else's file is followed or clobbered (docs/reliability.md, "Files vramtrace writes").
//
// A regular file (or no file) at the target: a new temporary file beside it
// (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), filled, closed, then renamed over the target. A symlink
// at the target is replaced by the rename, never followed or written through, unless it is a
// trusted symlink to a character device or FIFO (below). The temporary name is ".NAME.tmp.PID" in
// the target's directory; when that exists (it is not ours) further names ".NAME.tmp.PID.N-RANDOM"
// are tried, never opening an existing one. On any failure the temporary file is removed (only if
// it is still the file we created: same device and inode). Nothing is ever renamed over a
// non-regular file: the target is checked again just before the rename.
//
// A character device or FIFO at the target (/dev/null to discard a report, a pipe to a reader) is
// written in place: opened without O_CREAT and without following a symlink, checked again with
// fstat after the open, never truncated, its mode never changed. A symlink at the target is
// followed to one only when it is trusted: owned by root or by us, in a directory owned by root or
// by us that no one else can write to (or that is sticky), as /dev/stdout is. A directory, socket or
// block device at the target is refused with one line in *error.
//
// SIGXFSZ and SIGPIPE are held off in the writing thread while writing (a full RLIMIT_FSIZE or a
// FIFO's reader gone gives an error, not a dead program).
#pragma once

#include <cstdint>
#include <string>

namespace vramtrace {

struct OutputFileOptions {
    // The permission bits of a new file. 0600 (the default) is subject to the umask like any new
    // file; any other mode is set exactly with fchmod (a Prometheus textfile, 0644, must stay
    // readable by node_exporter whatever the program's umask). Never applied to a target written in
    // place.
    unsigned mode = 0600;
    // "-" means standard output (the CLI's --output); otherwise "-" is a file name like any other.
    bool dash_is_stdout = false;
    // A FIFO is opened without waiting for a reader: with none, the write fails at once (the
    // library must never block the program it runs in). When false, the open waits for a reader.
    bool fifo_without_waiting = false;
};

// What a successful write produced.
struct WrittenFile {
    // true: a new regular file was renamed into place (dev/ino name it); false: the target was
    // written in place (a character device, a FIFO, standard output).
    bool created = false;
    uint64_t dev = 0;
    uint64_t ino = 0;
};

// fill(fd, ctx, error) writes the content and returns false (with a message) on failure.
// fill_from_string is that callback for ctx = a const std::string * (every byte, EINTR retried).
bool fill_from_string(int fd, void *ctx, std::string *error);
bool write_output_file(const std::string &path, bool (*fill)(int fd, void *ctx, std::string *error), void *ctx,
                       std::string *error, const OutputFileOptions &options, WrittenFile *written = nullptr);

// write_output_file with the given mode, "-" as standard output and a FIFO never waited for (the
// library's snapshots: VRAMTRACE_OUTPUT=- writes them to the program's standard output).
bool write_file_atomically(const std::string &path, bool (*fill)(int fd, void *ctx, std::string *error),
                           void *ctx, std::string *error, unsigned mode = 0600);

// Removes `path` only if it is still the regular file that `written` describes (same device and
// inode): never a device, a FIFO or a file someone else put there since. True when removed.
bool remove_written_file(const std::string &path, const WrittenFile &written);

// Whether the target is written in place ("-", a character device or FIFO at `path`, or at the end
// of a trusted symlink there), as write_output_file decides it. For naming: trigger snapshots of an exit
// snapshot written in place go to the same target.
bool output_written_in_place(const std::string &path);

// "" when write_output_file may write `path`, else the one line it would refuse it with (a
// directory, a socket, a block device at it): for a caller that checks before doing the work.
std::string output_refusal(const std::string &path);

// The temporary name of the given attempt (0: ".NAME.tmp.PID"), for the tests and the crash handler.
std::string temporary_name_for(const std::string &path, long pid, int attempt);

} // namespace vramtrace
