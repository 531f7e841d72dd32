// The frame rules over many distinct stacks: N stacks of depth 32 shaped like a PyTorch process's
// (vramtrace and cudart on top, the caching allocator and dispatcher, then either the autograd
// engine's thread or Python frames down to a distinct line of the program), every frame distinct
// per stack below the framework part, attributed the way a dump and the CLI do
// (assign_call_sites: the Attributor judges each distinct frame once, then call site, via,
// category and labels per stack).
//
//   bench_attribution [N]        (default N = 100000)
//
// Prints the time and the number of stacks per category.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "snapshot/snapshot_model.h"
#include "symbolize/call_site.h"

using namespace vramtrace;

int main(int argc, char **argv) {
    long n = argc > 1 ? std::atol(argv[1]) : 100000;
    snapshot::Snapshot s;
    const std::string site = "/venv/lib/python3.12/site-packages/";
    for (const char *m : {"libvramtrace.so", "libcudart.so.13", "libc10_cuda.so", "libtorch_cuda.so", "libtorch_cpu.so",
                          "libstdc++.so.6", "libc.so.6", "train"})
        s.modules.push_back({site + "torch/lib/" + m, 0, ""});
    auto frame = [&](int module, std::string function, std::string file = "", bool python = false) {
        snapshot::Frame f;
        f.module = module;
        f.function = std::move(function);
        f.file = std::move(file);
        f.python = python;
        f.address = 0x1000 + s.frames.size();
        s.frames.push_back(std::move(f));
        return uint32_t(s.frames.size() - 1);
    };
    // The frames every stack shares (the framework part), then per stack its own frames.
    std::vector<uint32_t> top = {frame(0, "vramtrace::hooks::cudaMalloc(vramtrace::Reach, void**, unsigned long)"),
                                 frame(1, "cudaMalloc"),
                                 frame(2, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)"),
                                 frame(3, "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)"),
                                 frame(4, "at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>)")};
    for (long i = 0; i < n; ++i) {
        snapshot::Stack st;
        st.id = uint32_t(i + 1);
        st.frames = top;
        if (i % 4 == 0) { // the autograd engine's thread
            st.frames.push_back(frame(4, "torch::autograd::generated::Node" + std::to_string(i) + "Backward0::apply(std::vector<at::Tensor>&&)"));
            st.frames.push_back(frame(4, "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&)"));
            st.frames.push_back(frame(4, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"));
            while (st.frames.size() < 30) st.frames.push_back(frame(4, "at::native::op_" + std::to_string(i) + "_" + std::to_string(st.frames.size()) + "(at::Tensor const&)"));
            st.frames.push_back(frame(5, "execute_native_thread_routine"));
            st.frames.push_back(frame(6, "start_thread"));
        } else {
            st.frames.push_back(frame(-1, "Linear.forward", site + "torch/nn/modules/linear.py", true));
            st.frames.push_back(frame(-1, "Module._call_impl", site + "torch/nn/modules/module.py", true));
            while (st.frames.size() < 31)
                st.frames.push_back(frame(-1, "layer_" + std::to_string(st.frames.size()), "/home/me/model_" + std::to_string(i) + ".py", true));
            st.frames.push_back(frame(7, "main"));
        }
        s.stacks.push_back(std::move(st));
    }
    auto t0 = std::chrono::steady_clock::now();
    assign_call_sites(s);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::map<std::string, long> by_category;
    for (const snapshot::Stack &st : s.stacks) ++by_category[st.category];
    std::printf("attribution: stacks=%ld frames=%zu depth=32 classify_s=%.3f\n", n, s.frames.size(), seconds);
    for (const auto &[c, count] : by_category) std::printf("  %s %ld\n", c.c_str(), count);
    return 0;
}
