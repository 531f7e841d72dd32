#!/usr/bin/env python3
"""Fleet monitoring end to end: traced programs on the stand-in driver write their textfiles, Debian's
prometheus-node-exporter (textfile collector) serves them and a prometheus server scrapes it every
second; PromQL through the server's HTTP API must return the exact figures.

  prometheus_e2e.py PRELOAD PROGRAM NVML_DIR EXAMPLES_DIR WORK_DIR

1. Process A (standin_prog_trigger_watch serve) holds 6 + 4 + 1 MiB on device 0, and 1 MiB plus
   1 MiB from the default pool (2 MiB reserved) on device 1 (VRAMTRACE_PROMETHEUS_SITES=2):
   gauges per device, the untracked gap from the stand-in NVML (which charges the context and
   the pool's reservation), the call-site series with (other), process_up 1; the file passes
   `promtool check metrics`.
2. A asks for 64 MiB more: the OOM counters go 0 -> 1 and the example alert VramtraceOutOfMemory
   fires on the server. Every panel of the example dashboard returns its expected series.
3. A is killed with SIGKILL; process B starts: its sweep rewrites A's file, so A reads
   process_up 0 with its last update as end time. B exits normally: process_up 0, end time.
4. Process C with VRAMTRACE_PROMETHEUS_KEEP=0 removes the files of A and B, and only those.
Both servers run on loopback ports picked here and are stopped in every case (also when this
script dies: PR_SET_PDEATHSIG). A missing binary fails the test with one line.
"""
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

MiB = 1 << 20
CONTEXT_BYTES = 3 * MiB  # STANDIN_NVML_CONTEXT_BYTES: what NVML charges beyond the allocations

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)
    return ok


def die(message):
    print("FAIL: " + message)
    sys.exit(1)


def find_binary(name):
    path = shutil.which(name) or (os.path.exists("/usr/bin/" + name) and "/usr/bin/" + name)
    if not path:
        die(f"{name} not found: install Debian's prometheus and prometheus-node-exporter (the README's test command)")
    return path


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_until(what, predicate, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except OSError:
            pass
        time.sleep(0.2)
    die(f"timed out after {timeout:.0f} s waiting for {what}")


class Servers:
    def __init__(self, work, textfile_dir, rules):
        self.procs = []
        self.work = work
        exporter = find_binary("prometheus-node-exporter")
        prometheus = find_binary("prometheus")
        self.exporter_port = free_port()
        self.spawn("node_exporter", [exporter, f"--web.listen-address=127.0.0.1:{self.exporter_port}",
                                     "--collector.disable-defaults", "--collector.textfile",
                                     f"--collector.textfile.directory={textfile_dir}"])
        wait_until("node_exporter's /metrics",
                   lambda: "node_textfile_scrape_error" in http_get(f"http://127.0.0.1:{self.exporter_port}/metrics"))
        self.port = free_port()
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    f"rule_files:\n  - {rules}\n"
                    "scrape_configs:\n  - job_name: node\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{self.exporter_port}']\n")
        self.spawn("prometheus", [prometheus, f"--config.file={config}",
                                  f"--storage.tsdb.path={os.path.join(work, 'tsdb')}",
                                  f"--web.listen-address=127.0.0.1:{self.port}"])
        wait_until("prometheus ready", lambda: "Ready" in http_get(f"http://127.0.0.1:{self.port}/-/ready"))

    def spawn(self, name, argv):
        log = open(os.path.join(self.work, name + ".log"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             preexec_fn=die_with_parent)
        self.procs.append((name, p))

    def query(self, expr):
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        answer = json.loads(http_get(url))
        if answer.get("status") != "success":
            die(f"query {expr}: {answer}")
        return answer["data"]["result"]

    def stop(self):
        for name, p in self.procs:
            if p.poll() is None:
                p.terminate()
        for name, p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def series(result, keep):
    """A query's result as sorted text lines: the labels named in keep, then the value."""
    lines = []
    for r in result:
        labels = ",".join(f"{k}={r['metric'].get(k, '')}" for k in keep)
        lines.append(f"{labels} {r['value'][1]}")
    return sorted(lines)


class Traced:
    def __init__(self, preload, program, nvml_dir, textfile_dir, work, keep):
        env = dict(os.environ)
        env.update({
            "LD_PRELOAD": preload,
            "LD_LIBRARY_PATH": nvml_dir,
            "STANDIN_CUDA_DEVICE_BYTES": str(64 * MiB),
            "STANDIN_NVML_CONTEXT_BYTES": str(CONTEXT_BYTES),
            "VRAMTRACE_PROMETHEUS_TEXTFILE": os.path.join(textfile_dir, "vramtrace-%p.prom"),
            "VRAMTRACE_PROMETHEUS_PERIOD": "0.25",
            "VRAMTRACE_PROMETHEUS_SITES": "2",
            "VRAMTRACE_PROMETHEUS_KEEP": keep,
            "VRAMTRACE_OUTPUT": os.path.join(work, "snap-%p.json"),
            "VRAMTRACE_SUMMARY": "0",
            "RANK": "5",
        })
        self.work = work
        self.p = subprocess.Popen([program, "serve", work], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                  preexec_fn=die_with_parent)
        self.expect = []
        for line in self.p.stdout:
            if line.startswith("expect-live "):
                self.expect.append(line.split())
            if line.startswith("ready "):
                self.pid = line.split()[1]
                break
        else:
            die(f"the traced program ended before it was ready: {self.p.stderr.read()}")

    def touch(self, what):
        open(os.path.join(self.work, f"{what}-{self.pid}"), "w").close()

    def wait_line(self, text):
        for line in self.p.stdout:
            if line.strip() == text:
                return
        die(f"the traced program ended without printing {text}")


def main():
    preload, program, nvml_dir, examples, work = sys.argv[1:6]
    promtool = find_binary("promtool")
    find_binary("prometheus")
    find_binary("prometheus-node-exporter")
    shutil.rmtree(work, ignore_errors=True)
    textfile_dir = os.path.join(work, "textfile")
    os.makedirs(textfile_dir)
    rules = os.path.join(examples, "vramtrace-alerts.yml")
    servers = Servers(work, textfile_dir, rules)
    procs = []
    try:
        run(servers, procs, preload, program, nvml_dir, examples, work, textfile_dir, promtool)
    finally:
        for t in procs:
            if t.p.poll() is None:
                t.p.kill()
            t.p.wait()
        servers.stop()
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


def run(servers, procs, preload, program, nvml_dir, examples, work, textfile_dir, promtool):
    q = servers.query
    host = socket.gethostname()
    a = Traced(preload, program, nvml_dir, textfile_dir, work, "600")
    procs.append(a)
    sel = f'pid="{a.pid}"'
    wait_until("process A's first scrape", lambda: q(f"vramtrace_process_up{{{sel}}}"))
    dev = ["device", "pid", "host", "rank", "command"]

    # 1. The gauges, exactly.
    cmd = "standin_prog_tr"  # /proc/PID/comm: the kernel keeps 15 bytes
    check(series(q(f"vramtrace_device_current_bytes{{{sel}}}"), dev) ==
          [f"device=0,pid={a.pid},host={host},rank=5,command={cmd} {11 * MiB}",
           f"device=1,pid={a.pid},host={host},rank=5,command={cmd} {2 * MiB}"], "current bytes per device")
    check(series(q(f"vramtrace_device_peak_bytes{{{sel}}}"), ["device"]) ==
          [f"device=0 {11 * MiB}", f"device=1 {2 * MiB}"], "peak bytes per device")
    check(series(q(f"vramtrace_device_capacity_bytes{{{sel}}}"), ["device"]) ==
          [f"device=0 {64 * MiB}", f"device=1 {64 * MiB}"], "capacity per device")
    check(series(q(f"vramtrace_device_nvml_used_bytes{{{sel}}}"), ["device"]) ==
          [f"device=0 {11 * MiB + CONTEXT_BYTES}", f"device=1 {1 * MiB + 2 * MiB + CONTEXT_BYTES}"], "NVML used per device")
    # Device 1: the context, and the pool's 1 MiB reserved beyond its allocation.
    check(series(q(f"vramtrace_device_untracked_bytes{{{sel}}}"), ["device"]) ==
          [f"device=0 {CONTEXT_BYTES}", f"device=1 {CONTEXT_BYTES + 1 * MiB}"], "untracked gap per device")
    check(series(q(f"vramtrace_device_pool_reserved_bytes{{{sel}}}"), ["device"]) == [f"device=1 {2 * MiB}"],
          "pool reservation on device 1 only")
    uuids = {r["metric"]["device"]: r["metric"].get("uuid", "") for r in q(f"vramtrace_device_current_bytes{{{sel}}}")}
    check(uuids.get("0", "").startswith("GPU-") and uuids.get("1", "").startswith("GPU-") and uuids["0"] != uuids["1"],
          f"a UUID per device: {uuids}")
    # Call sites: names as the frames say them; the file as the program's debug info names it
    # (checked against the source's basename and line from the program's own oracle lines).
    sites = series(q(f"vramtrace_call_site_live_bytes{{{sel}}}"), ["device", "function", "category"])
    check(sites == [f"device=0,function=(other),category= {1 * MiB}",
                    f"device=0,function=hold_a(bool),category=other {6 * MiB}",
                    f"device=0,function=hold_c(bool),category=other {4 * MiB}",
                    "device=1,function=(other),category= 0",
                    f"device=1,function=hold_e(bool),category=other {1 * MiB}",
                    f"device=1,function=hold_from_pool(bool),category=other {1 * MiB}"],
          f"top 2 call sites per device + (other): {sites}")
    lines = {e[4]: e[5] for e in a.expect}  # function -> basename:line
    for r in q(f'vramtrace_call_site_live_bytes{{{sel},function!="(other)"}}'):
        fn = r["metric"]["function"].split("(")[0]
        fl = r["metric"].get("file_line", "")
        check(fl == lines[fn] or fl.endswith("/" + lines[fn]), f"{fn}'s file_line {fl} names {lines[fn]}")
    counts = series(q(f"vramtrace_call_site_live_allocations{{{sel}}}"), ["device", "function"])
    check(counts == ["device=0,function=(other) 1", "device=0,function=hold_a(bool) 1", "device=0,function=hold_c(bool) 1",
                     "device=1,function=(other) 0", "device=1,function=hold_e(bool) 1",
                     "device=1,function=hold_from_pool(bool) 1"], "live allocations per site")
    check(q(f"sum by (device) (vramtrace_call_site_live_bytes{{{sel}}}) != on (device) "
            f"sum by (device) (vramtrace_device_current_bytes{{{sel}}})") == [], "the sites of a device sum to its bytes")
    check(series(q(f"vramtrace_process_up{{{sel}}}"), ["pid"]) == [f"pid={a.pid} 1"], "process_up 1 while it runs")
    check(q(f"vramtrace_process_end_time_seconds{{{sel}}}") == [], "no end time while it runs")
    check(q(f"vramtrace_process_start_time_seconds{{{sel}}} <= on (pid, host) "
            f"vramtrace_process_last_update_time_seconds{{{sel}}}") != [], "started before its last update")
    check(series(q(f"vramtrace_oom_events_total{{{sel}}}"), ["pid"]) == [f"pid={a.pid} 0"], "no OOM yet")
    a_file = os.path.join(textfile_dir, f"vramtrace-{a.pid}.prom")
    with open(a_file) as f:
        lint = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True, text=True)
    check(lint.returncode == 0 and lint.stdout.strip() == "" and lint.stderr.strip() == "",
          f"promtool check metrics accepts the textfile: rc {lint.returncode} {lint.stdout}{lint.stderr}")
    check(oct(os.stat(a_file).st_mode & 0o7777) == "0o644", "the textfile is 0644")
    check(series(q("node_textfile_scrape_error"), []) == [" 0"], "node_exporter read every textfile")

    # 2. An OOM on the stand-in driver: the counters go to 1 and the example alert fires.
    a.touch("oom")
    a.wait_line("oom")
    wait_until("the OOM counter at 1", lambda: series(q(f"vramtrace_oom_events_total{{{sel}}}"), ["pid"]) == [f"pid={a.pid} 1"])
    check(series(q(f"vramtrace_device_oom_events_total{{{sel}}}"), ["device"]) == ["device=0 1", "device=1 0"],
          "the OOM counter of device 0")
    firing = wait_until("VramtraceOutOfMemory firing", lambda: q(f'ALERTS{{alertname="VramtraceOutOfMemory",{sel}}}'))
    check(series(firing, ["alertstate", "severity", "pid"]) == [f"alertstate=firing,severity=critical,pid={a.pid} 1"],
          "the alert VramtraceOutOfMemory fires for A")
    check(q('ALERTS{alertname="VramtraceDeviceMemoryHigh"}') == [], "11 of 64 MiB: no memory alert")
    check_dashboard(servers, os.path.join(examples, "vramtrace-dashboard.json"), a.pid, host)

    # 3. SIGKILL: nothing runs in A; B's sweep turns its file into process_up 0.
    a.p.kill()
    a.p.wait()
    with open(a_file) as f:
        text = f.read()
    check(f"\nvramtrace_process_up{{pid=\"{a.pid}\"" in text and "} 1\n" in text, "A's file stays after SIGKILL, up 1")
    last_update = re.search(r"\nvramtrace_process_last_update_time_seconds\{[^\n]*\} ([0-9.]+)\n", text).group(1)
    last_update = str(float(last_update)).rstrip("0").rstrip(".") if "." in last_update else last_update
    check(series(q(f"vramtrace_process_up{{{sel}}}"), ["pid"]) == [f"pid={a.pid} 1"], "A still reads up before a sweep")
    b = Traced(preload, program, nvml_dir, textfile_dir, work, "600")
    procs.append(b)
    wait_until("A marked ended by B's sweep", lambda: series(q(f"vramtrace_process_up{{{sel}}}"), ["pid"]) == [f"pid={a.pid} 0"])
    end = q(f"vramtrace_process_end_time_seconds{{{sel}}}")
    check(len(end) == 1 and end[0]["value"][1] == last_update, f"A's end time is its last update ({last_update})")
    check(series(q(f"vramtrace_oom_events_total{{{sel}}}"), ["pid"]) == [f"pid={a.pid} 1"], "A's last reading keeps its OOM")
    check(series(q(f"vramtrace_device_current_bytes{{{sel}}}"), ["device"]) == [f"device=0 {11 * MiB}", f"device=1 {2 * MiB}"],
          "A's last reading keeps its bytes")
    b_sel = f'pid="{b.pid}"'
    wait_until("B's first scrape", lambda: q(f"vramtrace_process_up{{{b_sel}}} == 1"))
    b.touch("exit")
    check(b.p.wait(timeout=30) == 0, "B exits with status 0")
    wait_until("B's last reading", lambda: series(q(f"vramtrace_process_up{{{b_sel}}}"), ["pid"]) == [f"pid={b.pid} 0"])
    check(q(f"vramtrace_process_end_time_seconds{{{b_sel}}} >= on (pid, host) "
            f"vramtrace_process_last_update_time_seconds{{{b_sel}}}") != [], "B's end time is at or after its last update")
    # B's exit snapshot names the same call sites as its textfile did.
    with open(os.path.join(work, f"snap-{b.pid}.json")) as f:
        snap = json.load(f)
    files = {fr.get("function", "").split("(")[0]: f"{fr.get('file', '')}:{fr.get('line', 0)}" for fr in snap["frames"]}
    b_sites = {r["metric"]["function"].split("(")[0]: r["metric"].get("file_line", "")
               for r in q(f'vramtrace_call_site_live_bytes{{{b_sel},function!="(other)"}}')}
    check(b_sites and all(files.get(fn) == fl for fn, fl in b_sites.items()),
          f"file_line labels are the exit snapshot's frames: {b_sites}")

    # 4. KEEP=0: C removes the files of the processes that ended, and nothing else.
    stray = os.path.join(textfile_dir, "vramtrace-notours.prom")
    with open(stray, "w") as f:
        f.write("# HELP other_metric Not vramtrace's.\n# TYPE other_metric gauge\nother_metric 1\n")
    c = Traced(preload, program, nvml_dir, textfile_dir, work, "0")
    procs.append(c)
    names = lambda: sorted(os.listdir(textfile_dir))
    want = sorted([f"vramtrace-{c.pid}.prom", "vramtrace-notours.prom"])
    wait_until("A's and B's files removed", lambda: names() == want, timeout=15)
    check(names() == want, f"only C's file and the stray file are left: {names()}")
    c.touch("exit")
    check(c.p.wait(timeout=30) == 0, "C exits with status 0")


def check_dashboard(servers, path, pid, host):
    """Every panel's PromQL against the server: the series it must return while A runs."""
    with open(path) as f:
        dashboard = json.load(f)
    sel = f'pid="{pid}"'
    c = "standin_prog_tr"
    expected = {
        "Device memory held, fraction of capacity": (["device", "pid"], [f"device=0,pid={pid} 0.171875", f"device=1,pid={pid} 0.03125"]),
        "Device memory held by process": (["device", "pid", "host", "command"],
                                          [f"device=0,pid={pid},host={host},command={c} {11 * MiB}",
                                           f"device=1,pid={pid},host={host},command={c} {2 * MiB}"]),
        "Peak device memory by process": (["device", "pid"], [f"device=0,pid={pid} {11 * MiB}", f"device=1,pid={pid} {2 * MiB}"]),
        "Untracked memory (NVML minus tracked)": (["device", "pid"], [f"device=0,pid={pid} {CONTEXT_BYTES}",
                                                                     f"device=1,pid={pid} {CONTEXT_BYTES + MiB}"]),
        "Top call sites by live bytes": (["device", "function"], [f"device=0,function=hold_a(bool) {6 * MiB}",
                                                                  f"device=0,function=hold_c(bool) {4 * MiB}",
                                                                  f"device=1,function=hold_e(bool) {1 * MiB}",
                                                                  f"device=1,function=hold_from_pool(bool) {1 * MiB}"]),
        "OOM failures": (["pid", "host", "command"], [f"pid={pid},host={host},command={c} 1"]),
        "Processes running": (["pid"], [f"pid={pid} 1"]),
        "Stream-ordered pools reserved": (["device", "pid"], [f"device=1,pid={pid} {2 * MiB}"]),
    }
    seen = set()
    for panel in dashboard["panels"]:
        title = panel["title"]
        seen.add(title)
        for target in panel["targets"]:
            expr = target["expr"]
            if title not in expected:
                check(False, f"panel {title!r} has an expected result in this test")
                continue
            keep, want = expected[title]
            got = series(servers.query(expr), keep)
            check(got == want, f"panel {title!r}: {expr} -> {got}")
    check(seen == set(expected), f"the dashboard's panels are the ones expected: {sorted(seen)}")
    check(all(p.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}" for p in dashboard["panels"]) and
          dashboard["__inputs"][0]["name"] == "DS_PROMETHEUS", "every panel uses the imported Prometheus data source")


if __name__ == "__main__":
    sys.exit(main())
