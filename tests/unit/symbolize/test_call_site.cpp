#include <catch2/catch.hpp>

#include "symbolize/call_site.h"

using vramtrace::assign_call_sites;
using vramtrace::classify_frame;
using vramtrace::find_call_site;
using vramtrace::FrameOwner;
namespace snapshot = vramtrace::snapshot;

namespace {

// A snapshot with the modules every case uses, and frames added per case.
struct Builder {
    snapshot::Snapshot s;
    enum : int { kExe = 0, kVramtrace, kCudart, kCuda, kLibc, kCudaLookalike, kCudartLookalike };
    Builder() {
        s.modules = {
            {"/home/me/train", 0x555500000000, "aa"},
            {"/opt/vramtrace/lib/libvramtrace.so", 0x7f0000000000, "bb"},
            {"/usr/local/cuda/lib64/libcudart.so.13", 0x7f0100000000, "cc"},
            {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", 0x7f0200000000, "dd"},
            {"/lib/x86_64-linux-gnu/libc.so.6", 0x7f0300000000, "ee"},
            {"/usr/lib/libcudadebugger.so.1", 0x7f0400000000, ""}, // "libcuda" but not "libcuda."
            {"/opt/lib/mycudart_helpers.so", 0x7f0500000000, ""},   // "cudart" not at the start
        };
    }
    uint32_t frame(int module, const char *function) {
        snapshot::Frame f;
        f.address = 0x1000 + s.frames.size();
        f.module = module;
        f.function = function;
        s.frames.push_back(f);
        return static_cast<uint32_t>(s.frames.size() - 1);
    }
    snapshot::Stack stack(std::vector<uint32_t> frames) {
        snapshot::Stack st;
        st.id = static_cast<uint32_t>(s.stacks.size() + 1);
        st.frames = std::move(frames);
        return st;
    }
};

} // namespace

TEST_CASE("call site: vramtrace, libcudart and libcuda modules are skipped", "[call_site]") {
    Builder b;
    uint32_t hook = b.frame(Builder::kVramtrace, "vramtrace::hook_cuMemAlloc_v2(unsigned long long*, unsigned long)");
    uint32_t hook2 = b.frame(Builder::kVramtrace, "");
    uint32_t rt = b.frame(Builder::kCudart, "");                 // stripped cudart: no name
    uint32_t rt2 = b.frame(Builder::kCudart, "cudaMalloc");
    uint32_t drv = b.frame(Builder::kCuda, "");                  // stripped driver
    uint32_t user = b.frame(Builder::kExe, "make_buffer(unsigned long)");
    uint32_t main_ = b.frame(Builder::kExe, "main");

    CHECK(find_call_site(b.s, b.stack({hook, hook2, rt, rt2, user, main_})) == 4);
    CHECK(find_call_site(b.s, b.stack({hook, drv, rt, user, main_})) == 3);
    CHECK(find_call_site(b.s, b.stack({user, main_})) == 0);
    CHECK(find_call_site(b.s, b.stack({hook, main_})) == 1);
    CHECK(classify_frame(b.s, b.s.frames[hook]) == FrameOwner::Vramtrace);
    CHECK(classify_frame(b.s, b.s.frames[rt]) == FrameOwner::CudaRuntime);
    CHECK(classify_frame(b.s, b.s.frames[drv]) == FrameOwner::CudaDriver);
    CHECK(classify_frame(b.s, b.s.frames[user]) == FrameOwner::User);
}

TEST_CASE("call site: a statically linked cudart inside the executable, by function name", "[call_site]") {
    Builder b;
    uint32_t hook = b.frame(Builder::kVramtrace, "cuMemAlloc_v2");
    uint32_t inner = b.frame(Builder::kExe, "cudart::driverHelper::mallocPtr(unsigned long, void**)");
    uint32_t inner2 = b.frame(Builder::kExe, "__cudart1234");
    uint32_t api = b.frame(Builder::kExe, "cudaMallocAsync");
    uint32_t api2 = b.frame(Builder::kExe, "cudaMalloc");
    uint32_t user = b.frame(Builder::kExe, "Model::allocate(int)");

    CHECK(find_call_site(b.s, b.stack({hook, inner, inner2, api, user})) == 4);
    CHECK(find_call_site(b.s, b.stack({hook, inner, api2, user})) == 3);
    CHECK(classify_frame(b.s, b.s.frames[inner]) == FrameOwner::CudaRuntime);
    CHECK(classify_frame(b.s, b.s.frames[inner2]) == FrameOwner::CudaRuntime);
    CHECK(classify_frame(b.s, b.s.frames[api]) == FrameOwner::CudaRuntime);

    // NVIDIA's libcudart_static.a (CUDA 13.0) names its internals by hash; frames seen on an H200.
    uint32_t hashed = b.frame(Builder::kExe, "libcudart_static_5382377d5c772c9d197c0cda9fd9742ee6ad893c");
    CHECK(classify_frame(b.s, b.s.frames[hashed]) == FrameOwner::CudaRuntime);
    CHECK(find_call_site(b.s, b.stack({hook, hashed, api2, user})) == 3);

    // Names that only look alike are the user's: "cuda" / "cu" must be followed by an upper-case letter.
    uint32_t lower = b.frame(Builder::kExe, "cudamalloc_wrapper");
    uint32_t bare = b.frame(Builder::kExe, "cuda");
    uint32_t cublas = b.frame(Builder::kExe, "cublasSgemm_v2");
    uint32_t custom = b.frame(Builder::kExe, "custom_allocator()");
    uint32_t ns = b.frame(Builder::kExe, "mylib::cudaMalloc(void**, unsigned long)");
    for (uint32_t f : {lower, bare, cublas, custom, ns})
        CHECK(classify_frame(b.s, b.s.frames[f]) == FrameOwner::User);
}

TEST_CASE("call site: the driver by module and by cu* names", "[call_site]") {
    Builder b;
    uint32_t drv = b.frame(Builder::kCuda, "");
    uint32_t drv_named = b.frame(Builder::kExe, "cuMemAlloc_v2");
    uint32_t drv_vmm = b.frame(Builder::kLibc, "cuMemCreate"); // a name rule holds in any module
    uint32_t look = b.frame(Builder::kCudaLookalike, "");      // libcudadebugger.so: not the driver
    uint32_t look2 = b.frame(Builder::kCudartLookalike, "");
    uint32_t user = b.frame(Builder::kExe, "run()");

    CHECK(find_call_site(b.s, b.stack({drv, drv_named, drv_vmm, user})) == 3);
    CHECK(classify_frame(b.s, b.s.frames[drv_named]) == FrameOwner::CudaDriver);
    CHECK(classify_frame(b.s, b.s.frames[drv_vmm]) == FrameOwner::CudaDriver);
    CHECK(find_call_site(b.s, b.stack({drv, look, user})) == 1);
    CHECK(find_call_site(b.s, b.stack({drv, look2, user})) == 1);
}

TEST_CASE("call site: all internal, empty, unknown frames", "[call_site]") {
    Builder b;
    uint32_t hook = b.frame(Builder::kVramtrace, "");
    uint32_t rt = b.frame(Builder::kCudart, "cudaMalloc");
    uint32_t drv = b.frame(Builder::kCuda, "cuMemAlloc_v2");
    uint32_t unknown = b.frame(-1, "");           // no module, no name (JIT code, unloaded library)
    uint32_t bad_module = b.frame(99, "worker()"); // module index out of range: no module

    CHECK(find_call_site(b.s, b.stack({hook, rt, drv})) == -1);
    CHECK(find_call_site(b.s, b.stack({})) == -1);
    CHECK(find_call_site(b.s, b.stack({hook, unknown, rt})) == 1);
    CHECK(find_call_site(b.s, b.stack({hook, bad_module})) == 1);
    CHECK(find_call_site(b.s, b.stack({hook, 12345})) == 1); // frame index out of range
    CHECK(classify_frame(b.s, b.s.frames[unknown]) == FrameOwner::User);
}

TEST_CASE("call site: assign_call_sites fills every stack", "[call_site]") {
    Builder b;
    uint32_t hook = b.frame(Builder::kVramtrace, "");
    uint32_t rt = b.frame(Builder::kCudart, "");
    uint32_t user = b.frame(Builder::kExe, "f()");
    b.s.stacks.push_back(b.stack({hook, rt, user}));
    b.s.stacks.push_back(b.stack({hook, rt}));
    b.s.stacks.push_back(b.stack({user}));
    assign_call_sites(b.s);
    CHECK(b.s.stacks[0].call_site == 2);
    CHECK(b.s.stacks[1].call_site == -1);
    CHECK(b.s.stacks[2].call_site == 0);
}

TEST_CASE("call site: a stack with Python frames has the program's innermost Python line", "[call_site]") {
    Builder b;
    auto py = [&](const char *function, const char *file) {
        uint32_t i = b.frame(-1, function);
        b.s.frames[i].python = true;
        b.s.frames[i].file = file;
        b.s.frames[i].line = 10;
        return i;
    };
    uint32_t cuda = b.frame(Builder::kCudart, "cudaMalloc");
    uint32_t alloc = b.frame(Builder::kExe, "c10::cuda::CUDACachingAllocator::malloc");
    uint32_t linear = py("Linear.forward", "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py");
    uint32_t module = py("Module._call_impl", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py");
    uint32_t user = py("Net.forward", "/home/me/model.py");
    uint32_t main = py("<module>", "/home/me/train.py");
    CHECK(find_call_site(b.s, b.stack({cuda, alloc, linear, module, user, main})) == 4);
    // Only library Python frames: the innermost Python frame.
    CHECK(find_call_site(b.s, b.stack({cuda, alloc, linear, module})) == 2);
    uint32_t frozen = py("_call_with_frames_removed", "<frozen importlib._bootstrap>");
    CHECK(find_call_site(b.s, b.stack({cuda, frozen, user})) == 2);
    // No Python frame: the native rule.
    CHECK(find_call_site(b.s, b.stack({cuda, alloc})) == 1);
    CHECK(vramtrace::is_library_python_file("/usr/lib/python3.11/threading.py"));
    CHECK(!vramtrace::is_library_python_file("/home/me/python3/train.py"));
}
