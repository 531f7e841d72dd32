// Command-line option reading shared by diff and merge: "--name VALUE" and "--name=VALUE", "--" ends
// the options, and every error is one usage line (common/cli.h: usage_error).
#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include "common/cli.h"

namespace vramtrace::cli {

// A decimal count with nothing else ("12"; not "-1", "1x" or "").
inline bool parse_count(std::string_view text, size_t &out) {
    auto res = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && res.ec == std::errc() && res.ptr == text.data() + text.size();
}

class OptionReader {
public:
    OptionReader(int argc, char **argv, std::string_view command) : argc_(argc), argv_(argv), command_(command) {}

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
    int unknown() { return error("unknown option '" + std::string(arg_) + "'"); }
    bool failed() const { return failed_; }

private:
    int argc_;
    char **argv_;
    std::string_view command_;
    int i_ = 0; // argv[0] is the command's name
    std::string_view arg_;
    bool options_done_ = false;
    bool failed_ = false;
};

} // namespace vramtrace::cli
