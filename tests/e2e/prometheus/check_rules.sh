#!/bin/sh
# check_rules.sh EXAMPLES_DIR: the example alert rules are valid (promtool check rules) and fire on
# the series their unit tests give, and only then (promtool test rules).
set -u
command -v promtool >/dev/null 2>&1 || { echo "FAIL: promtool not found: install Debian's prometheus (the README's test command)"; exit 1; }
cd "$1" || exit 1
promtool check rules vramtrace-alerts.yml || { echo "FAIL: promtool check rules vramtrace-alerts.yml"; exit 1; }
promtool test rules vramtrace-alerts.test.yml || { echo "FAIL: promtool test rules vramtrace-alerts.test.yml"; exit 1; }
echo "PASS: vramtrace-alerts.yml checked and unit-tested"
