// A recursion of `frames` calls that runs fn() at the bottom, so that a captured stack is that deep.
// Shared by the benchmarks that time the interception path (hook_pair_bench.cpp, gpu/alloc_pairs.cu,
// gpu/pair_ab.cu); noinline and the compiler barrier keep every level a real frame.
#pragma once

namespace vtbench {

template <class F> __attribute__((noinline)) void descend(int frames, F &fn) {
    if (frames <= 0)
        fn();
    else
        descend(frames - 1, fn);
    asm volatile("" ::: "memory");
}

} // namespace vtbench
