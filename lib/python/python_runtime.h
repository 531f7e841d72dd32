// The CPython interpreter of this process, if it has one, found at run time (docs/python-frames.md).
//
// Nothing links against libpython: the functions are looked up with dlsym(RTLD_DEFAULT, ...), so
// they are found only when the process already has them in its global scope (a python executable,
// which contains libpython and exports its symbols, or a libpython3.X.so loaded globally). Any
// other program never sees a difference.
//
// add_python_frames() is the one entry point of the hook path. It reads the calling thread's own
// Python frames, whether or not the thread holds the GIL, from the interpreter's structs (a layout
// per minor version, 3.10-3.13, cross-checked once against the public API), calling nothing that
// takes references, allocates or needs the GIL; a thread that never ran Python gets none. When the
// struct reader is off (VRAMTRACE_PYTHON_STRUCTS=0, an unknown version, a failed cross-check), the
// public API serves threads that hold the GIL, with no Python exception pending. Either way it
// runs only while the interpreter is 3.10 or later, initialised and not finalising. The caller
// already holds vramtrace's reentrancy guard, so nothing that runs inside is recorded. It never
// releases or takes the GIL and runs no Python code.
#pragma once

#include <cstdint>

#include "python/python_stack_memo.h"
#include "tracking/stack_depot.h"

namespace vramtrace::python {

// The lane's memo of merged stacks (python_stack_memo.h), as add_python_frames uses it.
struct PythonStackMemo {
    uint64_t owner = 0;  // in: StackDepot::instance() of the depot the caller interns in; 0: no memo
    uint32_t id = 0;     // out: the id the merged stack was interned under before (frames unchanged)
    MemoTicket ticket;   // out: where the pair was written down, for remember_python_stack()
    bool merged = false; // out: Python frames were merged in (else the stack is the native one)
};

// Merges the calling thread's Python frames into frames[0..depth) (native, innermost first),
// interning them in `table` (through a cache keyed by code object and instruction). frames has
// room for `capacity` entries. Returns the new depth; the stack is unchanged when no Python frame
// can be taken. With a memo whose lane remembers this native stack with these Python frames,
// sets memo->id and leaves frames as they are; memo->merged tells whether frames changed.
uint32_t add_python_frames(StackDepot &table, uintptr_t *frames, uint32_t depth, uint32_t capacity,
                           PythonStackMemo *memo = nullptr);
// After the merged stack was interned as `id`: the lane remembers it for memo's pair.
void remember_python_stack(const PythonStackMemo &memo, uint32_t id);

// Whether add_python_frames() can change a stack now: Python frames are on and an interpreter has
// been found (looking for one at the first call, as add_python_frames does).
bool frames_possible();

// Called when the tracker interns a new stack: while no interpreter has been found, looks again
// (at most once a second), for a libpython loaded after the start.
void on_new_stack();

// "3.11.2" when an interpreter was found and Python frames are on; "" otherwise. Stable storage.
const char *interpreter_version();

} // namespace vramtrace::python
