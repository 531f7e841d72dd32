# Checks a `vramtrace top --once --json` reading of train_barrier.py against what the script
# printed: the bytes of the call sites whose stack passes through PyTorch's caching allocator sum
# to torch.cuda.memory_reserved() exactly, and the script's own lines are among the call sites.
# Prints PASS/FAIL lines; exit status 1 on any failure.
# Usage: check_reading.py READING_JSON SCRIPT_STDOUT
import json
import sys

reading = json.load(open(sys.argv[1]))
printed = open(sys.argv[2]).read().split("\n")
reserved = int(next(l.split()[1] for l in printed if l.startswith("reserved ")))
lines = [l.split()[2] for l in printed if l.startswith("line ")]
failures = 0

# Per stack, not per site: one call site can merge cuBLAS's own workspace (no allocator frame) with
# the workspace PyTorch hands cuBLAS from its pool.
through = [m for s in reading["top_sites"] for m in s["stacks"] if any("CUDACachingAllocator" in f for f in m["frames"])]
got = sum(m["bytes"] for m in through)
left = reading["other_sites"]["bytes"]
if got == reserved and left == 0:
    print("PASS caching allocator: %d bytes in %d stacks == memory_reserved() %d" % (got, len(through), reserved))
else:
    print("FAIL caching allocator: %d bytes in %d stacks (+%d left out), memory_reserved() %d" % (got, len(through), left, reserved))
    failures += 1
current = sum(d["current_bytes"] for d in reading["devices"] if d["device"] >= 0)
print("INFO device current_bytes %d, live_allocations %d, serve_cpu_ns %d" % (current, reading["live_allocations"], reading["serve_cpu_ns"]))
locations = [s["file"] + ":" + str(s["line"]) for s in reading["top_sites"]]
for line in lines:
    if line in locations:
        print("PASS call site %s in the reading" % line)
    else:
        print("INFO call site %s not among the reading's sites" % line)
if not any(l in locations for l in lines):
    print("FAIL none of the loop's lines %s is a call site of the reading: %s" % (lines, locations))
    failures += 1
sys.exit(1 if failures else 0)
