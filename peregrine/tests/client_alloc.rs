//! Zero allocations per request on the client's one-connection API after warm-up: thousands
//! of GETs on one kept-alive HTTP/1.1 connection and on one HTTP/2 (h2c) connection, each
//! response body copied into a caller-provided buffer. A counting global allocator counts the
//! client thread's allocations (the server's worker thread is not counted; see
//! `support/counting.rs`). Both with one path repeated and with a different path on every
//! request (the connection then reuses its last encoding around the new target).

use std::time::Duration;

use http::header::{self, HeaderValue};
use peregrine::client::conn::{Config, Connection, Event, Versions};
use peregrine::{Method, Request, Response, Server};

#[path = "support/counting.rs"]
mod counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

async fn plaintext(_req: Request) -> Response {
    Response::new("Hello, World!")
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))
}

const FIELDS: &[(&str, &[u8])] = &[
    ("accept", b"text/plain"),
    ("user-agent", b"peregrine-test"),
    ("accept-encoding", b"identity"),
    ("x-request-kind", b"alloc"),
];

/// One GET; the body copied into `buf`. Returns the body's length.
async fn get(conn: &mut Connection, target: &str, buf: &mut [u8]) -> usize {
    conn.send_request(Method::Get, target, FIELDS, &[]).unwrap();
    let mut len = 0;
    loop {
        match conn.next_event().await.unwrap() {
            Event::Head { head, .. } => assert_eq!(head.status(), 200),
            Event::Data { data, .. } => {
                buf[len..len + data.len()].copy_from_slice(data);
                len += data.len();
            }
            Event::End { .. } => return len,
            Event::Failed { error, .. } => panic!("{error}"),
            Event::Writable { .. } => {}
        }
    }
}

/// Requests on one connection after warm-up; with `vary`, each takes the next of 1,000 paths.
fn run(versions: Versions, vary: bool) -> u64 {
    let paths: Vec<String> = if vary {
        (0..1000).map(|i| format!("/plaintext/{}", i * 7919)).collect()
    } else {
        vec!["/plaintext".to_owned()]
    };
    let mut next = paths.iter().cycle();
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(plaintext).unwrap();
    let url = format!("http://{}", server.local_addr());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let allocs = rt.block_on(async {
        // The read timeout stays on: its timer is re-armed per response without allocating.
        let config =
            Config::default().versions(versions).read_timeout(Some(Duration::from_secs(10)));
        let mut conn = Connection::connect(&url, &config).await.unwrap();
        let mut buf = [0u8; 1024];
        for _ in 0..1000 {
            assert_eq!(get(&mut conn, next.next().unwrap(), &mut buf).await, 13);
        }
        counting::mark_server_thread();
        let before = counting::allocs();
        for _ in 0..5000 {
            get(&mut conn, next.next().unwrap(), &mut buf).await;
        }
        let after = counting::allocs();
        assert_eq!(&buf[..13], b"Hello, World!");
        // The counter does see this thread: a connection allocates its buffers.
        let _ = Connection::connect(&url, &config).await.unwrap();
        assert!(counting::allocs() > after, "the counter missed the client's allocations");
        after - before
    });
    server.shutdown_now();
    server.join().unwrap();
    allocs
}

#[test]
fn steady_state_client_requests_allocate_nothing() {
    for versions in [Versions::Http1Only, Versions::Http2Only] {
        for vary in [false, true] {
            let n = run(versions, vary);
            println!("{versions:?}, paths vary {vary}: {n} allocations over 5000 requests");
            assert_eq!(n, 0, "{versions:?}, paths vary {vary}: {n} allocations over 5000 requests");
        }
    }
}
