#!/usr/bin/env python3
"""Idle-connection memory: open N keep-alive connections to a server, send one request on each,
read its response, hold them all, and report the server's VmRSS growth per connection; then
close them all and report the VmRSS once the server has closed its ends (memory given back).

usage: idle_conns.py HOST PORT SERVER_PID [N]
prints: before_kb after_kb per_conn_bytes closed_kb
"""
import resource
import socket
import sys
import time

REQ = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n"


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def main():
    host, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard))
    time.sleep(0.5)
    before = rss_kb(pid)
    conns = []
    deadline = time.time() + 120
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(REQ)
        got = b""
        while b"Hello, World!" not in got:
            chunk = s.recv(4096)
            if not chunk:
                raise RuntimeError("server closed a connection")
            got += chunk
        conns.append(s)
        if time.time() > deadline:
            raise RuntimeError("too slow")
    time.sleep(1.0)
    after = rss_kb(pid)
    per = (after - before) * 1024 / n
    for s in conns:
        s.close()
    time.sleep(2.0)
    closed = rss_kb(pid)
    print(f"{before} {after} {per:.0f} {closed}")


if __name__ == "__main__":
    main()
