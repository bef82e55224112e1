"""An HTTP/3 server on aioquic's API for tests/h3_client.rs (aioquic's own http3_server.py
ships in its sdist, not its wheel).

    python3 aioquic_h3_server.py --port PORT --cert cert.pem --key key.pem --dir DIR

- GET /NAME: the file DIR/NAME (content-length set), or 404.
- POST /echo: the request body back, then a trailer section `x-echo-len: N`.

QPACK runs with a 4096-octet dynamic table both ways (aioquic's defaults). Prints
"listening" once the socket is bound.
"""

import argparse
import asyncio
import os

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated, QuicEvent


class Server(QuicConnectionProtocol):
    def __init__(self, *args, directory, **kwargs):
        super().__init__(*args, **kwargs)
        self.dir = directory
        self.h3 = None
        # Request streams: stream id -> (method, path, body so far).
        self.requests = {}

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.h3 = H3Connection(self._quic)
        if self.h3 is None:
            return
        for ev in self.h3.handle_event(event):
            if isinstance(ev, HeadersReceived) and ev.stream_id not in self.requests:
                fields = dict(ev.headers)
                self.requests[ev.stream_id] = [fields.get(b":method"), fields.get(b":path"), b""]
                if ev.stream_ended:
                    self.answer(ev.stream_id)
            elif isinstance(ev, DataReceived) and ev.stream_id in self.requests:
                self.requests[ev.stream_id][2] += ev.data
                if ev.stream_ended:
                    self.answer(ev.stream_id)
            elif isinstance(ev, HeadersReceived) and ev.stream_ended:
                # Request trailers: the request is whole.
                self.answer(ev.stream_id)
        self.transmit()

    def answer(self, stream_id):
        method, path, body = self.requests.pop(stream_id)
        server = [(b"server", b"aioquic")]
        if method == b"POST" and path == b"/echo":
            self.h3.send_headers(stream_id, [(b":status", b"200")] + server)
            if body:
                self.h3.send_data(stream_id, body, end_stream=False)
            trailers = [(b"x-echo-len", str(len(body)).encode())]
            self.h3.send_headers(stream_id, trailers, end_stream=True)
            return
        name = (path or b"/").decode().lstrip("/")
        file = os.path.join(self.dir, name)
        if method != b"GET" or not name or "/" in name or not os.path.isfile(file):
            self.h3.send_headers(stream_id, [(b":status", b"404")] + server, end_stream=True)
            return
        with open(file, "rb") as f:
            data = f.read()
        head = [(b":status", b"200"), (b"content-length", str(len(data)).encode())] + server
        self.h3.send_headers(stream_id, head)
        self.h3.send_data(stream_id, data, end_stream=True)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--dir", required=True)
    a = p.parse_args()
    config = QuicConfiguration(alpn_protocols=H3_ALPN, is_client=False)
    config.load_cert_chain(a.cert, a.key)
    await serve(
        "127.0.0.1",
        a.port,
        configuration=config,
        create_protocol=lambda *x, **k: Server(*x, directory=a.dir, **k),
    )
    print("listening", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
