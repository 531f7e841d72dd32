// Settings and names from a hostile environment: VRAMTRACE_SIGNAL only SIGUSR1, SIGUSR2 and the
// real-time signals; %h and %r expanded as one safe file-name component; Prometheus label values
// valid UTF-8 with no raw control character; warnings bounded (report::shown_value).
#include <catch2/catch.hpp>

#include <csignal>
#include <string>

#include "dump/output_path.h"
#include "report/text_safety.h"
#include "triggers/prometheus_text.h"
#include "triggers/trigger_parse.h"

using namespace vramtrace;
using namespace vramtrace::triggers;

TEST_CASE("hostile settings: VRAMTRACE_SIGNAL accepts only SIGUSR1, SIGUSR2 and SIGRTMIN+n") {
    for (const char *bad : {"SIGPIPE", "SIGINT", "SIGTERM", "SIGHUP", "SIGCHLD", "SIGALRM", "SIGQUIT", "SIGCONT",
                            "SIGWINCH", "SIGSEGV", "SIGXFSZ", "13", "2", "15", "11", "1"})
        CHECK_FALSE(parse_signal(bad).has_value());
    CHECK(parse_signal("SIGUSR1") == SIGUSR1);
    CHECK(parse_signal("10") == SIGUSR1);
    CHECK(parse_signal("SIGRTMIN+0") == SIGRTMIN);
    CHECK(parse_signal(std::to_string(SIGRTMAX).c_str()) == SIGRTMAX);
}

TEST_CASE("hostile settings: %r and %h cannot leave the directory or add separators") {
    CHECK(expand_output_path("out/vt-%r.json", 1, "h", "../other/x") == "out/vt-.._other_x.json");
    CHECK(expand_output_path("out/%r/vt.json", 1, "h", "..") == "out/__/vt.json");
    CHECK(expand_output_path("out/%r/vt.json", 1, "h", ".") == "out/_/vt.json");
    CHECK(expand_output_path("out/%h/vt.json", 1, "node/../../etc", "0") == "out/node_.._.._etc/vt.json");
    CHECK(expand_output_path("vt-%h-%r.json", 1, "n\x1b[1m\xc3\xa9", "3 4\n") == "vt-n__1m__-3_4_.json");
    CHECK(expand_output_path("vt-%h-%r.json", 1, "node-7.example_com", "12") == "vt-node-7.example_com-12.json");
}

TEST_CASE("hostile settings: Prometheus label values are escaped per the text format") {
    PrometheusSample s;
    s.pid = 1;
    s.host = std::string("a\rb\nc\\d\"e\x1b" "f\xff" "g\xc2\x85h\xc3\xa9", 18);
    s.rank = "0";
    std::string text = format_prometheus(s);
    CHECK(report::is_valid_utf8(text));
    const std::string r = "\xef\xbf\xbd";
    CHECK(text.find("host=\"a" + r + "b\\nc\\\\d\\\"e" + r + "f" + r + "g" + r + "h\xc3\xa9\"") != std::string::npos);
    for (char c : text) CHECK_FALSE((static_cast<unsigned char>(c) < 0x20 && c != '\n'));
}

TEST_CASE("hostile settings: values echoed in messages are bounded and escaped") {
    std::string big(100000, 'v');
    std::string shown = report::shown_value(big);
    CHECK(shown == std::string(80, 'v') + "... (100000 bytes)");
    CHECK(report::shown_value("a\x1b[2J\nb") == "a\\x1b[2J\\x0ab");
    // Cut on a character boundary: "é" straddling byte 80 is left out whole.
    CHECK(report::shown_value(std::string(79, 'x') + "\xc3\xa9" + "yy") == std::string(79, 'x') + "... (83 bytes)");
    CHECK(report::escape_control_characters("tab\there\nnew", true) == "tab\there\nnew");
    CHECK(report::escape_control_characters("\xc2\x9b" "31m", false) == "\\xc2\\x9b31m");
    // Bidirectional formatting characters, each byte escaped; other characters of those blocks kept.
    CHECK(report::escape_control_characters("a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\x8f" "d\xd8\x9c" "e") ==
          "a\\xe2\\x80\\xaeb\\xe2\\x81\\xa6c\\xe2\\x80\\x8fd\\xd8\\x9ce");
    CHECK(report::escape_control_characters("\xe2\x80\xaa\xe2\x80\xad\xe2\x81\xa9") ==
          "\\xe2\\x80\\xaa\\xe2\\x80\\xad\\xe2\\x81\\xa9");
    CHECK(report::escape_control_characters("\xe2\x80\x94\xe2\x80\xaf\xe2\x81\xa5\xd8\x9b") ==
          "\xe2\x80\x94\xe2\x80\xaf\xe2\x81\xa5\xd8\x9b"); // em dash, U+202F, U+2065, U+061B
    // Escaping escaped text changes nothing.
    const std::string once = report::escape_control_characters("x\xc2\x85\xe2\x80\xae\xff\x1b");
    CHECK(once == "x\\xc2\\x85\\xe2\\x80\\xae\\xff\\x1b");
    CHECK(report::escape_control_characters(once) == once);
    // one_line: the same escapes, with line breaks and tabs named.
    CHECK(report::one_line("a\nb\tc\rd\x01\xc2\x85\xe2\x80\xae\xff\xc3\xa9") ==
          "a\\nb\\tc\\rd\\x01\\xc2\\x85\\xe2\\x80\\xae\\xff\xc3\xa9");
    CHECK(report::one_line("\xe2\n\x80\xae") == "\\xe2\\n\\x80\\xae");
    CHECK(report::utf8_cut_length("ab\xe2\x82\xac", 4) == 2);
    CHECK(report::replace_invalid_utf8("\xed\xa0\x80" "ok\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdok\xef\xbf\xbd\xef\xbf\xbd");
}
