// The spellings VRAMTRACE_SIGNAL, VRAMTRACE_WARN_BYTES and the periods accept and refuse.
#include <catch2/catch.hpp>

#include <csignal>

#include "triggers/trigger_parse.h"

using namespace vramtrace::triggers;

TEST_CASE("VRAMTRACE_SIGNAL: names, numbers, off, refused signals") {
    CHECK(parse_signal("SIGUSR2") == SIGUSR2);
    CHECK(parse_signal("USR1") == SIGUSR1);
    CHECK(parse_signal("sigusr1") == SIGUSR1);
    CHECK(parse_signal("12") == 12);
    CHECK(parse_signal("SIGRTMIN") == SIGRTMIN);
    CHECK(parse_signal("SIGRTMIN+3") == SIGRTMIN + 3);
    CHECK(parse_signal("RTMAX-1") == SIGRTMAX - 1);
    CHECK(parse_signal("0") == 0);
    CHECK(parse_signal("none") == 0);
    CHECK(parse_signal("OFF") == 0);
    for (const char *bad : {"SIGKILL", "9", "SIGSTOP", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGSYS",
                            "SIGTRAP", "SIGFOO", "", "-12", "+12", "12x", "999", "SIGRTMIN+99"})
        CHECK_FALSE(parse_signal(bad).has_value());
    char buf[32];
    CHECK(std::string(signal_name(SIGUSR2, buf, sizeof buf)) == "SIGUSR2");
    CHECK(std::string(signal_name(SIGRTMIN + 2, buf, sizeof buf)) == "SIGRTMIN+2");
}

TEST_CASE("VRAMTRACE_WARN_BYTES: bytes with suffixes, fractions, percentages") {
    auto bytes = [](const char *t) { auto v = parse_byte_threshold(t); return v ? v->bytes : 0; };
    auto fraction = [](const char *t) { auto v = parse_byte_threshold(t); return v ? v->fraction : -1.0; };
    CHECK(bytes("8589934592") == 8589934592ull);
    CHECK(bytes("8GiB") == 8589934592ull);
    CHECK(bytes("8 GiB") == 8589934592ull);
    CHECK(bytes("8g") == 8589934592ull);
    CHECK(bytes("1.5GiB") == 1610612736ull);
    CHECK(bytes("512KiB") == 524288);
    CHECK(bytes("2MiB") == 2097152);
    CHECK(bytes("1TiB") == 1099511627776ull);
    CHECK(bytes("3GB") == 3000000000ull);
    CHECK(bytes("100B") == 100);
    CHECK(bytes("1") == 1);
    CHECK(fraction("0.9") == Approx(0.9));
    CHECK(fraction("1.0") == Approx(1.0));
    CHECK(fraction("90%") == Approx(0.9));
    CHECK(fraction("12.5%") == Approx(0.125));
    CHECK(parse_byte_threshold("0.9")->bytes == 0);
    for (const char *bad : {"", "0", "0.0", "1.5", "101%", "0%", "-1", "8XiB", "GiB", "8GiBs", "1e9", "1,5"})
        CHECK_FALSE(parse_byte_threshold(bad).has_value());
}

TEST_CASE("periods: seconds above 0, at most a day") {
    CHECK(parse_period_ns("15") == 15'000'000'000ull);
    CHECK(parse_period_ns("0.2") == 200'000'000ull);
    CHECK(parse_period_ns(".5") == 500'000'000ull);
    CHECK(parse_period_ns("86400") == 86'400'000'000'000ull);
    for (const char *bad : {"", "0", "0.0", "86401", "-1", "1s", "1,5", "abc"})
        CHECK_FALSE(parse_period_ns(bad).has_value());
}
