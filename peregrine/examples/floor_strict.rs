//! The floor with the rules: `bench/floor_epoll.c`'s loop in Rust, applying per request the
//! rules the server applies. It is NOT a server, it is a measuring stick (issue 18): it tells
//! how much CPU per request any server that keeps these rules must spend on this machine, so
//! the gap between it and the kernel floor is the rules' cost and the gap between the server
//! and it is the framework's (tokio, `Request`/`Response`, the handler's future, copies).
//!
//! The syscall pattern is floor_epoll.c's: one thread, edge-triggered readiness (`mio`, no
//! tokio), non-blocking sockets with TCP_NODELAY; on each event it reads until `WouldBlock` or
//! a short read and answers the requests of each read with one write. Per request it applies:
//! - the strict head parser with header identification (`http1::HeadScanner` over
//!   `parse_request_uninit`, room for 32 headers on the stack as the server uses, the default
//!   `http1::Limits`), a head split across reads kept and completed by the next read;
//! - the Host and framing checks (`http1::framing::request_framing_remembering`, the Host
//!   syntax checked once per connection as the server does) and keep-alive or close as they
//!   decide; a Content-Length body over the server's 2 MiB limit is refused with 413, one
//!   over its 64 KiB drain limit answered with `Connection: close`, others (chunked through
//!   `http1::chunked::ChunkedDecoder`) read and dropped;
//! - on an invalid head the server's error response (status, reason as body) and a close;
//! - the bytes `examples/plaintext.rs` sends (200 `Hello, World!` on `/plaintext`, 404 else,
//!   the same header lines), the common one from a prepared response head whose Date is
//!   patched at most once a second (one clock read per event, like the server's once per
//!   batch).
//!
//! It allocates nothing per request: one shared read buffer and one shared write buffer, and per
//! connection only the unparsed tail of a split head and the output a short write left.
//! What it leaves out: timers (header and keep-alive timeouts), HTTP/2 (h2c upgrade and prior
//! knowledge), metrics and access logs, and lingering close.
//!
//! ```text
//! cargo run --release -p peregrine --example floor_strict -- --addr 127.0.0.1:8080
//! ```
//! (`--workers 1` is accepted, for `bench/callgrind.sh`; it is always one thread.)

#![deny(unsafe_code)]

use std::io::{self, Read, Write};
use std::mem::MaybeUninit;
use std::net::{Shutdown, SocketAddr};
use std::time::{SystemTime, UNIX_EPOCH};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Registry, Token};
use peregrine::Method;
use peregrine::date::format_imf_fixdate;
use peregrine::http1::chunked::ChunkedDecoder;
use peregrine::http1::encode::reason_phrase;
use peregrine::http1::framing::{BodyLength, HostMemo, request_framing_remembering};
use peregrine::http1::{
    EMPTY_HEADER, HeadScanner, Limits, ParseError, RequestHead, Status, TargetForm, Version,
};

/// Headers on the stack for the first parse, as the server (`server/h1`).
const STACK_HEADERS: usize = 32;
/// The shared read buffer: floor_epoll.c's size. A kept tail is under `max_head_bytes`
/// (32 KiB), so a read always has at least half of it.
const READ_BUF: usize = 64 * 1024;
/// The server's defaults (`server::Config`): a declared body over `MAX_BODY` is refused, an
/// unread one over `MAX_DRAIN` ends the connection after the response.
const MAX_BODY: u64 = 2 * 1024 * 1024;
const MAX_DRAIN: u64 = 64 * 1024;
const MAX_CONNECTIONS: usize = 16 * 1024;
const LISTENER: Token = Token(usize::MAX);

/// What `examples/plaintext.rs` answers, before and after the Date value.
const OK_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nserver: peregrine\r\ndate: ";
const NOT_FOUND_HEAD: &[u8] = b"HTTP/1.1 404 Not Found\r\nserver: peregrine\r\ndate: ";
const OK_BODY: &[u8] = b"Hello, World!";

/// What the rest of the read buffer holds after a head: the body being skipped.
enum Body {
    None,
    /// Content-Length bytes still to drop.
    Skip(u64),
    /// A chunked body being dropped, and the bytes dropped so far.
    Chunked(ChunkedDecoder, u64),
}

struct Conn {
    stream: TcpStream,
    scanner: HeadScanner,
    /// The last Host found valid on this connection, as the server keeps it.
    host: HostMemo,
    /// Received bytes not consumed yet: a head split across reads (or a chunk-size line).
    tail: Vec<u8>,
    body: Body,
    /// Responses a short write left.
    pending: Vec<u8>,
    /// Close once `pending` is written.
    closing: bool,
    /// Writable events were asked for (after a short write).
    writable: bool,
}

/// The Date, read once per event and formatted at most once a second, and the prepared
/// response that carries it.
struct Clock {
    secs: u64,
    date: [u8; 29],
    /// The common response: 200 with its body, keep-alive, HTTP/1.1.
    ok: Vec<u8>,
}

impl Clock {
    fn new() -> Clock {
        let mut ok = Vec::new();
        ok.extend_from_slice(OK_HEAD);
        ok.extend_from_slice(&[b' '; 29]);
        ok.extend_from_slice(b"\r\ncontent-length: 13\r\n\r\n");
        ok.extend_from_slice(OK_BODY);
        let mut clock = Clock { secs: u64::MAX, date: [b' '; 29], ok };
        clock.tick();
        clock
    }

    /// Reads the clock; patches the Date when the second changed.
    fn tick(&mut self) {
        let now = SystemTime::now();
        let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if secs != self.secs {
            self.secs = secs;
            self.date = *format_imf_fixdate(now).as_bytes();
            self.ok[OK_HEAD.len()..OK_HEAD.len() + 29].copy_from_slice(&self.date);
        }
    }
}

/// What one parse attempt decided, with nothing borrowed from the buffer.
enum Next {
    Request {
        len: usize,
        found: bool,
        is_head: bool,
        http10: bool,
        keep_alive: bool,
        body: BodyLength,
    },
    Partial,
    Error(ParseError),
}

/// The server's `next_of`: the framing rules applied to a parsed head.
fn next_of(parsed: Result<Status<RequestHead<'_, '_>>, ParseError>, host: &mut HostMemo) -> Next {
    match parsed {
        Ok(Status::Complete(head)) => match request_framing_remembering(&head, host) {
            Ok(framing) => Next::Request {
                len: head.len,
                found: path(head.target, head.form) == "/plaintext",
                is_head: head.method == Method::Head,
                http10: head.version == Version::Http10,
                keep_alive: framing.keep_alive,
                body: framing.body,
            },
            Err(e) => Next::Error(e),
        },
        Ok(Status::Partial) => Next::Partial,
        Err(e) => Next::Error(e),
    }
}

/// The path of a request-target, as `Request::path` gives it.
fn path(target: &str, form: TargetForm) -> &str {
    let path_and_query = match form {
        TargetForm::Origin | TargetForm::Asterisk => target,
        TargetForm::Authority => return "",
        TargetForm::Absolute => {
            let after = target.find("://").map_or(target, |i| &target[i + 3..]);
            match after.find(['/', '?']) {
                Some(i) => &after[i..],
                None => return "/",
            }
        }
    };
    // A byte loop (targets are short: memchr's setup costs more; for `/plaintext` it costs
    // about what the server's word-at-a-time search does).
    let end = path_and_query.bytes().position(|b| b == b'?').unwrap_or(path_and_query.len());
    let path = &path_and_query[..end];
    if path.is_empty() && form == TargetForm::Absolute { "/" } else { path }
}

/// Parses the next head at the start of `buf`, as the server's `parse_next`.
fn parse_next(scanner: &mut HeadScanner, host: &mut HostMemo, buf: &[u8], limits: &Limits) -> Next {
    let mut storage = [const { MaybeUninit::uninit() }; STACK_HEADERS];
    let n = limits.max_headers.min(STACK_HEADERS);
    match scanner.parse_uninit(buf, &mut storage[..n], limits) {
        // A head with more fields than the stack holds: parsed again into a heap array (rare).
        Err(ParseError::TooManyHeaders) if limits.max_headers > STACK_HEADERS => {
            let mut heap = vec![EMPTY_HEADER; limits.max_headers];
            next_of(scanner.parse(buf, &mut heap, limits), host)
        }
        parsed => next_of(parsed, host),
    }
}

/// Appends a response other than the prepared one.
fn respond(out: &mut Vec<u8>, clock: &Clock, found: bool, is_head: bool, connection: &[u8]) {
    let (head, length) = match found {
        true => (OK_HEAD, &b"13"[..]),
        false => (NOT_FOUND_HEAD, &b"0"[..]),
    };
    out.extend_from_slice(head);
    out.extend_from_slice(&clock.date);
    out.extend_from_slice(b"\r\ncontent-length: ");
    out.extend_from_slice(length);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(connection);
    out.extend_from_slice(b"\r\n");
    if found && !is_head {
        out.extend_from_slice(OK_BODY);
    }
}

/// Appends the server's refusal: status, reason as the body, `connection: close`.
fn refuse(out: &mut Vec<u8>, clock: &Clock, status: u16, reason: &str, is_head: bool) {
    // Writing into a Vec cannot fail.
    let _ = write!(out, "HTTP/1.1 {status} {}\r\ndate: ", reason_phrase(status));
    out.extend_from_slice(&clock.date);
    let _ = write!(out, "\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", reason.len());
    if !is_head {
        out.extend_from_slice(reason.as_bytes());
    }
}

/// Answers the requests in `data` into `out`: returns the bytes consumed and whether the
/// connection ends after these responses.
fn answer(conn: &mut Conn, data: &[u8], out: &mut Vec<u8>, clock: &Clock) -> (usize, bool) {
    let limits = Limits::default();
    let mut pos = 0;
    while pos < data.len() {
        match &mut conn.body {
            Body::None => {}
            Body::Skip(n) => {
                let take = (*n).min((data.len() - pos) as u64);
                pos += take as usize; // <= data.len() - pos
                *n -= take;
                if *n == 0 {
                    conn.body = Body::None;
                }
                continue;
            }
            Body::Chunked(decoder, dropped) => match decoder.decode(&data[pos..]) {
                Ok(d) => {
                    pos += d.consumed;
                    *dropped += d.data.len() as u64;
                    if *dropped > MAX_DRAIN {
                        return (pos, true);
                    }
                    if d.done {
                        conn.body = Body::None;
                    } else if d.consumed == 0 {
                        break;
                    }
                    continue;
                }
                Err(_) => return (pos, true),
            },
        }
        match parse_next(&mut conn.scanner, &mut conn.host, &data[pos..], &limits) {
            Next::Request { len, found, is_head, http10, keep_alive, body } => {
                pos += len;
                let mut keep_alive = keep_alive;
                match body {
                    // RFC 9110 §15.5.14: a declared length over the limit is refused unread.
                    BodyLength::Length(n) if n > MAX_BODY => {
                        refuse(out, clock, 413, "body too large", is_head);
                        return (pos, true);
                    }
                    // The handler reads no body: the server drops what it may, or closes.
                    BodyLength::Length(n) if n > MAX_DRAIN => keep_alive = false,
                    BodyLength::Length(0) => {}
                    BodyLength::Length(n) => conn.body = Body::Skip(n),
                    BodyLength::Chunked => conn.body = Body::Chunked(ChunkedDecoder::new(), 0),
                    // `request_framing` never says so for a request.
                    BodyLength::CloseDelimited => {
                        refuse(out, clock, 400, "invalid framing", is_head);
                        return (pos, true);
                    }
                }
                match (keep_alive, http10) {
                    (true, false) if found && !is_head => out.extend_from_slice(&clock.ok),
                    (true, false) => respond(out, clock, found, is_head, b""),
                    // RFC 9112 §9.3: an HTTP/1.0 client needs to be told it may keep it.
                    (true, true) => {
                        respond(out, clock, found, is_head, b"connection: keep-alive\r\n")
                    }
                    (false, _) => {
                        respond(out, clock, found, is_head, b"connection: close\r\n");
                        return (pos, true);
                    }
                }
            }
            Next::Partial => break,
            Next::Error(e) => {
                refuse(out, clock, e.status(), e.reason(), false);
                return (pos, true);
            }
        }
    }
    (pos, false)
}

/// Writes `buf`; returns the bytes written (short on `WouldBlock`).
fn write_some(stream: &mut TcpStream, buf: &[u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match stream.write(&buf[done..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Serves one readiness event; false when the connection is to be closed.
fn serve(
    conn: &mut Conn,
    (registry, token): (&Registry, Token),
    rbuf: &mut [u8],
    out: &mut Vec<u8>,
    clock: &Clock,
) -> bool {
    if !conn.pending.is_empty() {
        match write_some(&mut conn.stream, &conn.pending) {
            Ok(n) if n == conn.pending.len() => conn.pending.clear(),
            Ok(n) => {
                conn.pending.drain(..n);
                return true;
            }
            Err(_) => return false,
        }
    }
    if conn.closing {
        let _ = conn.stream.shutdown(Shutdown::Write);
        return false;
    }
    loop {
        let kept = conn.tail.len();
        rbuf[..kept].copy_from_slice(&conn.tail);
        let n = match conn.stream.read(&mut rbuf[kept..]) {
            Ok(0) => return false,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        };
        let data = &rbuf[..kept + n];
        out.clear();
        let (used, close) = answer(conn, data, out, clock);
        conn.tail.clear();
        if !close {
            conn.tail.extend_from_slice(&data[used..]);
        }
        let written = match write_some(&mut conn.stream, out) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if written < out.len() {
            // Wait for the socket to drain before reading more: its writable event, asked for
            // only now (floor_epoll.c asks for none), and kept from then on.
            if !conn.writable {
                let interest = Interest::READABLE | Interest::WRITABLE;
                if registry.reregister(&mut conn.stream, token, interest).is_err() {
                    return false;
                }
                conn.writable = true;
            }
            conn.pending.extend_from_slice(&out[written..]);
            conn.closing = close;
            return true;
        }
        if close {
            let _ = conn.stream.shutdown(Shutdown::Write);
            return false;
        }
        // Like floor_epoll.c, nginx and the server: a short read drained the socket.
        if n < rbuf.len() - kept {
            return true;
        }
    }
}

fn main() -> io::Result<()> {
    let mut addr = String::from("127.0.0.1:8080");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(a)) => addr = a,
            ("--workers", Some(n)) if n == "1" => {}
            _ => {
                eprintln!("usage: floor_strict [--addr HOST:PORT] [--workers 1]");
                std::process::exit(2);
            }
        }
    }
    let addr: SocketAddr = addr.parse().map_err(io::Error::other)?;
    let mut listener = TcpListener::bind(addr)?;
    let mut poll = Poll::new()?;
    poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut events = Events::with_capacity(512);
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut live = 0;
    let mut rbuf = vec![0u8; READ_BUF];
    let mut out = Vec::with_capacity(READ_BUF);
    let mut clock = Clock::new();
    eprintln!("floor_strict: listening on {addr}");
    loop {
        if let Err(e) = poll.poll(&mut events, None) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        // One clock read per batch of events.
        clock.tick();
        for event in events.iter() {
            if event.token() == LISTENER {
                loop {
                    let mut stream = match listener.accept() {
                        Ok((stream, _)) => stream,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(_) => break,
                    };
                    if live >= MAX_CONNECTIONS {
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let i = free.pop().unwrap_or_else(|| {
                        conns.push(None);
                        conns.len() - 1
                    });
                    if poll.registry().register(&mut stream, Token(i), Interest::READABLE).is_err()
                    {
                        free.push(i);
                        continue;
                    }
                    conns[i] = Some(Conn {
                        stream,
                        scanner: HeadScanner::new(),
                        host: HostMemo::default(),
                        tail: Vec::new(),
                        body: Body::None,
                        pending: Vec::new(),
                        closing: false,
                        writable: false,
                    });
                    live += 1;
                }
                continue;
            }
            let i = event.token().0;
            let Some(conn) = conns.get_mut(i).and_then(Option::as_mut) else { continue };
            if !serve(conn, (poll.registry(), Token(i)), &mut rbuf, &mut out, &clock) {
                // Closing the socket takes it out of the epoll set (floor_epoll.c: close()).
                conns[i] = None;
                free.push(i);
                live -= 1;
            }
        }
    }
}
