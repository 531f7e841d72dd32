// The struct reader's state, its start-up and its cross-check (python_struct_reader.h).
#include "python/python_struct_reader.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/config.h"
#include "core/log.h"

namespace vramtrace::python::cpython {

std::atomic<int> g_structs{kStructsOff};
Layout g_layout;
int g_test_skew = 0;
FrameCache g_cache;
std::atomic<uint32_t> g_cache_epoch{0};
std::atomic<uint32_t> g_table_size_seen{0};

void choose_struct_reader(const Api &a) {
    g_test_skew = static_cast<int>(config().python_test_skew);
    if (!config().python_structs) {
        log_debug("Python frames: struct reader off (VRAMTRACE_PYTHON_STRUCTS=0)");
    } else if (layout_for(a.minor, g_layout)) {
        g_structs.store(kStructsUnchecked, std::memory_order_relaxed);
    } else {
        log_warning("Python frames: no struct layout for CPython %s; only threads that hold the GIL get Python "
                    "frames, at a higher cost", a.version);
    }
}

// ---- The cross-check (once, with the GIL) -------------------------------------------------------

namespace {

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

} // namespace

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

} // namespace vramtrace::python::cpython
