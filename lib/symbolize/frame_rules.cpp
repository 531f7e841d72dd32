#include "symbolize/frame_rules.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "settings/settings.h"
#include "symbolize/regular_file.h"

// The shipped table (lib/symbolize/frame_rules.txt), embedded at build time.
extern const char kShippedFrameRules[];

namespace vramtrace {

namespace {

constexpr const char *kCategoryNames[] = {"other",    "parameter",         "optimizer_state", "activation",
                                          "backward", "library_workspace", "communication"};
static_assert(sizeof(kCategoryNames) / sizeof(kCategoryNames[0]) == kCategoryCount);

// One element of a glob at `g`: whether it matches character c; *len = its length in the glob.
bool element_matches(std::string_view g, char c, size_t *len) {
    if (g[0] == '[') {
        size_t close = g.find(']', 1);
        if (close != std::string_view::npos && close > 1) {
            *len = close + 1;
            for (size_t i = 1; i < close; ++i) {
                if (i + 2 < close && g[i + 1] == '-') {
                    if (c >= g[i] && c <= g[i + 2]) return true;
                    i += 2;
                } else if (g[i] == c) {
                    return true;
                }
            }
            return false;
        }
    }
    *len = 1;
    return g[0] == '?' || g[0] == c;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::string_view basename_of(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// One line parsed into *rule; false with *why on an error.
bool parse_line(std::string_view line, FrameRule *rule, std::string *why) {
    size_t pos = 0;
    auto next_word = [&]() {
        while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
        size_t start = pos;
        while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t') ++pos;
        return line.substr(start, pos - start);
    };
    std::string_view action = next_word();
    if (action == "skip") rule->action = RuleAction::Skip;
    else if (action == "entry") rule->action = RuleAction::Entry;
    else if (action == "name") rule->action = RuleAction::Name;
    else if (action == "mark") rule->action = RuleAction::Mark;
    else return *why = "unknown action '" + std::string(action) + "' (skip, entry, name or mark)", false;
    bool matches_something = false;
    for (std::string_view word = next_word(); !word.empty(); word = next_word()) {
        size_t eq = word.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == word.size())
            return *why = "expected key=value, got '" + std::string(word) + "'", false;
        std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
        if (key == "module") rule->module = value, matches_something = true;
        else if (key == "function") rule->function = value, matches_something = true;
        else if (key == "file") rule->file = value, matches_something = true;
        else if (key == "python") {
            if (value != "yes" && value != "no") return *why = "python= takes yes or no", false;
            rule->python = value == "yes" ? 1 : 0;
            matches_something = true;
        } else if (key == "category") {
            if (!parse_category(value, &rule->category))
                return *why = "unknown category '" + std::string(value) + "'", false;
        } else if (key == "group") {
            rule->group = value;
        } else if (key == "show") {
            if (value != "class") return *why = "show= takes class", false;
            rule->show_class = true;
        } else {
            return *why = "unknown key '" + std::string(key) + "'", false;
        }
    }
    if (!matches_something) return *why = "a rule needs module=, function=, file= or python=", false;
    if (rule->action == RuleAction::Mark && rule->category == Category::kNone && rule->group.empty())
        return *why = "a mark rule needs category= or group=", false;
    return true;
}

} // namespace

const char *category_name(Category c) {
    int i = static_cast<int>(c);
    return i < kCategoryCount ? kCategoryNames[i] : "other";
}

bool parse_category(std::string_view name, Category *out) {
    for (int i = 0; i < kCategoryCount; ++i)
        if (name == kCategoryNames[i]) return *out = static_cast<Category>(i), true;
    return false;
}

bool glob_match(std::string_view glob, std::string_view text) {
    // Iterative with one backtrack point: the last '*' seen.
    size_t g = 0, t = 0, star = std::string_view::npos, star_t = 0;
    while (t < text.size()) {
        size_t len = 1;
        if (g < glob.size() && glob[g] == '*') {
            star = g++;
            star_t = t;
        } else if (g < glob.size() && element_matches(glob.substr(g), text[t], &len)) {
            g += len;
            ++t;
        } else if (star != std::string_view::npos) {
            g = star + 1;
            t = ++star_t;
        } else {
            return false;
        }
    }
    while (g < glob.size() && glob[g] == '*') ++g;
    return g == glob.size();
}

bool FrameRules::add(std::string_view text, std::string_view origin, std::string *error) {
    std::vector<FrameRule> parsed;
    size_t line_no = 0;
    while (!text.empty()) {
        size_t end = text.find('\n');
        std::string_view line = trim(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        ++line_no;
        if (line.empty() || line[0] == '#') continue;
        FrameRule rule;
        rule.origin = std::string(origin) + ":" + std::to_string(line_no);
        std::string why;
        if (!parse_line(line, &rule, &why)) {
            *error = rule.origin + ": " + why;
            return false;
        }
        parsed.push_back(std::move(rule));
    }
    for (FrameRule &r : parsed) rules_.push_back(std::move(r));
    return true;
}

namespace {

bool rule_matches(const FrameRule &r, const snapshot::Frame &frame, std::string_view module_path,
                  std::string_view module_name) {
    if (r.python >= 0 && (r.python == 1) != frame.python) return false;
    if (!r.module.empty()) {
        bool path_glob = r.module.find('/') != std::string::npos;
        if (module_path.empty() || !glob_match(r.module, path_glob ? module_path : module_name)) return false;
    }
    if (!r.function.empty() && !glob_match(r.function, frame.function)) return false;
    if (!r.file.empty() && !glob_match(r.file, frame.file)) return false;
    return true;
}

} // namespace

FrameRules::Verdict FrameRules::judge(const snapshot::Frame &frame, std::string_view module_path) const {
    std::string_view module_name = basename_of(module_path);
    Verdict v;
    for (const FrameRule &r : rules_) {
        bool placement_open = v.placement == nullptr && r.action != RuleAction::Mark;
        bool category_open = v.category == Category::kNone && r.category != Category::kNone;
        bool group_open = v.group.empty() && !r.group.empty();
        if (!placement_open && !category_open && !group_open) continue;
        if (!rule_matches(r, frame, module_path, module_name)) continue;
        if (placement_open) v.placement = &r;
        if (category_open) v.category = r.category;
        if (group_open) v.group = r.group;
        if (v.placement != nullptr && v.category != Category::kNone && !v.group.empty()) break;
    }
    return v;
}

void FrameRules::add_shipped() {
    std::string error;
    if (!add(kShippedFrameRules, "frame_rules.txt", &error)) std::abort(); // a unit test parses it
}

const FrameRules &FrameRules::builtin() {
    static const FrameRules *rules = [] {
        auto *r = new FrameRules; // never destroyed: reports may be made from exit handlers
        r->add_shipped();
        return r;
    }();
    return *rules;
}

const FrameRules &FrameRules::from_environment(void (*warn)(const char *message)) {
    // A function-local static rather than std::call_once, which would need glibc 2.34's
    // pthread_once (tests/abi/check_glibc_floor.sh).
    static const FrameRules *rules = [warn]() -> const FrameRules * {
        const char *path = settings::text(settings::Id::framework_rules);
        if (path == nullptr) return &builtin();
        auto *r = new FrameRules;
        std::string text, error;
        // Only a regular file, read without blocking (a FIFO named here must not hold a dump up),
        // whole or not at all.
        if (symbolize::read_regular_file(path, {true, false, 1 << 20}, &text)) {
            if (!r->add(text, path, &error))
                error = "VRAMTRACE_FRAMEWORK_RULES: " + error + "; the file is ignored, the shipped rules apply";
        } else if (errno == EFBIG) {
            error = std::string("VRAMTRACE_FRAMEWORK_RULES: ") + path + " is larger than 1 MiB; the shipped rules apply";
        } else if (errno == EIO) {
            error = std::string("VRAMTRACE_FRAMEWORK_RULES: cannot read ") + path + " whole; the shipped rules apply";
        } else {
            error = std::string("VRAMTRACE_FRAMEWORK_RULES: cannot read ") + path + "; the shipped rules apply";
        }
        if (!error.empty() && warn) warn(error.c_str());
        r->add_shipped();
        return r;
    }();
    return *rules;
}

} // namespace vramtrace
