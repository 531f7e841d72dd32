// A Python pickle writer (protocol 4, no framing) for plain data: dict, list, 2-tuple of
// ints, str, int, bool, None. It uses only the opcodes that PyTorch's memory_viz JavaScript
// unpickler also reads (PROTO, EMPTY_DICT/LIST, MARK, SETITEMS, APPENDS, BININT1/BININT2/BININT,
// LONG1, SHORT_BINUNICODE/BINUNICODE, TUPLE2, NEWTRUE/NEWFALSE, NONE, MEMOIZE, BINGET/LONG_BINGET,
// STOP), and batches
// SETITEMS/APPENDS by 1000 like CPython, since the viewer spreads one batch into a JS call.
//
// Every opcode goes through op() with a value of Op, the whitelist: no GLOBAL, STACK_GLOBAL, REDUCE,
// BUILD, INST, OBJ or NEWOBJ can ever be written, so loading the file runs nothing. Every length
// and index is checked against its opcode's width before anything is written: a string longer than
// kMaxStringBytes is cut (on a UTF-8 character boundary) and marked, never declared shorter than
// it is; a memo index that would not fit LONG_BINGET's 4 bytes is not made (the value is then
// written in full each time). Invalid UTF-8 (which pickle.load refuses) is replaced by U+FFFD.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/text_safety.h"

namespace vramtrace::exporter {

class PickleWriter {
public:
    // The opcodes this writer emits, and nothing else.
    enum class Op : char {
        Proto = '\x80',
        EmptyDict = '}',
        EmptyList = ']',
        Mark = '(',
        SetItems = 'u',
        Appends = 'e',
        BinInt1 = 'K',
        BinInt2 = 'M',
        BinInt = 'J',
        Long1 = '\x8a',
        ShortBinUnicode = '\x8c',
        BinUnicode = 'X',
        Tuple2 = '\x86',
        NewTrue = '\x88',
        NewFalse = '\x89',
        None = 'N',
        Memoize = '\x94',
        BinGet = 'h',
        LongBinGet = 'j',
        Stop = '.',
    };
    // Longest string written in full; longer ones are cut to this and marked (kTruncatedMarker).
    static constexpr uint64_t kMaxStringBytes = uint64_t(1) << 20;
    static constexpr std::string_view kTruncatedMarker = "...[truncated]";
    // Whether `value` fits an unsigned little-endian field of `width` bytes (1, 2 or 4).
    static constexpr bool fits_width(uint64_t value, int width) {
        return width >= 8 || value < (uint64_t(1) << (8 * width));
    }
    // The string opcode for a UTF-8 text of `size` bytes: SHORT_BINUNICODE (1-byte length) below
    // 256, BINUNICODE (4-byte length) up to kMaxStringBytes; nullopt above, where str() cuts. A
    // size of 2^32 or more would not fit BINUNICODE at all.
    static constexpr std::optional<Op> string_opcode(uint64_t size) {
        if (fits_width(size, 1)) return Op::ShortBinUnicode;
        if (size <= kMaxStringBytes && fits_width(size, 4)) return Op::BinUnicode;
        return std::nullopt;
    }
    // How many bytes of a text of `size` bytes str() keeps before the marker: all of it when it
    // fits, else kMaxStringBytes less the marker (then cut back to a character boundary). Decided
    // from the size alone, before any byte is read.
    static constexpr uint64_t kept_string_bytes(uint64_t size) {
        return string_opcode(size) ? size : kMaxStringBytes - kTruncatedMarker.size();
    }

    // A whole pickle starts with PROTO 4; a fragment (embedded later with raw()) does not.
    // first_memo_index: the memo index of the first memoize() (the tests start near the limit).
    explicit PickleWriter(bool fragment = false, uint64_t first_memo_index = 0)
        : next_memo_(first_memo_index), memoize_keys_(!fragment) {
        if (!fragment) {
            op(Op::Proto);
            out_ += '\x04';
        }
    }
    void begin_dict() { open(Op::EmptyDict, true); }
    void end_dict() { close(Op::SetItems); }
    // The next key of the innermost dict (its value follows).
    // A whole pickle stores each distinct key once (memoized, like CPython); a fragment, whose
    // memo indices would collide with the enclosing pickle's, writes keys in full.
    void key(std::string_view name) {
        next_element();
        if (!memoize_keys_) return str(name);
        auto it = key_memo_.find(name);
        if (it != key_memo_.end()) return memo_get(it->second);
        str(name);
        if (std::optional<uint32_t> index = memoize()) key_memo_.emplace(std::string(name), *index);
    }
    void begin_list() { open(Op::EmptyList, false); }
    void end_list() { close(Op::Appends); }
    // Announces the next element of the innermost list.
    void item() { next_element(); }

    void str(std::string_view text) {
        uint64_t keep = kept_string_bytes(text.size());
        if (keep < text.size()) {
            std::string cut(text.substr(0, report::utf8_cut_length(text, size_t(keep))));
            cut += kTruncatedMarker;
            return str(cut);
        }
        if (!report::is_valid_utf8(text)) return str(report::replace_invalid_utf8(text));
        Op code = *string_opcode(text.size());
        op(code);
        le(text.size(), code == Op::ShortBinUnicode ? 1 : 4);
        out_.append(text);
    }
    void integer(int64_t v) {
        if (v >= 0 && v < 256) {
            op(Op::BinInt1);
            le(uint64_t(v), 1);
        } else if (v >= 0 && v < 65536) {
            op(Op::BinInt2);
            le(uint64_t(v), 2);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            op(Op::BinInt);
            le(uint64_t(uint32_t(int32_t(v))), 4);
        } else {
            // LONG1: little-endian two's complement, shortest form (at most 8 bytes).
            std::string bytes;
            int64_t x = v;
            for (;;) {
                bytes += char(uint8_t(x & 0xff));
                int64_t rest = x >> 8; // arithmetic shift
                bool sign = (bytes.back() & 0x80) != 0;
                if ((rest == 0 && !sign) || (rest == -1 && sign)) break;
                x = rest;
            }
            op(Op::Long1);
            out_ += char(bytes.size());
            out_ += bytes;
        }
    }
    // Values above INT64_MAX do not occur for device addresses; they are written as such (LONG1).
    void unsigned_integer(uint64_t v) {
        if (v <= uint64_t(INT64_MAX)) return integer(int64_t(v));
        std::string bytes;
        for (int i = 0; i < 8; ++i) bytes += char(uint8_t(v >> (8 * i)));
        bytes += '\0';
        op(Op::Long1);
        out_ += char(bytes.size());
        out_ += bytes;
    }
    void boolean(bool b) { op(b ? Op::NewTrue : Op::NewFalse); }
    void none() { op(Op::None); }
    void int_pair(int64_t a, int64_t b) {
        integer(a);
        integer(b);
        op(Op::Tuple2);
    }
    // Bytes of a fragment written by another PickleWriter(true): one complete value.
    void raw(std::string_view bytes) { out_.append(bytes); }
    // MEMOIZE: remembers the value just written under the next memo index (0, 1, ...), which
    // memo_get() then pushes again, so a value repeated many times (a stack's frames) is stored
    // once, as CPython's protocol 4 does. nullopt (and nothing written) once the next index would
    // not fit LONG_BINGET's 4 bytes: the caller writes the value in full instead.
    std::optional<uint32_t> memoize() {
        if (!fits_width(next_memo_, 4)) return std::nullopt;
        op(Op::Memoize);
        return uint32_t(next_memo_++);
    }
    void memo_get(uint32_t index) {
        if (fits_width(index, 1)) {
            op(Op::BinGet);
            le(index, 1);
        } else {
            op(Op::LongBinGet);
            le(index, 4);
        }
    }

    std::string finish() {
        op(Op::Stop);
        return std::move(out_);
    }
    const std::string &fragment() const { return out_; }

private:
    struct Level {
        bool dict;
        size_t batch = 0;
    };
    void op(Op code) { out_ += static_cast<char>(code); }
    void open(Op opcode, bool dict) {
        op(opcode);
        levels_.push_back({dict});
    }
    void next_element() {
        Level &l = levels_.back();
        if (l.batch == 1000) {
            op(l.dict ? Op::SetItems : Op::Appends);
            l.batch = 0;
        }
        if (l.batch == 0) op(Op::Mark);
        ++l.batch;
    }
    void close(Op opcode) {
        if (levels_.back().batch > 0) op(opcode);
        levels_.pop_back();
    }
    void le(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) out_ += char(uint8_t(v >> (8 * i)));
    }
    std::string out_;
    std::vector<Level> levels_;
    uint64_t next_memo_ = 0;
    bool memoize_keys_;
    std::map<std::string, uint32_t, std::less<>> key_memo_;
};

} // namespace vramtrace::exporter
