// The process-wide NVTX tables: domains, range names (messages after normalisation, registered
// strings), and range stacks interned as chains of (parent stack, domain, name, category) nodes, so that an
// allocation record carries its thread's whole open push/pop range stack as one 16-bit id.
//
// Bounded: at most kMaxNames names and kMaxStacks stacks, in static storage (never freed: CUDA's
// exit handlers still allocate after static destructors). A name that does not fit becomes
// kOverflowName, a stack that does not fit kOverflowStack; both are counted (overflow()). Lookups
// take no lock and write nothing shared; inserts take a spin lock, once per distinct name or stack.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tracking/allocation_record.h"

namespace vramtrace::nvtx {

constexpr uint32_t kMaxDomains = 64;   // domain 0 is NVTX's default domain (a NULL handle)
constexpr uint32_t kMaxNames = 4096;   // name 0: "" (a range without a message)
constexpr uint32_t kMaxNameBytes = 128; // longer messages are cut here
constexpr uint16_t kMaxStacks = 1u << kRangeBits; // stack ids 1 .. kMaxStacks - 1; 0 = no range open
constexpr uint32_t kOverflowName = kMaxNames - 1;
constexpr uint16_t kOverflowStack = kMaxStacks - 1;

// One node: the stack `parent` with one more range (`domain`, `name`, `category`) on top. The
// category is the program's own number (nvtxEventAttributes_t::category; 0: none), named per domain
// by nvtxNameCategory* / nvtxDomainNameCategory* (categories.h).
struct StackNode {
    uint16_t parent = 0;
    uint16_t domain = 0;
    uint32_t name = 0;
    uint32_t category = 0;
};

// Cuts the counters that instrumented frameworks append to every message, so that one operator is
// one name: PyTorch's emit_nvtx()/record_function write "aten::add, seq = 12, op_id = 40, sizes =
// [[2, 3]]"; everything from the first ", seq = ", ", op_id = " or ", sizes = " on is dropped, and
// the result is cut to kMaxNameBytes - 1 bytes. Writes a NUL-terminated copy to out (kMaxNameBytes).
// Returns its length.
size_t normalise_message(const char *message, char *out);

// Interns a message (normalised first); "" or NULL is name 0. Lock-free when already seen.
uint32_t intern_name(const char *message);
// Interns an already normalised text of `length` bytes (at most kMaxNameBytes - 1).
uint32_t intern_normalised(const char *text, size_t length);
// The text of a name id (never NULL; "" for an unknown id).
const char *name_text(uint32_t name);
uint32_t name_count(); // ids in use: 1 .. name_count() - 1 (0 is "")

// Domains: 0 is the default; nvtxDomainCreate gets the next id (the same id for the same name).
uint16_t create_domain(const char *name);
const char *domain_name(uint16_t domain); // "" for the default domain
uint32_t domain_count();

// The stack `parent` + (domain, name, category). kOverflowStack when the table is full (counted) or
// when parent is kOverflowStack.
uint16_t push_stack(uint16_t parent, uint16_t domain, uint32_t name, uint32_t category = 0);
// A node of an id returned by push_stack; false for 0 and unknown ids.
bool stack_node(uint16_t id, StackNode *out);
uint16_t stack_count(); // ids in use: 1 .. stack_count() - 1

// Names and stacks that did not fit (each counted once per refused insert).
uint64_t names_overflowed();
uint64_t stacks_overflowed();

// Tests only: forget every name, domain and stack.
void reset_tables_for_testing();

} // namespace vramtrace::nvtx
