# Sourced by the check scripts of tests/packaging/ and tests/gpu/: one "PASS what" or "FAIL what"
# line per check, then "== N failure(s)" and exit status 1 when any failed (0 otherwise).
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
finish() { echo "== $failures failure(s)"; exit $((failures > 0)); }
