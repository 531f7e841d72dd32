// The struct member each kind of setting becomes. Config (core/config.h) and TriggerConfig
// (triggers/trigger_config.h) expand settings.def through these, each keeping the rows of its group.
#pragma once

#include <csignal>
#include <cstdint>

#define VT_MEMBER_Bool(field, value) bool field = value;
#define VT_MEMBER_Count(field, value) uint32_t field = value;
#define VT_MEMBER_Seconds(field, value) uint64_t field = value;       /* nanoseconds; 0: off */
#define VT_MEMBER_SecondsOrZero(field, value) uint64_t field = value; /* nanoseconds */
#define VT_MEMBER_Text(field, value) const char *field = value;      /* the environment's string */
#define VT_MEMBER_AbsolutePath(field, value) const char *field = value;
#define VT_MEMBER_Backend(field, value) uint8_t field = value;        /* 0 unset, 1 preload, 2 cupti */
#define VT_MEMBER_Signal(field, value) \
    int field = value;                 \
    bool field##_explicit = false; /* set in the environment: say so when it cannot work */
#define VT_MEMBER_Threshold(field, value) \
    uint64_t field##_bytes = value;       \
    double field##_fraction = 0.0; /* of each device's total memory, when not given in bytes */
