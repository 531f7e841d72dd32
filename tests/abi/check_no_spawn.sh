#!/usr/bin/env bash
# Nothing in libvramtrace.so may start a process inside the host: its dynamic imports must not
# include system, popen, the exec family, fork/vfork/clone or posix_spawn (nm -D --undefined-only).
# pthread_atfork is allowed: it registers fork handlers, it does not fork.
# Usage: check_no_spawn.sh LIBRARY
set -euo pipefail
lib=$1
imports=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
bad=$(grep -E '^(system|popen|pclose|exec[lv]p?e?|execvpe|fexecve|fork|_Fork|vfork|clone|clone3|posix_spawnp?|wordexp)$' <<<"$imports" || true)
if [ -n "$bad" ]; then
  echo "libvramtrace.so imports functions that start processes:"
  echo "$bad"
  exit 1
fi
echo "ok: $(wc -l <<<"$imports") imports, none starts a process"
