// Streaming snapshot reader: the entry point, read_snapshot_stream, which runs nlohmann::json's SAX
// parser with the handler of snapshot_sax_handler.h over the input and checks what follows the
// document. See snapshot_reader.h for the contract; whole files: snapshot_files.cpp; cross
// references: snapshot_references.cpp.
#include "snapshot/reader/snapshot_reader.h"

#include <cstring>
#include <exception>
#include <istream>
#include <new>
#include <streambuf>
#include <string>

#include <nlohmann/json.hpp>

#include "snapshot/reader/snapshot_sax_handler.h"
#include "snapshot/reader/snapshot_schema.h"

namespace vramtrace::cli {
namespace {

// Passes a stream's bytes to the JSON parser and notes any NUL byte: the parser takes a NUL for the
// end of the input, so a valid snapshot followed by a NUL and anything else would otherwise pass.
// JSON text never holds a raw NUL.
class NulWatchingBuf : public std::streambuf {
public:
    explicit NulWatchingBuf(std::streambuf *inner) : inner_(inner) {}
    bool saw_nul() const { return saw_nul_; }

protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        std::streamsize n = inner_ ? inner_->sgetn(buf_, sizeof buf_) : 0;
        if (n <= 0) return traits_type::eof();
        if (std::memchr(buf_, 0, size_t(n)) != nullptr) saw_nul_ = true;
        setg(buf_, buf_, buf_ + n);
        return traits_type::to_int_type(buf_[0]);
    }

private:
    std::streambuf *inner_;
    char buf_[1 << 16];
    bool saw_nul_ = false;
};

} // namespace

bool read_snapshot_stream(std::istream &in, const std::string &name, SnapshotSink &sink, std::string *error) {
    try {
        NulWatchingBuf watched(in.rdbuf());
        std::istream text(&watched);
        schema::SnapshotSaxHandler handler(text, name, sink);
        bool parsed = nlohmann::json::sax_parse(text, &handler, nlohmann::json::input_format_t::json,
                                                /*strict=*/true, /*ignore_comments=*/false);
        if (!handler.finish(parsed, error)) return false;
        if (watched.saw_nul() || watched.sgetc() != std::char_traits<char>::eof()) {
            if (error) *error = name + ": bytes after the end of the snapshot (a NUL byte or other data)";
            return false;
        }
        if (in.bad()) {
            if (error) *error = name + ": read error";
            return false;
        }
        return true;
    } catch (const std::bad_alloc &) {
        if (error) *error = name + ": out of memory while reading";
    } catch (const std::exception &e) {
        if (error) *error = name + ": cannot read: " + schema::printable(e.what(), 200);
    } catch (...) {
        if (error) *error = name + ": cannot read (unknown error)";
    }
    return false;
}

} // namespace vramtrace::cli
