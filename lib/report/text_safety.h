// Text from snapshots, symbol tables and the environment, made safe for the places it is shown:
// cut on UTF-8 character boundaries, invalid UTF-8 replaced, control characters escaped so that no
// file name or frame name can move a terminal's cursor or forge a line of a text report, and values
// echoed in warnings bounded in length. Pure functions, libc only (used by the library too).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vramtrace::report {

// The length of the longest prefix of `text` of at most max_bytes that ends on a character
// boundary (never inside a multi-byte UTF-8 sequence; invalid bytes count as one character each).
size_t utf8_cut_length(std::string_view text, size_t max_bytes);

// `text` with each invalid UTF-8 sequence (bad lead or continuation bytes, overlong forms,
// surrogates, code points above U+10FFFF, a truncated sequence) replaced by U+FFFD.
std::string replace_invalid_utf8(std::string_view text);

// Whether `text` is valid UTF-8 (as replace_invalid_utf8 judges it).
bool is_valid_utf8(std::string_view text);

// `text` for a terminal or a line-oriented text file: C0 control characters (including ESC, CR and,
// unless keep_newlines, LF and TAB), DEL, the C1 controls U+0080..U+009F, the bidirectional
// formatting characters (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and bytes that
// are not valid UTF-8 are written as "\xHH" (each byte); everything else is kept. With
// keep_newlines, LF and TAB stay (a whole report's text). The one sanitizer for text shown on a
// terminal: the CLI's output, the library's summary and warnings, the live view (its JSON too).
// Its output is valid UTF-8, and escaping it again changes nothing.
std::string escape_control_characters(std::string_view text, bool keep_newlines = false);

// A value quoted in a warning: escaped as above and, beyond max_bytes, cut (on a character
// boundary) with "... (N bytes)" appended, N the value's full length.
std::string shown_value(std::string_view value, size_t max_bytes = 80);

// Snapshot text made safe for one line of a report: a line feed, tab and carriage return become
// \n, \t, \r; the rest is escape_control_characters(text).
std::string one_line(std::string_view text);

} // namespace vramtrace::report
