// device/stream_devices.h: a stream's device is asked once per lane and remembered until a call
// that can destroy streams begins; while one is in flight, and while destructions could pass
// unseen, every look-up asks.
#include <catch2/catch.hpp>

#include <map>
#include <thread>

#include "core/config.h"
#include "core/recording_backend.h"
#include "device/stream_devices.h"
#include "tracking/allocation_record.h"

using namespace vramtrace;

namespace {

std::map<uint64_t, int> g_devices; // what the fake driver answers
int g_asked = 0;

int ask(uint64_t stream) {
    ++g_asked;
    auto it = g_devices.find(stream);
    return it == g_devices.end() ? kUnknownDevice : it->second;
}

// Each case starts from nothing remembered: a bracket forgets every answer.
void fresh(std::map<uint64_t, int> devices) {
    load_config();
    set_preload_hooks_record(true);
    { StreamsEnding forget; }
    g_devices = std::move(devices);
    g_asked = 0;
}

} // namespace

TEST_CASE("stream devices: asked once per stream, then remembered") {
    fresh({{0x1000, 1}, {0x2000, 0}});
    for (int i = 0; i < 5; ++i) {
        CHECK(remembered_stream_device(0x1000, &ask) == 1);
        CHECK(remembered_stream_device(0x2000, &ask) == 0);
    }
    CHECK(g_asked == 2);
}

TEST_CASE("stream devices: a destruction makes the next look-up ask again, and a reused handle gets its new device") {
    fresh({{0x1000, 0}});
    CHECK(remembered_stream_device(0x1000, &ask) == 0);
    { StreamsEnding destroyed; }
    g_devices[0x1000] = 1; // the handle now names a stream of device 1
    CHECK(remembered_stream_device(0x1000, &ask) == 1);
    CHECK(remembered_stream_device(0x1000, &ask) == 1);
    CHECK(g_asked == 2);
}

TEST_CASE("stream devices: nothing remembered is used while a destruction is in flight") {
    fresh({{0x1000, 0}});
    CHECK(remembered_stream_device(0x1000, &ask) == 0);
    {
        StreamsEnding in_flight;
        g_devices[0x1000] = 1;
        CHECK(remembered_stream_device(0x1000, &ask) == 1);
        CHECK(remembered_stream_device(0x1000, &ask) == 1);
        CHECK(g_asked == 3); // each look-up asked; none was remembered
    }
    CHECK(remembered_stream_device(0x1000, &ask) == 1);
    CHECK(remembered_stream_device(0x1000, &ask) == 1);
    CHECK(g_asked == 4);
}

TEST_CASE("stream devices: a destruction on another thread is seen by this one") {
    fresh({{0x1000, 0}});
    CHECK(remembered_stream_device(0x1000, &ask) == 0);
    std::thread([] { StreamsEnding destroyed; }).join();
    g_devices[0x1000] = 1;
    CHECK(remembered_stream_device(0x1000, &ask) == 1);
    CHECK(g_asked == 2);
}

TEST_CASE("stream devices: an unknown answer is not remembered") {
    fresh({});
    CHECK(remembered_stream_device(0x1000, &ask) == kUnknownDevice);
    g_devices[0x1000] = 1;
    CHECK(remembered_stream_device(0x1000, &ask) == 1);
    CHECK(g_asked == 2);
}

TEST_CASE("stream devices: while CUPTI records, every look-up asks") {
    fresh({{0x1000, 1}});
    set_preload_hooks_record(false);
    for (int i = 0; i < 3; ++i) CHECK(remembered_stream_device(0x1000, &ask) == 1);
    CHECK(g_asked == 3);
    set_preload_hooks_record(true);
}

TEST_CASE("stream devices: streams that share a lane's slot are each answered right") {
    // Four slots per lane: more streams than that take each other's place but never each other's device.
    std::map<uint64_t, int> devices;
    for (uint64_t s = 1; s <= 64; ++s) devices[s << 12] = static_cast<int>(s % 3);
    fresh(devices);
    for (uint64_t s = 1; s <= 64; ++s) CHECK(remembered_stream_device(s << 12, &ask) == static_cast<int>(s % 3));
    CHECK(g_asked == 64);
    for (int round = 0; round < 2; ++round)
        for (uint64_t s = 1; s <= 64; ++s) CHECK(remembered_stream_device(s << 12, &ask) == static_cast<int>(s % 3));
}
