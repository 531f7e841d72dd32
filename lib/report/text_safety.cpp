#include "report/text_safety.h"

#include <cstdint>

namespace vramtrace::report {
namespace {

// The length of the valid UTF-8 sequence at text[i], or 0 when the bytes there are not one.
size_t sequence_length(std::string_view text, size_t i) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char b = byte(i);
    if (b < 0x80) return 1;
    size_t n;
    uint32_t cp;
    if (b >= 0xc2 && b <= 0xdf) n = 2, cp = b & 0x1f;
    else if (b >= 0xe0 && b <= 0xef) n = 3, cp = b & 0x0f;
    else if (b >= 0xf0 && b <= 0xf4) n = 4, cp = b & 0x07;
    else return 0;
    if (i + n > text.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        unsigned char c = byte(i + k);
        if ((c & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (c & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

const char kHex[] = "0123456789abcdef";

// Whether the valid n-byte sequence at text[i] is a character a terminal acts on rather than
// shows: a C1 control (U+0080..U+009F, which some terminals take as CSI, OSC, NEL...) or a
// bidirectional formatting character (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069),
// which reorders the text around it so that a line reads as something it does not hold.
bool is_acting_character(std::string_view text, size_t i, size_t n) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
    if (n == 2) return (byte(0) == 0xc2 && byte(1) < 0xa0) || (byte(0) == 0xd8 && byte(1) == 0x9c);
    if (n != 3 || byte(0) != 0xe2) return false;
    if (byte(1) == 0x80) return byte(2) == 0x8e || byte(2) == 0x8f || (byte(2) >= 0xaa && byte(2) <= 0xae);
    return byte(1) == 0x81 && byte(2) >= 0xa6 && byte(2) <= 0xa9;
}

void append_byte_escape(std::string &out, unsigned char b) {
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
}

} // namespace

size_t utf8_cut_length(std::string_view text, size_t max_bytes) {
    if (text.size() <= max_bytes) return text.size();
    size_t i = 0;
    while (i < max_bytes) {
        size_t n = sequence_length(text, i);
        if (n == 0) n = 1;
        if (i + n > max_bytes) break;
        i += n;
    }
    return i;
}

std::string replace_invalid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        size_t n = sequence_length(text, i);
        if (n == 0) {
            out += "\xef\xbf\xbd";
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

bool is_valid_utf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        size_t n = sequence_length(text, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string escape_control_characters(std::string_view text, bool keep_newlines) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        auto b = static_cast<unsigned char>(text[i]);
        size_t n = sequence_length(text, i);
        if (n == 1) {
            if ((b < 0x20 && !(keep_newlines && (b == '\n' || b == '\t'))) || b == 0x7f) {
                append_byte_escape(out, b);
            } else {
                out += char(b);
            }
            ++i;
        } else if (n > 1 && is_acting_character(text, i, n)) {
            for (size_t k = 0; k < n; ++k) append_byte_escape(out, static_cast<unsigned char>(text[i + k]));
            i += n;
        } else if (n == 0) {
            append_byte_escape(out, b);
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string shown_value(std::string_view value, size_t max_bytes) {
    size_t keep = utf8_cut_length(value, max_bytes);
    std::string out = escape_control_characters(value.substr(0, keep));
    if (keep < value.size()) out += "... (" + std::to_string(value.size()) + " bytes)";
    return out;
}

std::string one_line(std::string_view text) {
    // Line feed, tab and carriage return get their short names; every other piece goes through
    // escape_control_characters, so a line of a report is escaped exactly as `vramtrace summary`
    // escapes its output. (Splitting at these ASCII bytes never splits a UTF-8 sequence.)
    std::string out;
    out.reserve(text.size());
    size_t start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '\n' && c != '\t' && c != '\r') continue;
        out += escape_control_characters(text.substr(start, i - start));
        out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
        start = i + 1;
    }
    out += escape_control_characters(text.substr(start));
    return out;
}

} // namespace vramtrace::report
