#include "symbolize/call_site.h"

#include <string_view>

namespace vramtrace {

namespace {

std::string_view basename_of(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool upper(char c) { return c >= 'A' && c <= 'Z'; }

// "prefix" followed by an upper-case letter: cudaMalloc, cuMemAlloc_v2.
bool prefix_then_upper(std::string_view s, std::string_view prefix) {
    return s.size() > prefix.size() && starts_with(s, prefix) && upper(s[prefix.size()]);
}

} // namespace

FrameOwner classify_frame(const report::Snapshot &snapshot, const report::Frame &frame) {
    if (frame.module >= 0 && static_cast<size_t>(frame.module) < snapshot.modules.size()) {
        std::string_view name = basename_of(snapshot.modules[static_cast<size_t>(frame.module)].path);
        if (starts_with(name, "libvramtrace")) return FrameOwner::Vramtrace;
        if (starts_with(name, "libcudart")) return FrameOwner::CudaRuntime;
        if (starts_with(name, "libcuda.")) return FrameOwner::CudaDriver;
        if (starts_with(name, "libcupti")) return FrameOwner::CudaDriver; // the CUPTI backend's callbacks
    }
    std::string_view fn = frame.function;
    // NVIDIA's libcudart_static.a names its internal functions libcudart_static_<hash> (seen with
    // CUDA 13.0 on the GPU machine).
    if (starts_with(fn, "cudart::") || starts_with(fn, "__cudart") || starts_with(fn, "libcudart_static_") ||
        prefix_then_upper(fn, "cuda"))
        return FrameOwner::CudaRuntime;
    if (prefix_then_upper(fn, "cu")) return FrameOwner::CudaDriver;
    return FrameOwner::User;
}

bool is_library_python_file(std::string_view file) {
    return file.empty() || file[0] == '<' || file.find("/site-packages/") != std::string_view::npos ||
           file.find("/dist-packages/") != std::string_view::npos ||
           file.find("/lib/python3") != std::string_view::npos;
}

int find_call_site(const report::Snapshot &snapshot, const report::Stack &stack) {
    // A stack with Python frames: the program's own Python line (see call_site.h).
    int first_python = -1;
    for (size_t i = 0; i < stack.frames.size(); ++i) {
        uint32_t f = stack.frames[i];
        if (f >= snapshot.frames.size() || !snapshot.frames[f].python) continue;
        if (first_python < 0) first_python = static_cast<int>(i);
        if (!is_library_python_file(snapshot.frames[f].file)) return static_cast<int>(i);
    }
    if (first_python >= 0) return first_python;
    for (size_t i = 0; i < stack.frames.size(); ++i) {
        uint32_t f = stack.frames[i];
        if (f >= snapshot.frames.size()) return static_cast<int>(i);
        if (classify_frame(snapshot, snapshot.frames[f]) == FrameOwner::User) return static_cast<int>(i);
    }
    return -1;
}

void assign_call_sites(report::Snapshot &snapshot) {
    for (report::Stack &s : snapshot.stacks) s.call_site = find_call_site(snapshot, s);
}

} // namespace vramtrace
