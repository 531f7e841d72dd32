// Command-line option reading shared by the subcommands: "--name VALUE" and "--name=VALUE", "--" ends
// the options, and every error is one usage line (common/cli.h: usage_error).
#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include "analysis/call_sites.h"
#include "common/cli.h"

namespace vramtrace::cli {

// A decimal count with nothing else ("12"; not "-1", "1x" or "").
inline bool parse_count(std::string_view text, size_t &out) {
    auto res = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && res.ec == std::errc() && res.ptr == text.data() + text.size();
}

class OptionReader {
public:
    // `help`: the command's help text, whose long options an unknown one is compared with.
    OptionReader(int argc, char **argv, std::string_view command, const char *help = nullptr)
        : argc_(argc), argv_(argv), command_(command), help_(help) {}

    // Moves to the next argument; false at the end or after an error.
    bool next() {
        if (failed_ || ++i_ >= argc_) return false;
        arg_ = argv_[i_];
        if (!options_done_ && arg_ == "--") {
            options_done_ = true;
            return next();
        }
        return true;
    }
    // The argument is an operand: after "--", "-" alone, or not starting with '-'.
    bool positional() const { return options_done_ || arg_.size() < 2 || arg_[0] != '-'; }
    std::string_view arg() const { return arg_; }
    bool is(std::string_view name) const { return arg_ == name; }

    // "--name VALUE" or "--name=VALUE": true with *value set. A missing value is a usage error.
    bool with_value(std::string_view name, std::string_view *value) {
        if (arg_.size() > name.size() && arg_.substr(0, name.size()) == name && arg_[name.size()] == '=') {
            *value = arg_.substr(name.size() + 1);
            return true;
        }
        if (arg_ != name) return false;
        if (i_ + 1 >= argc_) {
            error(std::string(name) + " needs a value");
            return false;
        }
        *value = argv_[++i_];
        return true;
    }

    // Logs "COMMAND: message (see 'vramtrace COMMAND --help')" and returns the usage status.
    int error(const std::string &message) {
        if (!failed_) usage_error(std::string(command_) + ": " + message, command_);
        failed_ = true;
        return kExitUsage;
    }
    int unknown() {
        if (!failed_) unknown_option(command_, arg_, help_);
        failed_ = true;
        return kExitUsage;
    }
    bool failed() const { return failed_; }

private:
    int argc_;
    char **argv_;
    std::string_view command_;
    const char *help_;
    int i_ = 0; // argv[0] is the command's name
    std::string_view arg_;
    bool options_done_ = false;
    bool failed_ = false;
};

// --no-lines and --frames N, the call-site key options of diff and merge: true when the argument is
// one of them (a bad value is then reported through `opts`, which ends the reading).
inline bool read_site_key_option(OptionReader &opts, SiteKeyOptions &keys) {
    std::string_view value;
    if (opts.is("--no-lines")) {
        keys.lines = false;
        return true;
    }
    if (!opts.with_value("--frames", &value)) return false;
    size_t n = 0;
    if (!parse_count(value, n) || n < 1 || n > 256)
        opts.error("--frames needs a number from 1 to 256, got '" + std::string(value) + "'");
    else
        keys.frames = unsigned(n);
    return true;
}

} // namespace vramtrace::cli
