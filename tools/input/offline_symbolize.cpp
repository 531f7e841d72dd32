// Offline symbolization of unsymbolized snapshots (see offline_symbolize.h).
#include "input/offline_symbolize.h"

#include <mutex>
#include <set>
#include <utility>

#include <sys/stat.h>

#include "common/cli.h"
#include "symbolize/call_site.h"
#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace vramtrace::cli {
namespace {

// Each problem is said once per run of the CLI (merge reads a file twice).
void warn_once(const std::string &name, const std::string &text) {
    static std::mutex mutex;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> lock(mutex);
    if (said.insert(name + "\n" + text).second) log_warning(name + ": " + text);
}

void notice_libdw(void *context, const char *message) {
    warn_once(*static_cast<const std::string *>(context), message);
}

std::unique_ptr<symbolize::Symbolizer> make_symbolizer(const std::vector<snapshot::Module> &modules,
                                                       const UsableModules &usable, const std::string *name) {
    std::vector<symbolize::LoadedModule> loaded;
    for (size_t i = 0; i < modules.size(); ++i) {
        if (usable.index[i] < 0) continue;
        symbolize::LoadedModule m;
        m.path = modules[i].path;
        m.base = modules[i].base;
        m.build_id = modules[i].build_id;
        loaded.push_back(std::move(m));
    }
    symbolize::SymbolizerOptions options;
    options.notice = &notice_libdw;
    options.notice_context = const_cast<std::string *>(name);
    return std::make_unique<symbolize::Symbolizer>(std::move(loaded), std::move(options));
}

// Names one frame, when its module is usable. The frame keeps its module index and offset.
void name_frame(symbolize::Symbolizer &symbolizer, const UsableModules &usable, snapshot::Frame &frame) {
    if (frame.module < 0 || size_t(frame.module) >= usable.index.size() || usable.index[size_t(frame.module)] < 0)
        return;
    symbolize::SymbolizedAddress r = symbolizer.lookup(frame.address);
    if (r.module != usable.index[size_t(frame.module)]) return; // the file's segments do not hold it
    frame.function = std::move(r.function);
    frame.file = std::move(r.file);
    frame.line = r.line;
    frame.inlined = std::move(r.inlined);
}

} // namespace

UsableModules check_modules_on_disk(const std::vector<snapshot::Module> &modules) {
    UsableModules out;
    int next = 0;
    for (const snapshot::Module &m : modules) {
        struct stat st {};
        std::string problem;
        if (m.path.empty() || m.path[0] != '/' || ::stat(m.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
            problem = "file not found";
        } else if (!m.build_id.empty()) {
            std::string on_disk = symbolize::read_build_id_from_file(m.path);
            if (on_disk != m.build_id)
                problem = "build id " + m.build_id + " recorded, the file on disk has " +
                          (on_disk.empty() ? std::string("none") : on_disk) + " (rebuilt or replaced since)";
        }
        if (problem.empty()) {
            out.index.push_back(next++);
        } else {
            out.index.push_back(-1);
            out.warnings.push_back("module " + m.path + ": " + problem + "; its frames are not named");
        }
    }
    return out;
}

void symbolize_offline(snapshot::Snapshot &snapshot, const std::string &name) {
    if (!snapshot.process.symbolized) {
        UsableModules usable = check_modules_on_disk(snapshot.modules);
        for (const std::string &w : usable.warnings) warn_once(name, w);
        auto symbolizer = make_symbolizer(snapshot.modules, usable, &name);
        for (snapshot::Frame &f : snapshot.frames) name_frame(*symbolizer, usable, f);
        snapshot.process.symbolized = true;
    }
    assign_call_sites(snapshot);
}

// ---- streaming ----

struct SymbolizingSink::State {
    bool active = false;              // the snapshot is not symbolized
    snapshot::Snapshot known;           // modules, and the frames met so far (for the frame rules)
    UsableModules usable;
    std::unique_ptr<symbolize::Symbolizer> symbolizer;
    std::unique_ptr<Attributor> attributor; // over `known`, made at the first stack
};

SymbolizingSink::SymbolizingSink(snapshot::SnapshotSink &inner, std::string name)
    : snapshot::ForwardingSink(inner), name_(std::move(name)), state_(std::make_unique<State>()) {}

SymbolizingSink::~SymbolizingSink() = default;

void SymbolizingSink::on_process(snapshot::ProcessInfo &&process) {
    state_->active = !process.symbolized;
    if (state_->active) process.symbolized = true; // what the inner sink receives is named
    snapshot::ForwardingSink::on_process(std::move(process));
}

void SymbolizingSink::on_module(snapshot::Module &&module) {
    state_->known.modules.push_back(module);
    snapshot::ForwardingSink::on_module(std::move(module));
}

void SymbolizingSink::on_frame(snapshot::Frame &&frame) {
    State &s = *state_;
    if (s.active) {
        if (!s.symbolizer) {
            s.usable = check_modules_on_disk(s.known.modules);
            for (const std::string &w : s.usable.warnings) warn_once(name_, w);
            s.symbolizer = make_symbolizer(s.known.modules, s.usable, &name_);
        }
        name_frame(*s.symbolizer, s.usable, frame);
    }
    // Only what the frame rules look at: module, function name, file, whether it is Python code.
    snapshot::Frame kept;
    kept.module = frame.module;
    kept.function = frame.function;
    kept.file = frame.file;
    kept.python = frame.python;
    s.known.frames.push_back(std::move(kept));
    snapshot::ForwardingSink::on_frame(std::move(frame));
}

void SymbolizingSink::on_stack(snapshot::Stack &&stack) {
    State &s = *state_;
    // A stack read before the frames it names (legal JSON, never what the library writes) keeps
    // the attribution its file gives it: the rules would take its unknown frames for the call site.
    // So does a stack whose call_site is not an index into its frames, for the reader's check.
    for (uint32_t f : stack.frames)
        if (f >= s.known.frames.size()) return snapshot::ForwardingSink::on_stack(std::move(stack));
    if (stack.call_site < -1 || (stack.call_site >= 0 && size_t(stack.call_site) >= stack.frames.size()))
        return snapshot::ForwardingSink::on_stack(std::move(stack));
    if (!s.attributor) s.attributor = std::make_unique<Attributor>(s.known);
    apply_attribution(s.known, stack, s.attributor->attribute(stack));
    snapshot::ForwardingSink::on_stack(std::move(stack));
}

} // namespace vramtrace::cli
