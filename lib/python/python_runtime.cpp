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
#include "python/python_stack_memo.h"
#include "python/python_struct_reader.h"

namespace vramtrace::python {

using namespace cpython;

namespace {

// The stack memo is on in every build but the measurement one that compiles it out
// (lib/CMakeLists.txt, VRAMTRACE_BENCH_WITHOUT_PYTHON_STACK_MEMO), which counts what it saves.
#ifndef VT_PYTHON_STACK_MEMO
#define VT_PYTHON_STACK_MEMO 1
#endif
constexpr bool kPythonStackMemo = VT_PYTHON_STACK_MEMO != 0;

bool is_eval(uintptr_t address, const void *context) {
    const Api *a = static_cast<const Api *>(context);
    return address > a->eval_begin && address <= a->eval_end;
}

bool no_eval(uintptr_t, const void *) { return false; }

// The stack's id when the lane's memo holds this (native stack, Python chain) pair, else 0 (and
// memo->ticket names where the pair was written down, if it was).
uint32_t memoized_id(PythonStackMemo *memo, const uintptr_t *frames, uint32_t depth, const RawFrame *raw,
                     const FrameKey *keys, const uint8_t *ends_run, uint32_t count, uint32_t epoch) {
    if (!kPythonStackMemo || memo == nullptr || memo->owner == 0) return 0;
    MemoQuery q;
    q.native = frames, q.native_depth = depth, q.keys = keys, q.count = count, q.owner = memo->owner, q.epoch = epoch;
    if (!LaneStackMemo::fits(q)) return 0;
    for (uint32_t i = 0; i < count; ++i) {
        if (raw[i].fixed_line != 0) return 0; // a traced frame's line is not its instruction's
        q.run_ends |= uint64_t{ends_run[i] != 0} << i;
    }
    LaneStackMemo *m = LaneStackMemo::acquire();
    if (m == nullptr) return 0;
    uint32_t id = m->find(q, &memo->ticket);
    m->release();
    return id;
}

// The walk and the merge, apart from add_python_frames so that a process without Python (or with
// Python frames off) does not reserve their buffers (about 10 KiB here, more below) on the stack of
// every allocating thread.
__attribute__((noinline)) uint32_t add_frames_of_interpreter(const Api *a, StackDepot &table, uintptr_t *frames,
                                                             uint32_t depth, uint32_t capacity,
                                                             PythonStackMemo *memo) {
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
        RawFrame raw[StackDepot::kMaxDepth];
        int read = read_chain(*a, g_layout, tstate, raw, ends_run, max);
        if (read <= 0) return depth;
        // The keys only of a chain the memo can hold: every thread reserves this frame once an
        // interpreter is found, so it stays small for threads with small stacks.
        FrameKey keys[LaneStackMemo::kMaxPython];
        const bool keyed = uint32_t(read) <= LaneStackMemo::kMaxPython;
        if (keyed)
            for (int i = 0; i < read; ++i) keys[i] = key_of(g_layout, raw[i]);
        uint32_t epoch = cache_epoch(table);
        uint32_t id = keyed ? memoized_id(memo, frames, depth, raw, keys, ends_run, uint32_t(read), epoch) : 0;
        if (id != 0) {
            memo->id = id;
            return depth;
        }
        count = frame_values(*a, table, raw, keyed ? keys : nullptr, uint32_t(read), epoch, py);
        // A table that could not take every frame now may take them later: such a stack is not
        // remembered.
        if (memo != nullptr && count != uint32_t(read)) memo->ticket = MemoTicket{};
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
    if (memo != nullptr) memo->merged = true;
    return n;
}
} // namespace

uint32_t add_python_frames(StackDepot &table, uintptr_t *frames, uint32_t depth, uint32_t capacity,
                           PythonStackMemo *memo) {
    if (!config().python) return depth;
    const Api *a = api();
    if (a == nullptr) return depth;
    // Order matters: nothing below the finalisation check may run once the interpreter is going.
    if (!a->is_initialized() || a->is_finalizing()) return depth;
    return add_frames_of_interpreter(a, table, frames, depth, capacity, memo);
}

void remember_python_stack(const PythonStackMemo &memo, uint32_t id) {
    if (memo.ticket.serial == 0 || id == 0) return;
    LaneStackMemo *m = LaneStackMemo::acquire();
    if (m == nullptr) return;
    m->remember(memo.ticket, id);
    m->release();
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
