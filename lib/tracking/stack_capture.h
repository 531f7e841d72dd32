// Captures the calling thread's stack as raw return addresses, innermost first, leaving out the
// frames inside libvramtrace.so itself. Uses LLVM's libunwind (linked statically, all symbols local)
// so it unwinds through code without frame pointers (Debian binaries, framework wheels, libcuda)
// from .eh_frame. Symbolization happens only when a report is written.
//
// Fast path: the unwind rule of each return address (where the caller's stack pointer, frame
// pointer and return address are, relative to this frame's stack or frame pointer) is derived once
// from the address's .eh_frame entry, found through libunwind, and kept in a process-wide cache
// keyed by return address (each entry also keeps a word of the code before that address, so a rule
// never outlives a library that was unloaded); each thread also remembers the rules of its last walk
// step by step, so a stack from a call path seen before is walked with a few loads per frame and no
// look-up. Any frame whose rule is not of that simple shape (CFA expressions, signal frames,
// registers saved in other registers, ...) sends the whole capture down the plain libunwind walk,
// so the result is always the one libunwind gives (bench/capture_bench.cpp checks it).
// docs/performance.md has the numbers.
#pragma once

#include <cstdint>

#include "tracking/recent_walks.h"

namespace vramtrace {

// Writes at most max_depth addresses to out; returns how many.
uint32_t capture_stack(uintptr_t *out, uint32_t max_depth);

// Where a walk starts: a live frame's return address, the stack pointer just above its
// return-address slot (its caller's stack pointer after the return) and the frame pointer it saved
// (its caller's). A hook starts the walk at its own frame, so the walk reads none of the frames of
// the tracker's work below it.
struct StartFrame {
    uint64_t ip, sp, bp;
};
// The frame of the function this is inlined into; the builtin gives that function a frame pointer,
// so on x86-64 its saved frame pointer and return address sit just below its caller's stack pointer.
__attribute__((always_inline)) inline StartFrame this_frame() {
    const uint64_t *fp = static_cast<const uint64_t *>(__builtin_frame_address(0));
    return StartFrame{reinterpret_cast<uint64_t>(__builtin_return_address(0)), reinterpret_cast<uint64_t>(fp + 2),
                      fp[0]};
}

// What a capture that a recorded walk served (recent_walks.h) tells its caller: the id that the
// caller attached to that walk the last time (remember_stack_id), so that the same frames need not
// be interned again. The walk's frames are exactly what a fresh walk would give, so the id is
// that of the same stack.
struct StackMemo {
    uint64_t owner = 0;          // in: whose ids (the caller's StackDepot::instance())
    bool id_only = false;        // in: when an id is found, the frames are not needed (out unwritten)
    uint32_t id = 0;             // out: 0 when the capture was walked, or no id is attached
    walks::WalkToken walk;       // out: which walk served it; serial 0 when none
};
uint32_t capture_stack(uintptr_t *out, uint32_t max_depth, StackMemo *memo);
// The same from `start`, whose frame must be live (a caller's, up the stack from here). Frames of
// this library at the start of the walk are left out, as in capture_stack.
uint32_t capture_stack_from(const StartFrame &start, uintptr_t *out, uint32_t max_depth, StackMemo *memo);
// Attaches `id` to the walk that served memo's capture, if this thread's lane still holds it.
void remember_stack_id(const StackMemo &memo, uint32_t id);

// The same stack by libunwind's own step-by-step walk, without the cache (the fallback of
// capture_stack, and the reference it is checked against in bench/).
uint32_t capture_stack_unwinder(uintptr_t *out, uint32_t max_depth);

// Cache counters since start (for bench/ and the performance docs): rules derived from .eh_frame,
// captures that fell back to the libunwind walk.
struct StackCaptureStats {
    uint64_t rules_derived;
    uint64_t fallbacks;
};
StackCaptureStats stack_capture_stats();

// True when address lies inside this library's own image.
bool address_in_self(uintptr_t address);

} // namespace vramtrace
