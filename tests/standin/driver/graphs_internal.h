// Graph memory shared by graphs.cpp (graphs, memory nodes, capture) and graph_exec.cpp
// (instantiation, upload, launch, the device's graph pool). Everything here is guarded by State::mu.
#pragma once

#include "driver_internal.h"

namespace standin_driver {

// A memory node's address, shared by its graph and every exec instantiated from it. The address
// is handed out when the node is added (and recorded as an allocation of kind graph, so pointer
// queries answer); the memory is accounted only while a launch or upload has it allocated.
struct NodeMem {
  std::uintptr_t address;
  int device;
  std::size_t bytes;
  std::size_t rounded;  // bytes rounded up to kPoolChunk: what it takes from the graph pool
  int holders;          // the graph and execs that contain the node
  bool live;            // allocated by a launch/upload and not freed since
  bool reserved;        // holds its share of the device's graph pool
};

// One node of a graph in the order added: an allocation (alloc != nullptr) or a free of an address.
struct GraphOp {
  NodeMem* alloc;
  std::uintptr_t free_address;
};

struct Graph {
  std::uint32_t magic;
  std::vector<GraphOp> ops;
};
constexpr std::uint32_t kGraphMagic = 0x48505247;  // "GRPH"

struct GraphExec {
  std::uint32_t magic;
  std::vector<GraphOp> ops;  // the graph's at instantiation
  unsigned long long flags;
};
constexpr std::uint32_t kGraphExecMagic = 0x43455847;  // "GXEC"

struct GraphState {
  std::set<Graph*> graphs;
  std::set<GraphExec*> execs;
  std::map<std::uintptr_t, NodeMem*> nodes;  // by address
  std::map<Stream*, Graph*> capturing;
  std::map<Stream*, CUstreamCaptureMode> capture_modes;
  std::set<Stream*> invalidated;  // captures that an unsafe call ended (cuStreamEndCapture fails)
  // The device's graph pool: reserved = the rounded sizes of reserved nodes + idle (memory of nodes
  // gone since, kept until cuDeviceGraphMemTrim); used = bytes of live nodes.
  std::vector<std::size_t> used, reserved, idle, used_high, reserved_high;
  int node_serial = 0;
};
GraphState& gs();

// Drops one holder of each allocation node of ops (a graph or exec going away).
void release_holders(State& st, const std::vector<GraphOp>& ops);
// Frees a node's memory and record when nothing holds it and it is not allocated; its reservation
// stays in the pool (idle) until trimmed.
void drop_if_unused(State& st, NodeMem* n);

}  // namespace standin_driver
