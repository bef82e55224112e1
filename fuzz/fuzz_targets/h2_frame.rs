#![no_main]
//! HTTP/2 frame decoding on arbitrary bytes, read as a run of frames (header, then up to its
//! length of payload): never panics, a decoded frame's parts lie inside its payload, and
//! every decoded frame encodes back to bytes that decode to the same frame (padding and the
//! deprecated priority fields aside, which our encoders never write).
use libfuzzer_sys::fuzz_target;
use peregrine::http2::frame::{
    self, Continuation, Frame, GoAway, HEAD_LEN, Head, PushPromise, headers, settings,
};

/// Decodes `bytes` as exactly one frame.
fn one(bytes: &[u8]) -> Frame<'_> {
    let head = Head::parse(bytes[..HEAD_LEN].try_into().unwrap());
    assert_eq!(head.len as usize, bytes.len() - HEAD_LEN);
    frame::decode(head, &bytes[HEAD_LEN..]).expect("an encoded frame decodes")
}

fn round_trip(f: &Frame<'_>) {
    let mut out = Vec::new();
    match *f {
        Frame::Data(d) => {
            frame::data::encode(d.stream, d.data, d.end_stream, &mut out);
            let Frame::Data(e) = one(&out) else { panic!() };
            assert_eq!((e.stream, e.data, e.end_stream), (d.stream, d.data, d.end_stream));
        }
        Frame::Headers(h) => {
            headers::encode(h.stream, h.fragment, h.end_stream, h.end_headers, &mut out);
            let Frame::Headers(e) = one(&out) else { panic!() };
            assert_eq!(
                (e.stream, e.fragment, e.end_stream, e.end_headers),
                (h.stream, h.fragment, h.end_stream, h.end_headers)
            );
        }
        Frame::Priority(p) => {
            p.encode(&mut out);
            assert_eq!(one(&out), Frame::Priority(p));
        }
        Frame::RstStream(r) => {
            r.encode(&mut out);
            assert_eq!(one(&out), Frame::RstStream(r));
        }
        Frame::Settings(s) => {
            if s.ack {
                settings::encode_ack(&mut out);
            } else {
                let entries: Vec<_> = s.iter().collect();
                settings::encode(&entries, &mut out);
            }
            let Frame::Settings(e) = one(&out) else { panic!() };
            assert!(e.ack == s.ack && e.iter().eq(s.iter()));
        }
        Frame::PushPromise(p) => {
            PushPromise { ..p }.encode(&mut out);
            let Frame::PushPromise(e) = one(&out) else { panic!() };
            assert_eq!(
                (e.stream, e.promised, e.fragment, e.end_headers),
                (p.stream, p.promised, p.fragment, p.end_headers)
            );
        }
        Frame::Ping(p) => {
            p.encode(&mut out);
            assert_eq!(one(&out), Frame::Ping(p));
        }
        Frame::GoAway(g) => {
            GoAway { ..g }.encode(&mut out);
            assert_eq!(one(&out), Frame::GoAway(g));
        }
        Frame::WindowUpdate(w) => {
            w.encode(&mut out);
            assert_eq!(one(&out), Frame::WindowUpdate(w));
        }
        Frame::Continuation(c) => {
            Continuation { ..c }.encode(&mut out);
            assert_eq!(one(&out), Frame::Continuation(c));
        }
        Frame::Unknown(_) => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while rest.len() >= HEAD_LEN {
        let head = Head::parse(rest[..HEAD_LEN].try_into().unwrap());
        assert_eq!(head.to_bytes()[..5], rest[..5]);
        let n = (head.len as usize).min(rest.len() - HEAD_LEN);
        let payload = &rest[HEAD_LEN..HEAD_LEN + n];
        // A truncated payload is decoded as if its header said so.
        let head = Head { len: n as u32, ..head };
        if let Ok(f) = frame::decode(head, payload) {
            let inside = |s: &[u8]| s.is_empty() || payload.as_ptr_range().contains(&s.as_ptr());
            match f {
                Frame::Data(d) => assert!(inside(d.data) && d.data.len() <= n),
                Frame::Headers(h) => assert!(inside(h.fragment)),
                Frame::PushPromise(p) => assert!(inside(p.fragment)),
                Frame::GoAway(g) => assert!(inside(g.debug_data)),
                Frame::Settings(s) => assert_eq!(s.len() * 6, n),
                _ => {}
            }
            round_trip(&f);
        }
        rest = &rest[HEAD_LEN + n..];
    }
});
