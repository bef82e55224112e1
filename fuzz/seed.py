#!/usr/bin/env python3
"""Seed inputs for the fuzz targets, shaped as each target reads its input.

Sources: the shared corpora (llhttp's HTTP/1.x cases, hpack-test-case's stories) when the
directory given as the first argument holds them, and a few hand-written messages for the
targets no corpus fits (router, PROXY protocol, files, WebSocket, HTTP/3 and QPACK). Writes
one file per input, named by its SHA-1, into OUT/<target>/ (second argument). Inputs are kept
under 4 KiB, the size libFuzzer mutates by default.
"""
import base64
import hashlib
import json
import os
import struct
import sys

MAX = 4096


def write(out, target, data):
    if not data or len(data) > MAX:
        return
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def h2_frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = h2_frame(4, 0, 0, b"")


def llhttp(root, out):
    path = os.path.join(root, "llhttp", "cases.jsonl")
    if not os.path.exists(path):
        return
    for line in open(path):
        case = json.loads(line)
        raw = base64.b64decode(case["raw_b64"])
        head, _, body = raw.partition(b"\r\n\r\n")
        chunked = b"chunked" in head.lower()
        if case["type"].startswith("request"):
            write(out, "http1_head", raw)
            # Server role reading bodies, cut every 3rd byte; and answering without reading.
            write(out, "http1_conn", bytes([0x00, 2]) + raw)
            write(out, "http1_conn", bytes([0x0a, 5]) + raw)
        else:
            write(out, "http1_response", raw)
            write(out, "http1_conn", bytes([0x01, 3]) + raw)
            # HTTP/1.1, GET then GET then HEAD, fed 2 bytes at a time; and a lone GET whole.
            write(out, "client_response", bytes([0x0c]) + raw)
            write(out, "client_response", bytes([0x00]) + raw)
        if body:
            # body_decoder: seed & 3 picks the framing (1: chunked, 3: close-delimited).
            write(out, "body_decoder", bytes([0xfd if chunked else 0xff]) + body)
            if chunked:
                write(out, "chunked", bytes([0xff]) + body)


def hpack(root, out):
    base = os.path.join(root, "hpack-test-case")
    if not os.path.isdir(base):
        return
    for sub in sorted(os.listdir(base)):
        d = os.path.join(base, sub)
        if not os.path.isdir(d):
            continue
        # A few stories per encoder: each is a connection's worth of blocks.
        for name in sorted(os.listdir(d))[:4]:
            story = json.load(open(os.path.join(d, name)))
            cases = story.get("cases", [])
            blocks = [bytes.fromhex(c["wire"]) for c in cases if c.get("wire")]
            # hpack_decode: table setting byte (128 * 32 = 4096), then length-prefixed blocks.
            dec = bytearray([128])
            for b in blocks:
                if len(b) >= 0xfe or len(dec) + 1 + len(b) > MAX:
                    break
                dec += bytes([len(b)]) + b
            write(out, "hpack_decode", bytes(dec))
            # hpack_roundtrip: blocks split by 0xff, fields by 0xfe, name/value by 0xfd.
            rt = bytearray()
            for c in cases:
                fields = [kv for h in c.get("headers", []) for kv in h.items()]
                block = b"\xfe".join(n.encode() + b"\xfd" + v.encode() for n, v in fields)
                if len(rt) + len(block) + 1 > MAX:
                    break
                rt += block + b"\xff"
            write(out, "hpack_roundtrip", bytes(rt))
            # HTTP/2: the blocks as HEADERS frames (END_STREAM | END_HEADERS) on streams 1, 3, ...
            frames = b""
            for i, b in enumerate(blocks):
                f = h2_frame(1, 0x5, 2 * i + 1, b)
                if len(frames) + len(f) + len(PREFACE) + len(SETTINGS) + 1 > MAX:
                    break
                frames += f
            if frames:
                write(out, "h2_frame", SETTINGS + frames)
                # h2_conn: the target sends the preface and SETTINGS itself for seed 0.
                write(out, "h2_conn", bytes([0x00]) + frames)
                write(out, "client_response", bytes([0x01]) + frames[: MAX - 64])


def hand_written(out):
    write(out, "router", b"\x00/users/{id}\n/users/{id}/posts/{post}\n/static/{*rest}\n/\n\n"
          b"/users/42\n/users/42/posts/7\n/static/a/b.css\n/users/\n/nope\n")
    write(out, "router", b"\x01/a/{b}/\n/a/{b}/c\n\n/a/x\n/a/x/\n/a/x/c/\n")
    write(out, "proxy_protocol", b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\nGET / HTTP/1.1\r\n")
    write(out, "proxy_protocol", b"PROXY TCP6 ::1 ::1 1 2\r\n")
    write(out, "proxy_protocol", b"PROXY UNKNOWN\r\n")
    v2 = b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11]) + struct.pack(">H", 12 + 7)
    v2 += bytes([127, 0, 0, 1, 127, 0, 0, 2]) + struct.pack(">HH", 1000, 443)
    v2 += bytes([0x02]) + struct.pack(">H", 4) + b"a.io"
    write(out, "proxy_protocol", v2)
    for m, path in [(0, b"/docs/a.txt"), (1, b"/app.js"), (0, b"/docs/"), (2, b"/x"), (4, b"/../secret.txt")]:
        write(out, "files_request", bytes([m]) + path + b"\xff\xffgzip, br\xff")
    write(out, "files_request", bytes([0]) + b"/app.js\xff\xffgzip\xff\xffhttps://a.example\xff\xff\xff\xffbytes=0-9\xff\"x\"")
    # ws_conn: a server reading the client's masked "Hello" (RFC 6455 section 5.7), a ping and
    # a close; with deflate, the compressed "Hello" of RFC 7692 section 7.2.3.1.
    hello = bytes([0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    ping = bytes([0x89, 0x80, 1, 2, 3, 4])
    close = bytes([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8])
    write(out, "ws_conn", bytes([0x00, 0x40, 0x80]) + hello + ping + close)
    write(out, "ws_conn", bytes([0x01, 0x80, 0x80]) + bytes([0x81, 0x05]) + b"Hello" + bytes([0x88, 0x00]))
    deflated = bytes([0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])
    write(out, "ws_conn", bytes([0x03, 0x80, 0x80, 0xc1, len(deflated)]) + deflated)
    write(out, "ws_conn", bytes([0x80]) + deflated)


def h3_frame(kind, payload):
    # RFC 9114 section 7.1: type and length as QUIC variable-length integers (all here < 64).
    assert kind < 64 and len(payload) < 64
    return bytes([kind, len(payload)]) + payload


def http3(out):
    # RFC 9114 section 7.2: SETTINGS (QPACK capacity 4096, field section 16384, 16 blocked
    # streams), GOAWAY, MAX_PUSH_ID, CANCEL_PUSH, a reserved type (0x21); on a request stream
    # HEADERS with a static-only QPACK section (RFC 9204 section 4.5), DATA, trailers.
    settings = h3_frame(0x04, bytes([0x01, 0x50, 0x00, 0x06, 0x80, 0x00, 0x40, 0x00, 0x07, 0x10]))
    request = bytes([0, 0, 0xD1, 0xD7, 0xC1, 0x50, 11]) + b"example.com"  # GET https / example.com
    response = bytes([0, 0, 0xD9])  # :status 200
    trailers = bytes([0, 0, 0x5F, 0x1D, 1]) + b"1"  # a literal value on a static name
    control = settings + h3_frame(0x07, b"\x04") + h3_frame(0x0D, b"\x08") + h3_frame(0x03, b"\x02")
    write(out, "h3_frame", control + h3_frame(0x21, b"ab"))
    write(out, "h3_frame", h3_frame(0x01, request) + h3_frame(0x00, b"hello") + h3_frame(0x01, trailers))
    write(out, "h3_frame", h3_frame(0x01, response) + h3_frame(0x00, b"") + h3_frame(0x05, b"\x01" + response))
    # RFC 9204 appendix B: the encoder stream's inserts and the sections that refer to them.
    b1 = bytes.fromhex("0000510b") + b"/index.html"
    b2_enc = bytes.fromhex("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468")
    b2_sec = bytes.fromhex("03811011")
    b3_enc = bytes.fromhex("4a637573746f6d2d6b65790c637573746f6d2d76616c7565")
    b4_enc, b4_sec = bytes.fromhex("02"), bytes.fromhex("050080c181")
    b5_enc = bytes.fromhex("810d637573746f6d2d76616c756532")
    # qpack_decode: capacity octet (x 16), blocked streams, then commands (0 encoder bytes,
    # 1 a section on stream 4 * (cmd >> 2), 2 cancel, 3 poll), with a length for 0 and 1.
    def cmd(op, stream, data=b""):
        c = bytes([(stream // 4) << 2 | op])
        return c + bytes([len(data)]) + data if op < 2 else c
    write(out, "qpack_decode", bytes([0, 0]) + cmd(1, 0, b1))
    appendix = cmd(0, 0, b2_enc) + cmd(1, 4, b2_sec) + cmd(3, 0) + cmd(0, 0, b3_enc) + cmd(3, 0)
    appendix += cmd(0, 0, b4_enc) + cmd(1, 8, b4_sec) + cmd(3, 0) + cmd(0, 0, b5_enc) + cmd(2, 8) + cmd(3, 0)
    write(out, "qpack_decode", bytes([16, 2]) + appendix)
    # The section first: blocked until the inserts arrive.
    write(out, "qpack_decode", bytes([16, 2]) + cmd(1, 4, b2_sec) + cmd(0, 0, b2_enc) + cmd(3, 0))
    # h3_conn: role octet (0 server, 1 client), then commands (low three bits: 0 uni bytes,
    # 3 request bytes, 4 request end, 6 encode a message, 7 decoder stream bytes; the rest picks
    # the stream), with a length for 0, 3 and 7. Uni streams open with their type (RFC 9114
    # section 6.2: 0x00 control; RFC 9204 section 4.2: 0x02 encoder, 0x03 decoder).
    def conn(op, k, data=b""):
        c = bytes([k << 3 | op])
        return c + bytes([len(data)]) + data if op in (0, 3, 7) else c
    server = conn(0, 0, b"\x00" + settings) + conn(0, 1, b"\x02" + b2_enc)
    server += conn(3, 0, h3_frame(0x01, request) + h3_frame(0x00, b"hello")) + conn(4, 0) + conn(6, 0)
    server += conn(3, 1, h3_frame(0x01, bytes.fromhex("0381") + b"\xd1\xd7\x10\x11")) + conn(4, 1)
    write(out, "h3_conn", b"\x00" + server)
    client = conn(0, 0, b"\x00" + settings) + conn(6, 0)
    client += conn(3, 0, h3_frame(0x01, response) + h3_frame(0x00, b"hi") + h3_frame(0x01, trailers)) + conn(4, 0)
    write(out, "h3_conn", b"\x01" + client)
    # qpack_roundtrip: our capacity, theirs (x 8), blocked streams; then commands (cmd % 5:
    # 0 a section of cmd >> 3 fields, name octet, length, value; 1 and 3 deliver that many
    # octets of the encoder and decoder streams; 2 decode section cmd >> 3; 4 cancel one).
    fields = [(0, b"/"), (1, b"example.com"), (2, b"a=b; c=d"), (0x83, b"42"), (4, b"peregrine")]
    section = bytes([len(fields) << 3])
    assert section[0] % 5 == 0, "the octet must read as 'a section' (cmd % 5 == 0)"
    for n, v in fields:
        section += bytes([n, len(v)]) + v
    write(out, "qpack_roundtrip", bytes([64, 64, 2]) + section + b"\x02" + b"\x01\xff" + b"\x02" + b"\x03\xff" + section + b"\x02")
    write(out, "qpack_roundtrip", bytes([64, 64, 2]) + section + section + b"\x0a\x04\x01\x10\x03\xff")


def main():
    root, out = sys.argv[1], sys.argv[2]
    llhttp(root, out)
    hpack(root, out)
    hand_written(out)
    http3(out)


if __name__ == "__main__":
    main()
