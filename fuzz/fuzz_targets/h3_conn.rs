#![no_main]
//! `http3::conn` on arbitrary stream bytes, both roles: the peer's unidirectional streams
//! (control, QPACK, push, unknown; any split, ends and resets) into `Conn`, and request
//! streams into `Message`s (frames, QPACK with blocked sections resumed when the encoder
//! stream unblocks them, HTTP's rules, content-length), plus our own responses or requests
//! encoded through the QPACK encoder. Never panics; once an error ends the connection, the
//! input stops; a stream error ends only its stream.
//!
//! The first octet picks the role; then each command is an octet (low three bits: 0 uni
//! stream bytes, 1 uni stream end, 2 uni stream reset, 3 request stream bytes, 4 request
//! stream end, 5 request stream reset, 6 encode a message on the request stream, 7 the
//! peer's decoder stream bytes; the rest picks the stream), then for 0, 3 and 7 a length
//! octet and that many octets.
use libfuzzer_sys::fuzz_target;
use peregrine::http3::conn::{Config, Conn, Event, Message, MessageEvent, RequestPseudo};
use peregrine::http3::{Role, StreamId};

fuzz_target!(|data: &[u8]| {
    let Some((&first, mut rest)) = data.split_first() else { return };
    let role = if first & 1 == 0 { Role::Server } else { Role::Client };
    let config = Config { max_ignored_frames: 50, max_unknown_streams: 10, ..Config::default() };
    let mut conn = Conn::new(role, config);
    // Four request streams (client-initiated bidirectional: 0, 4, 8, 12).
    let mut messages: Vec<Message> = (0..4).map(|k| conn.message(StreamId::new(4 * k))).collect();
    // The peer's unidirectional streams: 2, 6, 10, ... from a client, 3, 7, ... from a server.
    let uni =
        |k: u8| StreamId::new(4 * u64::from(k >> 3) + if role == Role::Server { 2 } else { 3 });
    let mut out = Vec::new();
    while let Some((&cmd, tail)) = rest.split_first() {
        rest = tail;
        let m = usize::from(cmd >> 3) % 4;
        let mut bytes: &[u8] = &[];
        if matches!(cmd & 7, 0 | 3 | 7) {
            let Some((&len, tail)) = rest.split_first() else { return };
            let n = usize::from(len).min(tail.len());
            (bytes, rest) = tail.split_at(n);
        }
        let r = match cmd & 7 {
            0 => conn.recv_uni(uni(cmd), bytes, false),
            1 => conn.recv_uni(uni(cmd), &[], true),
            2 => conn.reset_uni(uni(cmd)),
            3 | 4 => read(&mut conn, &mut messages[m], bytes, cmd & 7 == 4),
            5 => {
                conn.cancel_message(&mut messages[m]);
                Ok(())
            }
            6 => {
                let stream = messages[m].stream();
                let fields: [(&[u8], &[u8]); 2] = [(b"x-a", b"1"), (b"content-type", b"text/x")];
                if role == Role::Server {
                    conn.encode_response(stream, 200, fields, &mut out);
                } else {
                    let pseudo = RequestPseudo {
                        method: b"GET",
                        scheme: b"https",
                        authority: b"a",
                        path: b"/",
                    };
                    conn.encode_request(stream, pseudo, fields, &mut out);
                }
                conn.encode_trailers(stream, fields, &mut out);
                Ok(())
            }
            _ => {
                // The peer's decoder stream (type 0x03) opened on stream 10 or 11.
                let s = StreamId::new(if role == Role::Server { 10 } else { 11 });
                conn.recv_uni(s, &[0x03], false).and_then(|()| conn.recv_uni(s, bytes, false))
            }
        };
        if r.as_ref().is_err_and(|e| e.is_connection()) {
            return;
        }
        while let Some(e) = conn.poll_event() {
            if let Event::Unblocked(s) = e {
                let Some(msg) = messages.iter_mut().find(|m| m.stream() == s) else { continue };
                if conn.resume_message(msg).is_err_and(|e| e.is_connection()) {
                    return;
                }
            }
        }
        out.clear();
        conn.poll_decoder_stream(&mut out);
        conn.poll_encoder_stream(&mut out);
        conn.poll_control(&mut out);
    }
});

/// Feeds one request stream's bytes until they are consumed, blocked or the message fails.
fn read(
    conn: &mut Conn,
    msg: &mut Message,
    mut bytes: &[u8],
    fin: bool,
) -> Result<(), peregrine::http3::Error> {
    loop {
        match conn.recv_message(msg, bytes, fin) {
            Ok((_, None | Some(MessageEvent::Blocked))) => return Ok(()),
            Ok((n, Some(MessageEvent::Data(r)))) => {
                assert!(r.end <= n && n <= bytes.len());
                bytes = &bytes[n..];
            }
            Ok((n, Some(_))) => {
                let _ = conn.section().len();
                bytes = &bytes[n..];
            }
            Err(e) if e.is_connection() => return Err(e),
            Err(_) => {
                assert!(msg.is_done());
                return Ok(());
            }
        }
    }
}
