// The frame rules over stacks recorded on the GPU machine (tests/gpu/run_attribution.sh, H200,
// PyTorch 2.11+cu130, CuPy, JAX), trimmed to the live allocations of a checkpoint: modules,
// frames, stacks, allocations, and for PyTorch what the script knew itself (data/frameworks/).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "symbolize/call_site.h"

using vramtrace::Attributor;
using vramtrace::Category;
using vramtrace::FrameRules;
namespace snapshot = vramtrace::snapshot;

namespace {

struct Recorded {
    snapshot::Snapshot s;
    std::vector<snapshot::Allocation> live;
    std::map<uint64_t, std::string> truth; // device pointer -> parameters / optimizer_state / gradients / inputs
};

Recorded load(const char *name) {
    std::ifstream in(std::string(VT_TEST_DATA_DIR) + "/frameworks/" + name + ".json");
    REQUIRE(in.good());
    nlohmann::json j = nlohmann::json::parse(in);
    Recorded r;
    for (const auto &m : j["modules"]) r.s.modules.push_back({m["path"].get<std::string>(), 0, ""});
    for (const auto &f : j["frames"]) {
        snapshot::Frame fr;
        fr.function = f.value("function", "");
        fr.file = f.value("file", "");
        fr.line = f.value("line", 0u);
        fr.module = f.value("module", -1);
        fr.python = f.value("python", false);
        r.s.frames.push_back(fr);
    }
    for (const auto &st : j["stacks"]) {
        snapshot::Stack stack;
        stack.id = st["id"];
        stack.frames = st["frames"].get<std::vector<uint32_t>>();
        r.s.stacks.push_back(stack);
    }
    for (const auto &a : j["allocations"]) {
        snapshot::Allocation al;
        al.address = std::stoull(a["address"].get<std::string>(), nullptr, 16);
        al.size = a["size"];
        al.device = a["device"];
        al.stack = a["stack"];
        al.kind = a["kind"];
        r.live.push_back(al);
    }
    if (j.contains("truth"))
        for (const char *k : {"parameters", "optimizer_state", "gradients", "inputs"})
            for (const auto &p : j["truth"][k]) r.truth[p[0].get<uint64_t>()] = k;
    return r;
}

struct Attributed {
    Category category;
    std::string site; // call site frame: "function file:line" or the name rule's label
    std::string via;
};

std::map<uint32_t, Attributed> attribute_all(const Recorded &r) {
    std::map<uint32_t, Attributed> out;
    Attributor at(r.s, FrameRules::builtin());
    for (const snapshot::Stack &st : r.s.stacks) {
        vramtrace::StackAttribution a = at.attribute(st);
        Attributed x{a.category, "", ""};
        if (a.call_site >= 0) {
            const snapshot::Frame &f = r.s.frames[st.frames[size_t(a.call_site)]];
            x.site = f.python ? f.function + " " + f.file.substr(f.file.rfind('/') + 1) + ":" + std::to_string(f.line)
                              : vramtrace::framework_frame_label(r.s, f, FrameRules::builtin());
        }
        if (a.via >= 0) x.via = vramtrace::framework_frame_label(r.s, r.s.frames[st.frames[size_t(a.via)]], FrameRules::builtin());
        out[st.id] = x;
    }
    return out;
}

// VT_PRINT_ATTRIBUTION=1 prints what the rules made of every live allocation.
void print(const char *name, const Recorded &r, const std::map<uint32_t, Attributed> &by_stack) {
    if (getenv("VT_PRINT_ATTRIBUTION") == nullptr) return;
    for (const snapshot::Allocation &a : r.live) {
        const Attributed &x = by_stack.at(a.stack);
        auto t = r.truth.find(a.address);
        std::printf("%s %-16s %-18s %9llu  %s%s%s\n", name, t == r.truth.end() ? "-" : t->second.c_str(),
                    vramtrace::category_name(x.category), static_cast<unsigned long long>(a.size), x.site.c_str(),
                    x.via.empty() ? "" : " via ", x.via.c_str());
    }
}

const char *expected_category(const std::string &truth) {
    if (truth == "parameters") return "parameter";
    if (truth == "optimizer_state") return "optimizer_state";
    if (truth == "gradients") return "backward";
    return "other"; // the inputs: torch.randn / torch.randint in the script
}

} // namespace

TEST_CASE("recorded PyTorch stacks: every tensor the script knows has its category", "[frame_rules][recorded]") {
    for (const char *name : {"torch_nocache", "torch_async"}) {
        Recorded r = load(name);
        auto by_stack = attribute_all(r);
        print(name, r, by_stack);
        std::map<std::string, uint64_t> known_bytes, matched_bytes;
        for (const snapshot::Allocation &a : r.live) {
            auto t = r.truth.find(a.address);
            if (t == r.truth.end()) continue;
            known_bytes[t->second] += a.size;
            if (std::string(vramtrace::category_name(by_stack.at(a.stack).category)) == expected_category(t->second))
                matched_bytes[t->second] += a.size;
        }
        INFO(name);
        CHECK(known_bytes.size() == 4);
        for (const auto &[kind, bytes] : known_bytes) {
            INFO(kind);
            CHECK(matched_bytes[kind] == bytes);
        }
    }
}

TEST_CASE("recorded stacks: every call site is the script's line, an autograd node or a library call", "[frame_rules][recorded]") {
    for (const char *name : {"torch_default", "torch_nocache", "cupy", "jax"}) {
        Recorded r = load(name);
        auto by_stack = attribute_all(r);
        print(name, r, by_stack);
        std::set<std::string> sites;
        for (const snapshot::Allocation &a : r.live) sites.insert(by_stack.at(a.stack).site);
        for (const std::string &site : sites) {
            INFO(name << ": " << site);
            bool script_line = site.find("torch_categories.py:") != std::string::npos ||
                               site.find("cupy_jax_stacks.py:") != std::string::npos;
            bool node = site.size() > 9 && site.compare(site.size() - 9, 9, "Backward0") == 0;
            bool library = site.rfind("cublas", 0) == 0 || site.rfind("cudnn", 0) == 0 ||
                           site.rfind("at::cuda::getCurrentCUDABlasHandle", 0) == 0 ||
                           site == "torch::autograd::Engine::evaluate_function";
            CHECK((script_line || node || library));
        }
    }
}

TEST_CASE("recorded stacks: live bytes by category", "[frame_rules][recorded]") {
    // What the shipped rules make of each checkpoint, looked over allocation by allocation
    // (VT_PRINT_ATTRIBUTION=1): a change to the rules that moves bytes shows here.
    const std::map<std::string, std::map<std::string, uint64_t>> expected = {
        {"torch_nocache", {{"parameter", 14758960}, {"optimizer_state", 29517648}, {"backward", 14758824},
                           {"library_workspace", 202690064}, {"other", 786952}}},
        {"torch_async", {{"parameter", 14758960}, {"optimizer_state", 29517648}, {"backward", 14758824},
                         {"library_workspace", 202690064}, {"other", 786952}}},
        // Caching allocator: a segment has the category of the request that made it.
        {"torch_default", {{"parameter", 18874368}, {"optimizer_state", 33554432}, {"activation", 20971520},
                           {"backward", 18874368}, {"library_workspace", 201641488}, {"other", 4}}},
        {"cupy", {{"library_workspace", 74733232}, {"other", 9437184}}},
        {"jax", {{"library_workspace", 74259648}, {"other", 33554432}}},
    };
    for (const auto &[name, categories] : expected) {
        Recorded r = load(name.c_str());
        auto by_stack = attribute_all(r);
        std::map<std::string, uint64_t> got;
        for (const snapshot::Allocation &a : r.live) got[vramtrace::category_name(by_stack.at(a.stack).category)] += a.size;
        INFO(name);
        CHECK(got == categories);
    }
}
