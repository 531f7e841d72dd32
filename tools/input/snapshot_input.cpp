// Snapshot files read through one fixed buffer, with progress on a terminal. See snapshot_input.h.
#include "input/snapshot_input.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <istream>
#include <memory>
#include <streambuf>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/simd_snapshot_source.h"
#include "input/offline_symbolize.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"

namespace vramtrace::cli {

namespace {

uint64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// A read-only streambuf over a file descriptor: read(2) into one buffer, progress per refill.
class FdInputBuf final : public std::streambuf {
public:
    FdInputBuf(int fd, Progress *progress) : fd_(fd), progress_(progress), buf_(new char[kInputBufferBytes]) {}
    int error_number() const { return errno_; }

protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        for (;;) {
            ssize_t n = ::read(fd_, buf_.get(), kInputBufferBytes);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) errno_ = errno;
            if (n <= 0) return traits_type::eof();
            if (progress_) progress_->advance(uint64_t(n));
            setg(buf_.get(), buf_.get(), buf_.get() + n);
            return traits_type::to_int_type(*gptr());
        }
    }

private:
    int fd_;
    Progress *progress_;
    std::unique_ptr<char[]> buf_;
    int errno_ = 0;
};

struct FdCloser {
    int fd;
    ~FdCloser() {
        if (fd >= 0) ::close(fd);
    }
};

} // namespace

bool Progress::enabled_for_stderr() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::start_file(const std::string &name, uint64_t size) {
    if (!enabled_) return;
    name_ = name;
    size_ = size;
    read_ = 0;
    draw();
}

void Progress::advance(uint64_t bytes) {
    if (!enabled_) return;
    read_ += bytes;
    draw();
}

void Progress::draw() {
    uint64_t now = monotonic_ns();
    if (now - last_draw_ns_ < kProgressIntervalNs) return;
    // The first interval draws nothing, so that reading a small file never flickers.
    if (last_draw_ns_ == 0) {
        last_draw_ns_ = now;
        return;
    }
    last_draw_ns_ = now;
    std::string line = "\r\033[Kvramtrace: ";
    if (count_ > 1) line += "[" + std::to_string(index_) + "/" + std::to_string(count_) + "] ";
    line += "reading ";
    std::string shown = name_.size() > 60 ? "..." + name_.substr(name_.size() - 57) : name_;
    for (char &c : shown)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    line += shown;
    if (size_ > 0) {
        uint64_t percent = read_ >= size_ ? 100 : read_ * 100 / size_;
        line += ": " + std::to_string(percent) + "% of " + report::format_bytes(size_);
    } else {
        line += ": " + report::format_bytes(read_);
    }
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::done() {
    if (!enabled_ || !drawn_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
}

bool stream_snapshot_file(const std::string &path, snapshot::SnapshotSink &sink, Progress *progress, std::string *error,
                          bool name_frames, EventCheck *events) {
    auto fail = [&](const std::string &what) {
        if (error) *error = path + ": " + what;
        return false;
    };
    try {
        int fd = -1;
        if (!snapshot::open_snapshot_input(path, &fd, error)) return false;
        FdCloser closer{fd};
        struct stat st {};
        if (::fstat(fd, &st) != 0) return fail(std::string("cannot read: ") + std::strerror(errno));
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        if (progress) progress->start_file(path, S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0);
        // A crash snapshot (process.symbolized false) gets its frames named on the way.
        SymbolizingSink symbolizing(sink, path);
        snapshot::SnapshotSink &target = name_frames ? static_cast<snapshot::SnapshotSink &>(symbolizing) : sink;
        if (events && S_ISREG(st.st_mode)) {
            *events = EventCheck{};
            events->used = true;
            SimdSnapshotSource source(fd, progress, events, /*records=*/true);
            bool ok = snapshot::read_snapshot_source(source, path, target, error);
            if (source.error_number() != 0) return fail(std::string("read error: ") + std::strerror(source.error_number()));
            return ok;
        }
        FdInputBuf buf(fd, progress);
        auto read_errno = [&] { return buf.error_number(); };
        std::istream in(&buf);
        if (!snapshot::read_snapshot_stream(in, path, target, error)) {
            if (read_errno() != 0) return fail(std::string("read error: ") + std::strerror(read_errno()));
            return false;
        }
        if (read_errno() != 0) return fail(std::string("read error: ") + std::strerror(read_errno()));
        return true;
    } catch (const std::bad_alloc &) {
        return fail("out of memory while reading");
    } catch (const std::exception &e) {
        return fail(std::string("cannot read: ") + e.what());
    }
}

} // namespace vramtrace::cli
