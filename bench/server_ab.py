#!/usr/bin/env python3
"""A/B of HTTP/1.1 servers by CPU time per request, user and system apart.

usage: bench/server_ab.py ROUNDS DURATION SHAPE NAME=COMMAND...
  SHAPE: a (64 connections, no pipelining) or b (256 connections, 16 pipelined).
  COMMAND: the server's command line, PORT standing for its port (18600, 18601, ...).
example:
  bench/server_ab.py 9 5s b "old=/tmp/plaintext-old --addr 127.0.0.1:PORT --workers 1 --fixed" \
      "new=target/release/examples/plaintext --addr 127.0.0.1:PORT --workers 1 --fixed" \
      "floor=/tmp/floor_epoll PORT"

Every server starts once, pinned to CPU 0, and serves /plaintext; `wrk -t1` runs on CPU 1
against each in turn, the order reversed every other round. Per round and server: user, system
and total CPU µs per request (utime and stime from /proc/PID/stat over the run, ÷ requests).
Prints the medians and, against the first server, the medians of the per-round ratios: one
build against another in the same run, where bench/servers.sh compares the peers it builds.
Loopback only; every run is bounded by DURATION; the servers are killed at exit.
"""
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def main():
    if len(sys.argv) < 5 or sys.argv[3] not in ("a", "b"):
        sys.exit(__doc__)
    rounds, duration, shape = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    specs = [arg.split("=", 1) for arg in sys.argv[4:]]
    tick = os.sysconf("SC_CLK_TCK")
    procs, ports = {}, {}
    try:
        for i, (name, cmd) in enumerate(specs):
            ports[name] = 18600 + i
            argv = shlex.split(cmd.replace("PORT", str(ports[name])))
            procs[name] = subprocess.Popen(["taskset", "-c", "0"] + argv,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, port in ports.items():
            for _ in range(100):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/plaintext", timeout=1).read()
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                sys.exit(f"{name} did not start")
        load = ["-c64"] if shape == "a" else ["-c256", "-s", os.path.join(ROOT, "bench/pipeline.lua")]
        res = {name: [] for name in ports}
        for r in range(rounds):
            order = list(ports) if r % 2 == 0 else list(ports)[::-1]
            for name in order:
                url = f"http://127.0.0.1:{ports[name]}/plaintext"
                u0, s0 = ticks(procs[name].pid)
                out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-d" + duration] + load + [url],
                                     capture_output=True, text=True, timeout=120).stdout
                u1, s1 = ticks(procs[name].pid)
                n = int(re.search(r"(\d+) requests in", out).group(1))
                if "Non-2xx" in out or "Socket errors" in out:
                    print(f"{name}: errors:\n{out}", file=sys.stderr)
                user, sys_ = (u1 - u0) / tick / n * 1e6, (s1 - s0) / tick / n * 1e6
                res[name].append((user, sys_, user + sys_))
            print(f"round {r}: " + "  ".join(
                f"{k} {v[-1][0]:.3f}+{v[-1][1]:.3f}={v[-1][2]:.3f}" for k, v in res.items()), flush=True)
    finally:
        for p in procs.values():
            p.kill()
    names = list(ports)
    print("CPU µs per request, medians: user, system, total")
    for name in names:
        v = res[name]
        med = [statistics.median(x[i] for x in v) for i in range(3)]
        print(f"  {name:10s} {med[0]:.4f} {med[1]:.4f} {med[2]:.4f}")
    print(f"medians of the per-round ratios to {names[0]}: user, total")
    for name in names[1:]:
        ratios = [[a[i] / b[i] for a, b in zip(res[name], res[names[0]])] for i in (0, 2)]
        print(f"  {name:10s} {statistics.median(ratios[0]):.3f} {statistics.median(ratios[1]):.3f}  "
              f"(totals {' '.join(f'{x:.2f}' for x in ratios[1])})")


if __name__ == "__main__":
    main()
