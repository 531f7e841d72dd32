# A live-view server that answers what no traced process sends, for live_test.sh's hostile cases:
#   live_fake_server.py MODE SOCKET_DIR READY_FILE
# It listens on SOCKET_DIR/PID.sock (PID its own, so the viewer finds a live process), writes its
# pid to READY_FILE, answers every connection the same way and runs until killed.
#   big:   an answer of 2 GiB (the start of a reading, then padding), sent until the viewer hangs up
#   deep:  a reading of one site whose stack has 300,000 frames
#   sites: a reading of 20,000 sites, each its own stack and frame
#   wide:  just under 32 MiB of "{}," (11 million JSON values), the most a parsed document costs
#   peer:  as "deep" in shape, but listening as uid 65534 on a socket file root made (root only)
import json
import os
import socket
import sys

mode, sock_dir, ready = sys.argv[1], sys.argv[2], sys.argv[3]
path = os.path.join(sock_dir, "%d.sock" % os.getpid())


def reading(sites, frames, stacks):
    return json.dumps({
        "format": "vramtrace-live", "version": 1,
        "process": {"pid": os.getpid(), "command_line": ["fake"], "executable": "/fake", "host": "h",
                    "rank": "", "python": "", "start_time_ns": 1, "monotonic_ns": 2,
                    "exit_snapshot": "x.json", "live_snapshots": 0},
        "devices": [{"device": 0, "current_bytes": 4096, "peak_bytes": 4096, "allocation_count": 1,
                     "free_count": 0, "total_allocated_bytes": 4096, "total_freed_bytes": 0}],
        "live_allocations": len(sites), "live_bytes": 4096 * len(sites),
        "sites": sites, "sites_left_out": {"sites": 0, "bytes": 0, "count": 0},
        "frames": frames, "modules": [], "stacks": stacks,
        "pools": [], "oom_count": 0, "ooms": [], "serve_cpu_ns": 1,
    }, separators=(",", ":")).encode()


def python_frame(i):
    return {"address": "0x%x" % (0x5059000000000000 + i), "python": True, "function": "f%d" % i,
            "file": "/src/x.py", "line": i}


if mode == "deep" or mode == "peer":
    answer = reading([{"stack": 1, "device": 0, "bytes": 4096, "count": 1}], [python_frame(1)],
                     [{"id": 1, "frames": [0] * 300000}])
elif mode == "sites":
    n = 20000
    answer = reading([{"stack": i + 1, "device": 0, "bytes": 4096, "count": 1} for i in range(n)],
                     [python_frame(i) for i in range(n)], [{"id": i + 1, "frames": [i]} for i in range(n)])
elif mode == "wide":
    answer = b'{"format":"vramtrace-live","version":1,"pad":[' + b"{}," * ((32 << 20) // 3 - 1000) + b"{}]}"
else:
    answer = None

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
os.chmod(path, 0o600)
if mode == "peer":
    # SO_PEERCRED reports the credentials of the listen() call: made as uid 65534 on a socket file
    # that stays root's; root again afterwards (saved uid) only to write READY_FILE.
    os.setresgid(65534, 65534, 0)
    os.setresuid(65534, 65534, 0)
listener.listen(16)
if mode == "peer":
    os.setresuid(0, 0, 0)
    os.setresgid(0, 0, 0)
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(ready + ".tmp", ready)

chunk = b" " * (1 << 20)
while True:
    conn, _ = listener.accept()
    try:
        # The request first: closing with it unread would reset the connection.
        conn.settimeout(5)
        conn.recv(64)
        if answer is not None:
            conn.sendall(answer)
        else:
            conn.sendall(b'{"format":"vramtrace-live","version":1,"padding":"')
            for _ in range(2048):
                conn.sendall(chunk)
    except OSError:
        pass
    conn.close()
