// Naming the frames of a snapshot written without names (process.symbolized == false: a crash
// snapshot, written from a signal handler; docs/crash-dumps.md) from the module files on disk:
// function names from their ELF symbol tables, file:line through libdw when it can be loaded
// (lib/symbolize/symbolizer.h, offline mode: the snapshot's modules at their recorded bases).
//
// A module is used only when its file is there and carries the build id the snapshot recorded
// (a module recorded without build id is used when its file is there). Otherwise one warning line
// per module says why ("vramtrace: warning: FILE: module PATH: ...; its frames are not named"),
// and frames into it keep their module + offset only; process.symbolized then becomes true.
//
// Every snapshot read, named here or not, gets the frame rules applied to its stacks again
// (lib/symbolize/call_site.h, docs/attribution.md: call site, via, category), so that a file
// written before them, a crash snapshot and a user's own rules (VRAMTRACE_FRAMEWORK_RULES) all
// read the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "snapshot/snapshot_model.h"
#include "snapshot/reader/snapshot_reader.h"

namespace vramtrace::cli {

// Symbolizes `snapshot` in place when snapshot.process.symbolized is false, then applies the frame
// rules to its stacks.
// `name` (the file) starts the warning lines. Never throws except std::bad_alloc.
void symbolize_offline(snapshot::Snapshot &snapshot, const std::string &name);

// The modules of `modules` that can be used, as the symbolizer wants them, and for each input
// module its index among them (-1: not usable). Appends one warning text per unusable module.
struct UsableModules {
    std::vector<int> index;              // per input module
    std::vector<std::string> warnings;   // "module PATH: ...; its frames are not named"
};
UsableModules check_modules_on_disk(const std::vector<snapshot::Module> &modules);

// A sink that names frames on their way to `inner` when the snapshot says it is not symbolized
// (process, then modules, arrive before frames in every file the library writes), and applies the
// frame rules to every stack (frames arrive before stacks there too; a stack that comes before the
// frames it names, or whose call_site is out of its range, keeps the call site, via and category
// its file gives it). Warnings go to stderr as above. Every other callback (devices, allocations, peaks, OOMs, pools, events, merge records,
// ...) reaches `inner` unchanged through ForwardingSink, including callbacks added to SnapshotSink
// later.
class SymbolizingSink final : public snapshot::ForwardingSink {
public:
    SymbolizingSink(snapshot::SnapshotSink &inner, std::string name);
    ~SymbolizingSink() override;

    void on_process(snapshot::ProcessInfo &&process) override;
    void on_module(snapshot::Module &&module) override;
    void on_frame(snapshot::Frame &&frame) override;
    void on_stack(snapshot::Stack &&stack) override;

private:
    struct State;
    std::string name_;
    std::unique_ptr<State> state_;
};

} // namespace vramtrace::cli
