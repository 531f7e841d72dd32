#!/usr/bin/env bash
# Self-check of the stand-in CUDA driver/runtime and the programs built on it, run WITHOUT any
# preload: every program exits 0 and prints its expect-live lines; the runtime bootstraps the
# driver exactly as documented in README.md; exports and symbol versions are right.
# Usage: selfcheck.sh <bin dir> <standin lib dir>
set -u
BIN=${1:?bin dir}
LIBS=${2:?standin lib dir}
unset LD_PRELOAD STANDIN_CUDA_DEVICES STANDIN_CUDA_DEVICE_BYTES STANDIN_CUDA_TRACE

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }

EXPECT_RE='^expect-live [0-9]+ [A-Za-z_][A-Za-z_0-9]* -?[0-9]+ [A-Za-z_][A-Za-z_0-9:]* [^ :/]+:[0-9]+$'

# run_program <expected expect-live count> <program> [args...]
run_program() {
  local want=$1; shift
  local out rc lines bad
  out=$("$BIN/$1" "${@:2}" 2>/tmp/standin-selfcheck.$$.err); rc=$?
  if [[ $rc -ne 0 ]]; then
    fail "$* exited $rc: $(head -c 2000 /tmp/standin-selfcheck.$$.err)"
    return
  fi
  lines=$(grep -c '^expect-live ' <<<"$out")
  bad=$(grep '^expect-live ' <<<"$out" | grep -Evc "$EXPECT_RE")
  if [[ $lines -ne $want ]]; then
    fail "$* printed $lines expect-live lines, want $want"
  elif [[ $bad -ne 0 ]]; then
    fail "$* printed $bad malformed expect-live lines"
  else
    pass "$* (exit 0, $lines expect-live lines)"
  fi
}

run_program 5 leaky_pipeline
run_program 5 leaky_pipeline --device 1
run_program 5 leaky_pipeline_static
run_program 1 standin_prog_driver_link
run_program 1 standin_prog_driver_link --device 1
run_program 1 standin_prog_dlsym
run_program 0 standin_prog_oom
run_program 8 standin_prog_threads 8 500
run_program 0 standin_prog_no_cuda
run_program 0 standin_prog_contract
run_program 9 standin_prog_families
run_program 9 standin_prog_families_static
run_program 6 standin_prog_injection

# The further families: every family present, the extra oracle lines well formed, pools consistent
# (reserved = used rounded up to 2 MiB), shared and static runtime agree (mapping addresses and
# handles aside, which differ run to run).
families=$("$BIN/standin_prog_families" 2>/dev/null)
families_static=$("$BIN/standin_prog_families_static" 2>/dev/null)
if [[ "$(grep -v '^expect-mapping ' <<<"$families")" == "$(grep -v '^expect-mapping ' <<<"$families_static")" ]]; then
  pass "standin_prog_families and standin_prog_families_static print the same oracle"
else
  fail "standin_prog_families and standin_prog_families_static disagree"
fi
missing=""
for want in 'cudaMallocPitch 0' 'cudaMalloc3D 0' 'cudaMallocFromPoolAsync 0' 'cudaMallocFromPoolAsync_ptsz 0' \
            'cudaHostRegister -1' 'cudaIpcOpenMemHandle 0' 'cudaMalloc 0' 'cuMemCreate 1'; do
  grep -qE "^expect-live [0-9]+ $want " <<<"$families" || missing="$missing [$want]"
done
[[ -z $missing ]] && pass "standin_prog_families covers every family" || fail "standin_prog_families lacks:$missing"
mappings=$(grep -c '^expect-mapping ' <<<"$families")
good_mappings=$(grep -cE '^expect-mapping 0x[0-9a-f]+ [0-9]+ 0x[0-9a-f]+$' <<<"$families")
if [[ $mappings -eq 1 && $good_mappings -eq 1 ]]; then
  pass "standin_prog_families prints 1 expect-mapping line"
else
  fail "standin_prog_families: $mappings expect-mapping lines, $good_mappings well formed (want 1)"
fi
bad_pools=$(awk '/^expect-pool / { n++; chunk = 2097152; want = int(($6 + chunk - 1) / chunk) * chunk;
                   if (NF != 6 || $3 != "reserved" || $5 != "used" || $4 != want) bad++ }
                 END { if (n != 2) print "count " n; else if (bad) print bad " inconsistent" }' <<<"$families")
[[ -z $bad_pools ]] && pass "standin_prog_families: 2 expect-pool lines, reserved = used rounded up to 2 MiB" \
                    || fail "standin_prog_families expect-pool lines: $bad_pools"
# The VMM entry points come from the runtime's stored cuGetProcAddress (12000) pointer.
trace=$(STANDIN_CUDA_TRACE=1 "$BIN/standin_prog_families_static" 2>&1 >/dev/null)
if grep -q 'cuGetProcAddress_v2("cuMemCreate", 10020, 0) -> CUDA_SUCCESS pfn=cuMemCreate' <<<"$trace" &&
   grep -q 'cuMemCreate(size=4194304, dev=1, flags=0) handle=0x[0-9a-f]* -> CUDA_SUCCESS' <<<"$trace" &&
   grep -q 'cuGetProcAddress_v2("cuMemAllocFromPoolAsync", 11020, 2) -> CUDA_SUCCESS pfn=cuMemAllocFromPoolAsync_ptsz' <<<"$trace"; then
  pass "standin_prog_families_static: driver entry points through cuGetProcAddress_v2, cuMemCreate on device 1"
else
  fail "standin_prog_families_static trace lacks the cuGetProcAddress_v2 look-ups or cuMemCreate"
fi

# Shared and static cudart builds of the same program say the same thing.
if [[ "$("$BIN/leaky_pipeline")" == "$("$BIN/leaky_pipeline_static")" ]]; then
  pass "leaky_pipeline and leaky_pipeline_static print the same oracle"
else
  fail "leaky_pipeline and leaky_pipeline_static disagree"
fi
# --device 1 moves device allocations to 1, pinned ones stay -1.
if "$BIN/leaky_pipeline" --device 1 | grep '^expect-live ' | awk '{print $4}' | grep -qvxE '1|-1'; then
  fail "leaky_pipeline --device 1 reports a device other than 1/-1"
else
  pass "leaky_pipeline --device 1 attributes to device 1"
fi

# Environment knobs: no devices, too small a device.
if STANDIN_CUDA_DEVICES=0 "$BIN/leaky_pipeline" >/dev/null 2>/tmp/standin-selfcheck.$$.err; then
  fail "leaky_pipeline with STANDIN_CUDA_DEVICES=0 succeeded"
elif grep -q cudaErrorNoDevice /tmp/standin-selfcheck.$$.err; then
  pass "STANDIN_CUDA_DEVICES=0 -> cudaErrorNoDevice"
else
  fail "STANDIN_CUDA_DEVICES=0: $(cat /tmp/standin-selfcheck.$$.err)"
fi
if STANDIN_CUDA_DEVICE_BYTES=2097152 "$BIN/leaky_pipeline" >/dev/null 2>/tmp/standin-selfcheck.$$.err; then
  fail "leaky_pipeline with a 2 MiB device succeeded"
elif grep -q cudaErrorMemoryAllocation /tmp/standin-selfcheck.$$.err; then
  pass "STANDIN_CUDA_DEVICE_BYTES=2097152 -> cudaErrorMemoryAllocation"
else
  fail "STANDIN_CUDA_DEVICE_BYTES: $(cat /tmp/standin-selfcheck.$$.err)"
fi

# Bootstrap sequence (STANDIN_CUDA_TRACE=1), shared and static cudart alike.
expected_bootstrap='[standin-cudart] dlopen("libcuda.so.1", RTLD_NOW)
[standin-cudart] dlsym(libcuda, "cuGetProcAddress_v2")
[standin-cuda] cuGetProcAddress_v2("", 13000, 0) -> CUDA_ERROR_NOT_FOUND pfn=NULL
[standin-cuda] cuGetProcAddress_v2("cuInit", 2000, 0) -> CUDA_SUCCESS pfn=cuInit
[standin-cuda] cuInit(0) -> CUDA_SUCCESS
[standin-cuda] cuGetProcAddress_v2("cuGetProcAddress", 11030, 0) -> CUDA_SUCCESS pfn=cuGetProcAddress
[standin-cuda] cuGetProcAddress_v2("cuGetProcAddress", 12000, 0) -> CUDA_SUCCESS pfn=cuGetProcAddress_v2'
for prog in leaky_pipeline leaky_pipeline_static; do
  trace=$(STANDIN_CUDA_TRACE=1 "$BIN/$prog" 2>&1 >/dev/null)
  got=$(grep -E '^\[standin-cuda' <<<"$trace" | head -7 | sed -E 's/ = 0x[0-9a-f]+$//; s/ status=[0-9]+$//')
  if [[ "$got" != "$expected_bootstrap" ]]; then
    fail "$prog bootstrap sequence:"$'\n'"$got"
    continue
  fi
  # After bootstrap: only look-ups with explicit versions, then real calls; cudart never dlsym's again.
  if [[ $(grep -c '^\[standin-cudart\] dlsym' <<<"$trace") -ne 1 ]]; then
    fail "$prog: cudart dlsym'ed more than cuGetProcAddress_v2"
  elif grep -q 'cuGetProcAddress(' <<<"$trace"; then
    fail "$prog: cudart called the legacy cuGetProcAddress"
  elif ! grep -q 'cuGetProcAddress_v2("cuMemAllocAsync", 11020, 2) -> CUDA_SUCCESS pfn=cuMemAllocAsync_ptsz' <<<"$trace"; then
    fail "$prog: no per-thread look-up of cuMemAllocAsync"
  else
    pass "$prog bootstraps: dlopen, dlsym(cuGetProcAddress_v2), probe, cuInit, cuGetProcAddress 11030/12000"
  fi
done

# Exports and versions.
if command -v objdump >/dev/null && command -v nm >/dev/null; then
  # standin_set_api_callback: the stand-in libcupti's hook (driver/cupti_hooks.h).
  driver_bad=$(nm -D --defined-only "$LIBS/libcuda.so.1" | awk '{print $3}' | grep -v '^cu' |
               grep -vx standin_set_api_callback | wc -l)
  [[ $driver_bad -eq 0 ]] && pass "libcuda.so.1 exports only cu* names (+ the stand-in libcupti's hook)" ||
    fail "libcuda.so.1 exports $driver_bad non-cu* names"
  for name in cuMemAlloc_v2 cuMemAllocAsync_ptsz cuGetProcAddress cuGetProcAddress_v2 cuMemAlloc \
              cuMemAllocPitch cuMemAllocPitch_v2 cuMemGetAddressRange cuMemGetAddressRange_v2 \
              cuMemHostRegister cuMemHostRegister_v2 cuMemHostUnregister cuIpcGetMemHandle cuIpcOpenMemHandle \
              cuIpcOpenMemHandle_v2 cuIpcCloseMemHandle cuDeviceGetDefaultMemPool cuMemPoolCreate \
              cuMemPoolDestroy cuMemPoolTrimTo cuMemPoolGetAttribute cuMemAllocFromPoolAsync \
              cuMemAllocFromPoolAsync_ptsz cuMemGetAllocationGranularity cuMemCreate cuMemRelease \
              cuMemAddressReserve cuMemAddressFree cuMemMap cuMemUnmap cuMemSetAccess \
              cuMemGetAllocationPropertiesFromHandle; do
    nm -D --defined-only "$LIBS/libcuda.so.1" | awk '{print $3}' | grep -qx "$name" || fail "libcuda.so.1 lacks $name"
  done
  soname=$(objdump -p "$LIBS/libcuda.so.1" | awk '/SONAME/{print $2}')
  [[ $soname == libcuda.so.1 ]] && pass "libcuda.so.1 SONAME" || fail "libcuda.so.1 SONAME is $soname"
  exports=$(objdump -T "$LIBS/libcudart.so.13" | awk '$2 == "g" && $4 ~ /^\.text/ {print $(NF-1), $NF}')
  unversioned=$(awk '$1 != "libcudart.so.13"' <<<"$exports" | wc -l)
  noncuda=$(awk '$2 !~ /^(__)?cuda/' <<<"$exports" | wc -l)
  for name in cudaMallocPitch cudaMalloc3D cudaMallocFromPoolAsync cudaMallocFromPoolAsync_ptsz cudaMemPoolCreate \
              cudaMemPoolDestroy cudaMemPoolTrimTo cudaMemPoolGetAttribute cudaDeviceGetDefaultMemPool \
              cudaHostRegister cudaHostUnregister cudaIpcGetMemHandle cudaIpcOpenMemHandle cudaIpcCloseMemHandle; do
    grep -q " $name\$" <<<"$exports" || fail "libcudart.so.13 lacks $name"
  done
  if [[ $unversioned -eq 0 && $noncuda -eq 0 ]] && grep -q ' cudaMalloc$' <<<"$exports"; then
    pass "libcudart.so.13 exports only cuda* (+ __cuda* registration hooks), all versioned libcudart.so.13"
  else
    fail "libcudart.so.13 exports: $unversioned unversioned, $noncuda non-cuda"
  fi
  if nm -D --undefined-only "$LIBS/libcudart.so.13" | awk '{print $2}' | grep -q '^cu[A-Z]'; then
    fail "libcudart.so.13 imports a cu* symbol"
  else
    pass "libcudart.so.13 imports no cu* symbol"
  fi
  if objdump -p "$LIBS/libcudart.so.13" | grep -q 'NEEDED *libcuda'; then
    fail "libcudart.so.13 needs libcuda"
  else
    pass "libcudart.so.13 does not need libcuda"
  fi
fi

rm -f /tmp/standin-selfcheck.$$.err
if [[ $failures -ne 0 ]]; then
  echo "standin selfcheck: $failures failure(s)"
  exit 1
fi
echo "standin selfcheck: all passed"
