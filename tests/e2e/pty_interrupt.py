# Runs a command on a pseudo-terminal of its own and types Ctrl-C there, as a user would, for
# tests/e2e/termination_test.sh:  python3 pty_interrupt.py READY_FILE OUTPUT_FILE COMMAND ARGS...
# Types Ctrl-C once READY_FILE exists (at most 20 s), then waits for the command (at most 30 s),
# copies what it printed on the terminal to OUTPUT_FILE and prints its end: "exited N" or
# "signaled N".
import os
import pty
import select
import sys
import time

ready, output, command = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, master = pty.fork()
if pid == 0:
    os.execvp(command[0], command)

captured = bytearray()


def drain(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.05)
        if master in r:
            try:
                data = os.read(master, 65536)
            except OSError:
                return False
            if not data:
                return False
            captured.extend(data)
        elif os.waitpid(pid, os.WNOHANG) != (0, 0):
            return False
    return True


deadline = time.monotonic() + 20
while not os.path.exists(ready) and time.monotonic() < deadline:
    drain(0.05)
os.write(master, b"\x03")
drain(30)
_, status = os.waitpid(pid, 0)
with open(output, "wb") as f:
    f.write(bytes(captured))
print("signaled %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status) else "exited %d" % os.WEXITSTATUS(status))
