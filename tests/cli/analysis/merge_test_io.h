// The merged snapshot a Merger writes, read back as every command reads it: the round trip the
// merge tests check their figures on.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include "analysis/merge_core.h"
#include "snapshot/reader/snapshot_reader.h"

inline vramtrace::snapshot::Snapshot written_and_read(vramtrace::cli::Merger &merger, const std::string &path,
                                                    const std::vector<std::string> &command_line) {
    std::string error;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(merger.write_snapshot(fd, command_line, "9.9.9", &error));
    ::close(fd);
    vramtrace::snapshot::Snapshot s;
    INFO(error);
    REQUIRE(vramtrace::snapshot::read_snapshot_file(path, &s, &error));
    return s;
}
