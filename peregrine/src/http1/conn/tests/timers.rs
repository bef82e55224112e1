//! The deadlines: a head's, an idle connection's, a slow body's, a drain's, a client's wait.

use std::time::{Duration, Instant};

use super::harness::{Answer, Client, Server};
use crate::Method;
use crate::http1::conn::{Config, Timeout};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn the_first_head_is_timed_from_the_start_later_ones_from_their_first_byte() {
    let t0 = Instant::now();
    let mut s = Server::new(Config::default(), Answer::Read, t0);
    assert_eq!(s.conn.poll_timeout(t0 + secs(3)), Some(t0 + secs(10)));
    assert_eq!(s.conn.handle_timeout(t0 + secs(9)), None);
    s.feed(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    // Idle: the keep-alive clock runs from the wait.
    assert_eq!(s.conn.poll_timeout(t0 + secs(20)), Some(t0 + secs(95)));
    assert_eq!(s.conn.poll_timeout(t0 + secs(30)), Some(t0 + secs(95)), "started once");
    // A head's first bytes, then the wait for the rest at 40: its clock from there.
    s.feed(b"GET / HT");
    assert_eq!(s.conn.poll_timeout(t0 + secs(40)), Some(t0 + secs(50)));
    assert_eq!(s.conn.poll_timeout(t0 + secs(45)), Some(t0 + secs(50)), "started once");
    assert_eq!(s.conn.handle_timeout(t0 + secs(50)), Some(Timeout::Head));
    assert!(s.conn.is_closed());
}

#[test]
fn an_idle_connection_times_out() {
    let t0 = Instant::now();
    let mut s = Server::new(Config::default(), Answer::Read, t0);
    s.feed(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    let at = s.conn.poll_timeout(t0 + secs(1)).unwrap();
    assert_eq!(s.conn.handle_timeout(at - secs(1)), None);
    assert_eq!(s.conn.handle_timeout(at), Some(Timeout::Idle));
    assert!(s.conn.is_closed());
}

#[test]
fn a_body_slower_than_the_minimum_rate_fails() {
    // Kestrel's MinRequestBodyDataRate: 5 s of grace, then 240 B/s averaged from when the body
    // first waited.
    let t0 = Instant::now();
    let mut s = Server::new(Config::default(), Answer::Read, t0);
    s.feed(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n");
    assert_eq!(s.conn.poll_timeout(t0), Some(t0 + secs(5)));
    s.feed(&[b'x'; 240]);
    assert_eq!(s.conn.poll_timeout(t0 + secs(2)), Some(t0 + secs(6)));
    assert_eq!(s.conn.handle_timeout(t0 + secs(6)), Some(Timeout::BodyRate));
    s.respond(408);
    assert!(s.conn.is_closed());
}

#[test]
fn a_drain_is_held_to_the_rate_too() {
    let t0 = Instant::now();
    let mut s = Server::new(Config::default(), Answer::Ignore, t0);
    s.feed(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n");
    assert!(!s.conn.is_closed());
    assert_eq!(s.conn.poll_timeout(t0 + secs(1)), Some(t0 + secs(6)));
    assert_eq!(s.conn.handle_timeout(t0 + secs(6)), Some(Timeout::Drain));
    assert!(s.conn.is_closed());
}

#[test]
fn a_client_waits_for_its_response_within_the_read_timeout() {
    let t0 = Instant::now();
    let config = Config { read_timeout: Some(secs(30)), ..Config::default() };
    let mut c = Client::new(config, t0);
    assert_eq!(c.conn.poll_timeout(t0), None, "nothing in flight");
    c.send(Method::Get, Some(0), b"");
    assert_eq!(c.conn.poll_timeout(t0 + secs(1)), Some(t0 + secs(31)));
    c.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc");
    // Bytes arrived: the wait starts again.
    assert_eq!(c.conn.poll_timeout(t0 + secs(10)), Some(t0 + secs(40)));
    assert_eq!(c.conn.handle_timeout(t0 + secs(40)), Some(Timeout::Read));
    assert!(c.conn.is_closed());
}

#[test]
fn bytes_of_an_incomplete_response_head_start_a_new_wait() {
    let t0 = Instant::now();
    let config = Config { read_timeout: Some(secs(30)), ..Config::default() };
    let mut c = Client::new(config, t0);
    c.send(Method::Get, Some(0), b"");
    assert_eq!(c.conn.poll_timeout(t0 + secs(1)), Some(t0 + secs(31)));
    // An interim response, then fewer bytes of the final head than it had: still new bytes.
    c.feed(b"HTTP/1.1 100 Continue\r\n\r\n");
    assert_eq!(c.conn.poll_timeout(t0 + secs(10)), Some(t0 + secs(40)));
    c.feed(b"HTTP/1.1 200 OK\r\n");
    assert_eq!(c.conn.poll_timeout(t0 + secs(20)), Some(t0 + secs(50)));
    // The same bytes read again (no new byte): the wait goes on.
    c.feed(b"");
    assert_eq!(c.conn.poll_timeout(t0 + secs(25)), Some(t0 + secs(50)));
    c.feed(b"Content-Len");
    assert_eq!(c.conn.poll_timeout(t0 + secs(45)), Some(t0 + secs(75)));
    assert_eq!(c.conn.handle_timeout(t0 + secs(74)), None);
    assert_eq!(c.conn.handle_timeout(t0 + secs(75)), Some(Timeout::Read));
}
