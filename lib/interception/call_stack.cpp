#include "interception/call_stack.h"

#include "core/config.h"
#include "python/python_runtime.h"
#include "tracking/stack_capture.h"

namespace vramtrace {

uint32_t capture_and_intern_stack(Tracker &t) {
    uintptr_t frames[StackDepot::kMaxDepth];
    uint32_t depth = capture_stack(frames, config().stack_depth);
    // The Python frames of a thread that holds the GIL, in place of the interpreter's own frames.
    depth = python::add_python_frames(t.python_frames, frames, depth, StackDepot::kMaxDepth);
    uint32_t known = t.depot.size();
    uint32_t id = t.depot.intern(frames, depth);
    // Ids are dense and handed out in order: a larger id than the count before is a new stack. Its
    // modules are registered now, while they are loaded (a plugin may be dlclose'd before the dump).
    if (id > known) {
        t.modules.note_new_stack();
        python::on_new_stack(); // a libpython loaded since the start
    }
    return id;
}

} // namespace vramtrace
