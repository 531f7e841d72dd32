// Each thread's open NVTX push/pop ranges, per domain, and the interned id (range_table.h) of the
// whole stack: the open ranges of every domain the thread has pushed in, domains in the order they
// were first pushed in by any thread, outermost first. The allocation hooks read only the id
// (current_range_stack), a 16-bit thread-local: no string, no lock and no shared write on the
// allocation path.
//
// Push and pop keep the id up to date incrementally: a push onto the last domain of the order is
// one node look-up, a pop restores the id saved at its push. Only a push or pop in an earlier
// domain while a later one has ranges open rebuilds the chain from the thread's stacks.
//
// The per-thread state is a block mapped at the thread's first push and given back at its exit
// (a pthread key destructor), so a pool of short-lived threads reuses a few blocks.
#pragma once

#include <cstdint>

namespace vramtrace::nvtx {

constexpr uint32_t kMaxDepth = 64;         // ranges kept per domain and thread; deeper ones are
                                           // counted (pops stay balanced) and not named
constexpr uint32_t kMaxThreadDomains = 8;  // domains with open ranges per thread; more are counted

extern constinit thread_local uint16_t t_range_stack __attribute__((tls_model("initial-exec")));

// The calling thread's open range stack (0: none).
inline uint16_t current_range_stack() { return t_range_stack; }

// nvtxRangePush* / nvtxDomainRangePushEx: the 0-based level of the new range in its domain.
// `category`: nvtxEventAttributes_t::category (0: none).
int push_range(uint16_t domain, uint32_t name, uint32_t category = 0);
// nvtxRangePop / nvtxDomainRangePop: the level of the range ended, or -1 when none was open.
int pop_range(uint16_t domain);

// Ranges deeper than kMaxDepth, and pushes into more than kMaxThreadDomains domains of one thread.
uint64_t ranges_too_deep();

// Tests only: forget the calling thread's ranges.
void reset_thread_for_testing();

} // namespace vramtrace::nvtx
