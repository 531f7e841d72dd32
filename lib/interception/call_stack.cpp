#include "interception/call_stack.h"

#include "core/config.h"
#include "python/python_runtime.h"
#include "tracking/stack_capture.h"

namespace vramtrace {

__attribute__((noinline)) uint32_t capture_and_intern_stack(Tracker &t) {
    return capture_and_intern_stack(t, this_frame());
}

uint32_t capture_and_intern_stack(Tracker &t, const StartFrame &start) {
    uintptr_t frames[StackDepot::kMaxDepth];
    // A replayed walk's frames are the native stack as it was interned last time. With Python
    // frames merged in, the stack also depends on the interpreter's frames: the Python memo keys
    // it by both.
    const bool native_only = !python::frames_possible();
    StackMemo memo;
    memo.owner = t.depot.instance();
    memo.id_only = native_only;
    uint32_t depth = capture_stack_from(start, frames, config().stack_depth, &memo);
    if (native_only && memo.id != 0) return memo.id;
    // The thread's Python frames in place of the interpreter's own frames; a merged stack the
    // lane remembers comes back as its id. Without Python frames to merge (a thread that never ran
    // Python: PyTorch's autograd and NCCL threads) the stack is the native one, whose id the
    // replayed walk may carry.
    python::PythonStackMemo py;
    py.owner = memo.owner;
    if (!native_only) {
        depth = python::add_python_frames(t.python_frames, frames, depth, StackDepot::kMaxDepth, &py);
        if (py.id != 0) return py.id;
        if (!py.merged && memo.id != 0) return memo.id;
    }
    uint32_t known = t.depot.size();
    uint32_t id = t.depot.intern(frames, depth);
    if (native_only || !py.merged) remember_stack_id(memo, id);
    else python::remember_python_stack(py, id);
    // Ids are dense and handed out in order: a larger id than the count before is a new stack. Its
    // modules are registered now, while they are loaded (a plugin may be dlclose'd before the dump).
    if (id > known) {
        t.modules.note_new_stack();
        python::on_new_stack(); // a libpython loaded since the start
    }
    return id;
}

} // namespace vramtrace
