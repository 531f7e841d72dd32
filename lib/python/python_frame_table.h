// Python frames as pseudo-frames of a native stack (docs/python-frames.md).
//
// A Python frame (file, function, line) is interned by content in a process-wide table and stands
// in a StackDepot stack as one 64-bit value: kPythonFrameTag | id. The tag makes the value a
// non-canonical address (bits 63..47 not all equal), which no return address can be, so the
// report side tells Python frames from native ones by the value alone. Content, not the code
// object's address, is the key: code objects die and their addresses are reused.
//
// The table is a second StackDepot (lock-free, append-only, never freed, ids dense): an entry's
// "frames" are its bytes packed into words (see encode below), so interning compares the whole
// content and equal frames share one id. Reading an entry (decode) takes no lock and allocates
// nothing but the output strings, and the crash writer reads it raw (entry_view).
//
// This part is pure (no CPython): encoding, decoding and the rule that merges Python frames into
// a native stack are unit tested without an interpreter (tests/unit/python/test_python_frames.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tracking/stack_depot.h"

namespace vramtrace::python {

inline constexpr uint64_t kPythonFrameTag = 0x5059000000000000ull; // "PY" in the top bytes
inline constexpr uint64_t kPythonFrameIdMask = 0x0000ffffffffffffull;

inline bool is_python_frame(uint64_t value) { return (value & ~kPythonFrameIdMask) == kPythonFrameTag; }
inline uintptr_t python_frame_value(uint32_t id) { return static_cast<uintptr_t>(kPythonFrameTag | id); }
inline uint32_t python_frame_id(uint64_t value) { return static_cast<uint32_t>(value & kPythonFrameIdMask); }

// Longest file name and function name kept per frame, in bytes (cut on a UTF-8 character
// boundary): with the header word they fit a depot entry (StackDepot::kMaxDepth words).
inline constexpr size_t kMaxNameBytes = 1016;

// Interns one frame; returns its id (>= 1), or 0 when the table could not grow (no memory).
uint32_t intern_frame(StackDepot &table, const char *file, size_t file_len, const char *function,
                      size_t function_len, uint32_t line);

// The raw content of an entry, without copying (for the crash writer, which may not allocate).
struct FrameEntryView {
    const char *file = nullptr;
    size_t file_len = 0;
    const char *function = nullptr;
    size_t function_len = 0;
    uint32_t line = 0;
    bool valid = false; // false for id 0 or an unknown id
};
FrameEntryView entry_view(const StackDepot &table, uint32_t id);

// The frame behind a pseudo-frame value: false (outputs untouched) when the id is unknown.
bool decode_frame(const StackDepot &table, uint64_t value, std::string *file, std::string *function,
                  uint32_t *line);

// Merges Python frames into a native stack, both innermost first (the rule, and why:
// docs/python-frames.md, "Where the Python frames go"):
//   - native frames for which is_eval() is true are the interpreter's evaluation loop, one per
//     run of it; the Python frames come in groups, one per run, innermost first: ends_group[i]
//     says Python frame i is the outermost of its run (nullptr: every frame is a run of its own,
//     as on 3.10, and as assumed when the runs are not known). Counted from the innermost, eval
//     frame k is replaced by group k, and the outermost eval frame that gets a group also takes
//     all remaining Python frames (the native stack may have been cut before the other runs);
//   - eval frames beyond the last group stay as they are;
//   - with no eval frame in the native stack (it was cut at VRAMTRACE_STACK_DEPTH before reaching
//     the interpreter, or the eval function's extent is unknown), the Python frames go after
//     the native ones: they are the callers of everything captured.
// Writes at most `capacity` frames to out (the outermost ones are cut); returns how many.
using IsEvalFrame = bool (*)(uintptr_t address, const void *context);
uint32_t merge_frames(const uintptr_t *native, uint32_t native_depth, const uintptr_t *python,
                      uint32_t python_depth, IsEvalFrame is_eval, const void *context, uintptr_t *out,
                      uint32_t capacity, const uint8_t *ends_group = nullptr);

// The hot-path cache in front of intern_frame (docs/python-frames.md, "Cost"): a direct-mapped,
// lock-free table from what the interpreter's structs say about a frame (code object address,
// instruction offset) to the table id of its (file, function, line). A code object can die and its
// address be reused, so a slot also keeps the code object's file and name object addresses and
// its first line and size, and a hit needs all of them to match. Each slot is a small seqlock: a
// reader that races a writer sees a miss, never a torn entry; a writer that finds the slot busy
// skips the store. `epoch` tells entries of a table that was replaced (a forked child's new
// tracker) from the current ones. No lock, no allocation.
// No default member initialisers: an array of these is on the hot path and stays uninitialised
// (key_of writes every field).
struct FrameKey {
    uint64_t code;  // code object address
    uint64_t instr; // instruction offset (3.11+) or f_lasti (3.10), as a two's-complement value
    uint64_t file;  // co_filename object address
    uint64_t name;  // co_qualname (co_name on 3.10) object address
    uint64_t meta;  // co_firstlineno | code size << 32
};

class FrameCache {
public:
    static constexpr uint32_t kSlots = 4096; // 256 KiB
    bool find(const FrameKey &key, uint32_t epoch, uint32_t *id) const;
    void put(const FrameKey &key, uint32_t epoch, uint32_t id);

private:
    static uint32_t slot_of(const FrameKey &key);
    struct Slot {
        std::atomic<uint64_t> seq{0}; // odd while a writer fills the slot
        std::atomic<uint64_t> word[5]{};
        std::atomic<uint64_t> id_epoch{0}; // id | epoch << 32; id 0 = empty
        uint64_t pad = 0;
    };
    Slot slots_[kSlots];
};

} // namespace vramtrace::python
