#include "symbolize/call_site.h"

#include <string_view>

namespace vramtrace {

namespace {

std::string_view module_path(const snapshot::Snapshot &snapshot, const snapshot::Frame &frame) {
    if (frame.module >= 0 && static_cast<size_t>(frame.module) < snapshot.modules.size())
        return snapshot.modules[static_cast<size_t>(frame.module)].path;
    return {};
}

bool is_cuda_layer(const FrameRule *rule) {
    return rule != nullptr && (rule->group == "vramtrace" || rule->group == "cuda_runtime" || rule->group == "cuda_driver");
}

// A C++ function name without its parameter list (and without a trailing " const").
std::string_view without_parameters(std::string_view name) {
    constexpr std::string_view kAnonymous = "(anonymous namespace)";
    int depth = 0;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        if (c == '(' && name.substr(i, kAnonymous.size()) == kAnonymous) {
            i += kAnonymous.size() - 1;
        } else if (c == '(' && i >= 8 && name.substr(i - 8, 8) == "operator") {
            if (name.substr(i, 2) == "()") ++i; // operator() names a function; its list follows
        } else if (i >= 8 && name.substr(i - 8, 8) == "operator" && (c == '<' || c == '>')) {
            while (i + 1 < name.size() && (name[i + 1] == '<' || name[i + 1] == '>' || name[i + 1] == '=')) ++i;
        } else if (c == '<') {
            ++depth;
        } else if (c == '>' && depth > 0) {
            --depth;
        } else if (c == '(' && depth == 0 && i > 0) {
            return name.substr(0, i);
        }
    }
    return name;
}

// The components of a qualified C++ name at depth 0 of template brackets.
std::vector<std::string_view> name_components(std::string_view name) {
    std::vector<std::string_view> out;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i + 1 < name.size(); ++i) {
        char c = name[i];
        if (c == '<') ++depth;
        else if (c == '>' && depth > 0) --depth;
        else if (c == ':' && name[i + 1] == ':' && depth == 0) {
            out.push_back(name.substr(start, i - start));
            start = i + 2;
            ++i;
        }
    }
    out.push_back(name.substr(start));
    return out;
}

// "…/site-packages/torch/optim/adamw.py" -> "torch.optim.adamw"; "" when the path is not under a
// package directory.
std::string python_module_of(std::string_view file) {
    for (std::string_view dir : {"/site-packages/", "/dist-packages/"}) {
        size_t at = file.rfind(dir);
        if (at == std::string_view::npos) continue;
        std::string_view rest = file.substr(at + dir.size());
        if (rest.size() > 3 && rest.substr(rest.size() - 3) == ".py") rest.remove_suffix(3);
        if (rest.size() > 9 && rest.substr(rest.size() - 9) == "/__init__") rest.remove_suffix(9);
        std::string out(rest);
        for (char &c : out)
            if (c == '/') c = '.';
        return out;
    }
    return {};
}

// Cython's C names of Python-visible functions, "__pyx_pw_4cupy_4cuda_5cufft_6Plan1d_1__init__", as
// the dotted name "cupy.cuda.cufft.Plan1d.__init__": components start after "_<digits>", and their
// leading digits (a length or Cython's counter) are dropped. "" when `name` is not such a name.
std::string cython_name(std::string_view name) {
    std::string_view rest;
    for (std::string_view prefix : {"__pyx_pw_", "__pyx_pf_", "__pyx_f_"})
        if (name.substr(0, prefix.size()) == prefix) rest = name.substr(prefix.size());
    if (rest.empty() || rest[0] < '0' || rest[0] > '9') return {};
    std::string out;
    size_t i = 0;
    while (i < rest.size()) {
        while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
        size_t end = i;
        while (end < rest.size() && !(rest[end] == '_' && end + 1 < rest.size() && rest[end + 1] >= '0' && rest[end + 1] <= '9'))
            ++end;
        if (end > i) { // a name ends in its counter's digits ("_4"): no empty component
            if (!out.empty()) out += '.';
            out.append(rest.substr(i, end - i));
        }
        i = end + 1;
    }
    return out;
}

} // namespace

FrameOwner classify_frame(const snapshot::Snapshot &snapshot, const snapshot::Frame &frame) {
    const FrameRule *rule = FrameRules::from_environment().judge(frame, module_path(snapshot, frame)).placement;
    if (rule == nullptr) return FrameOwner::User;
    if (rule->group == "vramtrace") return FrameOwner::Vramtrace;
    if (rule->group == "cuda_runtime") return FrameOwner::CudaRuntime;
    if (rule->group == "cuda_driver") return FrameOwner::CudaDriver;
    return FrameOwner::User;
}

bool is_library_python_file(std::string_view file) {
    return file.empty() || file[0] == '<' || file.find("/site-packages/") != std::string_view::npos ||
           file.find("/dist-packages/") != std::string_view::npos ||
           file.find("/lib/python3") != std::string_view::npos;
}

Attributor::Attributor(const snapshot::Snapshot &snapshot, const FrameRules &rules)
    : snapshot_(snapshot), rules_(rules) {}

const FrameRules::Verdict &Attributor::verdict(uint32_t frame) {
    if (!judged_[frame]) {
        const snapshot::Frame &f = snapshot_.frames[frame];
        verdicts_[frame] = rules_.judge(f, module_path(snapshot_, f));
        judged_[frame] = 1;
    }
    return verdicts_[frame];
}

StackAttribution Attributor::attribute(const snapshot::Stack &stack) {
    static const FrameRules::Verdict kUnknownFrame;
    // Sized for every frame known now, before any verdict's address is taken below: the snapshot
    // may have grown since the last stack (a streaming reader adds frames as they come).
    if (verdicts_.size() < snapshot_.frames.size()) {
        verdicts_.resize(snapshot_.frames.size());
        judged_.resize(snapshot_.frames.size(), 0);
    }
    const size_t n = stack.frames.size();
    std::vector<const FrameRules::Verdict *> v(n);
    bool has_python = false;
    for (size_t i = 0; i < n; ++i) {
        uint32_t f = stack.frames[i];
        v[i] = f < snapshot_.frames.size() ? &verdict(f) : &kUnknownFrame;
        if (f < snapshot_.frames.size() && snapshot_.frames[f].python) has_python = true;
    }
    auto python_frame = [&](size_t i) {
        uint32_t f = stack.frames[i];
        return f < snapshot_.frames.size() && snapshot_.frames[f].python;
    };
    StackAttribution a;
    if (has_python) {
        int first_python = -1;
        for (size_t i = 0; i < n && a.call_site < 0; ++i) {
            if (!python_frame(i)) continue;
            if (first_python < 0) first_python = static_cast<int>(i);
            if (v[i]->placement == nullptr && !snapshot_.frames[stack.frames[i]].file.empty())
                a.call_site = static_cast<int>(i);
        }
        if (a.call_site < 0) a.call_site = first_python;
    } else {
        for (size_t i = 0; i < n && a.call_site < 0; ++i)
            if (v[i]->placement == nullptr) a.call_site = static_cast<int>(i);
        for (size_t i = 0; i < n && a.call_site < 0; ++i)
            if (v[i]->placement->action == RuleAction::Name) a.call_site = static_cast<int>(i), a.named_site = true;
        for (size_t i = 0; i < n && a.call_site < 0; ++i)
            if (!is_cuda_layer(v[i]->placement)) a.call_site = static_cast<int>(i);
    }
    for (size_t i = 0; i < n; ++i)
        if (v[i]->category != Category::kNone) {
            a.category = v[i]->category;
            break;
        }
    // The outermost name frame inside the call site, else the outermost entry frame.
    for (RuleAction wanted : {RuleAction::Name, RuleAction::Entry})
        for (int i = a.call_site - 1; i >= 0 && a.via < 0; --i) {
            const FrameRule *rule = v[static_cast<size_t>(i)]->placement;
            if (rule != nullptr && rule->action == wanted) a.via = i;
        }
    return a;
}

int find_call_site(const snapshot::Snapshot &snapshot, const snapshot::Stack &stack) {
    return Attributor(snapshot).attribute(stack).call_site;
}

void assign_call_sites(snapshot::Snapshot &snapshot) {
    Attributor attributor(snapshot);
    for (snapshot::Stack &s : snapshot.stacks) {
        apply_attribution(snapshot, s, attributor.attribute(s));
    }
}

void apply_attribution(const snapshot::Snapshot &snapshot, snapshot::Stack &stack, const StackAttribution &a,
                       const FrameRules &rules) {
    stack.call_site = a.call_site;
    stack.via = a.via;
    stack.category = category_name(a.category);
    stack.site_label.clear();
    stack.via_label.clear();
    auto frame_at = [&](int index) -> const snapshot::Frame * {
        if (index < 0 || size_t(index) >= stack.frames.size() || stack.frames[size_t(index)] >= snapshot.frames.size())
            return nullptr;
        return &snapshot.frames[stack.frames[size_t(index)]];
    };
    if (const snapshot::Frame *site = frame_at(a.call_site); site && a.named_site) {
        std::string label = framework_frame_label(snapshot, *site, rules);
        // A frame without a name (a name rule that matched its module only) is described as usual.
        if (!label.empty()) {
            stack.site_label = std::move(label);
            if (const snapshot::Module *m = snapshot.find_module(*site))
                stack.site_label += " (" + std::string(snapshot::path_basename(m->path)) + ")";
        }
    }
    if (const snapshot::Frame *via = frame_at(a.via)) {
        stack.via_label = framework_frame_label(snapshot, *via, rules);
        if (stack.via_label.empty()) stack.via = -1; // nothing to show: no via
    }
}

std::string framework_frame_label(const snapshot::Snapshot &snapshot, const snapshot::Frame &frame,
                                  const FrameRules &rules) {
    if (frame.python) {
        std::string module = python_module_of(frame.file);
        return module.empty() ? frame.function : module + "." + frame.function;
    }
    std::string_view name = without_parameters(frame.function);
    if (std::string cython = cython_name(name); !cython.empty()) return cython;
    const FrameRule *rule = rules.judge(frame, module_path(snapshot, frame)).placement;
    if (rule != nullptr && rule->show_class) {
        std::vector<std::string_view> parts = name_components(name);
        if (parts.size() >= 2) return std::string(parts[parts.size() - 2]);
    }
    return std::string(name);
}

} // namespace vramtrace
