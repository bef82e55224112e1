#!/usr/bin/env python3
"""Idle WebSocket memory: open N WebSockets to a server (the opening handshake completed: the
101 read, its Sec-WebSocket-Accept checked), send one 20-byte masked binary message on each and
read its echo, hold them all idle, and report the server's VmRSS growth per WebSocket; then
close them all and report the VmRSS once the server has closed its ends.

usage: idle_ws.py HOST PORT SERVER_PID [N]
prints: before_kb after_kb per_ws_bytes closed_kb
"""
import base64
import hashlib
import os
import resource
import socket
import sys
import time

KEY = base64.b64encode(b"peregrine-idle!!").decode()
ACCEPT = base64.b64encode(
    hashlib.sha1((KEY + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def masked_binary(payload):
    mask = os.urandom(4)
    return bytes([0x82, 0x80 | len(payload)]) + mask + bytes(
        b ^ mask[i % 4] for i, b in enumerate(payload))


def recv_until(s, pred):
    got = b""
    while not pred(got):
        chunk = s.recv(4096)
        if not chunk:
            raise RuntimeError("server closed a connection")
        got += chunk
    return got


def main():
    host, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard))
    req = (f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
           f"Connection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\n"
           f"Sec-WebSocket-Version: 13\r\n\r\n").encode()
    payload = b"x" * 20
    time.sleep(0.5)
    before = rss_kb(pid)
    conns = []
    deadline = time.time() + 180
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(req)
        head = recv_until(s, lambda b: b"\r\n\r\n" in b)
        if not head.startswith(b"HTTP/1.1 101") or ACCEPT.encode() not in head:
            raise RuntimeError(f"handshake refused: {head[:200]!r}")
        rest = head.split(b"\r\n\r\n", 1)[1]
        s.sendall(masked_binary(payload))
        echo = rest + recv_until(s, lambda b: len(rest) + len(b) >= 22) if len(rest) < 22 else rest
        if echo[2:22] != payload:
            raise RuntimeError(f"bad echo {echo!r}")
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
