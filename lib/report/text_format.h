// How reports write the figures of a snapshot as text: counts, sizes, durations, devices,
// addresses, frames and NVTX range stacks. Shared by the summary (in the library and the CLI) and
// the CLI's commands and exports. None of them throws anything but std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "snapshot/snapshot_model.h"

namespace vramtrace::report {

// Decimal digits of value: "0", "4194304". Every report and export writes counts through this.
std::string to_dec(uint64_t value);
// The same for a signed value (a pid, a device ordinal with -1 for host-pinned memory): "-1".
std::string to_dec_signed(int64_t value);
// Human-readable size in binary units, two decimals, rounded half up: "512 B", "1.50 KiB",
// "3.00 MiB", "1.00 GiB", ... up to EiB.
std::string format_bytes(uint64_t bytes);
// The same followed by the exact count where it is not already exact: "3.00 MiB (3145728 B)";
// below 1 KiB just "512 B".
std::string format_bytes_exact(uint64_t bytes);
// A duration: "850 ms", "5.25 s", "12 min 05 s", "3 h 07 min".
std::string format_duration(uint64_t ns);
// The device column: "cuda:N" for an ordinal, "host" for -1 (host-pinned), "unknown" for -2.
std::string device_label(int device);
// The order reports list devices in: GPUs by ordinal, then host-pinned (-1), then unknown (-2).
inline int64_t device_order_rank(int device) { return device >= 0 ? int64_t(device) : int64_t(1) << 40 | int64_t(-device); }
// Lowercase hexadecimal with a 0x prefix and no padding: "0x7f3a00000000", "0x0".
std::string hex_u64(uint64_t value);
// value in `base` (10 or 16), lowercase, zero-padded on the left to at least `width` digits:
// zero_padded(7, 2, 10) is "07". Keys that must sort as numbers use it.
std::string zero_padded(uint64_t value, int width, int base);
// A frame as one line of text:
//   "make_buffer(unsigned long) at /src/train.cpp:42 (train)"  with file:line,
//   "worker() (train+0x3000)"                                  without file:line,
//   "?? (0x7fffe0001000)"                                      without function and module,
//   "Net.forward at /src/model.py:88 (python)"                 a Python frame.
// A frame with inlined calls starts with the innermost one and names each function it was inlined
// into in parentheses, the real function last, then the module as above:
//   "g() at /src/a.cpp:3 (inlined into f() at /src/a.cpp:10) (train)".
std::string describe_frame(const snapshot::Snapshot &snapshot, const snapshot::Frame &frame);

// How reports name a range stack: "step > ml:forward [phase]" (a range of a named domain as
// DOMAIN:NAME, a range with a category followed by it in brackets, outermost first); "(no range)"
// for 0; "(range N, not in the snapshot)" for an unknown id.
std::string range_stack_label(const snapshot::Snapshot &s, uint32_t id);
// The same for one range stack that is known ("step > ml:forward [phase]").
std::string range_stack_label(const snapshot::RangeStack &r);
// " [CATEGORY]" for frame i of r when it has a category, else "".
std::string range_category_suffix(const snapshot::RangeStack &r, size_t i);

} // namespace vramtrace::report
