#!/usr/bin/env python3
"""A small, bounded load client for instruction counting (bench/callgrind.sh).

Sends N GET /plaintext requests over C keep-alive connections, either one at a time per
connection (mode a) or DEPTH pipelined per write (mode b), and checks every response.

usage: load.py HOST PORT MODE N [C] [DEPTH]      MODE: a | b
env:   LOAD_TARGET=/plaintext  LOAD_MARK='Hello, World!' (the bytes that end each response
       body), LOAD_HEADERS='Accept-Encoding: gzip' (extra header lines, separated by '|'),
       LOAD_VARY=1 (each request's target gets its own query, ?v=N: no two heads are alike)
prints: requests completed
"""
import os
import selectors
import socket
import sys

_extra = "".join(h + "\r\n" for h in os.environ.get("LOAD_HEADERS", "").split("|") if h)
_target = os.environ.get("LOAD_TARGET", "/plaintext")
REQ = ("GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n" % (_target, _extra)).encode()
VARY = os.environ.get("LOAD_VARY") == "1"
_serial = [0]


def requests(k):
    """k request heads to send at once: the same bytes, or with LOAD_VARY each its own."""
    if not VARY:
        return REQ * k
    out = []
    for _ in range(k):
        _serial[0] += 1
        out.append("GET %s?v=%d HTTP/1.1\r\nHost: localhost\r\n%s\r\n"
                   % (_target, _serial[0], _extra))
    return "".join(out).encode()


MARK = os.environ.get("LOAD_MARK", "Hello, World!").encode()


def main():
    host, port, mode, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    conns = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    depth = (int(sys.argv[6]) if len(sys.argv) > 6 else 16) if mode == "b" else 1
    sel = selectors.DefaultSelector()
    left = n
    done = 0
    state = {}
    for _ in range(conns):
        s = socket.create_connection((host, port), timeout=30)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        state[s] = [0, b""]  # responses owed, unread tail
        sel.register(s, selectors.EVENT_READ)

    def send(s):
        nonlocal left
        k = min(depth, left)
        if k == 0:
            return
        left -= k
        s.setblocking(True)
        s.sendall(requests(k))
        s.setblocking(False)
        state[s][0] = k

    for s in list(state):
        send(s)
    while done < n:
        events = sel.select(timeout=30)
        if not events:
            raise RuntimeError("timed out")
        for key, _ in events:
            s = key.fileobj
            data = s.recv(65536)
            if not data:
                raise RuntimeError("server closed a connection")
            st = state[s]
            buf = st[1] + data
            got = buf.count(MARK)
            done += got
            st[0] -= got
            cut = buf.rfind(MARK)
            st[1] = buf[cut + len(MARK):] if cut >= 0 else buf
            if st[0] == 0:
                send(s)
    print(done)
    for s in state:
        s.close()


if __name__ == "__main__":
    main()
