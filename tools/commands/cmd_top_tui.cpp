// The terminal UI of `vramtrace top` (docs/live.md): ncurses, one reading a second, drawn to fit
// whatever size the terminal has (80x24 and up; smaller terminals get what fits), redrawn on
// resize. Colour only when the terminal has it and NO_COLOR is not set.
#include <algorithm>
#include <cerrno>
#include <clocale>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <curses.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include "analysis/host_gpus.h"
#include "commands/top_model.h"
#include "commands/cmd_top.h"
#include "commands/top_layout.h"
#include "common/cli.h"
#include "input/live_client.h"
#include "live/protocol.h"
#include "report/text_safety.h"
#include "report/text_format.h"

namespace vramtrace::cli {
namespace {

uint64_t now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

enum Pair { kBar = 1, kPeak, kTitle, kWarn };

struct Ui {
    bool colour = false;
    bool utf8 = false;
};

// Writes `text` at (y, x) cut to the screen's width, counting a UTF-8 character as one cell (the
// only wide characters drawn are the sparkline's, each one cell wide). Everything drawn passes
// through here, escaped as `vramtrace summary` escapes its output: names, paths and messages come
// from the process and from files on disk.
void put(int y, int x, const std::string &raw, attr_t attr = A_NORMAL) {
    int width = COLS - x;
    if (y < 0 || y >= LINES || width <= 0) return;
    const std::string text = report::escape_control_characters(raw);
    std::string shown;
    int cells = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        bool starts = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
        if (starts && ++cells > width) break;
        shown += text[i];
    }
    attron(attr);
    mvaddstr(y, x, shown.c_str());
    attroff(attr);
}

std::string command_text(const std::vector<std::string> &argv) {
    std::string out;
    for (const std::string &a : argv) out += (out.empty() ? "" : " ") + a;
    return report::one_line(out);
}

std::string pad(std::string s, size_t n) {
    if (s.size() < n) s.append(n - s.size(), ' ');
    return s;
}
std::string rpad(const std::string &s, size_t n) { return s.size() >= n ? s : std::string(n - s.size(), ' ') + s; }

// A sparkline of `values` (bytes, -1 unknown) in `width` cells, scaled to `top`.
std::string sparkline(const std::vector<int64_t> &values, size_t width, int64_t top, bool utf8) {
    static const char *const kBlocks[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char kAscii[] = " .:-=+*#@";
    std::string out;
    size_t start = values.size() > width ? values.size() - width : 0;
    for (size_t i = start; i < values.size(); ++i) {
        int64_t v = values[i];
        int level = v < 0 || top <= 0 ? 0 : int((v * 8 + top - 1) / top);
        level = std::clamp(level, v > 0 ? 1 : 0, 8);
        if (v < 0) out += utf8 ? "\u00b7" : "?";
        else if (utf8) out += kBlocks[level];
        else out += kAscii[level];
    }
    return out;
}

class TopUi {
public:
    TopUi(const TopOptions &options, Ui ui) : options_(options), ui_(ui) { pid_ = options.pid; }

    int run(int *child_status) {
        uint64_t next_read = 0;
        for (;;) {
            if (options_.child != 0 && child_status != nullptr) {
                int status = 0;
                if (waitpid(options_.child, &status, WNOHANG) == options_.child) {
                    *child_status = status;
                    return kExitOk;
                }
            }
            if (now_ms() >= next_read) {
                refresh_data();
                next_read = now_ms() + 1000;
            }
            follow_terminal_size();
            draw();
            int key = getch();
            if (key == ERR) continue;
            if (!handle_key(key)) return kExitOk;
        }
    }

private:
    // ncurses learns of a resize from SIGWINCH, and its handler is installed after it read the
    // size: a resize in between (a terminal that opens, then fits its window) would leave the
    // screen drawn for the old size until the next one. The size is asked for again each loop.
    static void follow_terminal_size() {
        struct winsize ws {};
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
            (ws.ws_row != LINES || ws.ws_col != COLS))
            resizeterm(ws.ws_row, ws.ws_col);
    }

    void refresh_data() {
        if (pid_ == 0) {
            refresh_list();
            return;
        }
        // The recent past comes from the process's event ring every kHistoryEvery readings (a ring
        // walk costs the process more than the rest of a reading); in between, the view moves it
        // on by itself with the current figure of each second.
        bool want_history = !have_view_ || !view_.has_history || readings_since_history_ + 1 >= kHistoryEvery;
        LiveEndpoint e;
        std::string error, answer;
        if (!live_endpoint_of(pid_, &e, &error) ||
            !live_request(e, want_history ? live::kRequestReadingHistory : live::kRequestReading, &answer, &error, 5000)) {
            if (have_view_) {
                if (exited_ms_ == 0) exited_ms_ = now_ms();
            } else {
                message_ = error;
            }
            return;
        }
        exited_ms_ = 0;
        LiveView v;
        if (!parse_live_reading(answer, *namer_, device_, &v, &error)) {
            message_ = error;
            return;
        }
        if (v.has_history) {
            readings_since_history_ = 0;
            history_end_ns_ = v.monotonic_ns;
        } else if (have_view_ && view_.has_history) {
            ++readings_since_history_;
            uint64_t seconds = v.monotonic_ns > history_end_ns_ ? (v.monotonic_ns - history_end_ns_) / 1000000000ull : 0;
            history_end_ns_ += seconds * 1000000000ull;
            for (LiveDevice &d : v.devices) {
                for (const LiveDevice &old : view_.devices)
                    if (old.totals.device == d.totals.device) d.history = old.history;
                if (d.history.empty()) d.history.assign(live::kHistorySeconds, -1);
                for (uint64_t k = 0; k < seconds && k < live::kHistorySeconds; ++k) {
                    d.history.erase(d.history.begin());
                    d.history.push_back(int64_t(d.totals.current_bytes));
                }
            }
            v.marks = view_.marks;
            v.has_history = true;
        }
        view_ = std::move(v);
        have_view_ = true;
        std::map<std::string, uint64_t> bytes;
        for (const LiveSite &site : view_.sites) bytes[site.location] += site.bytes;
        growth_.add(now_ms(), bytes);
        sort_sites();
        if (selected_ >= int(view_.sites.size())) selected_ = std::max(0, int(view_.sites.size()) - 1);
    }

    void refresh_list() {
        std::vector<std::string> warnings;
        std::vector<LiveEndpoint> endpoints = find_live_processes(&warnings);
        if (!warnings.empty()) message_ = warnings.front();
        rows_.clear();
        std::vector<TracedProcess> traced;
        for (const LiveEndpoint &e : endpoints) {
            std::string answer, error;
            LiveNamer namer;
            LiveView v;
            if (!live_request(e, live::kRequestReading, &answer, &error, 2000) ||
                !parse_live_reading(answer, namer, -3, &v, &error, false))
                continue;
            ProcessRow row;
            row.pid = e.pid;
            row.command = command_text(v.command_line);
            row.rank = v.rank;
            TracedProcess t{e.pid, {}};
            for (const LiveDevice &d : v.devices) {
                row.devices.push_back({d.totals.device, d.totals.current_bytes, d.totals.peak_bytes});
                t.devices.push_back(d.totals);
            }
            traced.push_back(std::move(t));
            rows_.push_back(std::move(row));
        }
        host_ = read_host_gpus(traced);
        if (list_selected_ >= int(rows_.size())) list_selected_ = std::max(0, int(rows_.size()) - 1);
    }

    void sort_sites() {
        auto &s = view_.sites;
        if (sort_ == 1)
            std::stable_sort(s.begin(), s.end(), [](const LiveSite &a, const LiveSite &b) { return a.count > b.count; });
        else if (sort_ == 2)
            std::stable_sort(s.begin(), s.end(), [this](const LiveSite &a, const LiveSite &b) {
                return growth_.last_10s(a.location) > growth_.last_10s(b.location);
            });
        else if (sort_ == 3)
            std::stable_sort(s.begin(), s.end(), [](const LiveSite &a, const LiveSite &b) { return a.location < b.location; });
    }

    const char *sort_name() const {
        return sort_ == 0 ? "bytes" : sort_ == 1 ? "allocations" : sort_ == 2 ? "growth over 10 s" : "call site";
    }

    void draw() {
        erase();
        if (help_) draw_help();
        else if (pid_ == 0) draw_list();
        else draw_process();
        refresh();
    }

    // One bar per GPU that NVML lists: traced (T), untraced (u) and free (.) memory.
    int draw_gpu_bars(int y) {
        for (const GpuSplit &g : host_.gpus) {
            if (y >= LINES - 3) break;
            std::string label = "gpu" + std::to_string(g.gpu.index) + " ";
            std::string figures = " traced " + report::format_bytes(g.traced_bytes) + ", untraced " +
                                  report::format_bytes(g.untraced_bytes) + ", free " + report::format_bytes(g.gpu.free_bytes);
            int bar = std::max(10, COLS - int(label.size()) - int(figures.size()) - 2);
            auto cells = [&](uint64_t b) {
                return g.gpu.total_bytes == 0 ? 0 : int((long double)b * bar / g.gpu.total_bytes);
            };
            int traced = std::clamp(cells(g.traced_bytes), 0, bar);
            int untraced = std::clamp(cells(g.untraced_bytes), 0, bar - traced);
            put(y, 0, label + "[");
            put(y, int(label.size()) + 1, std::string(size_t(traced), 'T'), bar_attr());
            put(y, int(label.size()) + 1 + traced, std::string(size_t(untraced), 'u'), warn_attr());
            put(y, int(label.size()) + 1 + traced + untraced, std::string(size_t(bar - traced - untraced), '.'));
            put(y, int(label.size()) + 1 + bar, "]" + figures);
            ++y;
        }
        return y;
    }

    void draw_list() {
        put(0, 0, pad("vramtrace top: processes on this host's GPUs", size_t(COLS)), title_attr());
        int y = draw_gpu_bars(1) + 1;
        // One line per (process, device); an untraced GPU process one per GPU it is on.
        std::vector<Column> cols = {{"pid", {}, false, 0, 5}, {"command", {}, false, 0, 1, false, true},
                                    {"rank", {}, false, 0, 0, true}, {"device", {}, false, 0, 3},
                                    {"current", {}, true, 0, 4}, {"peak", {}, true, 0, 2}};
        std::vector<int> row_of; // the rows_ index of each line (-1: an untraced process)
        auto add = [&](std::vector<std::string> v, int owner) {
            for (size_t i = 0; i < cols.size(); ++i) cols[i].cells.push_back(v[i]);
            row_of.push_back(owner);
        };
        for (size_t i = 0; i < rows_.size(); ++i) {
            const ProcessRow &r = rows_[i];
            const std::string rank = r.rank.empty() ? "-" : r.rank;
            if (r.devices.empty()) add({std::to_string(r.pid), r.command, rank, "-", "-", "-"}, int(i));
            for (size_t k = 0; k < r.devices.size(); ++k)
                add({k == 0 ? std::to_string(r.pid) : "", k == 0 ? r.command : "", k == 0 ? rank : "",
                     report::device_label(r.devices[k].device), report::format_bytes(r.devices[k].current),
                     report::format_bytes(r.devices[k].peak)}, int(i));
        }
        for (const UntracedProcess &u : host_.untraced)
            add({std::to_string(u.pid), u.name + " (not traced)", "-", "gpu" + std::to_string(u.gpu),
                 u.used_bytes ? report::format_bytes(*u.used_bytes) : "-", "-"}, -1);
        Layout layout = lay_out(cols, size_t(COLS));
        put(y++, 0, layout.header, A_BOLD);
        for (size_t i = 0; i < layout.rows.size() && y < LINES - 2; ++i)
            put(y++, 0, layout.rows[i], row_of[i] >= 0 && row_of[i] == list_selected_ ? A_REVERSE : A_NORMAL);
        if (rows_.empty()) {
            put(y + 1, 0, "no traced process serves a live view on this host; start one with");
            put(y + 2, 2, "vramtrace run -- PROGRAM ARGS...   (or LD_PRELOAD=libvramtrace.so PROGRAM)");
            put(y + 3, 0, "or run it in this terminal: vramtrace run --live -- PROGRAM ARGS...");
        }
        status_line("Enter: open  j/k: move  ?: keys  q: quit");
    }

    void draw_help() {
        put(0, 0, pad("vramtrace top: keys", size_t(COLS)), title_attr());
        static const char *const kKeys[] = {
            "j / k, arrows   move",
            "Enter           open the process; on a call site, show its stack",
            "Esc, Backspace  back to the process list",
            "d               device: all, then each in turn",
            "o               sort by bytes, allocations, growth over 10 s, call site",
            "s               write a snapshot now (X.live-N.json beside the exit snapshot)",
            "?               this help (any key closes it)",
            "q               quit",
        };
        int y = 2;
        for (const char *k : kKeys) put(y++, 2, k);
        status_line("any key: back");
    }

    // How the process ended, once it no longer answers: its last reading stays on the screen.
    std::string exit_text() const {
        const uint64_t ago = (now_ms() - exited_ms_) / 1000;
        std::string text = "exited " + std::to_string(ago) + " s ago";
        struct stat st{};
        const std::string &snap = view_.exit_snapshot;
        std::string crash = snap.size() > 5 && snap.compare(snap.size() - 5, 5, ".json") == 0
                                ? snap.substr(0, snap.size() - 5) + ".crash.json" : "";
        if (!crash.empty() && stat(crash.c_str(), &st) == 0) return text + ", crashed: crash snapshot " + crash;
        if (!snap.empty() && stat(snap.c_str(), &st) == 0) return text + ", exit snapshot " + snap;
        return text + ", no exit snapshot (killed, or _exit)" + (snap.empty() ? "" : ": no " + snap);
    }

    void draw_process() {
        std::string title = "vramtrace top: pid " + std::to_string(pid_);
        if (have_view_) {
            title += "  " + command_text(view_.command_line);
            if (!view_.rank.empty()) title += "  rank " + report::one_line(view_.rank);
        }
        put(0, 0, pad(title, size_t(COLS)), title_attr());
        int y = 1;
        if (!options_.log_path.empty()) put(y++, 0, "program output: " + options_.log_path);
        if (have_view_ && exited_ms_ != 0) put(y++, 0, cut_middle("last reading: " + exit_text(), size_t(COLS)), warn_attr());
        if (!have_view_) {
            put(y + 1, 0, "no reading" + (message_.empty() ? std::string() : ": " + message_));
            status_line("q: quit");
            return;
        }
        // Per-device bars: against the device's capacity when known, else its peak.
        for (const LiveDevice &d : view_.devices) {
            if (y >= LINES - 4) break;
            const snapshot::DeviceTotals &t = d.totals;
            uint64_t scale = t.total_memory_bytes.value_or(t.peak_bytes);
            std::string label = pad(report::device_label(t.device), 8);
            if (device_ == t.device) label = pad(">" + report::device_label(t.device), 8);
            std::string figures = " " + report::format_bytes(t.current_bytes) + " peak " + report::format_bytes(t.peak_bytes);
            if (t.total_memory_bytes) figures += " of " + report::format_bytes(*t.total_memory_bytes);
            if (t.process_used_bytes) figures += " nvml " + report::format_bytes(*t.process_used_bytes);
            int bar_width = std::max(10, COLS - int(label.size()) - int(figures.size()) - 2);
            int filled = scale == 0 ? 0 : int((long double)t.current_bytes * bar_width / scale);
            int peak_at = scale == 0 ? -1 : int((long double)t.peak_bytes * bar_width / scale);
            filled = std::clamp(filled, 0, bar_width);
            put(y, 0, label + "[");
            for (int i = 0; i < bar_width; ++i) {
                bool f = i < filled;
                char c = f ? '#' : (i == peak_at - 1 && peak_at > filled ? '|' : '.');
                attr_t a = f ? bar_attr() : (c == '|' ? peak_attr() : A_NORMAL);
                put(y, int(label.size()) + 1 + i, std::string(1, c), a);
            }
            put(y, int(label.size()) + 1 + bar_width, "]" + figures);
            ++y;
        }
        // The recent past of the device picked (or the first).
        const LiveDevice *shown = nullptr;
        for (const LiveDevice &d : view_.devices)
            if (shown == nullptr || d.totals.device == device_) shown = &d;
        if (shown != nullptr && !shown->history.empty() && y < LINES - 4) {
            std::string head = "last " + std::to_string(live::kHistorySeconds) + " s " +
                               report::device_label(shown->totals.device) + " ";
            int64_t top = 0;
            for (int64_t v : shown->history) top = std::max(top, v);
            put(y++, 0, head + sparkline(shown->history, size_t(std::max(0, COLS - int(head.size()))), top, ui_.utf8));
        }
        ++y;
        std::string which = device_ < -2 ? "all devices" : report::device_label(device_);
        put(y++, 0, "top call sites (" + which + ", by " + sort_name() + "; " + std::to_string(view_.live_allocations) +
                        " live, " + report::format_bytes(view_.live_bytes) + ")", A_BOLD);
        int feed_lines = int(std::min<size_t>(4, view_.ooms.size() + view_.marks.size())); // entries shown
        int last_site_row = LINES - 1 - (feed_lines > 0 ? feed_lines + 1 : 0);
        // The columns that fit: the call site is cut in its middle so that file:line stays, and a
        // category that is the same on every row is left out.
        std::vector<Column> cols = {{"live", {}, true, 0, 9}, {"allocs", {}, true, 0, 3},
                                    {"10 s", {}, true, 0, 5}, {"since start", {}, true, 0, 2},
                                    {"category", {}, false, 0, 1, true}, {"call site", {}, false, 24, 8, false, true}};
        const size_t n = std::min(view_.sites.size(), options_.top);
        for (size_t i = 0; i < n; ++i) {
            const LiveSite &site = view_.sites[i];
            cols[0].cells.push_back(report::format_bytes(site.bytes));
            cols[1].cells.push_back(std::to_string(site.count));
            cols[2].cells.push_back(format_growth(growth_.last_10s(site.location)));
            cols[3].cells.push_back(format_growth(growth_.since_first(site.location)));
            cols[4].cells.push_back(site.category.empty() ? "-" : site.category);
            cols[5].cells.push_back(report::one_line(site.location));
        }
        Layout layout = lay_out(cols, size_t(COLS));
        put(y++, 0, layout.header, A_BOLD);
        for (size_t i = 0; i < n && y < last_site_row; ++i) {
            attr_t attr = int(i) == selected_ ? A_REVERSE : A_NORMAL;
            put(y++, 0, pad(layout.rows[i], size_t(COLS)), attr);
            if (int(i) == selected_ && expanded_)
                for (uint32_t f : view_.sites[i].stack) {
                    if (y >= last_site_row) break;
                    put(y++, 0, "      " + cut_middle(report::one_line(view_.frames[f]), size_t(std::max(0, COLS - 6))));
                }
        }
        if (feed_lines > 0) {
            int fy = LINES - 2 - feed_lines;
            put(fy++, 0, "events (OOMs and marks, newest last):", A_BOLD);
            // OOMs and marks in the order they happened (both CLOCK_MONOTONIC of the process).
            std::vector<std::pair<uint64_t, std::string>> timed;
            for (const snapshot::OomEvent &o : view_.ooms)
                timed.emplace_back(o.time_ns, "OOM " + report::device_label(o.device) + " " +
                                                  report::format_bytes(o.requested_bytes) + " (" + o.api + ")");
            for (const LiveMark &m : view_.marks) timed.emplace_back(m.time_ns, "mark \"" + report::one_line(m.label) + "\"");
            std::stable_sort(timed.begin(), timed.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
            std::vector<std::string> feed;
            for (auto &t : timed) feed.push_back(std::move(t.second));
            size_t from = feed.size() > size_t(feed_lines) ? feed.size() - size_t(feed_lines) : 0;
            for (size_t i = from; i < feed.size() && fy < LINES - 1; ++i)
                put(fy++, 2, feed[i], feed[i].rfind("OOM", 0) == 0 ? warn_attr() : A_NORMAL);
        }
        status_line("q quit  j/k move  Enter stack  d device  o sort  s snapshot  ? keys" +
                    std::string(options_.pid == 0 ? "  Esc back" : ""));
    }

    // The keys, or the last message. A message too long for the line keeps its start up to the
    // first path and the path's end ("snapshot written to ...dir/x.live-1.json").
    void status_line(const std::string &keys) {
        std::string text = message_.empty() ? keys : report::one_line(message_);
        size_t slash = text.find('/');
        if (text.size() > size_t(COLS) && slash != std::string::npos && slash + 3 < size_t(COLS)) {
            size_t keep = size_t(COLS) - slash - 3;
            text = text.substr(0, slash) + "..." + text.substr(text.size() - keep);
        }
        put(LINES - 1, 0, pad(text, size_t(COLS)), A_REVERSE);
    }

    attr_t title_attr() const { return ui_.colour ? COLOR_PAIR(kTitle) | A_BOLD : A_BOLD; }
    attr_t bar_attr() const { return ui_.colour ? COLOR_PAIR(kBar) : A_BOLD; }
    attr_t peak_attr() const { return ui_.colour ? COLOR_PAIR(kPeak) : A_BOLD; }
    attr_t warn_attr() const { return ui_.colour ? COLOR_PAIR(kWarn) : A_BOLD; }

    // False: quit.
    bool handle_key(int key) {
        if (key == 'q' || key == 'Q') return false;
        if (key == KEY_RESIZE) return true;
        message_.clear();
        if (help_ || key == '?') {
            help_ = !help_;
            return true;
        }
        if (pid_ == 0) {
            if ((key == KEY_DOWN || key == 'j') && list_selected_ + 1 < int(rows_.size())) ++list_selected_;
            if ((key == KEY_UP || key == 'k') && list_selected_ > 0) --list_selected_;
            if ((key == '\n' || key == KEY_ENTER) && !rows_.empty()) {
                pid_ = rows_[size_t(list_selected_)].pid;
                namer_ = std::make_unique<LiveNamer>();
                selected_ = 0, expanded_ = false, device_ = -3;
                growth_.clear();
                exited_ms_ = 0;
                refresh_data();
            }
            return true;
        }
        if ((key == KEY_DOWN || key == 'j') && selected_ + 1 < int(std::min(view_.sites.size(), options_.top))) ++selected_, expanded_ = false;
        else if ((key == KEY_UP || key == 'k') && selected_ > 0) --selected_, expanded_ = false;
        else if (key == '\n' || key == KEY_ENTER) expanded_ = !expanded_;
        else if (key == 'o') {
            sort_ = (sort_ + 1) % 4;
            refresh_data();
        } else if (key == 'd') {
            // All devices, then each device in turn.
            int next = -3;
            bool take = device_ < -2;
            for (const LiveDevice &d : view_.devices) {
                if (take) {
                    next = d.totals.device;
                    break;
                }
                if (d.totals.device == device_) take = true;
            }
            device_ = next;
            selected_ = 0, expanded_ = false;
            growth_.clear();
            refresh_data();
        } else if (key == 's') {
            write_snapshot();
        } else if ((key == 27 || key == KEY_BACKSPACE || key == 127) && options_.pid == 0) {
            pid_ = 0;
            have_view_ = false;
            refresh_data();
        }
        return true;
    }

    void write_snapshot() {
        LiveEndpoint e;
        std::string error, answer, path;
        if (!live_endpoint_of(pid_, &e, &error) || !live_request(e, live::kRequestSnapshot, &answer, &error, 120000) ||
            !parse_snapshot_answer(answer, &path, &error))
            message_ = "snapshot: " + error;
        else
            message_ = "snapshot written to " + path;
    }

    TopOptions options_;
    Ui ui_;
    pid_t pid_ = 0;
    std::unique_ptr<LiveNamer> namer_ = std::make_unique<LiveNamer>(); // one per process shown
    LiveView view_;
    bool have_view_ = false;
    std::vector<ProcessRow> rows_;
    int list_selected_ = 0;
    int selected_ = 0;
    bool expanded_ = false;
    int device_ = -3; // -3: all devices
    int sort_ = 0;    // 0 bytes, 1 allocations, 2 growth over 10 s, 3 call site
    bool help_ = false;
    GrowthTracker growth_;   // the sites of the process shown, from this viewer's readings
    uint64_t exited_ms_ = 0; // when the process shown first stopped answering (0: it answers)
    HostGpus host_;          // NVML's GPUs and untraced processes, for the list
    std::string message_;
    static constexpr unsigned kHistoryEvery = 5;
    unsigned readings_since_history_ = 0;
    uint64_t history_end_ns_ = 0; // CLOCK_MONOTONIC (the process's) of the history's last second
};

} // namespace

int top_tui(const TopOptions &options, int *child_status) {
    setlocale(LC_ALL, "");
    const char *codeset = setlocale(LC_CTYPE, nullptr);
    Ui ui;
    ui.utf8 = codeset != nullptr && (strstr(codeset, "UTF-8") != nullptr || strstr(codeset, "utf8") != nullptr);
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        log_error("top: the terminal UI needs a terminal (for scripts: --once)");
        return kExitFailure;
    }
    // newterm, not initscr: it returns NULL for a terminal type it cannot use instead of exiting.
    SCREEN *screen = newterm(nullptr, stdout, stdin);
    if (screen == nullptr) {
        const char *term = getenv("TERM");
        log_error(std::string("top: cannot start the terminal UI on TERM=") + (term ? term : "(unset)"));
        return kExitFailure;
    }
    set_term(screen);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    timeout(200);
    const char *no_colour = getenv("NO_COLOR");
    if ((no_colour == nullptr || *no_colour == 0) && has_colors()) {
        start_color();
        use_default_colors();
        init_pair(kBar, COLOR_GREEN, -1);
        init_pair(kPeak, COLOR_YELLOW, -1);
        init_pair(kTitle, COLOR_CYAN, -1);
        init_pair(kWarn, COLOR_RED, -1);
        ui.colour = true;
    }
    int rc;
    {
        TopUi top(options, ui);
        rc = top.run(child_status);
    }
    endwin();
    delscreen(screen);
    return rc;
}

} // namespace vramtrace::cli
