// A snapshot file read with simdjson for its long arrays (simd_snapshot_source.h).
#include "input/simd_snapshot_source.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <string_view>

#include <unistd.h>

#include "input/snapshot_input.h"
#include "snapshot/device_range.h"
#include "snapshot/snapshot_fields.h"

namespace vramtrace::cli {

namespace {

namespace ev = snapshot::member::events;

constexpr size_t kBufferBytes = 1 + SimdSnapshotSource::kWindowBytes;

// The members of an event, as the reader's schema lists them (snapshot_schema.h, Schema<Event>).
enum Member { Type, TimeNs, ThreadId, Device, Address, Kind, Size, Api, Stack, Label, FreedBy, kMembers };
constexpr std::array<std::string_view, kMembers> kNames = {ev::type, ev::time_ns, ev::thread_id, ev::device,
                                                           ev::address, ev::kind, ev::size, ev::api,
                                                           ev::stack, ev::label, ev::freed_by};
constexpr uint32_t kRequired = 1u << Type | 1u << TimeNs | 1u << ThreadId;

// The member a key names (unescaped), -1 for any other.
int member_of(std::string_view key) {
    auto is = [key](Member m) { return key == kNames[m]; };
    switch (key.empty() ? '\0' : key[0]) {
    case 't': return is(Type) ? Type : is(TimeNs) ? TimeNs : is(ThreadId) ? ThreadId : -1;
    case 'd': return is(Device) ? Device : -1;
    case 'a': return is(Address) ? Address : is(Api) ? Api : -1;
    case 'k': return is(Kind) ? Kind : -1;
    case 's': return is(Size) ? Size : is(Stack) ? Stack : -1;
    case 'l': return is(Label) ? Label : -1;
    case 'f': return is(FreedBy) ? FreedBy : -1;
    default: return -1;
    }
}

bool is_u32(simdjson::dom::element v, uint64_t *out) {
    return !v.get_uint64().get(*out) && *out <= std::numeric_limits<uint32_t>::max();
}

// "0x" and 1 to 16 hex digits, either case (the reader's convert_hex).
bool is_hex(std::string_view s) {
    if (s.size() <= 2 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
    uint64_t value = 0;
    auto r = std::from_chars(s.data() + 2, s.data() + s.size(), value, 16);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// One record: true when the reader would accept it; *stack is its stack (0 when none).
bool check_event(simdjson::dom::object object, uint32_t *stack) {
    uint32_t seen = 0;
    *stack = 0;
    for (simdjson::dom::key_value_pair field : object) {
        int m = member_of(field.key);
        if (m < 0 || (seen & (1u << m))) return false; // unknown or repeated: the reader decides
        seen |= 1u << m;
        simdjson::dom::element v = field.value;
        std::string_view text;
        uint64_t u = 0;
        int64_t i = 0;
        switch (Member(m)) {
        case Type:
            if (v.get_string().get(text)) return false;
            if (text != "alloc" && text != "free" && text != "mark" && text != "oom") return false;
            break;
        case TimeNs:
        case Size:
            if (v.get_uint64().get(u)) return false;
            break;
        case ThreadId:
            if (!is_u32(v, &u)) return false;
            break;
        case Stack:
            if (!is_u32(v, &u)) return false;
            *stack = uint32_t(u);
            break;
        case Device:
            if (v.get_int64().get(i) || !snapshot::device_ordinal_valid(i)) return false;
            break;
        case Address:
            if (v.get_string().get(text) || !is_hex(text)) return false;
            break;
        case Kind:
        case Api:
        case Label:
        case FreedBy:
            if (!v.is_string()) return false;
            break;
        case kMembers: return false;
        }
    }
    return (seen & kRequired) == kRequired;
}

// Whether the text holds "-0": the reader's parser takes "-0" for a signed integer (refused where
// an unsigned one is expected), simdjson for 0. Such a window is left to the reader.
bool has_minus_zero(const char *m, const char *stop) {
    while ((m = static_cast<const char *>(std::memchr(m, '-', size_t(stop - m)))))
        if (*++m == '0') return true;
    return false;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

} // namespace

// The window and the parser, made once per thread and kept for every file read after: a merge
// of thousands of files would otherwise map, fault in and unmap them once per file.
struct SimdSnapshotSource::Parser {
    simdjson::dom::parser parser{kBufferBytes + 1};
    std::unique_ptr<char[]> buffer{new char[kBufferBytes + simdjson::SIMDJSON_PADDING]};
    bool in_use = false;
};

namespace {
thread_local std::unique_ptr<SimdSnapshotSource::Parser> kept_parser;
}

SimdSnapshotSource::SimdSnapshotSource(int fd, Progress *progress, EventCheck *check, bool records)
    : fd_(fd), progress_(progress), check_(check), records_(records) {
    if (kept_parser && !kept_parser->in_use) parser_ = std::move(kept_parser);
    else parser_ = std::make_unique<Parser>();
    parser_->in_use = true;
    buf_ = parser_->buffer.get();
}

SimdSnapshotSource::~SimdSnapshotSource() {
    parser_->in_use = false;
    if (!kept_parser) kept_parser = std::move(parser_);
}

bool SimdSnapshotSource::fill() {
    if (pos_ > 1) {
        std::memmove(buf_ + 1, buf_ + pos_, end_ - pos_);
        end_ -= pos_ - 1;
        pos_ = 1;
    }
    if (eof_ || end_ == kBufferBytes) return false;
    for (;;) {
        ssize_t n = ::read(fd_, buf_ + end_, kBufferBytes - end_);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) errno_ = errno;
        if (n <= 0) {
            eof_ = true;
            return false;
        }
        if (progress_) progress_->advance(uint64_t(n));
        end_ += size_t(n);
        return true;
    }
}

size_t SimdSnapshotSource::scan(size_t from) {
    const char *b = buf_;
    for (size_t i = from; i < end_; ++i) {
        char c = b[i];
        if (in_string_) {
            if (escaped_) {
                escaped_ = false;
                key_length_ = sizeof key_; // an escaped key is left to the reader
            } else if (c == '\\') {
                escaped_ = true;
            } else if (c == '"') {
                in_string_ = false;
                expect_ = Expect::Nothing;
                next_ = Array::None;
                if (depth_ == 1 && key_length_ < sizeof key_) {
                    std::string_view key(key_, key_length_);
                    namespace top = snapshot::member::top;
                    if (key == top::events) next_ = Array::Events;
                    else if (records_ && (key == top::modules || key == top::frames || key == top::stacks ||
                                          key == top::allocations))
                        next_ = Array::Records;
                    if (next_ != Array::None) expect_ = Expect::Colon;
                }
            } else if (depth_ == 1 && key_length_ < sizeof key_) {
                key_[key_length_++] = c;
            }
            continue;
        }
        switch (c) {
        case ' ': case '\n': case '\t': case '\r': break;
        case '"':
            in_string_ = true;
            key_length_ = 0;
            expect_ = Expect::Nothing;
            break;
        case ':': expect_ = expect_ == Expect::Colon ? Expect::Bracket : Expect::Nothing; break;
        case '[':
            ++depth_;
            if (expect_ == Expect::Bracket && depth_ == 2) {
                expect_ = Expect::Nothing;
                pending_ = next_;
                return i + 1;
            }
            expect_ = Expect::Nothing;
            break;
        case '{': ++depth_, expect_ = Expect::Nothing; break;
        case '}': case ']': --depth_, expect_ = Expect::Nothing; break;
        default: expect_ = Expect::Nothing; break;
        }
    }
    return end_;
}

bool SimdSnapshotSource::emit(simdjson::dom::element e) {
    using T = simdjson::dom::element_type;
    switch (e.type()) {
    case T::ARRAY: {
        if (!sax_->start_array()) return false;
        for (simdjson::dom::element child : simdjson::dom::array(e))
            if (!emit(child)) return false;
        return sax_->end_array();
    }
    case T::OBJECT: {
        if (!sax_->start_object()) return false;
        for (simdjson::dom::key_value_pair field : simdjson::dom::object(e)) {
            text_.assign(field.key);
            if (!sax_->key(text_) || !emit(field.value)) return false;
        }
        return sax_->end_object();
    }
    case T::INT64: {
        int64_t v = int64_t(e);
        return v < 0 ? sax_->number_integer(v) : sax_->number_unsigned(uint64_t(v));
    }
    case T::UINT64: return sax_->number_unsigned(uint64_t(e));
    case T::DOUBLE: return sax_->number_float();
    case T::STRING:
        text_.assign(std::string_view(e));
        return sax_->string(text_);
    case T::BOOL: return sax_->boolean(bool(e));
    case T::NULL_VALUE: return sax_->null();
    }
    return false;
}

bool SimdSnapshotSource::parse_window(size_t begin, size_t close, simdjson::dom::array *records) {
    // The window's records as one array: '[' over the byte before them (already handed on or
    // checked), ']' over the comma after them (or the array's own ']').
    char *b = buf_;
    // "-0" is an integer to the reader's parser (a signed one) and 0 to simdjson: left to the reader.
    if (has_minus_zero(b + begin, b + close)) return false;
    b[begin - 1] = '[';
    b[close] = ']';
    simdjson::dom::element doc;
    if (parser_->parser.parse(b + begin - 1, close - begin + 2, false).get(doc)) return false;
    return !doc.get_array().get(*records);
}

bool SimdSnapshotSource::records_window(size_t begin, size_t close, bool last) {
    simdjson::dom::array records;
    if (!parse_window(begin, close, &records)) return false;
    size_t count = 0;
    for (simdjson::dom::element record : records) {
        if (!emit(record)) return false;
        ++count;
    }
    if (count == 0 && (!last || records_handed_ > 0)) return false;
    records_handed_ += count;
    return true;
}

bool SimdSnapshotSource::hand_records() {
    records_handed_ = 0;
    for (;;) {
        char *b = buf_;
        const void *nl = pos_ < end_ ? ::memrchr(b + pos_, '\n', end_ - pos_) : nullptr;
        if (!nl) {
            if (!fill()) return false;
            continue;
        }
        size_t line_end = size_t(static_cast<const char *>(nl) - b);
        // The array's close: the first line of the window that begins with ']' (the writer's
        // "  ]"), or a ']' right at the start ("[]"). A record on a line of its own never begins
        // a line with ']'; a wrong guess does not parse.
        size_t close = SIZE_MAX;
        for (size_t at = pos_; at <= line_end;) {
            size_t k = at;
            while (k <= line_end && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r')) ++k;
            if (k <= line_end && b[k] == ']') {
                close = k;
                break;
            }
            const void *next = ::memchr(b + k, '\n', line_end + 1 - k);
            if (!next) break;
            at = size_t(static_cast<const char *>(next) - b) + 1;
        }
        if (close != SIZE_MAX) {
            if (!records_window(pos_, close, true)) return false;
            pos_ = close;
            return true;
        }
        size_t q = line_end;
        while (q > pos_ && is_space(b[q])) --q;
        if (is_space(b[q])) {
            pos_ = line_end + 1;
            if (!fill() && eof_) return false;
            continue;
        }
        if (b[q] == ',') {
            if (!records_window(pos_, q, false)) return false;
            pos_ = q + 1;
            fill();
            continue;
        }
        size_t before = end_ - pos_;
        if (!fill() || end_ - pos_ == before) return false;
    }
}

bool SimdSnapshotSource::check_window(size_t begin, size_t close, bool last) {
    simdjson::dom::array records;
    if (!parse_window(begin, close, &records)) return false;
    size_t before = check_->count;
    for (simdjson::dom::element record : records) {
        simdjson::dom::object object;
        uint32_t stack = 0;
        if (record.get_object().get(object) || !check_event(object, &stack)) return false;
        if (stack != 0) check_->stacks.try_emplace(stack, check_->count);
        ++check_->count;
    }
    // A window before a comma holds a record, and the last one too unless the array is empty: a
    // stray or trailing comma is the reader's to refuse.
    return check_->count > before || (last && before == 0);
}

bool SimdSnapshotSource::check_events() {
    for (;;) {
        char *b = buf_;
        const void *nl = pos_ < end_ ? ::memrchr(b + pos_, '\n', end_ - pos_) : nullptr;
        if (!nl) {
            if (!fill()) return false; // no line end in a full window, or the input ended
            continue;
        }
        // A newline is outside every string of valid JSON, so no token runs across it.
        size_t line_end = size_t(static_cast<const char *>(nl) - b);
        size_t q = line_end;
        while (q > pos_ && is_space(b[q])) --q;
        if (is_space(b[q])) { // only whitespace so far
            pos_ = line_end + 1;
            if (!fill() && eof_) return false;
            continue;
        }
        if (b[q] == ',') { // whole records, the last followed by a comma
            if (!check_window(pos_, q, false)) return false;
            pos_ = q + 1;
            fill();
            continue;
        }
        // The array may close here: "...}\n  ]\n}\n" as the writer ends a file, or at a "]".
        size_t close = q;
        if (b[close] == '}') {
            size_t k = close;
            while (k > pos_ && is_space(b[k - 1])) --k;
            close = k > pos_ ? k - 1 : close;
        }
        if (b[close] == ']') {
            if (!check_window(pos_, close, true)) return false;
            pos_ = close; // the reader gets the array's ']' and what follows
            return true;
        }
        // A record not yet ended by a comma or the array's close: more input, if there is room.
        size_t before = end_ - pos_;
        if (!fill() || end_ - pos_ == before) return false;
    }
}

SimdSnapshotSource::int_type SimdSnapshotSource::underflow() {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (check_->declined) return traits_type::eof(); // the reader stops; the file is read again
    Array pending = pending_;
    pending_ = Array::None;
    if ((pending == Array::Events && !check_events()) || (pending == Array::Records && !hand_records())) {
        check_->declined = true;
        return traits_type::eof();
    }
    if (pos_ == end_ && !fill()) return traits_type::eof();
    size_t stop = scan(pos_);
    if (!saw_nul_ && std::memchr(buf_ + pos_, 0, stop - pos_)) saw_nul_ = true;
    setg(buf_ + pos_, buf_ + pos_, buf_ + stop);
    pos_ = stop;
    return traits_type::to_int_type(*gptr());
}

} // namespace vramtrace::cli
