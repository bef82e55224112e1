"""The other end of tests/qpack_lsqpack.rs: ls-qpack (PyPI pylsqpack) as a QPACK peer.

Reads lines on stdin:
  S <stream> <hex>          a field section peregrine encoded (decoded first: it may block)
  E <hex>                   peregrine's encoder stream (fed after the sections)
  F <stream> <n>:<v> ...    a field list for ls-qpack to encode (names and values in hex)
Writes lines on stdout:
  D <stream> <n>:<v> ...    a section of peregrine's, as ls-qpack decoded it
  A <hex>                   ls-qpack's decoder stream (for peregrine's encoder)
  E <hex>                   ls-qpack's encoder stream (for peregrine's decoder)
  S <stream> <hex>          a section ls-qpack encoded
Both ends use a table of 4,096 octets and 16 blocked streams.
"""
import sys

import pylsqpack

dec = pylsqpack.Decoder(4096, 16)
enc = pylsqpack.Encoder()
enc_stream = enc.apply_settings(4096, 16)
sections, encoder, fields = [], b"", []
for line in sys.stdin.read().splitlines():
    parts = line.split()
    if parts[0] == "S":
        sections.append((int(parts[1]), bytes.fromhex(parts[2])))
    elif parts[0] == "E":
        encoder += bytes.fromhex(parts[1]) if len(parts) > 1 else b""
    elif parts[0] == "F":
        pairs = [p.split(":") for p in parts[2:]]
        fields.append((int(parts[1]), [(bytes.fromhex(n), bytes.fromhex(v)) for n, v in pairs]))

decoded, acks = {}, b""
for stream, data in sections:
    try:
        ack, headers = dec.feed_header(stream, data)
        acks += ack
        decoded[stream] = headers
    except pylsqpack.StreamBlocked:
        pass
for stream in dec.feed_encoder(encoder):
    ack, headers = dec.resume_header(stream)
    acks += ack
    decoded[stream] = headers
out = []
for stream, _ in sections:
    pairs = " ".join(n.hex() + ":" + v.hex() for n, v in decoded[stream])
    out.append(f"D {stream} {pairs}")
out.append("A " + acks.hex())
encoded = []
for stream, headers in fields:
    data, frame = enc.encode(stream, headers)
    enc_stream += data
    encoded.append(f"S {stream} {frame.hex()}")
out.append("E " + enc_stream.hex())
out.extend(encoded)
print("\n".join(out))
