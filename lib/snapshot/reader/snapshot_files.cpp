// Whole snapshot files: opening an input (regular files, a FIFO read once, "-" for standard input;
// other special files refused) and reading one into a snapshot::Snapshot with its references checked.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <istream>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/reader/snapshot_schema.h"

namespace vramtrace::snapshot {
namespace {

using namespace schema;

std::string errno_text(int err) { return std::strerror(err); }



} // namespace

bool open_snapshot_input(const std::string &path, int *fd, std::string *error) {
    // "-" is standard input, opened anew through /proc: a description of its own, so that its
    // offset and flags stay the caller's and a regular file redirected in can be read twice.
    const bool standard_input = path == "-";
    const std::string opened = standard_input ? "/proc/self/fd/0" : path;
    // Without waiting: a FIFO with no writer, a terminal, must not block the type check.
    int f = ::open(opened.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) {
        int err = errno;
        struct stat st {};
        if (error)
            *error = err == ENXIO && ::stat(opened.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)
                         ? path + ": is a socket, not a snapshot file (only regular files and FIFOs are read)"
                     : standard_input ? path + ": cannot open standard input: " + errno_text(err)
                                      : path + ": cannot open: " + errno_text(err);
        return false;
    }
    struct stat st {};
    if (::fstat(f, &st) != 0) {
        if (error) *error = path + ": cannot read: " + errno_text(errno);
        ::close(f);
        return false;
    }
    const char *kind = nullptr;
    if (S_ISDIR(st.st_mode)) kind = "is a directory, not a snapshot file";
    else if (standard_input && ::isatty(f) == 1) kind = "standard input is a terminal: pipe a snapshot in or name a file";
    else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) kind = "is a device, not a snapshot file (only regular files and FIFOs are read)";
    else if (S_ISSOCK(st.st_mode)) kind = "is a socket, not a snapshot file (only regular files and FIFOs are read)";
    else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) kind = "is not a regular file or FIFO, not a snapshot file";
    if (kind) {
        if (error) *error = path + ": " + kind;
        ::close(f);
        return false;
    }
    if (S_ISFIFO(st.st_mode)) {
        // Read once, as it comes. A read of a FIFO that no writer has opened yet would end at
        // once, so wait until one has written (or come and gone); when that takes a while, say so
        // instead of hanging silently.
        bool noted = false;
        for (;;) {
            pollfd p{f, POLLIN, 0};
            int ready = ::poll(&p, 1, noted ? -1 : 200);
            if (ready > 0 || (ready < 0 && errno != EINTR)) break;
            if (ready == 0 && !noted) {
                // A pipe on standard input has had its writer from the start (the command before
                // it in the pipeline, or the shell's open of a FIFO): it is only slow, which the
                // user sees.
                if (!standard_input) {
                    std::string note = "vramtrace: note: " + path + " is a FIFO: waiting for a writer (read once, as it comes)\n";
                    std::fputs(note.c_str(), stderr);
                }
                noted = true;
            }
        }
    }
    ::fcntl(f, F_SETFL, ::fcntl(f, F_GETFL) & ~O_NONBLOCK);
    *fd = f;
    return true;
}

namespace {

// An istream's bytes from a file descriptor (closed with it).
class FdReadBuf final : public std::streambuf {
public:
    explicit FdReadBuf(int fd) : fd_(fd) {}
    ~FdReadBuf() override { ::close(fd_); }

protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        for (;;) {
            ssize_t n = ::read(fd_, buf_, sizeof buf_);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return traits_type::eof();
            setg(buf_, buf_, buf_ + n);
            return traits_type::to_int_type(*gptr());
        }
    }

private:
    int fd_;
    char buf_[1 << 16];
};

} // namespace

bool read_snapshot_file(const std::string &path, Snapshot *out, std::string *error) {
    try {
        *out = Snapshot{};
        int fd = -1;
        if (!open_snapshot_input(path, &fd, error)) return false;
        FdReadBuf buf(fd);
        std::istream in(&buf);
        Snapshot snapshot;
        SnapshotFiller sink(snapshot);
        if (!read_snapshot_stream(in, path, sink, error)) return false;
        if (std::string problem = check_snapshot_references(snapshot); !problem.empty()) {
            if (error) *error = path + ": " + problem;
            return false;
        }
        adopt_graph_memory_pools(snapshot);
        *out = std::move(snapshot);
        return true;
    } catch (const std::bad_alloc &) {
        if (error) *error = path + ": out of memory while reading";
    } catch (const std::exception &e) {
        if (error) *error = path + ": cannot read: " + printable(e.what(), 200);
    }
    *out = Snapshot{};
    return false;
}

} // namespace vramtrace::snapshot
