#![no_main]
//! HTTP/3 frames on arbitrary bytes, read as a run of frames (header, then up to its length
//! of payload): never panics; `Head::complete` agrees with `Head::parse`; placement is
//! judged for both stream kinds; every decoded frame encodes back to bytes that decode to
//! the same frame (integers re-encoded in their shortest form).
use libfuzzer_sys::fuzz_target;
use peregrine::http3::frame::{
    self, Frame, Head, On, cancel_push, data, goaway, headers, max_push_id, settings,
};

fn one(bytes: &[u8]) -> Frame<'_> {
    let (head, n) = Head::parse(bytes).expect("a whole header");
    assert_eq!(head.len as usize, bytes.len() - n);
    frame::decode(head.kind, &bytes[n..]).expect("an encoded frame decodes")
}

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    loop {
        assert_eq!(Head::complete(rest), Head::parse(rest).is_some(), "{rest:02x?}");
        let Some((head, n)) = Head::parse(rest) else { return };
        let len = usize::try_from(head.len).unwrap_or(usize::MAX).min(rest.len() - n);
        let payload = &rest[n..n + len];
        rest = &rest[n + len..];
        let placed = [On::Control, On::Request].map(|on| frame::check_placement(head.kind, on));
        let Ok(f) = frame::decode(head.kind, payload) else {
            continue;
        };
        assert!(placed.iter().any(Result::is_ok), "a decoded frame fits no stream");
        let mut out = Vec::new();
        match f {
            Frame::Data(d) => data::encode(d, &mut out),
            Frame::Headers(h) => headers::encode(h, &mut out),
            Frame::CancelPush(id) => cancel_push::encode(id, &mut out),
            Frame::Settings(s) => {
                let entries: Vec<_> = s.iter().collect();
                settings::encode(&entries, &mut out);
                let Frame::Settings(t) = one(&out) else { panic!("not SETTINGS") };
                assert!(t.iter().eq(s.iter()));
                continue;
            }
            Frame::PushPromise(p) => p.encode(&mut out),
            Frame::GoAway(id) => goaway::encode(id, &mut out),
            Frame::MaxPushId(id) => max_push_id::encode(id, &mut out),
            Frame::Unknown(_) => continue,
        }
        assert_eq!(one(&out), f);
    }
});
