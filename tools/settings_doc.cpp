// Prints docs/configuration.md from the settings table (tools/common/settings_help.h), to standard
// output or to the file named by its one argument. Built with the CLI; the build's
// `configuration-doc` target writes the file, a test compares it.
#include <cstdio>
#include <string>

#include "common/settings_help.h"

int main(int argc, char **argv) {
    std::string text = vramtrace::cli::configuration_markdown();
    FILE *out = argc > 1 ? fopen(argv[1], "w") : stdout;
    if (out == nullptr) return 1;
    bool ok = fwrite(text.data(), 1, text.size(), out) == text.size();
    return (fclose(out) == 0 && ok) ? 0 : 1;
}
