#!/usr/bin/env python3
"""Where the tracer's instructions and locked instructions of one stream-ordered pair go.

The same callgrind runs as bench/count_pair_instructions.sh (bench/gpu/pair_ab.cu on the stand-in
driver, collecting only inside the library's cuMemAllocAsync and cuMemFreeAsync hooks, N1 and N2
pairs per block, the difference over the (N2 - N1) * 5/4 extra linked pairs), with callgrind's
global bus events (--collect-bus: one per locked instruction) beside the instructions. The stand-in
driver's share is the inclusive cost of the libcuda entry points the hooks call; the tracer's own is
the rest, split by the source file each instruction comes from (inlined code counts where it was
written), else by the function it runs in.

Usage: bench/pair_components.py BUILD_DIR LIB.so [--check-instructions N] [--check-locked N]
Prints one "component instructions locked" row per component, then
"tracer instructions_per_pair=... locked_per_pair=... standin_instructions_per_pair=...".
With --check-*, exits 1 when the tracer's count per pair is above N.
"""
import argparse
import os
import re
import subprocess
import sys

# Component of an instruction, by the basename of the file it comes from.
FILES = {
    'stack replay': ('recent_walks.cpp', 'recent_walks.h', 'stack_words.h', 'stack_capture.cpp',
                     'stack_capture.h', 'unwind_rules.cpp', 'unwind_rules.h', 'call_stack.cpp',
                     'python_runtime.h', 'stack_depot.cpp', 'stack_depot.h'),
    'live table': ('live_table.cpp', 'live_table.h', 'lane_tables.h', 'thread_lanes.cpp',
                   'thread_lanes.h'),
    'device counters and site sums': ('device_counters.cpp', 'device_counters.h',
                                      'asymmetric_fence.h', 'asymmetric_fence.cpp'),
    'event ring': ('event_ring.cpp', 'event_ring.h'),
    'clock': ('clock.h', 'tsc_clock.cpp', 'tsc_clock.h', 'tsc_line.h'),
    'driver-query glue': ('device_choice.cpp', 'driver_queries.cpp', 'driver_queries.h',
                          'real_functions.cpp', 'real_functions.h', 'current_context.cpp',
                          'current_context.h'),
}
# For code from shared headers (<atomic>, ...): by the function it runs in.
FUNCTIONS = {
    'stack replay': ('walks::', 'capture_stack', 'StackDepot::', 'remember_stack_id',
                     'capture_and_intern_stack'),
    'live table': ('LiveTable::',),
    'device counters and site sums': ('DeviceCounters::',),
    'event ring': ('EventRing::',),
    'clock': ('tsc::', 'monotonic_ns'),
}
ORDER = list(FILES) + ['glue']

ROW = re.compile(r'^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?([\d,.]+)\s+(?:\([^)]*\)\s+)?(.*)$')


def rows(path, inclusive):
    out = subprocess.run(['callgrind_annotate', '--auto=no', '--threshold=100', '--show=Ir,Ge',
                          '--inclusive=' + ('yes' if inclusive else 'no'), path],
                         capture_output=True, text=True, check=True).stdout
    seen_header = False
    for line in out.splitlines():
        if 'file:function' in line:
            seen_header = True
            continue
        if not seen_header:
            continue
        m = ROW.match(line)
        if not m:
            if seen_header and line.startswith('---') is False and line.strip() == '':
                continue
            continue
        ir = int(m.group(1).replace(',', ''))
        ge = 0 if m.group(2) == '.' else int(m.group(2).replace(',', ''))
        yield ir, ge, m.group(3)


def split(rest):
    """(file basename, function, object) of a callgrind_annotate row."""
    obj = ''
    # A trailing [...] names the object, unless it is GCC's "[clone .part.0]" of the function.
    if rest.endswith(']') and ' [' in rest and not rest.rsplit(' [', 1)[1].startswith('clone '):
        rest, obj = rest.rsplit(' [', 1)
        obj = obj[:-1]
    file, _, fn = rest.partition(':')
    return os.path.basename(file), fn, os.path.basename(obj)


def component(file, fn):
    for name, files in FILES.items():
        if file in files:
            return name
    for name, prefixes in FUNCTIONS.items():
        if any(p in fn for p in prefixes):
            return name
    return 'glue'


def measure(path, lib_name):
    """{component: [ir, ge]} of the tracer, plus ('standin', [ir, ge]), for one callgrind file."""
    total = [0, 0]
    standin = [0, 0]
    for ir, ge, rest in rows(path, inclusive=True):
        file, fn, obj = split(rest)
        if rest.strip().startswith('PROGRAM TOTALS'):
            continue
        # The libcuda entry points the hooks call (their names have no namespace).
        if obj.startswith('libcuda.so') and re.fullmatch(r'cu[A-Za-z0-9_]+', fn):
            standin[0] += ir
            standin[1] += ge
    parts = {name: [0, 0] for name in ORDER}
    for ir, ge, rest in rows(path, inclusive=False):
        file, fn, obj = split(rest)
        total[0] += ir
        total[1] += ge
        if obj and obj != lib_name:
            continue  # the stand-in's and libc's code: counted above, or libc called by the tracer
        if not obj and ('standin' in rest or fn.startswith('standin_driver::')):
            continue
        parts[component(file, fn)][0] += ir
        parts[component(file, fn)][1] += ge
    own = [total[0] - standin[0], total[1] - standin[1]]
    # libc code the tracer calls (errno, getpid, ...) goes to the glue.
    parts['glue'][0] += own[0] - sum(p[0] for p in parts.values())
    parts['glue'][1] += own[1] - sum(p[1] for p in parts.values())
    parts['standin'] = standin
    return parts


def run(work, program, lib, pairs):
    out = os.path.join(work, 'cg-components-%d.out' % pairs)
    env = dict(os.environ, LD_PRELOAD=lib, VRAMTRACE_SUMMARY='0',
               VRAMTRACE_OUTPUT=os.path.join(work, 'snap-%p.json'))
    subprocess.run(['valgrind', '--tool=callgrind', '--collect-atstart=no', '--collect-bus=yes',
                    '--callgrind-out-file=' + out,
                    '--toggle-collect=vramtrace::hooks::cuMemAllocAsync*',
                    '--toggle-collect=vramtrace::hooks::cuMemFreeAsync*',
                    program, str(pairs), '2', '32'], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for f in os.listdir(work):
        if f.startswith('snap-'):
            os.unlink(os.path.join(work, f))
    return measure(out, os.path.basename(lib))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('lib')
    ap.add_argument('--check-instructions', type=int)
    ap.add_argument('--check-locked', type=float)
    a = ap.parse_args()
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    work = os.environ.get('WORK', '/tmp/vramtrace-count')
    os.makedirs(work, exist_ok=True)
    standin = os.path.abspath(os.path.join(a.build, 'standin'))
    program = os.path.join(work, 'pair_ab_standin')
    subprocess.run(['g++', '-O2', '-std=c++17', '-x', 'c++', os.path.join(src, 'bench/gpu/pair_ab.cu'),
                    '-I' + os.environ.get('CUDA_INCLUDE', '/usr/local/cuda/include'), '-L' + standin,
                    '-lcuda', '-Wl,-rpath,' + standin, '-o', program], check=True)
    n1, n2 = int(os.environ.get('N1', 2000)), int(os.environ.get('N2', 6000))
    lib = os.path.abspath(a.lib)
    lo, hi = run(work, program, lib, n1), run(work, program, lib, n2)
    pairs = (n2 - n1) * 5 / 4
    per = {k: [(hi[k][0] - lo[k][0]) / pairs, (hi[k][1] - lo[k][1]) / pairs] for k in hi}
    for name in ORDER:
        print('%-32s %7.0f %5.1f' % (name, per[name][0], per[name][1]))
    ir = sum(per[k][0] for k in ORDER)
    ge = sum(per[k][1] for k in ORDER)
    print('tracer instructions_per_pair=%.0f locked_per_pair=%.1f standin_instructions_per_pair=%.0f'
          % (ir, ge, per['standin'][0]))
    failed = False
    if a.check_instructions is not None and ir > a.check_instructions:
        print('FAIL instructions_per_pair %.0f > %d' % (ir, a.check_instructions))
        failed = True
    if a.check_locked is not None and ge > a.check_locked:
        print('FAIL locked_per_pair %.1f > %g' % (ge, a.check_locked))
        failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
