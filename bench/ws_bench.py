#!/usr/bin/env python3
"""The WebSocket echo benchmark's runs and table (bench/ws.sh builds everything and calls this).

Servers: every echo server starts once, pinned to CPU 0; `peregrine load --ws -t1` runs pinned
to CPU 1 against each in turn, the order reversed every other round, ROUNDS rounds per shape.
Per run and server: the server's user, system and total CPU µs per message (utime and stime
from /proc/PID/stat over the run, ÷ messages echoed), messages per second, and the octets of
its echo frames per message as the generator received them (`wire_bytes_received`: after
compression, headers included). Prints
the medians, and the medians of the per-round ratios to the floor and to the better of
fastwebsockets and tokio-websockets (the lower CPU per message of the two, per round).

Idle: each server started afresh, IDLE WebSockets opened (bench/idle_ws.py: the handshake,
one echoed message, then idle), VmRSS growth per WebSocket.

Generator (GEN=1): peregrine's echo server on CPU 0; the generators on CPU 1 alternated:
`peregrine load --ws -t1`, examples/ws_tokio_websockets_client.rs, and the C floor client
(bench/floor_ws_client.c); their CPU per message from their rusage (user and system apart).

usage: ws_bench.py BIN_DIR WORK_DIR   (environment: DURATION ROUNDS SHAPES PEERS IDLE GEN)
Loopback only; every run is bounded; the servers are killed by PID at exit.
"""
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DURATION = int(os.environ.get("DURATION", "5"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))
SHAPES = os.environ.get("SHAPES", "s20 s16k json1k json1k-deflate").split()
PEERS = os.environ.get("PEERS", "peregrine fastwebsockets tokio-websockets tungstenite floor").split()
IDLE = int(os.environ.get("IDLE", "10000"))
GEN = os.environ.get("GEN", "1") == "1"
BASE_PORT = int(os.environ.get("BASE_PORT", "18900"))

# shape: (connections, load flags, peers that run it: None = all)
SHAPE_ARGS = {
    "s20": (100, ["--size", "20"], None),
    "s16k": (500, ["--size", "16KiB"], None),
    "json1k": (100, ["--size", "1KiB", "--text"], None),
    # Only peregrine compresses: the peers would agree no extension and run json1k again.
    "json1k-deflate": (100, ["--size", "1KiB", "--text", "--deflate"], ["peregrine"]),
}
PEERS_BETTER = ("fastwebsockets", "tokio-websockets")


def server_argv(name, bins, work, port):
    addr = f"127.0.0.1:{port}"
    ex = os.path.join(bins, "examples")
    return {
        "peregrine": [os.path.join(ex, "ws_echo"), "--addr", addr, "--workers", "1"],
        "fastwebsockets": [os.path.join(ex, "ws_fastwebsockets"), "--addr", addr],
        "tokio-websockets": [os.path.join(ex, "ws_tokio_websockets"), "--addr", addr],
        "tungstenite": [os.path.join(ex, "ws_tungstenite"), "--addr", addr],
        "floor": [os.path.join(work, "floor_ws_echo"), str(port)],
    }[name]


def ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def wait_port(port, proc, name):
    for _ in range(100):
        if proc.poll() is not None:
            sys.exit(f"{name} exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"{name} did not start")


def start(name, bins, work, port):
    proc = subprocess.Popen(["taskset", "-c", "0"] + server_argv(name, bins, work, port),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, proc, name)
    return proc


def load(bins, port, shape, seconds):
    conns, flags, _ = SHAPE_ARGS[shape]
    argv = ["taskset", "-c", "1", os.path.join(bins, "peregrine"), "load",
            f"ws://127.0.0.1:{port}/", "-t", "1", "-c", str(conns), "-d", f"{seconds}s",
            "--json", "-", "--no-progress"] + flags
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    if out.returncode != 0:
        raise RuntimeError(f"load failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def servers(bins, work):
    names = [p for p in PEERS]
    ports = {n: BASE_PORT + i for i, n in enumerate(names)}
    procs = {}
    res = {}  # (shape, name) -> list of dicts per round
    try:
        for n in names:
            procs[n] = start(n, bins, work, ports[n])
        for shape in SHAPES:
            only = SHAPE_ARGS[shape][2]
            peers = [n for n in names if only is None or n in only]
            for n in peers:  # warm-up: buffers, allocator, caches
                load(bins, ports[n], shape, 1)
            for r in range(ROUNDS):
                order = peers if r % 2 == 0 else peers[::-1]
                for n in order:
                    pid = procs[n].pid
                    u0, s0 = ticks(pid)
                    rep = load(bins, ports[n], shape, DURATION)
                    u1, s1 = ticks(pid)
                    tick = os.sysconf("SC_CLK_TCK")
                    m = max(rep["messages"], 1)
                    row = {
                        "user": (u1 - u0) / tick / m * 1e6,
                        "sys": (s1 - s0) / tick / m * 1e6,
                        "msgs": rep["msg_per_s"],
                        "wire": rep["wire_bytes_received"] / m,
                        "errors": rep["errors_total"],
                        "p50": rep["latency_us"]["p50"],
                        "p99": rep["latency_us"]["p99"],
                    }
                    row["total"] = row["user"] + row["sys"]
                    res.setdefault((shape, n), []).append(row)
                    if row["errors"]:
                        print(f"  {shape} {n}: {rep['errors']}", file=sys.stderr)
                print(f"  round {r} {shape}: " + "  ".join(
                    f"{n} {res[(shape, n)][-1]['user']:.3f}+{res[(shape, n)][-1]['sys']:.3f}"
                    f"={res[(shape, n)][-1]['total']:.3f}µs {res[(shape, n)][-1]['msgs']:.0f}/s"
                    for n in peers), file=sys.stderr, flush=True)
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    return res


def idle(bins, work):
    out = {}
    for i, n in enumerate(PEERS):
        port = BASE_PORT + 50 + i
        proc = start(n, bins, work, port)
        try:
            r = subprocess.run(["taskset", "-c", "1", "python3",
                                os.path.join(ROOT, "bench/idle_ws.py"), "127.0.0.1", str(port),
                                str(proc.pid), str(IDLE)],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                print(f"  idle {n}: {r.stderr.strip()[-300:]}", file=sys.stderr)
                continue
            before, after, per, closed = r.stdout.split()
            out[n] = int(per)
            print(f"  idle {n}: RSS {before} -> {after} KB, {per} B per WebSocket, "
                  f"{closed} KB once closed", file=sys.stderr, flush=True)
        finally:
            proc.kill()
            proc.wait()
    return out


def child_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime, ru.ru_stime


def generators(bins, work):
    port = BASE_PORT + 90
    proc = start("peregrine", bins, work, port)
    res = {}
    shapes = [("s20", 100, "20", "20"), ("s16k", 100, "16KiB", "16384")]
    try:
        for shape, conns, size, size_n in shapes:
            runs = {
                "peregrine": ["taskset", "-c", "1", os.path.join(bins, "peregrine"), "load",
                              f"ws://127.0.0.1:{port}/", "-t", "1", "-c", str(conns), "-d",
                              f"{DURATION}s", "--size", size, "--json", "-", "--no-progress"],
                "tokio-websockets": ["taskset", "-c", "1",
                                     os.path.join(bins, "examples/ws_tokio_websockets_client"),
                                     "--url", f"ws://127.0.0.1:{port}/", "-c", str(conns),
                                     "-d", str(DURATION), "--size", size_n],
                "floor": ["taskset", "-c", "1", os.path.join(work, "floor_ws_client"), str(port),
                          str(conns), str(DURATION), size_n],
            }
            names = list(runs)
            for r in range(ROUNDS):
                for n in (names if r % 2 == 0 else names[::-1]):
                    u0, s0 = child_cpu()
                    out = subprocess.run(runs[n], capture_output=True, text=True,
                                         timeout=DURATION + 60)
                    u1, s1 = child_cpu()
                    if out.returncode != 0:
                        raise RuntimeError(f"{n}: {out.stderr.strip()}")
                    if n == "peregrine":
                        msgs = json.loads(out.stdout)["messages"]
                    elif n == "floor":
                        msgs = int(out.stdout.split()[1])
                    else:
                        msgs = int(out.stdout.split()[0])
                    m = max(msgs, 1)
                    row = {"user": (u1 - u0) / m * 1e6, "sys": (s1 - s0) / m * 1e6,
                           "msgs": msgs / DURATION}
                    row["total"] = row["user"] + row["sys"]
                    res.setdefault((shape, n), []).append(row)
                print(f"  generator round {r} {shape}: " + "  ".join(
                    f"{n} {res[(shape, n)][-1]['user']:.3f}+{res[(shape, n)][-1]['sys']:.3f}"
                    f"={res[(shape, n)][-1]['total']:.3f}µs {res[(shape, n)][-1]['msgs']:.0f}/s"
                    for n in names), file=sys.stderr, flush=True)
    finally:
        proc.kill()
        proc.wait()
    return res, [s[0] for s in shapes]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bins, work = sys.argv[1], sys.argv[2]
    res = servers(bins, work) if SHAPES else {}
    idle_bytes = idle(bins, work) if IDLE > 0 else {}
    print()
    print(f"WebSocket echo, one worker, server on CPU 0, `peregrine load --ws -t1` on CPU 1, "
          f"{DURATION}s per run, medians of {ROUNDS} rounds")
    print()
    print("| shape | server | msg/s | CPU µs/msg | user µs/msg | system µs/msg | "
          "÷ floor (total) | ÷ best peer (total) | ÷ best peer (user) | wire B/msg | p50 µs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape in SHAPES:
        for n in PEERS:
            rows = res.get((shape, n))
            if not rows:
                continue
            floor = res.get((shape, "floor"))
            best = []
            for i in range(len(rows)):
                cands = [res[(shape, p)][i] for p in PEERS_BETTER if (shape, p) in res]
                if cands:
                    best.append(min(cands, key=lambda x: x["total"]))
            f_ratio = med([a["total"] / b["total"] for a, b in zip(rows, floor)]) if floor else float("nan")
            b_ratio = med([a["total"] / b["total"] for a, b in zip(rows, best)]) if best else float("nan")
            u_ratio = med([a["user"] / b["user"] for a, b in zip(rows, best)]) if best else float("nan")
            print(f"| {shape} | {n} | {med([r['msgs'] for r in rows]):.0f} | "
                  f"{med([r['total'] for r in rows]):.3f} | {med([r['user'] for r in rows]):.3f} | "
                  f"{med([r['sys'] for r in rows]):.3f} | {f_ratio:.2f} | {b_ratio:.2f} | "
                  f"{u_ratio:.2f} | {med([r['wire'] for r in rows]):.0f} | "
                  f"{med([r['p50'] for r in rows]):.0f} |")
    if ("json1k-deflate", "peregrine") in res and ("json1k", "peregrine") in res:
        d, u = res[("json1k-deflate", "peregrine")], res[("json1k", "peregrine")]
        print(f"\npermessage-deflate, peregrine: CPU per message {med([r['total'] for r in d]):.3f} µs "
              f"vs {med([r['total'] for r in u]):.3f} µs uncompressed = "
              f"{med([a['total'] / b['total'] for a, b in zip(d, u)]):.2f}x (goal <= 2x); "
              f"frame bytes per echo {med([r['wire'] for r in d]):.0f} vs "
              f"{med([r['wire'] for r in u]):.0f} "
              f"({100 * (1 - med([r['wire'] for r in d]) / med([r['wire'] for r in u])):.0f}% saved)")
    if idle_bytes:
        print(f"\nIdle memory, {IDLE} WebSockets (VmRSS growth per WebSocket): " + ", ".join(
            f"{n} {b / 1024:.2f} KiB" for n, b in idle_bytes.items()))
    if GEN:
        gres, gshapes = generators(bins, work)
        print(f"\nGenerator CPU per message (rusage, CPU 1) against peregrine's echo server "
              f"(CPU 0), 100 connections, medians of {ROUNDS} rounds")
        print()
        print("| shape | generator | msg/s | CPU µs/msg | user | system | ÷ tokio-websockets |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for shape in gshapes:
            tw = gres[(shape, "tokio-websockets")]
            for n in ("peregrine", "tokio-websockets", "floor"):
                rows = gres[(shape, n)]
                ratio = med([a["total"] / b["total"] for a, b in zip(rows, tw)])
                print(f"| {shape} | {n} | {med([r['msgs'] for r in rows]):.0f} | "
                      f"{med([r['total'] for r in rows]):.3f} | {med([r['user'] for r in rows]):.3f} | "
                      f"{med([r['sys'] for r in rows]):.3f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
