// Helpers shared by the exporters: frame naming with inlined frames expanded, the device filter,
// JSON text, the tracked-bytes timeline and the stacks weighted by live bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "export/export.h"
#include "snapshot/snapshot_model.h"
#include "report/text_format.h"

namespace vramtrace::exporter {

// One frame as the formats with frames show it. A snapshot frame with inlined functions becomes
// several: the inlined ones innermost first, then the real function (Frame::inlined's order).
struct NamedFrame {
    std::string name;        // function, or "module+0xoffset", or "0xaddress" (frame_name)
    std::string file;        // "" without debug info
    uint32_t line = 0;       // 0 without debug info
    bool inlined = false;    // an inlined function (not the real frame at this address)
    int frame = -1;          // index into Snapshot::frames it came from
};

// The name of a frame without file:line: its function, else "libfoo.so+0x3000", else "0x7f...".
std::string frame_name(const snapshot::Snapshot &snapshot, const snapshot::Frame &frame);
// The frames of a stack, leaf first, inlined frames expanded. Empty for a null stack.
std::vector<NamedFrame> expand_stack(const snapshot::Snapshot &snapshot, const snapshot::Stack *stack);
// The call site of a stack as one line, as the summary names it (Stack::site_label for a frame
// that names the call site of a stack without the program's frames, else report::describe_frame),
// or the summary's notes "(no stack captured)" / "(no call site: ...)".
std::string call_site_text(const snapshot::Snapshot &snapshot, uint32_t stack_id);
inline constexpr std::string_view kNoStackName = "(no stack captured)";
// The attribution of the frame rules (docs/attribution.md): a stack's memory category ("other" for
// a stack without one and for no stack) and its via label ("" when none).
std::string_view category_text(const snapshot::Snapshot &snapshot, uint32_t stack_id);
std::string_view via_text(const snapshot::Snapshot &snapshot, uint32_t stack_id);
// Whether some stack of the snapshot has a category other than "other": formats that show the
// categories as colours show them only then (a program no rule knows would be all one colour).
bool has_categories(const snapshot::Snapshot &snapshot);
// The categories in the order reports list them (the summary's).
inline constexpr std::string_view kCategories[] = {"parameter",         "optimizer_state", "activation", "backward",
                                                   "library_workspace", "communication",   "other"};

// Why a snapshot has no event history, for the exporters' notes: a merged snapshot (process.reason
// "merge") leaves it out on purpose, since its processes' clocks differ (docs/cli.md); any other was
// written with VRAMTRACE_EVENTS=0 or by a vramtrace that kept none.
std::string no_history_reason(const snapshot::Snapshot &snapshot);

// Whether memory of this kind counts as held (snapshot::counts_as_held for a kind name).
bool held_kind(std::string_view kind);
bool device_wanted(const Options &options, int device);

// Appends `text` as a JSON string (quotes included); control characters as \uXXXX.
void append_json_string(std::string &out, std::string_view text);
// Nanoseconds as microseconds with three decimals: 1234567 -> "1234.567".
std::string micros_text(uint64_t ns);
using report::to_dec; // decimal digits, as every report writes them
using report::to_dec_signed;

// The time origin of exported timelines (CLOCK_MONOTONIC ns): the process start when the snapshot
// can place it on the monotonic clock (ProcessInfo::dump_monotonic_ns), else the earliest event or
// live allocation; never later than any of them.
uint64_t time_origin_ns(const snapshot::Snapshot &snapshot);

// Tracked bytes over time per device. From the event history when there is one: a first point at
// the first event holding what was live before it (devices[].current_bytes minus the history's net
// change, so a wrapped ring still ends at the dump's value), then one point per alloc/free. Without
// history, from the live allocations alone (their time_ns, ascending): only what survived to the
// dump, a lower bound of the real curve.
struct SeriesPoint {
    uint64_t time_ns = 0;
    uint64_t bytes = 0;
};
struct DeviceSeries {
    int device = 0;
    std::vector<SeriesPoint> points; // time ascending
    uint64_t max_bytes = 0;
};
struct Timeline {
    bool from_events = false;
    std::vector<DeviceSeries> devices; // ascending ordinal, only wanted devices
};
Timeline build_timeline(const snapshot::Snapshot &snapshot, const Options &options);

// Bytes and allocations per (device, stack): what was live at the dump (held kinds only) or at each
// device's peak (Snapshot::peaks). Sorted by device, then stack id.
struct WeightedStack {
    int device = 0;
    uint32_t stack = 0;   // Stack::id, 0 = none
    uint64_t bytes = 0;
    uint64_t count = 0;
};
std::vector<WeightedStack> weighted_stacks(const snapshot::Snapshot &snapshot, const Options &options, At at);

// The events of the history that the options keep (device filter; marks always), oldest first.
std::vector<const snapshot::Event *> wanted_events(const snapshot::Snapshot &snapshot, const Options &options);

} // namespace vramtrace::exporter
