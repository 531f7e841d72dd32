// libFuzzer target over what each command does with a parsed input, past the reader that
// snapshot_reader_fuzz.cpp covers. The first byte picks the command; the rest is the input. diff
// and merge take two snapshots, separated by the first NUL byte (which JSON text cannot contain).
//
//   mode 0  summary: read_snapshot_file, then report::format_summary (the byte after the mode is
//           --top, 0 to 15)
//   mode 1  export:  read_snapshot_file, then every format of tools/export, at exit and at the
//           peak, for all devices and for device 0
//   mode 2  diff:    collect_sites_from_file on both, compute_diff, the growth gate (1 MiB, and a
//           percentage), the text and the JSON form (dumped as commands/cmd_diff.cpp dumps it)
//   mode 3  merge:   Merger::add_file on both (the two-pass path of a file whose allocations come
//           before its stacks included), format_merge_text, write_snapshot; the merged snapshot
//           must then read back with read_snapshot_file (what merge writes, the reader accepts)
//
// Inputs go through files as the commands read them: a memfd, opened by its /proc/self/fd path.
// Built and run by fuzz/run_fuzz.sh; replayed in CTest by fuzz_replay_main.cpp. Kept free of
// <ranges> (clang-14 cannot compile libstdc++ 12's).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/call_sites.h"
#include "analysis/diff_core.h"
#include "analysis/merge_core.h"
#include "export/export.h"
#include "report/summary_format.h"
#include "snapshot/reader/snapshot_reader.h"

namespace {

using namespace vramtrace;

// A file holding `bytes`, removed when this goes out of scope.
class MemFile {
public:
    explicit MemFile(const std::string &bytes) {
        fd_ = memfd_create("vt-fuzz", 0);
        if (fd_ < 0) abort();
        for (size_t done = 0; done < bytes.size();) {
            ssize_t w = write(fd_, bytes.data() + done, bytes.size() - done);
            if (w <= 0) abort();
            done += static_cast<size_t>(w);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    explicit MemFile() : MemFile(std::string()) {}
    ~MemFile() { close(fd_); }
    MemFile(const MemFile &) = delete;
    MemFile &operator=(const MemFile &) = delete;
    const std::string &path() const { return path_; }
    int fd() const { return fd_; }

private:
    int fd_ = -1;
    std::string path_;
};

// Every error of the commands' input path is one non-empty line.
void check_error(const std::string &error) {
    if (error.empty() || error.find('\n') != std::string::npos) abort();
}

void summary(const std::string &input, uint8_t top) {
    MemFile file(input);
    snapshot::Snapshot snapshot;
    std::string error;
    if (!snapshot::read_snapshot_file(file.path(), &snapshot, &error)) return check_error(error);
    report::SummaryOptions options;
    options.top_n = top % 16;
    std::string text = report::format_summary(snapshot, options);
    if (text.empty() || text.back() != '\n') abort();
}

void export_all(const std::string &input) {
    MemFile file(input);
    snapshot::Snapshot snapshot;
    std::string error;
    if (!snapshot::read_snapshot_file(file.path(), &snapshot, &error)) return check_error(error);
    using exporter::Format;
    for (Format format : {Format::Chrome, Format::Folded, Format::Pprof, Format::Pickle, Format::Html}) {
        for (int variant = 0; variant < 4; ++variant) {
            exporter::Options options;
            options.at = variant & 1 ? exporter::At::Peak : exporter::At::Exit;
            if (variant & 2) options.device = 0;
            std::string data, why;
            std::vector<std::string> notes;
            if (!exporter::export_snapshot(snapshot, format, options, &data, &notes, &why)) check_error(why);
        }
    }
}

void diff(const std::string &base_input, const std::string &new_input) {
    MemFile base_file(base_input), new_file(new_input);
    cli::SiteKeyOptions keys;
    keys.frames = 2;
    cli::SnapshotSites base, now;
    std::string error;
    if (!cli::collect_sites_from_file(base_file.path(), keys, nullptr, &base, &error)) return check_error(error);
    if (!cli::collect_sites_from_file(new_file.path(), keys, nullptr, &now, &error)) return check_error(error);
    cli::DiffResult result = cli::compute_diff(base, now, keys);
    for (const char *limit_text : {"1MiB", "5%"}) {
        cli::GrowthLimit limit;
        std::string why;
        if (!cli::parse_growth_limit(limit_text, &limit, &why)) abort();
        for (cli::GateMetric metric : {cli::GateMetric::Live, cli::GateMetric::Peak}) {
            std::optional<cli::GateResult> gate = cli::apply_gate(result, limit, metric, {}, &why);
            const cli::GateResult *g = gate ? &*gate : nullptr;
            cli::DiffTextOptions text;
            text.all = metric == cli::GateMetric::Peak;
            (void)cli::format_diff_text(base, now, result, text, g);
            (void)cli::diff_json(base, now, result, text, g, &limit)
                .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
        }
    }
}

void merge(const std::string &first_input, const std::string &second_input) {
    MemFile first(first_input), second(second_input), spool_file;
    std::FILE *spool = fdopen(dup(spool_file.fd()), "w+");
    if (spool == nullptr) abort();
    {
        cli::SiteKeyOptions keys;
        cli::Merger merger(keys, spool);
        std::string error;
        bool ok = merger.add_file(first.path(), nullptr, &error);
        if (ok) ok = merger.add_file(second.path(), nullptr, &error);
        if (!ok) {
            check_error(error);
        } else {
            (void)cli::format_merge_text(merger, 3, keys);
            MemFile out;
            if (!merger.write_snapshot(out.fd(), {"vramtrace", "merge"}, "fuzz", &error)) abort();
            snapshot::Snapshot merged;
            if (!snapshot::read_snapshot_file(out.path(), &merged, &error)) {
                fprintf(stderr, "the merged snapshot does not read back: %s\n", error.c_str());
                abort();
            }
        }
    }
    std::fclose(spool);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const char *text = reinterpret_cast<const char *>(data) + 2;
    std::string input(text, size - 2);
    size_t nul = input.find('\0');
    std::string first = input.substr(0, nul), second = nul == std::string::npos ? input : input.substr(nul + 1);
    switch (data[0] % 4) {
    case 0: summary(input, data[1]); break;
    case 1: export_all(input); break;
    case 2: diff(first, second); break;
    case 3: merge(first, second); break;
    }
    return 0;
}
