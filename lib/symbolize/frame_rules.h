// Frame rules: which frames of a stack are the layers an allocation went through (vramtrace, the CUDA
// runtime and driver, framework allocators and dispatchers) rather than the code that asked, which
// frame names the framework entry it went through, and what kind of memory the stack makes.
//
// The rules are data, one rule a line (docs/attribution.md has the format and the shipped table,
// lib/symbolize/frame_rules.txt):
//
//     ACTION  MATCH...  [category=NAME]  [group=NAME]  [show=class]
//
//   ACTION   skip   the frame is never the call site;
//            entry  the same, and it names the call site's "via" (train.py:42 via torch.optim...);
//            name   the same, and it names the call site of a stack with no frame of the program's
//                   own (an autograd node on the engine's thread, a library's handle call);
//            mark   no effect on the call site: only category= and group=.
//   MATCH    module=GLOB (the module's file name; its whole path when GLOB has a '/'), function=GLOB
//            (demangled C++ name with its parameters, or a Python frame's qualified name), file=GLOB
//            (source path), python=yes|no. All given must match. GLOB: '*' any run, '?' one
//            character, '[A-Z]' one of a set; the whole text must match.
//   category parameter | optimizer_state | activation | backward | library_workspace |
//            communication | other: the category of a stack is the one of its innermost frame whose
//            rule names one; other when none does.
//   group    a name for the layer (vramtrace, cuda_runtime, cuda_driver, pytorch, ...), shown in
//            reports; the first three are how classify_frame tells the CUDA layers apart.
//   show     class: a name rule shows the second-to-last component of the C++ name
//            (torch::autograd::generated::AddmmBackward0::apply(...) -> AddmmBackward0).
// Blank lines and lines starting with '#' are ignored. Where a frame stands is decided by the first
// skip/entry/name rule that matches it, its category by the first matching rule that names one. A
// user's file (VRAMTRACE_FRAMEWORK_RULES) is read before the shipped table, so its rules win.
// Matching is done once per distinct frame of a snapshot, not per stack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot_model.h"

namespace vramtrace {

enum class RuleAction : uint8_t { Skip, Entry, Name, Mark };

// The memory categories (docs/attribution.md). kNone: the rule names no category.
enum class Category : uint8_t {
    Other,
    Parameter,
    OptimizerState,
    Activation,
    Backward,
    LibraryWorkspace,
    Communication,
    kNone,
};
inline constexpr int kCategoryCount = static_cast<int>(Category::kNone);
const char *category_name(Category c); // "parameter", ...; "other" for Other and kNone
bool parse_category(std::string_view name, Category *out);

struct FrameRule {
    RuleAction action = RuleAction::Skip;
    std::string module, function, file; // globs; empty: not matched on
    int python = -1;                     // -1 any frame, 0 native frames only, 1 Python frames only
    Category category = Category::kNone;
    std::string group;
    bool show_class = false;
    std::string origin; // "frame_rules.txt:12", for messages and `vramtrace rules`
};

// Whether `text` matches the whole glob (see above).
bool glob_match(std::string_view glob, std::string_view text);

class FrameRules {
public:
    // The shipped table followed by nothing: what every report uses without a user's file.
    static const FrameRules &builtin();
    // The user's file named by VRAMTRACE_FRAMEWORK_RULES (read once) ahead of the shipped table;
    // the shipped table alone when the variable is unset. A file that cannot be read or parsed is
    // reported once through `warn` (may be null) and left out.
    static const FrameRules &from_environment(void (*warn)(const char *message) = nullptr);

    // Appends the rules of `text`; on a malformed line returns false with *error = "origin:line:
    // why" and appends nothing.
    bool add(std::string_view text, std::string_view origin, std::string *error);

    // Appends the shipped table (after a user's rules, which then win).
    void add_shipped();

    // What the rules say about one frame. `module_path` is the frame's module's path ("" when
    // unknown).
    struct Verdict {
        const FrameRule *placement = nullptr; // first matching skip/entry/name rule; nullptr: the
                                              // frame can be a call site
        Category category = Category::kNone;  // of the first matching rule that names one
        std::string_view group;               // of the first matching rule that names one (a
                                              // mark rule too: a layer that is not a call site's
                                              // concern, like the interpreter's C code); "" none
    };
    Verdict judge(const snapshot::Frame &frame, std::string_view module_path) const;

    const std::vector<FrameRule> &rules() const { return rules_; }

private:
    std::vector<FrameRule> rules_;
};

} // namespace vramtrace
