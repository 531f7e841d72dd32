#!/usr/bin/env bash
# Every driver entry point that the CUPTI backend follows (lib/cupti/callback_translate.cpp: the
# driver rows of lib/device/hooks.def) and the stand-in driver defines makes CUPTI's callback at
# entry and exit (STANDIN_API_CALL, driver/cupti_hooks.h): one the stand-in served without a
# callback would be memory that the tests under --backend=cupti can never see.
# Usage: check_cupti_calls.sh <source root>
set -u
ROOT=${1:?source root}
# The rows the stand-in does not define (NVIDIA's driver has them; no stand-in program uses them).
NOT_SERVED="cuStreamBeginCaptureToGraph cuStreamBeginCaptureToGraph_ptsz"

# What CUPTI follows: every allocation and free row of the driver, and the custom rows that
# callback_translate.cpp lists (cuGetProcAddress* matter only to the preload hooks).
custom=$(grep -o 'X(cu[A-Za-z0-9_]*)' "$ROOT/lib/cupti/callback_translate.cpp" | sed 's/^X(//; s/)$//')
names=$(grep -o '^VT_DRIVER_\(ALLOC\|FREE\)([A-Za-z0-9_]*' "$ROOT/lib/device/hooks.def" | sed 's/.*(//')
[[ -n $names && -n $custom ]] || { echo "FAIL: no rows read from hooks.def or callback_translate.cpp"; exit 1; }
# Every other driver row kind (CUSTOM and the special kinds generated in custom_hooks.cpp).
for name in $(grep -o '^VT_DRIVER_[A-Z_]*([A-Za-z0-9_]*' "$ROOT/lib/device/hooks.def" | grep -v '^VT_DRIVER_\(ALLOC\|FREE\)(' | sed 's/.*(//'); do
  grep -qx "$name" <<<"$custom" && names="$names $name"
done
served=0 failures=0 absent=""
for name in $names; do
  # The definition, from its signature to the closing brace in column 0.
  body=$(awk -v sig="CUDAAPI $name(" 'index($0, sig) {on = 1} on {print} on && /^}$/ {exit}' \
         "$ROOT"/tests/standin/driver/*.cpp)
  if [[ -z $body ]]; then
    absent="${absent:+$absent }$name"
    continue
  fi
  served=$((served + 1))
  if ! grep -qF "STANDIN_API_CALL($name," <<<"$body"; then
    echo "FAIL: $name is served by the stand-in driver without a CUPTI callback (STANDIN_API_CALL)"
    failures=$((failures + 1))
  fi
done
if [[ $absent != "$NOT_SERVED" ]]; then
  echo "FAIL: hooks.def driver rows the stand-in does not define: '$absent', expected '$NOT_SERVED'"
  failures=$((failures + 1))
fi
echo "$served entry points that CUPTI follows served by the stand-in, $failures failures"
[[ $failures -eq 0 ]]
