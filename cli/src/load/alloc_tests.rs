//! The load generator's hot path allocates nothing: one load thread (run on the test's own
//! thread) sends 200 requests (or WebSocket messages), then 2,200, and both runs allocate the
//! same. A counting global
//! allocator counts per thread, so the server's threads and other tests are not counted.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::{Arc, Barrier};

use clap::Parser;
use peregrine::client::conn::Config;
use peregrine::{Body, Request, Response, Server};

use super::LoadArgs;
use super::stats::Live;
use super::thread::Shared;
use super::worker::{self, Job};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: delegates to the system allocator; only counts (a const thread-local without a
// destructor: reading it allocates nothing).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn count() {
    let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
}

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Parser)]
struct Wrap {
    #[command(flatten)]
    args: LoadArgs,
}

/// Allocations of one load thread sending `count` requests with `flags`.
fn allocations(url: &str, flags: &[&str], count: u64) -> u64 {
    let count = count.to_string();
    let argv = ["load", url, "-n", &count, "-t", "1"].into_iter().chain(flags.iter().copied());
    let plan = Wrap::try_parse_from(argv).unwrap().args.plan().unwrap();
    let config = Config::default().versions(plan.versions);
    let conns = plan.connections;
    let shared = Arc::new(Shared { plan, config });
    let (_stop, stop) = tokio::sync::watch::channel(false);
    let job = Job {
        first: 0,
        conns,
        budget: count.parse().ok(),
        live: Arc::new(Live::default()),
        start: Arc::new(Barrier::new(1)),
        stop,
    };
    let before = allocs();
    let out = worker::run(shared, job).unwrap();
    let used = allocs() - before;
    assert_eq!(out.stats.requests().to_string(), count, "{flags:?}");
    assert_eq!(out.stats.error_total(), 0);
    used
}

#[test]
fn a_request_allocates_nothing() {
    let hello = |_req: Request| async { Response::new(Body::from_static(b"hello")) };
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(hello).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let cases: [&[&str]; 4] = [
        &["-c", "2"],
        &["-c", "2", "--pipeline", "8"],
        &["-c", "2", "--http2-prior-knowledge", "-m", "8", "-H", "accept: */*"],
        &["-c", "2", "--rate", "20000"],
    ];
    for flags in cases {
        let few = allocations(&url, flags, 200);
        let many = allocations(&url, flags, 2_200);
        // 2,000 more requests, no more allocations: none per request. (The open loop's
        // timer wheel sometimes grows once, hence a slack of a few, far below one per
        // request.)
        assert!(many <= few + 4, "{flags:?}: {few} allocations for 200 requests, {many} for 2,200");
    }
    server.shutdown_now();
    let _ = server.join();
}

async fn ws_echo(mut req: Request) -> Response {
    use peregrine::IntoResponse;
    use peregrine::websocket::{Message, WebSocketUpgrade};
    match WebSocketUpgrade::from_request(&mut req) {
        Ok(up) => up.on_upgrade(|mut ws| async move {
            while let Some(Ok(msg)) = ws.recv().await {
                if matches!(msg, Message::Text(_) | Message::Binary(_))
                    && ws.send(msg).await.is_err()
                {
                    break;
                }
            }
        }),
        Err(refused) => refused.into_response(),
    }
}

#[test]
fn a_websocket_message_allocates_nothing() {
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(ws_echo).unwrap();
    let url = format!("ws://{}/", server.local_addr());
    let cases: [&[&str]; 4] = [
        &["-c", "2"],
        &["-c", "2", "--pipeline", "8", "--size", "16KiB"],
        &["-c", "2", "--text", "--size", "1KiB"],
        &["-c", "2", "--rate", "20000"],
    ];
    for flags in cases {
        let few = allocations(&url, flags, 200);
        let many = allocations(&url, flags, 2_200);
        assert!(many <= few + 4, "{flags:?}: {few} allocations for 200 messages, {many} for 2,200");
    }
    server.shutdown_now();
    let _ = server.join();
}
