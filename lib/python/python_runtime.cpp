// Finding CPython at run time and walking the calling thread's Python frames (python_runtime.h).
//
// Two ways to read the frames (docs/python-frames.md, "How they are read"):
// - the interpreter's own structs (thread state, frames, code objects, str objects), read in place
//   with a layout per minor version (3.10 to 3.13). Nothing is called that takes references,
//   allocates or needs the GIL, so it also serves a thread that released the GIL: that thread is
//   blocked in C below its own Python frames, nobody else changes its frame chain, and its frames
//   keep their code objects (and those their names) alive. Every pointer is checked before it is
//   followed (non-null, aligned, user-space, the expected type object) and the walk is bounded;
//   a check that fails drops the Python part of that one stack. The layout is cross-checked once
//   against the public API, with the GIL, and turned off with one line if they disagree;
// - the public API (PyEval_GetFrame, PyFrame_GetBack/GetCode/GetLineNumber), the same in every
//   version but slow (0.5-0.7 us a frame) and only for a thread that holds the GIL: used for the
//   cross-check, and for everything when the struct reader is off.
#include "python/python_runtime.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "device/real_functions.h"
#include "python/python_frame_table.h"
#include "python/python_layouts.h"

namespace vramtrace::python {
namespace {

using Object = void;
using SsizeT = long;

// The functions used, all in the stable or public C API of 3.10-3.13 (names per version noted).
struct Api {
    int minor = 0;                                  // 3.<minor>
    int (*is_initialized)() = nullptr;              // Py_IsInitialized
    int (*is_finalizing)() = nullptr;               // Py_IsFinalizing (3.13), _Py_IsFinalizing before
    int (*gil_check)() = nullptr;                   // PyGILState_Check
    Object *(*this_thread_state)() = nullptr;       // PyGILState_GetThisThreadState
    Object *(*current_state)() = nullptr;           // PyThreadState_GetUnchecked (3.13), _PyThreadState_UncheckedGet
    Object *(*err_occurred)() = nullptr;            // PyErr_Occurred
    void (*err_clear)() = nullptr;                  // PyErr_Clear
    Object *(*get_frame)() = nullptr;               // PyEval_GetFrame: borrowed
    Object *(*frame_back)(Object *) = nullptr;      // PyFrame_GetBack: new reference
    Object *(*frame_code)(Object *) = nullptr;      // PyFrame_GetCode: new reference
    int (*frame_line)(Object *) = nullptr;          // PyFrame_GetLineNumber
    int (*addr2line)(Object *, int) = nullptr;      // PyCode_Addr2Line: reads the line table only
    Object *(*tstate_interp)(Object *) = nullptr;   // PyThreadState_GetInterpreter: reads one field
    const void *code_type = nullptr;                // &PyCode_Type
    const void *unicode_type = nullptr;             // &PyUnicode_Type
    const void *frame_type = nullptr;               // &PyFrame_Type (3.10's frame objects)
    Object *(*get_attr)(Object *, const char *) = nullptr;      // PyObject_GetAttrString: new reference
    const char *(*utf8)(Object *, SsizeT *) = nullptr;          // PyUnicode_AsUTF8AndSize
    void (*dec_ref)(Object *) = nullptr;            // Py_DecRef
    int (*gc_disable)() = nullptr;                  // PyGC_Disable (3.10+)
    int (*gc_enable)() = nullptr;                   // PyGC_Enable
    uintptr_t eval_begin = 0, eval_end = 0;         // _PyEval_EvalFrameDefault's extent, 0 unknown
    const char *name_attr = "co_qualname";          // co_name before 3.11
    char version[32] = {};
};

enum State : int { kNotTried, kLooking, kFound, kAbsent, kUnusable };
std::atomic<int> g_state{kNotTried};
std::atomic<uint64_t> g_last_look_ns{0};
Api g_api; // written by the one thread that moved g_state to kLooking, published by kFound

// The struct reader: off (VRAMTRACE_PYTHON_STRUCTS=0, a version without a layout, or a failed
// cross-check), on but not yet cross-checked, being cross-checked, or checked.
enum StructState : int { kStructsOff, kStructsUnchecked, kStructsChecking, kStructsChecked };
std::atomic<int> g_structs{kStructsOff};
Layout g_layout;     // published with g_state (written before kFound)
int g_test_skew = 0; // VRAMTRACE_PYTHON_TEST_SKEW: lines the struct reader is off by (tests only)
FrameCache g_cache;
std::atomic<uint32_t> g_cache_epoch{0};
std::atomic<uint32_t> g_table_size_seen{0};

template <class F> bool find(F &out, const char *name) {
    out = reinterpret_cast<F>(real_dlsym()(RTLD_DEFAULT, name));
    return out != nullptr;
}

bool find(const void *&out, const char *name) {
    out = real_dlsym()(RTLD_DEFAULT, name);
    return out != nullptr;
}

// The native extent of the evaluation loop, from its dynamic symbol's size.
void find_eval_extent(Api &a) {
    void *begin = real_dlsym()(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    if (begin == nullptr) return;
    Dl_info info{};
    void *entry = nullptr;
    if (dladdr1(begin, &info, &entry, RTLD_DL_SYMENT) == 0) return;
    const auto *sym = static_cast<const ElfW(Sym) *>(entry);
    if (sym == nullptr ||
        info.dli_saddr != begin || sym->st_size == 0)
        return;
    a.eval_begin = reinterpret_cast<uintptr_t>(begin);
    a.eval_end = a.eval_begin + sym->st_size;
}

// Fills g_api; returns the state to publish. Says once on stderr when an interpreter is there but
// cannot be used.
int look() {
    Api a;
    const char *(*get_version)() = nullptr;
    if (!find(get_version, "Py_GetVersion") || !find(a.gil_check, "PyGILState_Check")) return kAbsent;
    const char *v = get_version();
    int major = 0, minor = 0;
    if (v == nullptr || sscanf(v, "%d.%d", &major, &minor) != 2) {
        log_warning("Python frames off: cannot read the interpreter's version; stacks keep native frames only");
        return kUnusable;
    }
    size_t n = strcspn(v, " ");
    if (n >= sizeof a.version) n = sizeof a.version - 1;
    memcpy(a.version, v, n);
    a.minor = minor;
    if (major != 3 || minor < 10) {
        log_warning("Python frames off: CPython %s is older than 3.10; stacks keep native frames only", a.version);
        return kUnusable;
    }
    // A free-threaded build (3.13t): no layout of ours fits its objects, and the API walk's GC pause
    // is interpreter-wide, which threads walking at once (no GIL orders them) would undo for each
    // other and for the program's own gc.disable().
    // Its Py_GetVersion() says so ("3.13.0 experimental free-threading build (...)").
    if (strstr(v, "free-threading") != nullptr) {
        log_warning("Python frames off: CPython %s is a free-threaded build; stacks keep native frames only",
                    a.version);
        return kUnusable;
    }
    bool ok = find(a.is_initialized, "Py_IsInitialized") && find(a.this_thread_state, "PyGILState_GetThisThreadState") &&
              find(a.err_occurred, "PyErr_Occurred") && find(a.err_clear, "PyErr_Clear") &&
              find(a.get_frame, "PyEval_GetFrame") && find(a.frame_back, "PyFrame_GetBack") &&
              find(a.frame_code, "PyFrame_GetCode") && find(a.frame_line, "PyFrame_GetLineNumber") &&
              find(a.get_attr, "PyObject_GetAttrString") && find(a.utf8, "PyUnicode_AsUTF8AndSize") &&
              find(a.dec_ref, "Py_DecRef") && find(a.gc_disable, "PyGC_Disable") && find(a.gc_enable, "PyGC_Enable") &&
              find(a.addr2line, "PyCode_Addr2Line") && find(a.tstate_interp, "PyThreadState_GetInterpreter") &&
              find(a.code_type, "PyCode_Type") && find(a.unicode_type, "PyUnicode_Type") &&
              find(a.frame_type, "PyFrame_Type") &&
              (find(a.is_finalizing, "Py_IsFinalizing") || find(a.is_finalizing, "_Py_IsFinalizing")) &&
              (find(a.current_state, "PyThreadState_GetUnchecked") ||
               find(a.current_state, "_PyThreadState_UncheckedGet"));
    if (!ok) {
        log_warning("Python frames off: CPython %s lacks a function they need; stacks keep native frames only",
                    a.version);
        return kUnusable;
    }
    if (minor < 11) a.name_attr = "co_name";
    find_eval_extent(a);
    g_api = a;
    const char *structs = getenv("VRAMTRACE_PYTHON_STRUCTS");
    const char *skew = getenv("VRAMTRACE_PYTHON_TEST_SKEW");
    g_test_skew = skew ? atoi(skew) : 0;
    if (structs != nullptr && strcmp(structs, "0") == 0) {
        log_debug("Python frames: struct reader off (VRAMTRACE_PYTHON_STRUCTS=0)");
    } else if (layout_for(minor, g_layout)) {
        g_structs.store(kStructsUnchecked, std::memory_order_relaxed);
    } else {
        log_warning("Python frames: no struct layout for CPython %s; only threads that hold the GIL get Python "
                    "frames, at a higher cost", a.version);
    }
    log_debug("Python frames: CPython %s found%s", a.version,
              a.eval_begin ? "" : " (evaluation loop's extent unknown: Python frames go after the native ones)");
    return kFound;
}

void try_look(int from) {
    if (!g_state.compare_exchange_strong(from, kLooking, std::memory_order_acq_rel)) return;
    g_last_look_ns.store(monotonic_ns(), std::memory_order_relaxed);
    g_state.store(look(), std::memory_order_release);
}

const Api *api() {
    int s = g_state.load(std::memory_order_acquire);
    if (s == kNotTried) {
        try_look(kNotTried);
        s = g_state.load(std::memory_order_acquire);
    }
    return s == kFound ? &g_api : nullptr;
}

// Whether the calling thread holds the GIL, right in every supported version:
// - 3.12+: the current thread state is thread-local and set only while the thread is attached
//   (holds the GIL; in a free-threaded build, is attached), so non-null is the answer.
// - 3.10/3.11: _PyThreadState_UncheckedGet() is the GIL holder of the whole runtime, and
//   PyGILState_Check() answers 1 for every thread once a subinterpreter exists; so the holder must
//   also be this thread's own thread state.
bool holds_gil(const Api &a) {
    Object *current = a.current_state();
    if (current == nullptr) return false;
    if (a.minor >= 12) return true;
    return a.gil_check() == 1 && a.this_thread_state() == current;
}

bool is_eval(uintptr_t address, const void *context) {
    const Api *a = static_cast<const Api *>(context);
    return address > a->eval_begin && address <= a->eval_end;
}

bool no_eval(uintptr_t, const void *) { return false; }

// One frame: file, qualified name (3.11+; the plain name before), current line.
uint32_t intern_one(const Api &a, StackDepot &table, Object *frame) {
    Object *code = a.frame_code(frame);
    if (code == nullptr) {
        a.err_clear();
        return 0;
    }
    int line_number = a.frame_line(frame);
    uint32_t line = line_number < 0 ? 0 : static_cast<uint32_t>(line_number);
    Object *file = a.get_attr(code, "co_filename");
    Object *name = a.get_attr(code, a.name_attr);
    SsizeT file_len = 0, name_len = 0;
    const char *file_text = file ? a.utf8(file, &file_len) : nullptr;
    const char *name_text = name ? a.utf8(name, &name_len) : nullptr;
    if (a.err_occurred() != nullptr) a.err_clear(); // a missing attribute or unencodable text
    if (file_text == nullptr) file_text = "", file_len = 0;
    if (name_text == nullptr) name_text = "??", name_len = 2;
    uint32_t id = intern_frame(table, file_text, size_t(file_len), name_text, size_t(name_len), line);
    if (file) a.dec_ref(file);
    if (name) a.dec_ref(name);
    a.dec_ref(code);
    return id;
}

// The Python frames of the calling thread, innermost first, as pseudo-frame values. The thread
// holds the GIL. The cyclic GC is held off during the walk: 3.10/3.11 may collect inside the
// allocation of a frame object, which would run finalisers (any Python code, perhaps freeing
// CUDA memory while the program's allocator is in the middle of an allocation). Disabling and
// re-enabling is invisible to the program: it holds no GIL meanwhile, and the allocations counted
// meanwhile still trigger a collection at the next opportunity.
uint32_t walk(const Api &a, StackDepot &table, uintptr_t *out, uint32_t max) {
    int gc_was_enabled = a.gc_disable();
    uint32_t n = 0;
    Object *frame = a.get_frame(); // borrowed
    Object *owned = nullptr;        // the reference PyFrame_GetBack gave us
    while (frame != nullptr && n < max) {
        out[n++] = python_frame_value(intern_one(a, table, frame));
        Object *back = a.frame_back(frame);
        if (owned) a.dec_ref(owned);
        owned = frame = back;
    }
    if (owned) a.dec_ref(owned);
    if (a.err_occurred() != nullptr) a.err_clear(); // a frame object that could not be made
    if (gc_was_enabled) a.gc_enable();
    return n;
}


// ---- The struct reader ------------------------------------------------------------------------

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

// The table id of one frame: from the cache, else read (line, names) and interned by content.
uint32_t id_of(const Api &a, const Layout &l, StackDepot &table, const RawFrame &r, uint32_t epoch) {
    FrameKey key = key_of(l, r);
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

uint32_t struct_walk(const Api &a, StackDepot &table, uintptr_t tstate, uintptr_t *out, uint8_t *ends_run,
                     uint32_t max) {
    RawFrame raw[StackDepot::kMaxDepth];
    int count = read_chain(a, g_layout, tstate, raw, ends_run, max);
    if (count <= 0) return 0;
    uint32_t epoch = cache_epoch(table);
    uint32_t n = 0;
    for (int i = 0; i < count; ++i) {
        uint32_t id = id_of(a, g_layout, table, raw[i], epoch);
        if (id == 0) break; // the table is full: keep the frames so far
        out[n++] = python_frame_value(id);
    }
    return n;
}

// ---- The cross-check (once, with the GIL) -------------------------------------------------------

struct ApiFrame {
    uintptr_t code = 0;
    int line = 0;
    bool names_match = false;
};

bool same_text(const char *x, size_t xn, const char *y, size_t yn) {
    if (xn > kMaxNameBytes) xn = kMaxNameBytes;
    if (yn > kMaxNameBytes) yn = kMaxNameBytes;
    return xn == yn && memcmp(x, y, xn) == 0;
}

// The public API's view of this thread's frames: code object, line, and whether the names the
// struct reader gives for that code object are the attributes' text.
uint32_t api_chain(const Api &a, ApiFrame *out, uint32_t max) {
    int gc_was_enabled = a.gc_disable();
    uint32_t n = 0;
    Object *frame = a.get_frame();
    Object *owned = nullptr;
    while (frame != nullptr && n < max) {
        ApiFrame &f = out[n++];
        Object *code = a.frame_code(frame);
        if (code != nullptr) {
            f.code = reinterpret_cast<uintptr_t>(code);
            f.line = a.frame_line(frame);
            Object *file = a.get_attr(code, "co_filename");
            Object *name = a.get_attr(code, a.name_attr);
            SsizeT file_len = 0, name_len = 0;
            const char *file_text = file ? a.utf8(file, &file_len) : nullptr;
            const char *name_text = name ? a.utf8(name, &name_len) : nullptr;
            char buf[kMaxNameBytes];
            size_t len = 0;
            const char *mine = nullptr;
            bool ok = file_text != nullptr && name_text != nullptr;
            if (ok) {
                mine = text_of(a, g_layout, field<uintptr_t>(f.code, g_layout.co_filename), buf, sizeof buf, &len);
                ok = same_text(mine, len, file_text, size_t(file_len));
            }
            if (ok) {
                mine = text_of(a, g_layout, field<uintptr_t>(f.code, g_layout.co_name), buf, sizeof buf, &len);
                ok = same_text(mine, len, name_text, size_t(name_len));
            }
            f.names_match = ok;
            if (file) a.dec_ref(file);
            if (name) a.dec_ref(name);
            a.dec_ref(code);
        }
        Object *back = a.frame_back(frame);
        if (owned) a.dec_ref(owned);
        owned = frame = back;
    }
    if (owned) a.dec_ref(owned);
    if (a.err_occurred() != nullptr) a.err_clear();
    if (gc_was_enabled) a.gc_enable();
    return n;
}

// Both readers on the same thread, with the GIL: the same frames (code objects), lines and names,
// or the struct reader goes off. Returns whether it may be used.
bool cross_check(const Api &a, uintptr_t tstate) {
    constexpr uint32_t kMax = 64;
    RawFrame raw[kMax];
    uint8_t runs[kMax];
    ApiFrame api[kMax];
    int count = read_chain(a, g_layout, tstate, raw, runs, kMax);
    uint32_t expected = api_chain(a, api, kMax);
    const char *why = nullptr;
    char detail[96] = {};
    if (count < 0) {
        why = "a pointer check failed";
    } else if (uint32_t(count) != expected) {
        why = "a different number of frames";
        snprintf(detail, sizeof detail, " (%d, the API %u)", count, expected);
    } else {
        for (uint32_t i = 0; i < expected && why == nullptr; ++i) {
            int line = line_of(a, raw[i]);
            if (raw[i].code != api[i].code) why = "a different code object";
            else if (line != api[i].line) {
                why = "a different line";
                snprintf(detail, sizeof detail, " (%d, the API %d)", line, api[i].line);
            }
            else if (!api[i].names_match) why = "different names";
            if (why) snprintf(detail + strlen(detail), sizeof detail - strlen(detail), " at frame %u", i);
        }
    }
    if (why == nullptr) {
        log_debug("Python frames: struct reader cross-checked on %u frames", expected);
        return true;
    }
    log_warning("Python frames: reading CPython %s's frames directly gives %s%s than its API; that reader is "
                "off, so only threads that hold the GIL get Python frames",
                a.version, why, detail);
    return false;
}

// The thread state whose frames are this thread's: the attached one when it holds the GIL, else
// the one PyGILState bound to it (NULL for a thread that never ran Python).
uintptr_t own_thread_state(const Api &a, bool gil) {
    Object *t = gil ? a.current_state() : a.this_thread_state();
    return reinterpret_cast<uintptr_t>(t);
}
} // namespace

namespace {
// The walk and the merge, apart from add_python_frames so that a process without Python (or with
// Python frames off) does not reserve their buffers (about 5 KiB here, more below) on the stack of
// every allocating thread.
__attribute__((noinline)) uint32_t add_frames_of_interpreter(const Api *a, StackDepot &table, uintptr_t *frames,
                                                             uint32_t depth, uint32_t capacity) {
    bool gil = holds_gil(*a);
    uintptr_t py[StackDepot::kMaxDepth];
    uint8_t ends_run[StackDepot::kMaxDepth];
    const uint8_t *runs = nullptr; // known only to the struct reader
    uint32_t max = config().stack_depth < StackDepot::kMaxDepth ? config().stack_depth : StackDepot::kMaxDepth;
    uint32_t count = 0;
    int structs = g_structs.load(std::memory_order_acquire);
    if (structs == kStructsUnchecked && gil &&
        g_structs.compare_exchange_strong(structs, kStructsChecking, std::memory_order_acq_rel)) {
        // With the GIL nobody else runs Python, and a pending exception is the program's: the
        // check calls the API, so it waits for an allocation without one.
        if (a->err_occurred() != nullptr) {
            g_structs.store(kStructsUnchecked, std::memory_order_release);
            return depth;
        }
        structs = cross_check(*a, own_thread_state(*a, true)) ? kStructsChecked : kStructsOff;
        g_structs.store(structs, std::memory_order_release);
    }
    if (structs != kStructsOff) {
        uintptr_t tstate = own_thread_state(*a, gil);
        if (tstate == 0) return depth; // a thread that never ran Python: native frames only
        count = struct_walk(*a, table, tstate, py, ends_run, max);
        runs = ends_run;
    } else {
        // The public API: only with the GIL, and never with the program's exception pending.
        if (!gil || a->err_occurred() != nullptr) return depth;
        count = walk(*a, table, py, max);
    }
    if (count == 0) return depth;
    uintptr_t merged[StackDepot::kMaxDepth];
    if (capacity > StackDepot::kMaxDepth) capacity = StackDepot::kMaxDepth;
    uint32_t n =
        merge_frames(frames, depth, py, count, a->eval_begin ? &is_eval : &no_eval, a, merged, capacity, runs);
    memcpy(frames, merged, n * sizeof(uintptr_t));
    return n;
}
} // namespace

uint32_t add_python_frames(StackDepot &table, uintptr_t *frames, uint32_t depth, uint32_t capacity) {
    if (!config().python) return depth;
    const Api *a = api();
    if (a == nullptr) return depth;
    // Order matters: nothing below the finalisation check may run once the interpreter is going.
    if (!a->is_initialized() || a->is_finalizing()) return depth;
    return add_frames_of_interpreter(a, table, frames, depth, capacity);
}

void on_new_stack() {
    if (!config().python || g_state.load(std::memory_order_relaxed) != kAbsent) return;
    uint64_t now = monotonic_ns();
    if (now - g_last_look_ns.load(std::memory_order_relaxed) < 1000000000ull) return;
    try_look(kAbsent);
}

const char *interpreter_version() {
    if (!config().python || g_state.load(std::memory_order_acquire) != kFound) return "";
    return g_api.version;
}

} // namespace vramtrace::python
