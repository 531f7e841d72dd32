// The CPython interpreter of this process, found at run time: the table of its public functions,
// the state of the search, whether the calling thread holds the GIL, and the walk over the
// thread's frames through the public API (PyEval_GetFrame, PyFrame_GetBack/GetCode/GetLineNumber:
// the same in every version, but slow, 0.5-0.7 us a frame, and only for a thread that holds the
// GIL). Internal to lib/python (python_runtime.cpp, python_struct_reader.cpp).
//
// api(), holds_gil() and own_thread_state() are on the path of every allocation and stay inline
// here; the search itself (try_look) is out of line, it runs once, or once a second while no
// interpreter is found.
#pragma once

#include <atomic>
#include <cstdint>

#include "tracking/stack_depot.h"

// On the globals shared between the files of lib/python: they are read on every allocation, and
// a declaration the compiler knows to be hidden is addressed directly, never through the GOT.
#define VT_PYTHON_HIDDEN __attribute__((visibility("hidden")))

namespace vramtrace::python::cpython {

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
extern VT_PYTHON_HIDDEN std::atomic<int> g_state;
extern VT_PYTHON_HIDDEN std::atomic<uint64_t> g_last_look_ns; // when the last search began
// Written by the one thread that moved g_state to kLooking, published by kFound.
extern VT_PYTHON_HIDDEN Api g_api;

// Searches for the interpreter when g_state is still `from` (the thread that moves it to kLooking
// does, everyone else returns at once), then publishes what it found. Says once on stderr when an
// interpreter is there but cannot be used.
void try_look(int from);

// The interpreter's functions, searched for at the first call; nullptr while there is none.
inline const Api *api() {
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
inline bool holds_gil(const Api &a) {
    Object *current = a.current_state();
    if (current == nullptr) return false;
    if (a.minor >= 12) return true;
    return a.gil_check() == 1 && a.this_thread_state() == current;
}

// The thread state whose frames are this thread's: the attached one when it holds the GIL, else
// the one PyGILState bound to it (NULL for a thread that never ran Python).
inline uintptr_t own_thread_state(const Api &a, bool gil) {
    Object *t = gil ? a.current_state() : a.this_thread_state();
    return reinterpret_cast<uintptr_t>(t);
}

// The Python frames of the calling thread through the public API, innermost first, as
// pseudo-frame values (python_frame_table.h); at most `max`. The thread holds the GIL and has no
// Python exception pending.
uint32_t api_walk(const Api &a, StackDepot &table, uintptr_t *out, uint32_t max);

} // namespace vramtrace::python::cpython
