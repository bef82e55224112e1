"""An HTTP/3 client on aioquic's public API, for tests/h3_server.rs.

Usage: h3_aioquic_client.py HOST PORT CA_PEM OUT_DIR PATH...

Fetches each PATH (or posts, for "POST:/path:N") over one QUIC connection (ALPN h3, the certificate verified against
CA_PEM for the name "localhost"), on concurrent streams, and writes each response as
OUT_DIR/<index>.status (the status and header lines) and OUT_DIR/<index>.body (the body).
Prints the octets aioquic read on the server's QPACK encoder stream and wrote on its own
decoder stream (the dynamic table in use). Exits non-zero on any failure.
"""

import asyncio
import os
import sys

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.waiters = {}
        self.responses = {}

    def quic_event_received(self, event: QuicEvent) -> None:
        for ev in self.h3.handle_event(event):
            if isinstance(ev, (HeadersReceived, DataReceived)):
                r = self.responses.setdefault(ev.stream_id, {"headers": [], "body": b""})
                if isinstance(ev, HeadersReceived):
                    r["headers"].extend(ev.headers)
                else:
                    r["body"] += ev.data
                if ev.stream_ended:
                    self.waiters.pop(ev.stream_id).set_result(r)

    async def get(self, authority: str, path: str):
        # "POST:/path:N" posts N octets (a repeating pattern) with their content-length.
        body = None
        method = b"GET"
        if path.startswith("POST:"):
            _, path, n = path.split(":")
            body = bytes(i % 251 for i in range(int(n)))
            method = b"POST"
        stream_id = self._quic.get_next_available_stream_id()
        headers = [
            (b":method", method),
            (b":scheme", b"https"),
            (b":authority", authority.encode()),
            (b":path", path.encode()),
            (b"user-agent", b"aioquic-test"),
        ]
        if body is not None:
            headers.append((b"content-length", str(len(body)).encode()))
        self.h3.send_headers(stream_id, headers, end_stream=body is None)
        if body is not None:
            self.h3.send_data(stream_id, body, end_stream=True)
        waiter = self._loop.create_future()
        self.waiters[stream_id] = waiter
        self.transmit()
        return await asyncio.wait_for(waiter, 20)


async def main(host, port, ca, out, paths):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name="localhost")
    config.load_verify_locations(ca)
    async with connect(host, port, configuration=config, create_protocol=Client) as client:
        results = await asyncio.gather(*(client.get(f"localhost:{port}", p) for p in paths))
        for i, r in enumerate(results):
            with open(os.path.join(out, f"{i}.status"), "wb") as f:
                for n, v in r["headers"]:
                    f.write(n + b": " + v + b"\n")
            with open(os.path.join(out, f"{i}.body"), "wb") as f:
                f.write(r["body"])
        # What crossed the QPACK streams (aioquic keeps the counts; no public accessor).
        print("encoder_stream_bytes", client.h3._encoder_bytes_received)
        print("decoder_stream_bytes", client.h3._decoder_bytes_sent)


if __name__ == "__main__":
    host, port, ca, out, *paths = sys.argv[1:]
    asyncio.run(main(host, int(port), ca, out, paths))
