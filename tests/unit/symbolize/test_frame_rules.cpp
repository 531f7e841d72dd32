#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "symbolize/call_site.h"
#include "symbolize/frame_rules.h"

using vramtrace::Attributor;
using vramtrace::Category;
using vramtrace::FrameRules;
using vramtrace::glob_match;
using vramtrace::RuleAction;
namespace snapshot = vramtrace::snapshot;

namespace {

constexpr const char *kSite = "/venv/lib/python3.12/site-packages/";

// A snapshot built frame by frame, with the modules of a PyTorch process.
struct Stacks {
    snapshot::Snapshot s;
    enum : int { kTrain = 0, kVramtrace, kCudart, kC10Cuda, kTorchCuda, kTorchCpu, kStdcxx, kLibc, kCublas, kNccl };
    Stacks() {
        s.modules = {
            {"/home/me/train", 0x555500000000, ""},
            {"/opt/vramtrace/lib/libvramtrace.so", 0x7f0000000000, ""},
            {std::string(kSite) + "nvidia/cuda_runtime/lib/libcudart.so.13", 0x7f0100000000, ""},
            {std::string(kSite) + "torch/lib/libc10_cuda.so", 0x7f0200000000, ""},
            {std::string(kSite) + "torch/lib/libtorch_cuda.so", 0x7f0300000000, ""},
            {std::string(kSite) + "torch/lib/libtorch_cpu.so", 0x7f0400000000, ""},
            {"/lib/x86_64-linux-gnu/libstdc++.so.6", 0x7f0500000000, ""},
            {"/lib/x86_64-linux-gnu/libc.so.6", 0x7f0600000000, ""},
            {std::string(kSite) + "nvidia/cublas/lib/libcublas.so.13", 0x7f0700000000, ""},
            {std::string(kSite) + "nvidia/nccl/lib/libnccl.so.2", 0x7f0800000000, ""},
        };
    }
    uint32_t native(int module, const char *function) {
        snapshot::Frame f;
        f.address = 0x1000 + s.frames.size();
        f.module = module;
        f.function = function;
        s.frames.push_back(f);
        return static_cast<uint32_t>(s.frames.size() - 1);
    }
    uint32_t py(const char *function, std::string file, uint32_t line) {
        uint32_t i = native(-1, function);
        s.frames[i].python = true;
        s.frames[i].file = std::move(file);
        s.frames[i].line = line;
        return i;
    }
    uint32_t torch_py(const char *function, const char *file, uint32_t line) {
        return py(function, std::string(kSite) + "torch/" + file, line);
    }
    snapshot::Stack stack(std::vector<uint32_t> frames) {
        snapshot::Stack st;
        st.id = static_cast<uint32_t>(s.stacks.size() + 1);
        st.frames = std::move(frames);
        return st;
    }
    // The allocation path every PyTorch stack starts with (caching allocator on cudaMalloc).
    std::vector<uint32_t> leaf() {
        return {native(kVramtrace, "vramtrace::hooks::cudaMalloc(vramtrace::Reach, void**, unsigned long)"),
                native(kCudart, "cudaMalloc"),
                native(kC10Cuda, "c10::cuda::CUDACachingAllocator::Native::(anonymous namespace)::cudaMallocMaybeCapturing(void**, unsigned long)"),
                native(kC10Cuda, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)"),
                native(kTorchCuda, "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, std::optional<c10::MemoryFormat>)")};
    }
    snapshot::Stack with_leaf(std::vector<uint32_t> rest) {
        std::vector<uint32_t> all = leaf();
        all.insert(all.end(), rest.begin(), rest.end());
        return stack(std::move(all));
    }
    std::string label(const snapshot::Stack &st, int index) {
        return vramtrace::framework_frame_label(s, s.frames[st.frames[static_cast<size_t>(index)]], FrameRules::builtin());
    }
};

} // namespace

TEST_CASE("frame rules: globs match whole names with *, ? and [A-Z]", "[frame_rules]") {
    CHECK(glob_match("cuda[A-Z]*", "cudaMalloc"));
    CHECK_FALSE(glob_match("cuda[A-Z]*", "cudart_helper"));
    CHECK_FALSE(glob_match("cuda[A-Z]*", "cuda"));
    CHECK(glob_match("libcuda.*", "libcuda.so.1"));
    CHECK_FALSE(glob_match("libcuda.*", "libcudadebugger.so.1"));
    CHECK(glob_match("*/torch/optim/*.py", "/v/site-packages/torch/optim/adamw.py"));
    CHECK_FALSE(glob_match("*/torch/optim/*.py", "/v/site-packages/torch/optim/adamw.pyc"));
    CHECK(glob_match("a?c", "abc"));
    CHECK_FALSE(glob_match("a?c", "ac"));
    CHECK(glob_match("*", ""));
    CHECK(glob_match("**x**", "yxy"));
    CHECK(glob_match("[ab-d]x", "cx"));
    CHECK_FALSE(glob_match("[ab-d]x", "ex"));
}

TEST_CASE("frame rules: a frame's group comes from the first rule that names one, a mark rule too", "[frame_rules]") {
    snapshot::Frame eval;
    eval.function = "_PyEval_EvalFrameDefault";
    FrameRules::Verdict v = FrameRules::builtin().judge(eval, "/usr/bin/python3.12");
    CHECK(v.placement == nullptr); // the interpreter's C code is marked, never skipped
    CHECK(v.group == "cpython");
    CHECK(FrameRules::builtin().judge(eval, "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0").group == "cpython");
    snapshot::Frame start;
    start.function = "__libc_start_call_main";
    v = FrameRules::builtin().judge(start, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    REQUIRE(v.placement != nullptr);
    CHECK(v.placement->action == RuleAction::Skip);
    CHECK(v.group == "system");
    snapshot::Frame line;
    line.python = true;
    line.function = "train";
    line.file = "/home/me/train.py";
    CHECK(FrameRules::builtin().judge(line, "").group.empty());
    FrameRules mine;
    std::string error;
    REQUIRE(mine.add("mark module=libmine.so group=mine\n", "m", &error));
    v = mine.judge(start, "/opt/libmine.so");
    CHECK(v.placement == nullptr);
    CHECK(v.category == Category::kNone);
    CHECK(v.group == "mine");
}

TEST_CASE("frame rules: the shipped table parses, a bad line is refused with where and why", "[frame_rules]") {
    CHECK(FrameRules::builtin().rules().size() > 60);
    CHECK(FrameRules::builtin().rules().front().origin == "frame_rules.txt:7");
    FrameRules r;
    std::string error;
    CHECK_FALSE(r.add("skip module=x\njump module=y\n", "mine.rules", &error));
    CHECK(error == "mine.rules:2: unknown action 'jump' (skip, entry, name or mark)");
    CHECK(r.rules().empty()); // nothing of a refused file is kept
    CHECK_FALSE(r.add("mark file=*/x.py\n", "mine.rules", &error));
    CHECK(error == "mine.rules:1: a mark rule needs category= or group=");
    CHECK_FALSE(r.add("skip category=parameter\n", "m", &error));
    CHECK(error == "m:1: a rule needs module=, function=, file= or python=");
    CHECK_FALSE(r.add("skip module=x category=weights\n", "m", &error));
    CHECK(error == "m:1: unknown category 'weights'");
    CHECK_FALSE(r.add("skip module\n", "m", &error));
    CHECK(error == "m:1: expected key=value, got 'module'");
    CHECK(r.add("# comment\n\n  name function=my::pool::grow*  category=other group=mine\n", "m", &error));
    REQUIRE(r.rules().size() == 1);
    CHECK(r.rules()[0].action == RuleAction::Name);
    CHECK(r.rules()[0].group == "mine");
    CHECK(r.rules()[0].origin == "m:3");
}

TEST_CASE("attribution: a forward pass on the main thread", "[frame_rules]") {
    Stacks b;
    uint32_t linear = b.torch_py("Linear.forward", "nn/modules/linear.py", 125);
    uint32_t call = b.torch_py("Module._call_impl", "nn/modules/module.py", 1784);
    uint32_t model = b.py("Net.forward", "/home/me/model.py", 25);
    uint32_t call2 = b.torch_py("Module._call_impl", "nn/modules/module.py", 1784);
    uint32_t train = b.py("<module>", "/home/me/train.py", 42);
    snapshot::Stack st = b.with_leaf({linear, call, model, call2, train, b.native(Stacks::kLibc, "__libc_start_main")});
    Attributor a(b.s, FrameRules::builtin());
    vramtrace::StackAttribution r = a.attribute(st);
    CHECK(r.call_site == 7);
    CHECK(r.category == Category::Activation);
    REQUIRE(r.via == 5);
    CHECK(b.label(st, r.via) == "torch.nn.modules.linear.Linear.forward");
}

TEST_CASE("attribution: the optimizer's state and its step", "[frame_rules]") {
    Stacks b;
    uint32_t inner = b.torch_py("_single_tensor_adam", "optim/adam.py", 345);
    uint32_t adam = b.torch_py("adam", "optim/adam.py", 900);
    uint32_t step = b.torch_py("AdamW.step", "optim/adamw.py", 220);
    uint32_t wrapper = b.torch_py("Optimizer.profile_hook_step.<locals>.wrapper", "optim/optimizer.py", 485);
    uint32_t train = b.py("train_step", "/home/me/train.py", 50);
    snapshot::Stack st = b.with_leaf({inner, adam, step, wrapper, train});
    vramtrace::StackAttribution r = Attributor(b.s, FrameRules::builtin()).attribute(st);
    CHECK(r.call_site == 9);
    CHECK(r.category == Category::OptimizerState);
    REQUIRE(r.via == 7);
    CHECK(b.label(st, r.via) == "torch.optim.adamw.AdamW.step");
}

TEST_CASE("attribution: parameters moved with .cuda() and .to()", "[frame_rules]") {
    Stacks b;
    uint32_t lambda = b.torch_py("Module.cuda.<locals>.<lambda>", "nn/modules/module.py", 1050);
    uint32_t apply1 = b.torch_py("Module._apply", "nn/modules/module.py", 930);
    uint32_t apply2 = b.torch_py("Module._apply", "nn/modules/module.py", 903);
    uint32_t cuda = b.torch_py("Module.cuda", "nn/modules/module.py", 1050);
    uint32_t train = b.py("main", "/home/me/train.py", 30);
    snapshot::Stack st = b.with_leaf({lambda, apply1, apply2, cuda, train});
    vramtrace::StackAttribution r = Attributor(b.s, FrameRules::builtin()).attribute(st);
    CHECK(r.call_site == 9);
    CHECK(r.category == Category::Parameter);
    REQUIRE(r.via == 8);
    CHECK(b.label(st, r.via) == "torch.nn.modules.module.Module.cuda");

    uint32_t convert = b.torch_py("Module.to.<locals>.convert", "nn/modules/module.py", 1340);
    uint32_t to = b.torch_py("Module.to", "nn/modules/module.py", 1355);
    snapshot::Stack st2 = b.with_leaf({convert, apply1, to, train});
    r = Attributor(b.s, FrameRules::builtin()).attribute(st2);
    CHECK(r.call_site == 8);
    CHECK(r.category == Category::Parameter);
    CHECK(r.via == 7);
}

TEST_CASE("attribution: the autograd engine's thread is named by the node it runs", "[frame_rules]") {
    Stacks b;
    snapshot::Stack st = b.with_leaf({
        b.native(Stacks::kTorchCuda, "at::native::(anonymous namespace)::addmm_out_cuda_impl(at::Tensor&, at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, c10::Scalar const&, bool)"),
        b.native(Stacks::kTorchCpu, "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)"),
        b.native(Stacks::kTorchCpu, "torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
        b.native(Stacks::kTorchCpu, "torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
        b.native(Stacks::kTorchCpu, "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)"),
        b.native(Stacks::kTorchCpu, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"),
        b.native(Stacks::kStdcxx, "execute_native_thread_routine"),
        b.native(Stacks::kLibc, "start_thread"),
        b.native(Stacks::kLibc, "clone3"),
    });
    vramtrace::StackAttribution r = Attributor(b.s, FrameRules::builtin()).attribute(st);
    CHECK(r.call_site == 7);
    CHECK(r.category == Category::Backward);
    CHECK(r.via == -1);
    CHECK(b.label(st, r.call_site) == "AddmmBackward0");
}

TEST_CASE("attribution: a cuBLAS workspace names the handle call and the line that made it", "[frame_rules]") {
    Stacks b;
    uint32_t handle = b.native(Stacks::kTorchCuda, "at::cuda::getCurrentCUDABlasHandle()");
    uint32_t gemm = b.native(Stacks::kTorchCuda, "void at::cuda::blas::gemm<float>(char, char, long, long, long, at::OpMathType<float>::type, float const*, long, float const*, long, at::OpMathType<float>::type, float*, long)");
    uint32_t linear = b.torch_py("Linear.forward", "nn/modules/linear.py", 125);
    uint32_t call = b.torch_py("Module._call_impl", "nn/modules/module.py", 1784);
    uint32_t model = b.py("Net.forward", "/home/me/model.py", 25);
    snapshot::Stack st = b.with_leaf({handle, gemm, linear, call, model});
    vramtrace::StackAttribution r = Attributor(b.s, FrameRules::builtin()).attribute(st);
    CHECK(r.call_site == 9);
    CHECK(r.category == Category::LibraryWorkspace);
    REQUIRE(r.via == 5);
    CHECK(b.label(st, r.via) == "at::cuda::getCurrentCUDABlasHandle");

    // cuBLAS allocating on its own (no PyTorch allocator): the library's frames give the category.
    snapshot::Stack own = b.stack({b.native(Stacks::kVramtrace, "vramtrace::hooks::cudaMalloc(vramtrace::Reach, void**, unsigned long)"),
                                 b.native(Stacks::kCublas, ""), b.native(Stacks::kCublas, "cublasCreate_v2"),
                                 b.native(Stacks::kTrain, "make_handles()"), b.native(Stacks::kTrain, "main")});
    r = Attributor(b.s, FrameRules::builtin()).attribute(own);
    CHECK(r.call_site == 3);
    CHECK(r.category == Category::LibraryWorkspace);
    CHECK(r.via == 2);
}

TEST_CASE("attribution: NCCL's allocations are communication", "[frame_rules]") {
    Stacks b;
    snapshot::Stack st = b.stack({b.native(Stacks::kVramtrace, "vramtrace::hooks::cuMemCreate(vramtrace::Reach)"),
                                b.native(Stacks::kNccl, ""), b.native(Stacks::kNccl, "ncclCommInitRank"),
                                b.native(Stacks::kTrain, "setup(int)"), b.native(Stacks::kTrain, "main")});
    vramtrace::StackAttribution r = Attributor(b.s, FrameRules::builtin()).attribute(st);
    CHECK(r.call_site == 3);
    CHECK(r.category == Category::Communication);
    CHECK(r.via == 2);
}

TEST_CASE("attribution: a plain program keeps its call site and is other", "[frame_rules]") {
    Stacks b;
    snapshot::Stack st = b.stack({b.native(Stacks::kVramtrace, "hook"), b.native(Stacks::kCudart, "cudaMalloc"),
                                b.native(Stacks::kTrain, "load_batch(int)"), b.native(Stacks::kTrain, "main"),
                                b.native(Stacks::kLibc, "__libc_start_main")});
    vramtrace::StackAttribution r = Attributor(b.s, FrameRules::builtin()).attribute(st);
    CHECK(r.call_site == 2);
    CHECK(r.category == Category::Other);
    CHECK(r.via == -1);
}

TEST_CASE("attribution: a user's rules come first", "[frame_rules]") {
    Stacks b;
    FrameRules mine;
    std::string error;
    REQUIRE(mine.add("skip function=load_batch* group=my_pool category=activation\n"
                     "entry function=main group=mine\n", "mine", &error));
    mine.add_shipped();
    snapshot::Stack st = b.stack({b.native(Stacks::kCudart, "cudaMalloc"), b.native(Stacks::kTrain, "load_batch(int)"),
                                b.native(Stacks::kTrain, "main"), b.native(Stacks::kTrain, "_start")});
    vramtrace::StackAttribution r = Attributor(b.s, mine).attribute(st);
    CHECK(r.call_site == 3);
    CHECK(r.category == Category::Activation);
    CHECK(r.via == 2);
}

TEST_CASE("attribution: frames that arrive after the first stacks (a streaming reader)", "[frame_rules]") {
    Stacks b;
    snapshot::Stack first = b.stack({b.native(Stacks::kCudart, "cudaMalloc"), b.native(Stacks::kTrain, "early()")});
    Attributor a(b.s, FrameRules::builtin());
    CHECK(a.attribute(first).call_site == 1);
    // Many frames later (the verdict cache grows while earlier frames are judged again).
    std::vector<uint32_t> later{first.frames[0]};
    for (int i = 0; i < 1000; ++i) later.push_back(b.native(Stacks::kTorchCpu, "at::native::op(at::Tensor const&)"));
    later.push_back(b.native(Stacks::kTrain, "late()"));
    vramtrace::StackAttribution r = a.attribute(b.stack(later));
    CHECK(r.call_site == 1001);
    CHECK(a.attribute(first).call_site == 1);
}

TEST_CASE("attribution: labels of C++ names with anonymous namespaces and operators", "[frame_rules]") {
    Stacks b;
    FrameRules rules;
    std::string error;
    REQUIRE(rules.add("name function=x::* show=class\n", "m", &error));
    auto label = [&](const char *function) {
        return vramtrace::framework_frame_label(b.s, b.s.frames[b.native(Stacks::kTrain, function)], rules);
    };
    CHECK(label("x::(anonymous namespace)::Node::apply(std::vector<int>&&)") == "Node");
    CHECK(label("x::Functor::operator()(int) const") == "Functor");
    CHECK(vramtrace::framework_frame_label(b.s, b.s.frames[b.native(Stacks::kTrain, "y::Functor::operator()(int)")],
                                           FrameRules::builtin()) == "y::Functor::operator()");
    CHECK(vramtrace::framework_frame_label(b.s, b.s.frames[b.native(Stacks::kTrain, "y::operator<<(std::ostream&, int)")],
                                           FrameRules::builtin()) == "y::operator<<");
    CHECK(vramtrace::framework_frame_label(b.s, b.s.frames[b.native(Stacks::kTrain, "__pyx_pw_4cupy_4")],
                                           FrameRules::builtin()) == "cupy");
}
