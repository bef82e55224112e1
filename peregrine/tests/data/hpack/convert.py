#!/usr/bin/env python3
"""Converts the hpack-test-case corpus (http2jp/hpack-test-case, MIT) to the compact files the
tests and the bench read. Usage: convert.py <hpack-test-case dir> (writes beside this script).

Formats (all integers LEB128 varints, files gzip-compressed):
  headers.bin.gz  per story of raw-data (32, in order): cases; per case: fields;
                  per field: name length, name, value length, value.
  <encoder>.bin.gz  stories present; per story: story number, cases; per case: table size + 1
                  (0 = not given), wire length, wire bytes.
"""
import glob
import gzip
import json
import os
import sys

ENCODERS = ["nghttp2", "go-hpack", "python-hpack", "swift-nio-hpack-huffman",
            "nghttp2-change-table-size", "nghttp2-16384-4096"]


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def story_number(path):
    return int(os.path.basename(path)[len("story_"):-len(".json")])


def write(path, data):
    # mtime=0: the same corpus gives the same bytes.
    with open(path, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0) as g:
            g.write(data)


def main():
    src = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out = bytearray()
    stories = sorted(glob.glob(os.path.join(src, "raw-data", "story_*.json")), key=story_number)
    assert [story_number(p) for p in stories] == list(range(32))
    for p in stories:
        cases = json.load(open(p, encoding="utf-8"))["cases"]
        out += varint(len(cases))
        for c in cases:
            out += varint(len(c["headers"]))
            for h in c["headers"]:
                ((name, value),) = h.items()
                for s in (name, value):
                    b = s.encode("utf-8")
                    out += varint(len(b)) + b
    write(os.path.join(here, "headers.bin.gz"), out)
    for enc in ENCODERS:
        out = bytearray()
        stories = sorted(glob.glob(os.path.join(src, enc, "story_*.json")), key=story_number)
        out += varint(len(stories))
        for p in stories:
            cases = json.load(open(p, encoding="utf-8"))["cases"]
            out += varint(story_number(p)) + varint(len(cases))
            for i, c in enumerate(cases):
                assert c.get("seqno", i) == i
                size = c.get("header_table_size")
                wire = bytes.fromhex(c["wire"])
                out += varint(0 if size is None else size + 1) + varint(len(wire)) + wire
        write(os.path.join(here, enc + ".bin.gz"), out)


if __name__ == "__main__":
    main()
