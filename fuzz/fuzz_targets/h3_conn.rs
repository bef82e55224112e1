#![no_main]
//! `http3::conn` on arbitrary stream bytes, both roles: the peer's unidirectional streams
//! (control, QPACK, push, unknown; any split, ends and resets) into `Conn`, and a request
//! stream into `RequestFrames`, its field sections into the connection's QPACK decoder.
//! Never panics; once an error ends the connection, the input stops.
//!
//! The first octet picks the role; then each command is an octet (low two bits: 0 uni
//! stream bytes, 1 uni stream end, 2 uni stream reset, 3 request stream bytes; the rest the
//! stream), then for 0 and 3 a length octet and that many octets.
use libfuzzer_sys::fuzz_target;
use peregrine::http2::hpack::FieldList;
use peregrine::http3::conn::{Config, Conn, Part, RequestFrames};
use peregrine::http3::{Role, StreamId};

fuzz_target!(|data: &[u8]| {
    let Some((&first, mut rest)) = data.split_first() else { return };
    let role = if first & 1 == 0 { Role::Server } else { Role::Client };
    let config = Config { max_ignored_frames: 50, max_unknown_streams: 10, ..Config::default() };
    let mut conn = Conn::new(role, config);
    let request = StreamId::new(0);
    let mut frames = RequestFrames::new(request, role, 1024, 50);
    let mut list = FieldList::new(4096);
    let mut sections: Vec<Vec<u8>> = Vec::new();
    // The peer's unidirectional streams: 2, 6, 10, ... from a client, 3, 7, ... from a server.
    let uni =
        |k: u8| StreamId::new(4 * u64::from(k >> 2) + if role == Role::Server { 2 } else { 3 });
    while let Some((&cmd, tail)) = rest.split_first() {
        rest = tail;
        let r = match cmd & 3 {
            0 | 3 => {
                let Some((&len, tail)) = rest.split_first() else { return };
                let n = usize::from(len).min(tail.len());
                let (bytes, tail) = tail.split_at(n);
                rest = tail;
                if cmd & 3 == 0 {
                    conn.recv_uni(uni(cmd), bytes, false)
                } else {
                    frames.recv(bytes, false, |p| {
                        if let Part::Headers(h) = p {
                            sections.push(h.to_vec());
                        }
                    })
                }
            }
            1 => conn.recv_uni(uni(cmd), &[], true),
            _ => conn.reset_uni(uni(cmd)),
        };
        if r.as_ref().is_err_and(|e| e.is_connection()) {
            return;
        }
        for s in sections.drain(..) {
            if conn.decoder.decode_section(request, &s, &mut list).is_err() {
                return;
            }
        }
        while conn.poll_event().is_some() {}
        let mut out = Vec::new();
        conn.poll_decoder_stream(&mut out);
        conn.poll_control(&mut out);
    }
});
