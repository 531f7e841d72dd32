// Finding CPython at run time (python_interpreter.h): the interpreter's functions looked up in the
// process's global scope, its version, and the walk over the calling thread's frames through the
// public API.
#include "python/python_interpreter.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <link.h>

#include "core/clock.h"
#include "core/log.h"
#include "device/real_functions.h"
#include "python/python_frame_table.h"
#include "python/python_struct_reader.h"

namespace vramtrace::python::cpython {

std::atomic<int> g_state{kNotTried};
std::atomic<uint64_t> g_last_look_ns{0};
Api g_api;

namespace {

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
    choose_struct_reader(a);
    log_debug("Python frames: CPython %s found%s", a.version,
              a.eval_begin ? "" : " (evaluation loop's extent unknown: Python frames go after the native ones)");
    return kFound;
}

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

} // namespace

void try_look(int from) {
    if (!g_state.compare_exchange_strong(from, kLooking, std::memory_order_acq_rel)) return;
    g_last_look_ns.store(monotonic_ns(), std::memory_order_relaxed);
    g_state.store(look(), std::memory_order_release);
}

// The cyclic GC is held off during the walk: 3.10/3.11 may collect inside the allocation of a
// frame object, which would run finalisers (any Python code, perhaps freeing CUDA memory while the
// program's allocator is in the middle of an allocation). Disabling and re-enabling is invisible
// to the program: it holds no GIL meanwhile, and the allocations counted meanwhile still trigger a
// collection at the next opportunity.
uint32_t api_walk(const Api &a, StackDepot &table, uintptr_t *out, uint32_t max) {
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

} // namespace vramtrace::python::cpython
