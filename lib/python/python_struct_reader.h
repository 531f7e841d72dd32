// The struct reader: the calling thread's Python frames read in place from the interpreter's own
// structs (thread state, frames, code objects, str objects), with a layout per minor version
// (python_layouts.h), behind the frame cache (python_frame_table.h); and its cross-check against
// the public API. Internal to lib/python.
//
// Nothing here calls anything that takes references, allocates or needs the GIL (except the
// cross-check, which runs once, with the GIL), so it also serves a thread that released the GIL:
// that thread is blocked in C below its own Python frames, nobody else changes its frame chain,
// and its frames keep their code objects (and those their names) alive. Every pointer is checked
// before it is followed (non-null, aligned, user-space, the expected type object) and the walk is
// bounded; a check that fails drops the Python part of that one stack.
//
// The reader runs on every allocation of a thread with Python frames, so it is defined here, with
// internal linkage: each file that includes it compiles its own copy, as it would its own static
// functions, and python_runtime.cpp's frame walker gets the walk inlined (no call per frame or per
// stack into another file, and one stack frame for the walk and the merge). The state, the
// start-up and the cross-check are python_struct_reader.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "python/python_frame_table.h"
#include "python/python_interpreter.h"
#include "python/python_layouts.h"
#include "tracking/stack_depot.h"

namespace vramtrace::python::cpython {

// The struct reader: off (VRAMTRACE_PYTHON_STRUCTS=0, a version without a layout, or a failed
// cross-check), on but not yet cross-checked, being cross-checked, or checked.
enum StructState : int { kStructsOff, kStructsUnchecked, kStructsChecking, kStructsChecked };
extern VT_PYTHON_HIDDEN std::atomic<int> g_structs;

extern VT_PYTHON_HIDDEN Layout g_layout; // published with g_state (written before kFound)
extern VT_PYTHON_HIDDEN int g_test_skew; // VRAMTRACE_PYTHON_TEST_SKEW: lines off by (tests only)
extern VT_PYTHON_HIDDEN FrameCache g_cache; // code object and instruction -> frame id
extern VT_PYTHON_HIDDEN std::atomic<uint32_t> g_cache_epoch;
extern VT_PYTHON_HIDDEN std::atomic<uint32_t> g_table_size_seen;

// Picks the layout for the interpreter just found (a.minor) and turns the struct reader on
// (kStructsUnchecked) unless VRAMTRACE_PYTHON_STRUCTS=0 or there is no layout for it. Runs in the
// search, before the interpreter is published.
void choose_struct_reader(const Api &a);

// Both readers on the same thread, with the GIL and no exception pending: the same frames (code
// objects), lines and names, or the struct reader goes off. Returns whether it may be used, and
// says which in the log.
bool cross_check(const Api &a, uintptr_t tstate);

// ---- The reader ---------------------------------------------------------------------------------

namespace {

// A pointer worth following: non-null, past the first page, below the top of user space (47-bit),
// aligned as every object and frame is.
inline bool plausible(uintptr_t p) { return p >= 4096 && p < (uintptr_t{1} << 47) && (p & 7) == 0; }

template <class T> inline T field(uintptr_t base, int offset) {
    T v;
    memcpy(&v, reinterpret_cast<const void *>(base + offset), sizeof v);
    return v;
}

inline uintptr_t type_of(uintptr_t object) { return field<uintptr_t>(object, 8); }

// One frame as the structs give it, before its line and names are looked up.
// No default member initialisers: an array of these is on the hot path and stays uninitialised.
// 16 bytes, so that the largest array (VRAMTRACE_STACK_DEPTH of them) stays small on the stack.
struct RawFrame {
    uintptr_t code;
    int32_t instr;      // code-unit index of the current instruction (3.11+), f_lasti (3.10)
    int32_t fixed_line; // 3.10 with a trace function: the frame's own f_lineno
};

// This thread's Python frames, innermost first, and for each whether it is the outermost frame of
// its run of the evaluation loop (ends_run). Returns how many, or -1 when a check failed (a layout
// that does not fit this interpreter, or a chain that changed under us). Pure reads.
int read_chain(const Api &a, const Layout &l, uintptr_t tstate, RawFrame *out, uint8_t *ends_run, uint32_t max) {
    if (!plausible(tstate)) return -1;
    uintptr_t interp = field<uintptr_t>(tstate, l.ts_interp);
    if (interp == 0 || interp != reinterpret_cast<uintptr_t>(a.tstate_interp(reinterpret_cast<Object *>(tstate))))
        return -1;
    const uintptr_t code_type = reinterpret_cast<uintptr_t>(a.code_type);
    uint32_t n = 0;
    uint32_t steps = 4 * max + 64; // bounds the walk even through a cycle
    if (l.minor == 10) {
        uintptr_t f = field<uintptr_t>(tstate, l.ts_frame);
        const uintptr_t frame_type = reinterpret_cast<uintptr_t>(a.frame_type);
        while (f != 0 && n < max && steps-- > 0) {
            if (!plausible(f) || type_of(f) != frame_type) return -1;
            uintptr_t code = field<uintptr_t>(f, l.fo_code);
            if (!plausible(code) || type_of(code) != code_type) return -1;
            int lasti = field<int>(f, l.fo_lasti);
            if (lasti < -1 || lasti > (1 << 28)) return -1;
            ends_run[n] = 1; // one run per frame
            RawFrame &r = out[n++];
            r.code = code, r.instr = lasti, r.fixed_line = 0;
            if (field<uintptr_t>(f, l.fo_trace) != 0) r.fixed_line = field<int>(f, l.fo_lineno);
            f = field<uintptr_t>(f, l.fo_back);
        }
        return steps > 0 ? int(n) : -1;
    }
    uintptr_t f;
    if (l.cframe_current >= 0) {
        uintptr_t cframe = field<uintptr_t>(tstate, l.ts_frame);
        if (!plausible(cframe)) return -1;
        f = field<uintptr_t>(cframe, l.cframe_current);
    } else {
        f = field<uintptr_t>(tstate, l.ts_frame);
    }
    while (f != 0 && n < max && steps-- > 0) {
        if (!plausible(f)) return -1;
        int owner = field<signed char>(f, l.fr_owner);
        uintptr_t previous = field<uintptr_t>(f, l.fr_previous);
        if (owner < 0 || owner > l.owner_max) return -1;
        if (owner == l.owner_cstack) { // a run's shim frame on the C stack (3.12+): not the program's
            if (n > 0) ends_run[n - 1] = 1;
            f = previous;
            continue;
        }
        bool entry = l.fr_is_entry >= 0 && field<uint8_t>(f, l.fr_is_entry) != 0;
        uintptr_t code = field<uintptr_t>(f, l.fr_code);
        if (!plausible(code) || type_of(code) != code_type) return -1;
        uintptr_t instr = field<uintptr_t>(f, l.fr_instr);
        uintptr_t first = code + l.co_code;
        int64_t units = field<int64_t>(code, l.co_size);
        int64_t index = (static_cast<int64_t>(instr) - static_cast<int64_t>(first)) / 2;
        if (units <= 0 || units > (int64_t{1} << 28) || index < -1 || index >= units) return -1;
        // A frame still setting itself up is not shown (the public API skips it the same way).
        if (owner != l.owner_generator && index < field<int>(code, l.co_firsttraceable)) {
            if (entry && n > 0) ends_run[n - 1] = 1;
            f = previous;
            continue;
        }
        ends_run[n] = entry ? 1 : 0;
        RawFrame &r = out[n++];
        r.code = code, r.instr = static_cast<int32_t>(index), r.fixed_line = 0;
        f = previous;
    }
    return steps > 0 ? int(n) : -1;
}

int line_of(const Api &a, const RawFrame &r) {
    if (r.fixed_line > 0) return r.fixed_line;
    int64_t addr = int64_t{r.instr} * 2; // bytes: one code unit is two
    return a.addr2line(reinterpret_cast<Object *>(r.code), static_cast<int>(addr)) + g_test_skew;
}

// The text of a str object, read in place: compact ASCII as is, compact non-ASCII through its
// cached UTF-8 form when it has one, else Latin-1 text converted into buf; anything else "?".
const char *text_of(const Api &a, const Layout &l, uintptr_t s, char *buf, size_t cap, size_t *len) {
    *len = 1;
    if (!plausible(s) || type_of(s) != reinterpret_cast<uintptr_t>(a.unicode_type)) return "?";
    int64_t length = field<int64_t>(s, l.str_length);
    uint32_t state = field<uint32_t>(s, l.str_state);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (length < 0 || length > (int64_t{1} << 24) || !compact) return "?";
    if (ascii) {
        *len = static_cast<size_t>(length);
        return reinterpret_cast<const char *>(s + l.str_ascii_size);
    }
    int64_t utf8_length = field<int64_t>(s, l.str_ascii_size);
    uintptr_t utf8 = field<uintptr_t>(s, l.str_ascii_size + 8);
    if (utf8 != 0 && utf8 >= 4096 && utf8_length >= 0 && utf8_length <= (int64_t{1} << 26)) {
        *len = static_cast<size_t>(utf8_length);
        return reinterpret_cast<const char *>(utf8);
    }
    if (kind != 1) return "?";
    const auto *latin1 = reinterpret_cast<const unsigned char *>(s + l.str_compact_size);
    size_t n = 0;
    for (int64_t i = 0; i < length && n + 2 <= cap; ++i) {
        unsigned char c = latin1[i];
        if (c < 0x80) {
            buf[n++] = static_cast<char>(c);
        } else {
            buf[n++] = static_cast<char>(0xC0 | (c >> 6));
            buf[n++] = static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    *len = n;
    return buf;
}

FrameKey key_of(const Layout &l, const RawFrame &r) {
    FrameKey k;
    k.code = r.code;
    k.instr = static_cast<uint64_t>(int64_t{r.instr});
    k.file = field<uintptr_t>(r.code, l.co_filename);
    k.name = field<uintptr_t>(r.code, l.co_name);
    uint64_t size = l.minor >= 11 ? static_cast<uint64_t>(field<int64_t>(r.code, l.co_size)) : 0;
    k.meta = static_cast<uint32_t>(field<int>(r.code, l.co_firstlineno)) | size << 32;
    return k;
}

// The table id of one frame (its key: key_of): from the cache, else read (line, names) and
// interned by content.
uint32_t id_of(const Api &a, const Layout &l, StackDepot &table, const RawFrame &r, const FrameKey &key,
               uint32_t epoch) {
    uint32_t id = 0;
    bool cacheable = r.fixed_line == 0;
    if (cacheable && g_cache.find(key, epoch, &id)) return id;
    int line_number = line_of(a, r);
    char file_buf[kMaxNameBytes], name_buf[kMaxNameBytes];
    size_t file_len = 0, name_len = 0;
    const char *file = text_of(a, l, key.file, file_buf, sizeof file_buf, &file_len);
    const char *name = text_of(a, l, key.name, name_buf, sizeof name_buf, &name_len);
    id = intern_frame(table, file, file_len, name, name_len, line_number < 0 ? 0 : uint32_t(line_number));
    if (id != 0 && cacheable) g_cache.put(key, epoch, id);
    return id;
}

// The epoch of the cache's entries: a table that shrank is a new one (a forked child's tracker).
uint32_t cache_epoch(const StackDepot &table) {
    uint32_t size = table.size();
    uint32_t seen = g_table_size_seen.load(std::memory_order_relaxed);
    if (size < seen) g_cache_epoch.fetch_add(1, std::memory_order_relaxed);
    if (size != seen) g_table_size_seen.store(size, std::memory_order_relaxed);
    return g_cache_epoch.load(std::memory_order_relaxed);
}

// The pseudo-frame values of raw[0..count) (read_chain), innermost first; fewer when the table is
// full. keys: their keys (key_of) when the caller has them, else nullptr. Inline, so that the files that include this header
// and do not walk (python_interpreter.cpp, python_struct_reader.cpp) compile nothing of it.
inline uint32_t frame_values(const Api &a, StackDepot &table, const RawFrame *raw, const FrameKey *keys,
                             uint32_t count, uint32_t epoch, uintptr_t *out) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t id = id_of(a, g_layout, table, raw[i], keys != nullptr ? keys[i] : key_of(g_layout, raw[i]), epoch);
        if (id == 0) break; // the table is full: keep the frames so far
        out[n++] = python_frame_value(id);
    }
    return n;
}

} // namespace
} // namespace vramtrace::python::cpython
