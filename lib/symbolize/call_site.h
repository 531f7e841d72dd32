// The call site of an allocation: the frame a report shows first, i.e. the code that asked for the
// memory, as opposed to the layers it went through to get it; the framework entry it went through
// ("via"), and the category of memory the stack makes. All from the frame rules (frame_rules.h,
// docs/attribution.md), applied to a stack's frames leaf first:
//   - a stack with Python frames (Frame::python, docs/python-frames.md) has a Python call site: the
//     innermost Python frame no placement rule matches (the shipped rules skip a Python
//     installation's files: the standard library, site-packages, dist-packages, "<frozen ...>") and
//     that has a file, else the innermost Python frame;
//   - otherwise the innermost frame no placement rule matches (vramtrace, the CUDA runtime and
//     driver, framework allocators and dispatchers are skipped); else the innermost frame a `name`
//     rule matches (an autograd node, a library's handle call); else the innermost frame outside
//     vramtrace and the CUDA layers; else none (-1).
//   - via: the outermost frame inside the call site (between it and the leaf) that a name rule
//     matches (a library's handle call), else the outermost one an entry rule matches; -1: none;
//   - category: of the innermost frame whose rule names one; Other when none does.
// A frame index outside snapshot.frames counts as an unknown frame, which no rule matches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot_model.h"
#include "symbolize/frame_rules.h"

namespace vramtrace {

enum class FrameOwner {
    User,        // anything else: the program, its libraries, frameworks, unknown frames
    Vramtrace,
    CudaRuntime,
    CudaDriver,
};

// Which CUDA layer a frame belongs to: the group of the placement rule that matches it
// (vramtrace, cuda_runtime, cuda_driver). frame.module indexes snapshot.modules; an index out of
// range counts as no module.
FrameOwner classify_frame(const snapshot::Snapshot &snapshot, const snapshot::Frame &frame);

// Python code of a Python installation rather than of the program: a file under
// .../lib/python3.X/ (the standard library, a virtual environment's packages), site-packages or
// dist-packages, a pseudo-file such as "<frozen importlib._bootstrap>", or no file at all.
bool is_library_python_file(std::string_view file);

struct StackAttribution {
    int call_site = -1;                  // index into stack.frames, -1: none
    int via = -1;                        // index into stack.frames, -1: none
    Category category = Category::Other;
    bool named_site = false;             // the call site is a name rule's frame (no frame of the program)
};

// The rules applied to the stacks of one snapshot, each distinct frame judged once.
class Attributor {
public:
    explicit Attributor(const snapshot::Snapshot &snapshot, const FrameRules &rules = FrameRules::from_environment());
    StackAttribution attribute(const snapshot::Stack &stack);

private:
    const FrameRules::Verdict &verdict(uint32_t frame);
    const snapshot::Snapshot &snapshot_;
    const FrameRules &rules_;
    std::vector<FrameRules::Verdict> verdicts_; // by Snapshot::frames index
    std::vector<uint8_t> judged_;
};

// Index into stack.frames of the call site, -1 when none (Attributor::attribute's call_site).
int find_call_site(const snapshot::Snapshot &snapshot, const snapshot::Stack &stack);

// Sets call_site, via, category and the labels of every stack in the snapshot.
void assign_call_sites(snapshot::Snapshot &snapshot);
// Sets them on one stack from its attribution: site_label for a name rule's call site
// ("AddmmBackward0 (libtorch_cpu.so)"), via_label for the via frame (framework_frame_label).
void apply_attribution(const snapshot::Snapshot &snapshot, snapshot::Stack &stack, const StackAttribution &a,
                       const FrameRules &rules = FrameRules::from_environment());

// How a report names a frame that is a "via" or a name rule's call site: a Python frame as its
// module's dotted name and qualified name (torch.optim.adamw.AdamW.step), a native frame as its
// function without parameters, or the class component for a show=class rule (AddmmBackward0);
// Cython's C names of Python functions as the dotted Python name (cupy.cuda.cufft.Plan1d.__init__).
std::string framework_frame_label(const snapshot::Snapshot &snapshot, const snapshot::Frame &frame,
                                  const FrameRules &rules = FrameRules::from_environment());

} // namespace vramtrace
