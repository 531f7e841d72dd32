// The calling thread's Python frames merged into its native stack (python_runtime.h): the entry
// points, which of the two readers serves a stack, and when the struct reader's cross-check runs.
//
// Two ways to read the frames (docs/python-frames.md, "How they are read"):
// - the interpreter's own structs, read in place with a layout per minor version (3.10 to 3.13),
//   also for a thread that released the GIL (python_struct_reader.h). The layout is cross-checked
//   once against the public API, with the GIL, and turned off with one line if they disagree;
// - the public API, the same in every version but slow and only for a thread that holds the GIL
//   (python_interpreter.h): used for the cross-check, and for everything when the struct reader
//   is off.
#include "python/python_runtime.h"

#include <atomic>
#include <cstring>

#include "core/clock.h"
#include "core/config.h"
#include "python/python_frame_table.h"
#include "python/python_interpreter.h"
#include "python/python_struct_reader.h"

namespace vramtrace::python {

using namespace cpython;

namespace {

bool is_eval(uintptr_t address, const void *context) {
    const Api *a = static_cast<const Api *>(context);
    return address > a->eval_begin && address <= a->eval_end;
}

bool no_eval(uintptr_t, const void *) { return false; }

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
        count = api_walk(*a, table, py, max);
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

bool frames_possible() { return config().python && api() != nullptr; }

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
