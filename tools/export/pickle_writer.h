// A Python pickle writer (protocol 4, no framing) for plain data: dict, list, 2-tuple of
// ints, str, int, bool, None. It uses only the opcodes that PyTorch's memory_viz JavaScript
// unpickler also reads (PROTO, EMPTY_DICT/LIST, MARK, SETITEMS, APPENDS, BININT1/BININT2/BININT,
// LONG1, SHORT_BINUNICODE/BINUNICODE, TUPLE2, NEWTRUE/NEWFALSE, NONE, MEMOIZE, BINGET/LONG_BINGET,
// STOP), and batches
// SETITEMS/APPENDS by 1000 like CPython, since the viewer spreads one batch into a JS call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace vramtrace::exporter {

class PickleWriter {
public:
    // A whole pickle starts with PROTO 4; a fragment (embedded later with raw()) does not.
    explicit PickleWriter(bool fragment = false) : memoize_keys_(!fragment) {
        if (!fragment) out_ += "\x80\x04";
    }
    void begin_dict() { open('}', true); }
    void end_dict() { close('u'); }
    // The next key of the innermost dict (its value follows).
    // A whole pickle stores each distinct key once (memoized, like CPython); a fragment, whose
    // memo indices would collide with the enclosing pickle's, writes keys in full.
    void key(std::string_view name) {
        next_element();
        if (!memoize_keys_) return str(name);
        auto it = key_memo_.find(name);
        if (it != key_memo_.end()) return memo_get(it->second);
        str(name);
        key_memo_.emplace(std::string(name), memoize());
    }
    void begin_list() { open(']', false); }
    void end_list() { close('e'); }
    // Announces the next element of the innermost list.
    void item() { next_element(); }

    void str(std::string_view text) {
        if (text.size() < 256) {
            out_ += '\x8c';
            out_ += char(text.size());
        } else {
            out_ += 'X';
            le(text.size(), 4);
        }
        out_.append(text);
    }
    void integer(int64_t v) {
        if (v >= 0 && v < 256) {
            out_ += 'K';
            le(uint64_t(v), 1);
        } else if (v >= 0 && v < 65536) {
            out_ += 'M';
            le(uint64_t(v), 2);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            out_ += 'J';
            le(uint64_t(uint32_t(int32_t(v))), 4);
        } else {
            // LONG1: little-endian two's complement, shortest form.
            std::string bytes;
            int64_t x = v;
            for (;;) {
                bytes += char(uint8_t(x & 0xff));
                int64_t rest = x >> 8; // arithmetic shift
                bool sign = (bytes.back() & 0x80) != 0;
                if ((rest == 0 && !sign) || (rest == -1 && sign)) break;
                x = rest;
            }
            out_ += '\x8a';
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
        out_ += '\x8a';
        out_ += char(bytes.size());
        out_ += bytes;
    }
    void boolean(bool b) { out_ += b ? '\x88' : '\x89'; }
    void none() { out_ += 'N'; }
    void int_pair(int64_t a, int64_t b) {
        integer(a);
        integer(b);
        out_ += '\x86'; // TUPLE2
    }
    // Bytes of a fragment written by another PickleWriter(true): one complete value.
    void raw(std::string_view bytes) { out_.append(bytes); }
    // MEMOIZE: remembers the value just written under the next memo index (0, 1, ...), which
    // memo_get() then pushes again, so a value repeated many times (a stack's frames) is stored
    // once, as CPython's protocol 4 does.
    uint32_t memoize() {
        out_ += '\x94';
        return next_memo_++;
    }
    void memo_get(uint32_t index) {
        if (index < 256) {
            out_ += 'h'; // BINGET
            le(index, 1);
        } else {
            out_ += 'j'; // LONG_BINGET
            le(index, 4);
        }
    }

    std::string finish() {
        out_ += '.';
        return std::move(out_);
    }
    const std::string &fragment() const { return out_; }

private:
    struct Level {
        bool dict;
        size_t batch = 0;
    };
    void open(char opcode, bool dict) {
        out_ += opcode;
        levels_.push_back({dict});
    }
    void next_element() {
        Level &l = levels_.back();
        if (l.batch == 1000) {
            out_ += l.dict ? 'u' : 'e';
            l.batch = 0;
        }
        if (l.batch == 0) out_ += '(';
        ++l.batch;
    }
    void close(char opcode) {
        if (levels_.back().batch > 0) out_ += opcode;
        levels_.pop_back();
    }
    void le(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) out_ += char(uint8_t(v >> (8 * i)));
    }
    std::string out_;
    std::vector<Level> levels_;
    uint32_t next_memo_ = 0;
    bool memoize_keys_;
    std::map<std::string, uint32_t, std::less<>> key_memo_;
};

} // namespace vramtrace::exporter
