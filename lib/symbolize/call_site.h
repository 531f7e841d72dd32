// The call site of an allocation: the frame a report shows first, i.e. the user's code that asked
// for the memory, as opposed to the layers it went through to get it.
//
// Rule (applied to a stack's frames leaf first; the first frame owned by none of these is the call
// site):
//   - vramtrace itself:  the frame's module basename starts with "libvramtrace";
//   - the CUDA runtime:  module basename starts with "libcudart", or, for a cudart linked
//                        statically into the program, the function name starts with "cudart::",
//                        "__cudart" or "libcudart_static_" (NVIDIA's static archive names its
//                        internals so), or is "cuda" followed by an upper-case letter (cudaMalloc,
//                        cudaMallocAsync, ...);
//   - the CUDA driver:   module basename starts with "libcuda." (libcuda.so.1), or the function name
//                        is "cu" followed by an upper-case letter (cuMemAlloc_v2, cuMemCreate, ...).
// A stack with Python frames (Frame::python, docs/python-frames.md) has a Python call site instead:
// the innermost Python frame whose file is not part of a Python installation (is_library_python_file),
// else the innermost Python frame. A stack whose call site is a native frame therefore has no Python
// part. Otherwise:
// Function names are the demangled ones, matched from their first character. A frame with no known
// module and no name belongs to none of these, so it can be the call site. find_call_site returns
// the index into stack.frames (not into Snapshot::frames), or -1 when every frame belongs to one of
// the layers above (or the stack is empty).
#pragma once

#include <string_view>

#include "snapshot/report_model.h"

namespace vramtrace {

enum class FrameOwner {
    User,        // anything else: the program, its libraries, unknown frames
    Vramtrace,
    CudaRuntime,
    CudaDriver,
};

// Which layer a frame belongs to, by the rule above. frame.module indexes snapshot.modules; an index
// out of range counts as no module.
FrameOwner classify_frame(const report::Snapshot &snapshot, const report::Frame &frame);

// Python code of a Python installation rather than of the program: a file under
// .../lib/python3.X/ (the standard library, a virtual environment's packages), site-packages or
// dist-packages, a pseudo-file such as "<frozen importlib._bootstrap>", or no file at all.
bool is_library_python_file(std::string_view file);

// Index into stack.frames of the first User frame, -1 when none. A frame index outside
// snapshot.frames counts as an unknown (User) frame.
int find_call_site(const report::Snapshot &snapshot, const report::Stack &stack);

// Sets call_site of every stack in the snapshot.
void assign_call_sites(report::Snapshot &snapshot);

} // namespace vramtrace
