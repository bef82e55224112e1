//! The WebSocket load generator's peer (`bench/ws.sh`, generator part): a closed-loop echo
//! client on tokio-websockets doing what `peregrine load --ws` does per message: send a message
//! through the `Sink`, wait for its echo from the `Stream`, compare it with what was sent, and
//! time the round trip (a clock read at the send and at the echo, a histogram bucket
//! incremented). One current-thread runtime, one task per connection; at the end it prints
//! `messages SECONDS MSG_PER_S mismatches`.
//!
//! ```text
//! cargo run --release --example ws_tokio_websockets_client -- --url ws://127.0.0.1:9002/ \
//!     -c 100 -d 5 --size 20 [--text]
//! ```

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use http::Uri;
use tokio_websockets::{ClientBuilder, Message};

#[derive(Default)]
struct Tally {
    messages: u64,
    mismatches: u64,
    /// Round trips by power of two of microseconds.
    buckets: [u64; 32],
}

async fn connection(
    uri: Uri,
    payload: bytes::Bytes,
    text: bool,
    until: Instant,
    tally: Rc<RefCell<Tally>>,
) {
    let Ok((mut ws, _)) = ClientBuilder::from_uri(uri).connect().await else {
        eprintln!("ws_tokio_websockets_client: connect failed");
        return;
    };
    let message = || {
        if text {
            Message::text(String::from_utf8(payload.to_vec()).unwrap_or_default())
        } else {
            Message::binary(payload.clone())
        }
    };
    // A text message is built once and cloned, as the binary one is.
    let text_message = text.then(message);
    loop {
        let sent = Instant::now();
        if sent >= until {
            break;
        }
        let msg = match &text_message {
            Some(m) => m.clone(),
            None => message(),
        };
        if ws.send(msg).await.is_err() {
            break;
        }
        let Some(Ok(echo)) = ws.next().await else { break };
        let rtt = sent.elapsed().as_micros() as u64;
        let mut t = tally.borrow_mut();
        if echo.as_payload()[..] == payload[..] {
            t.messages += 1;
            t.buckets[(64 - rtt.leading_zeros()).min(31) as usize] += 1;
        } else {
            t.mismatches += 1;
        }
    }
    let _ = ws.close().await;
}

fn main() -> std::io::Result<()> {
    let (mut url, mut conns, mut secs, mut size, mut text) =
        (String::from("ws://127.0.0.1:9002/"), 100usize, 5.0f64, 20usize, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a flag's value");
        match arg.as_str() {
            "--url" => url = value(),
            "-c" => conns = value().parse().expect("-c N"),
            "-d" => secs = value().parse().expect("-d SECONDS"),
            "--size" => size = value().parse().expect("--size BYTES"),
            "--text" => text = true,
            other => {
                eprintln!(
                    "usage: ws_tokio_websockets_client [--url ws://HOST:PORT/] [-c N] \
                     [-d SECONDS] [--size BYTES] [--text] (unknown: {other})"
                );
                std::process::exit(2);
            }
        }
    }
    let uri: Uri = url.parse().expect("a ws:// URL");
    // The same kind of payload as `peregrine load --ws`: pseudo-random bytes, or ASCII.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let payload: Vec<u8> = (0..size)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8;
            if text { b'a' + r % 26 } else { r }
        })
        .collect();
    let payload = bytes::Bytes::from(payload);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let local = tokio::task::LocalSet::new();
    let tally = Rc::new(RefCell::new(Tally::default()));
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(secs);
    local.block_on(&rt, async {
        let tasks: Vec<_> = (0..conns)
            .map(|_| {
                let (uri, payload, tally) = (uri.clone(), payload.clone(), tally.clone());
                tokio::task::spawn_local(connection(uri, payload, text, until, tally))
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    let t = tally.borrow();
    println!("{} {elapsed:.3} {:.1} {}", t.messages, t.messages as f64 / elapsed, t.mismatches);
    Ok(())
}
