// The two kinds of word a stack walk reads: a word of the stack, and the aligned word of code that
// holds the end of the call instruction before a return address (stack_capture.cpp keys its rules
// by it, so that a rule never outlives a library unloaded and replaced at the same address).
#pragma once

#include <cstdint>
#include <cstring>

namespace vramtrace {

inline uint64_t load_word(uint64_t address) {
    uint64_t v;
    std::memcpy(&v, reinterpret_cast<const void *>(address), sizeof v);
    return v;
}

// Inside the page of the call's last byte (ip - 1), so it is mapped whenever ip is a real return
// address.
inline uint64_t code_word(uint64_t ip) { return load_word((ip - 1) & ~uint64_t{7}); }

} // namespace vramtrace
