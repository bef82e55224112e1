//! `peregrine proxy` in front of two `peregrine serve` processes, one of them killed (SIGKILL)
//! under load: the idempotent requests in flight on it are retried on the other and none
//! fails; of the others, at most those in flight on it at the kill fail; after it, nothing
//! fails.

mod support;

use std::io::Write;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::{Client, Running, TempDir};

/// What one client thread saw: (GET failures, POST failures, POST failures after the kill had
/// settled, requests answered).
type Seen = (usize, usize, usize, usize);

/// Requests on one kept-alive connection (a new one after a failure) until `stop`: GETs, or
/// POSTs with a small body, each a failure unless answered with the file (GET) or serve's own
/// answer to a POST (405).
fn client(proxy: SocketAddr, post: bool, stop: Arc<AtomicBool>, settled: Arc<AtomicBool>) -> Seen {
    let (mut get_fail, mut post_fail, mut late_fail, mut answered) = (0, 0, 0, 0);
    let mut conn = Client::connect(proxy);
    while !stop.load(Ordering::SeqCst) {
        let request: &[u8] = if post {
            b"POST /f.txt HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\ndata"
        } else {
            b"GET /f.txt HTTP/1.1\r\nHost: h\r\n\r\n"
        };
        let late = settled.load(Ordering::SeqCst);
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| conn.send(request)));
        let ok = match &outcome {
            Ok((status, _, body)) if !post => *status == 200 && body == "file",
            Ok((status, _, _)) => *status == 405,
            Err(_) => false,
        };
        answered += 1;
        if !ok {
            match (post, late) {
                (false, _) => get_fail += 1,
                (true, false) => post_fail += 1,
                (true, true) => late_fail += 1,
            }
            if outcome.is_err() {
                conn = Client::connect(proxy);
            }
        }
    }
    (get_fail, post_fail, late_fail, answered)
}

#[test]
fn a_backend_killed_under_load_fails_only_what_was_in_flight_on_it() {
    let site = TempDir::new(&[("f.txt", "file")]);
    let a = Running::serve(&site.0);
    let b = Running::serve(&site.0);
    let proxy = Running::proxy(&[
        "--to",
        &format!("http://{},http://{}", a.addr, b.addr),
        "--quiet",
        "--workers",
        "1",
    ]);
    let stop = Arc::new(AtomicBool::new(false));
    let settled = Arc::new(AtomicBool::new(false));
    const GETS: usize = 6;
    const POSTS: usize = 2;
    let threads: Vec<_> = (0..GETS + POSTS)
        .map(|i| {
            let (stop, settled) = (stop.clone(), settled.clone());
            std::thread::spawn(move || client(proxy.addr, i >= GETS, stop, settled))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let mut a = a;
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    // Every connection to the killed process is gone by now.
    std::thread::sleep(Duration::from_millis(200));
    settled.store(true, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::SeqCst);
    let seen: Vec<Seen> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let total = |f: fn(&Seen) -> usize| seen.iter().map(f).sum::<usize>();
    let (get_fail, post_fail, late_fail, answered) =
        (total(|s| s.0), total(|s| s.1), total(|s| s.2), total(|s| s.3));
    let _ = writeln!(
        std::io::stderr(),
        "{answered} requests; GET failures {get_fail}, POST failures {post_fail} at the kill, \
         {late_fail} after"
    );
    assert!(answered > 100, "too little load: {answered}");
    assert_eq!(get_fail, 0, "an idempotent request failed instead of being retried");
    assert!(post_fail <= POSTS, "more POSTs failed than were in flight: {post_fail}");
    assert_eq!(late_fail, 0, "requests failed after the kill had settled");
    // The survivor answers everything now.
    assert_eq!(support::get(proxy.addr, "/f.txt"), (200, "file".to_owned()));
    drop(b);
}
