// Streaming snapshot reader: the entry point, read_snapshot_stream, which runs nlohmann::json's SAX
// parser with the handler of snapshot_sax_handler.h over the input and checks what follows the
// document. See snapshot_reader.h for the contract; whole files: snapshot_files.cpp; cross
// references: snapshot_references.cpp.
#include "snapshot/reader/snapshot_reader.h"

#include <cstring>
#include <exception>
#include <functional>
#include <istream>
#include <new>
#include <streambuf>
#include <string>

#include <nlohmann/json.hpp>

#include "snapshot/reader/snapshot_sax_handler.h"
#include "snapshot/reader/snapshot_schema.h"

namespace vramtrace::snapshot {
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

// SaxEvents onto the handler.
class HandlerEvents final : public SaxEvents {
public:
    explicit HandlerEvents(schema::SnapshotSaxHandler &h) : h_(h) {}
    bool null() override { return h_.null(); }
    bool boolean(bool v) override { return h_.boolean(v); }
    bool number_integer(int64_t v) override { return h_.number_integer(v); }
    bool number_unsigned(uint64_t v) override { return h_.number_unsigned(v); }
    bool number_float() override { return h_.number_float(0.0, empty_); }
    bool string(std::string &v) override { return h_.string(v); }
    bool key(std::string &k) override { return h_.key(k); }
    bool start_object() override { return h_.start_object(std::size_t(-1)); }
    bool end_object() override { return h_.end_object(); }
    bool start_array() override { return h_.start_array(std::size_t(-1)); }
    bool end_array() override { return h_.end_array(); }

private:
    schema::SnapshotSaxHandler &h_;
    std::string empty_;
};

// The parse and its checks after the document, for both entry points.
bool parse_with(std::istream &text, const std::string &name, SnapshotSink &sink, std::string *error,
                RecordSource *source, const std::function<bool()> &saw_nul, std::streambuf &bytes) {
    schema::SnapshotSaxHandler handler(text, name, sink);
    HandlerEvents events(handler);
    if (source) source->attach(&events);
    bool parsed = nlohmann::json::sax_parse(text, &handler, nlohmann::json::input_format_t::json,
                                            /*strict=*/true, /*ignore_comments=*/false);
    if (!handler.finish(parsed, error)) return false;
    if (saw_nul() || bytes.sgetc() != std::char_traits<char>::eof()) {
        if (error) *error = name + ": bytes after the end of the snapshot (a NUL byte or other data)";
        return false;
    }
    return true;
}

bool failed_with(const std::string &name, std::string *error, const char *what) {
    if (error) *error = name + what;
    return false;
}

} // namespace

bool read_snapshot_source(RecordSource &source, const std::string &name, SnapshotSink &sink, std::string *error) {
    try {
        std::istream text(&source);
        if (!parse_with(text, name, sink, error, &source, [&] { return source.saw_nul(); }, source)) return false;
        if (text.bad()) return failed_with(name, error, ": read error");
        return true;
    } catch (const std::bad_alloc &) {
        return failed_with(name, error, ": out of memory while reading");
    } catch (const std::exception &e) {
        if (error) *error = name + ": cannot read: " + schema::printable(e.what(), 200);
    } catch (...) {
        return failed_with(name, error, ": cannot read (unknown error)");
    }
    return false;
}

bool read_snapshot_stream(std::istream &in, const std::string &name, SnapshotSink &sink, std::string *error) {
    try {
        NulWatchingBuf watched(in.rdbuf());
        std::istream text(&watched);
        if (!parse_with(text, name, sink, error, nullptr, [&] { return watched.saw_nul(); }, watched)) return false;
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

} // namespace vramtrace::snapshot
