// The code of the objects loaded with the process (the program, its preloads and their
// dependencies), which dlclose never unloads: a return address inside it always has the same code,
// so a recorded stack walk (recent_walks.h) need not check the code word of such a frame again.
// Everything else (an object dlopen'ed later, which dlclose may replace by another at the same
// address; code with no object) keeps its code-word check.
//
// The objects present when the library constructor runs are taken as the start-up set, and only
// when the library itself was loaded with the process: loaded later (through
// CUDA_INJECTION64_PATH), what is present then may have been dlopen'ed and may go away, so the set
// stays empty. An object that another library's constructor dlopen'ed before ours ran counts as
// loaded with the process. No lock, no malloc after note_loaded_objects().
#pragma once

#include <cstdint>

namespace vramtrace::startup_code {

// Notes the executable segments of every object loaded now. Call once, from the library
// constructor, when the library was loaded with the process.
void note_loaded_objects();

// Whether the code word before return address `ip` lies in an object noted above (false for every
// address before note_loaded_objects() has run, and for addresses beyond its first kMaxRanges
// segments).
bool holds(uint64_t ip);

constexpr unsigned kMaxRanges = 512;

// Tests only: forgets the noted objects.
void forget_for_testing();

} // namespace vramtrace::startup_code
