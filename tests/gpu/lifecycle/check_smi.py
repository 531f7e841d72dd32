#!/usr/bin/env python3
"""The nvidia-smi line checked, not derived: for two snapshots of one process, A (holding memory)
and B (everything freed but the context and modules), each device's
    remainder = process_used_bytes (NVML) - current_bytes - graph_reserved_bytes - pools' unused bytes
must be >= 0 (vramtrace never explains more than the driver charges) and equal in A and B within
BOUND bytes (the same context and modules; docs/coverage.md states the bound).
usage: check_smi.py NAME A.json B.json BOUND_BYTES. Prints PASS/FAIL; exit status 1 on FAIL."""
import json
import sys


def remainder(path, device=0):
    s = json.load(open(path))
    d = [x for x in s["devices"] if x["device"] == device][0]
    pools_unused = sum(max(0, p["reserved_bytes"] - p["used_bytes"]) for p in s.get("pools", [])
                       if p["device"] == device)
    used = d.get("process_used_bytes")
    graph = d.get("graph_reserved_bytes", 0)
    return used, d["current_bytes"], graph, pools_unused


def main():
    name, a, b, bound = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    ok = True
    rem = []
    for label, path in (("A", a), ("B", b)):
        used, tracked, graph, unused = remainder(path)
        if used is None:
            print("FAIL %s %s: no process_used_bytes (NVML) in the snapshot" % (name, label))
            return 1
        r = used - tracked - graph - unused
        rem.append(r)
        good = tracked + graph <= used and r >= 0
        ok &= good
        print("%s %s %s: nvidia-smi %d = tracked %d + graph %d + pools unused %d + remainder %d (%.1f MiB)" %
              ("PASS" if good else "FAIL", name, label, used, tracked, graph, unused, r, r / 2**20))
    diff = rem[0] - rem[1]
    good = abs(diff) <= bound
    ok &= good
    print("%s %s: remainder A - B = %d bytes (%.1f MiB), bound %.1f MiB" %
          ("PASS" if good else "FAIL", name, diff, diff / 2**20, bound / 2**20))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
