//! A minimal driver for each role, recording what the connection reports and writes, and the
//! splits every row is fed in.

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::Instant;

use crate::date::ImfFixdate;
use crate::http1::Header;
use crate::http1::conn::{Config, Conn, Event, Role};
use crate::http1::encode::{ResponseHeadOut, encode_head};

/// The Date every response of these tests carries.
pub(super) fn date() -> ImfFixdate {
    crate::date::at_secs(0)
}

/// A 200 with the body `ok`, as the test server writes it.
pub(super) fn ok(close: bool) -> String {
    response(200, "ok", close)
}

/// A response as the test server writes it (its head from the plan, `body` after it).
pub(super) fn response(status: u16, body: &str, close: bool) -> String {
    let reason = crate::http1::encode::reason_phrase(status);
    let close = if close { "connection: close\r\n" } else { "" };
    format!(
        "HTTP/1.1 {status} {reason}\r\ndate: {}\r\ncontent-length: {}\r\n{close}\r\n{body}",
        date(),
        body.len()
    )
}

/// The refusal the connection writes for a bad head.
pub(super) fn refusal(status: u16, reason: &str) -> String {
    response(status, reason, true)
}

/// How the test server answers a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answer {
    /// Reads the body to its end, then answers `200 ok`.
    Read,
    /// Answers `200 ok` at once, the body unread (settled first).
    Ignore,
    /// Answers `101 Switching Protocols`.
    Switch,
}

/// What a run shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Transcript {
    /// Events and answers, in order (consecutive data merged).
    pub log: Vec<String>,
    /// Everything the connection wrote.
    pub out: String,
    pub closed: bool,
    pub upgraded: bool,
    /// Input left unread at the end.
    pub rest: Vec<u8>,
}

/// The test server: one connection, a read buffer, an output buffer.
pub(super) struct Server {
    pub conn: Conn,
    rbuf: Vec<u8>,
    out: Vec<u8>,
    log: Vec<String>,
    answer: Answer,
    /// The request's body is being read before its answer.
    reading: bool,
    /// The driver stops reading (an HTTP/2 preface was found).
    stopped: bool,
}

impl Server {
    pub(super) fn new(config: Config, answer: Answer, now: Instant) -> Server {
        Server {
            conn: Conn::new(Role::Server, Arc::new(config), now),
            rbuf: Vec::new(),
            out: Vec::new(),
            log: Vec::new(),
            answer,
            reading: false,
            stopped: false,
        }
    }

    pub(super) fn feed(&mut self, bytes: &[u8]) {
        self.rbuf.extend_from_slice(bytes);
        self.pump();
    }

    pub(super) fn eof(&mut self) {
        self.pump();
        if self.stopped {
            return;
        }
        let event = self.conn.recv_eof().map(|e| describe(&e));
        if let Some(step) = event {
            self.act(step);
        }
        self.transmit();
    }

    fn transmit(&mut self) {
        self.conn.poll_transmit(&mut self.out, &date());
    }

    pub(super) fn pump(&mut self) {
        while !self.stopped {
            let mut storage = [const { MaybeUninit::<Header<'_>>::uninit() }; 8];
            let (used, step) = {
                let (used, event) = self.conn.recv(&self.rbuf, &mut storage, None);
                (used, event.map(|e| describe(&e)))
            };
            let step = match step {
                Some(Step::NeedSlots(n)) => {
                    self.log.push(format!("need {n} slots"));
                    let mut more = Vec::new();
                    more.resize_with(n, MaybeUninit::uninit);
                    let (used, event) = self.conn.recv(&self.rbuf, &mut more, None);
                    let step = event.map(|e| describe(&e));
                    self.rbuf.drain(..used);
                    step
                }
                other => {
                    self.rbuf.drain(..used);
                    if other.is_none() && used == 0 {
                        break;
                    }
                    other
                }
            };
            if let Some(step) = step {
                self.act(step);
            }
        }
        self.transmit();
    }

    fn act(&mut self, step: Step) {
        match step {
            Step::Request { line, has_body } => {
                self.log.push(line);
                if has_body && self.answer == Answer::Read {
                    self.reading = true;
                } else {
                    self.respond(if self.answer == Answer::Switch { 101 } else { 200 });
                }
            }
            Step::Data(data) => match self.log.last_mut() {
                Some(last) if last.starts_with("data ") => last.push_str(&data),
                _ => self.log.push(format!("data {data}")),
            },
            Step::End(trailers) => {
                self.log.push(format!("end{trailers}"));
                if std::mem::take(&mut self.reading) {
                    self.respond(200);
                }
            }
            Step::Preface => {
                self.log.push("h2 preface".into());
                self.stopped = true;
            }
            Step::NeedSlots(n) => self.log.push(format!("need {n} slots again")),
            Step::Error { status, answered } => {
                self.log
                    .push(format!("error {status}{}", if answered { "" } else { " unanswered" }));
                if std::mem::take(&mut self.reading) {
                    self.respond(status);
                }
            }
        }
    }

    /// Answers the request received last (settling an unread body first).
    pub(super) fn respond(&mut self, mut status: u16) {
        if self.conn.is_receiving_body() {
            let (used, settled) = self.conn.settle(&self.rbuf);
            self.rbuf.drain(..used);
            if let Err(e) = settled {
                self.log.push(format!("settle error {}", e.status()));
                status = e.status();
            }
        }
        let body: &[u8] = if status == 101 {
            b""
        } else if status == 200 {
            b"ok"
        } else {
            b"bad"
        };
        let date = date();
        let upgrade: &[(&str, &[u8])] = &[("Connection", b"Upgrade"), ("Upgrade", b"test")];
        let sent = self.conn.send_response(
            status,
            Some(body.len() as u64),
            false,
            &mut self.out,
            |plan, out| {
                let fields = if plan.status == 101 { upgrade } else { &[] };
                let head = ResponseHeadOut {
                    close: plan.close,
                    request_version: plan.version,
                    date: Some(&date),
                    ..ResponseHeadOut::new(plan.status, fields)
                };
                encode_head(&head, plan.length, out)?;
                if plan.send_body {
                    out.extend_from_slice(body);
                    return Ok(body.len() as u64);
                }
                Ok(0)
            },
        );
        match sent {
            Ok(plan) => {
                self.log.push(format!("< {status}{}", if plan.close { " close" } else { "" }))
            }
            Err(e) => self.log.push(format!("send error {e:?}")),
        }
    }

    pub(super) fn transcript(&self) -> Transcript {
        Transcript {
            log: self.log.clone(),
            out: String::from_utf8_lossy(&self.out).into_owned(),
            closed: self.conn.is_closed(),
            upgraded: self.conn.is_upgraded(),
            rest: self.rbuf.clone(),
        }
    }
}

/// An event, owned.
#[derive(Debug)]
pub(super) enum Step {
    Request { line: String, has_body: bool },
    Data(String),
    End(String),
    Preface,
    NeedSlots(usize),
    Error { status: u16, answered: bool },
}

pub(super) fn describe(event: &Event<'_, '_>) -> Step {
    match event {
        Event::Request { head, framing, .. } => Step::Request {
            line: format!("> {} {}", head.method_token, head.target),
            has_body: framing.body != crate::http1::framing::BodyLength::Length(0),
        },
        Event::Response { head, .. } => {
            Step::Request { line: format!("> {}", head.status), has_body: false }
        }
        Event::Data { data, .. } => Step::Data(String::from_utf8_lossy(data).into_owned()),
        Event::End { trailers, .. } => Step::End(
            trailers
                .iter()
                .flatten()
                .map(|(n, v)| format!(" {n}={}", v.to_str().unwrap_or("?")))
                .collect(),
        ),
        Event::Http2Preface => Step::Preface,
        Event::NeedSlots(n) => Step::NeedSlots(*n),
        Event::Error(e) => Step::Error { status: e.status(), answered: e.answered() },
    }
}

/// The ways a row's input is fed: whole, a byte at a time, and in pseudo-random pieces.
pub(super) fn splits(input: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut all = vec![vec![input], input.chunks(1).collect()];
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64 ^ input.len() as u64;
    for _ in 0..16 {
        let mut pieces = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 23) as usize + 1;
            let (piece, tail) = rest.split_at(n.min(rest.len()));
            pieces.push(piece);
            rest = tail;
        }
        all.push(pieces);
    }
    all
}

/// The test client: sends requests, reads responses.
pub(super) struct Client {
    pub conn: Conn,
    rbuf: Vec<u8>,
    pub out: Vec<u8>,
    log: Vec<String>,
    /// Reads through [`Conn::recv_response`] instead of [`Conn::recv`].
    pub response_only: bool,
}

impl Client {
    pub(super) fn new(config: Config, now: Instant) -> Client {
        Client {
            conn: Conn::new(Role::Client, Arc::new(config), now),
            rbuf: Vec::new(),
            out: Vec::new(),
            log: Vec::new(),
            response_only: false,
        }
    }

    /// Reads what `rbuf` holds with `storage`, as the client is set to.
    fn recv<'b, 'h>(
        conn: &mut Conn,
        response_only: bool,
        rbuf: &'b [u8],
        storage: &'h mut [MaybeUninit<Header<'b>>],
    ) -> (usize, Option<Event<'b, 'h>>) {
        if response_only {
            conn.recv_response(rbuf, storage)
        } else {
            conn.recv(rbuf, storage, None)
        }
    }

    /// Sends `method target` with a body of `length` (`body` first), as a minimal encoder
    /// would; logs a refusal.
    pub(super) fn send(&mut self, method: crate::Method, length: Option<u64>, body: &[u8]) {
        let token = method.as_str().unwrap_or("X");
        let sent = self.conn.send_request(method, length, body, &mut self.out, |framing, out| {
            out.extend_from_slice(format!("{token} / HTTP/1.1\r\nHost: t\r\n").as_bytes());
            match framing {
                crate::http1::framing::BodyLength::Length(0) => {}
                crate::http1::framing::BodyLength::Length(n) => {
                    out.extend_from_slice(format!("Content-Length: {n}\r\n").as_bytes());
                }
                _ => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
            }
            out.extend_from_slice(b"\r\n");
            Ok(())
        });
        if let Err(e) = sent {
            self.log.push(format!("send error {e:?}"));
        }
    }

    pub(super) fn feed(&mut self, bytes: &[u8]) {
        self.rbuf.extend_from_slice(bytes);
        loop {
            let mut storage = [const { MaybeUninit::<Header<'_>>::uninit() }; 8];
            let (used, step) = {
                let (used, event) =
                    Client::recv(&mut self.conn, self.response_only, &self.rbuf, &mut storage);
                (used, event.map(|e| describe(&e)))
            };
            let (used, step) = match step {
                Some(Step::NeedSlots(n)) => {
                    let mut more = Vec::new();
                    more.resize_with(n, MaybeUninit::uninit);
                    let (used, event) =
                        Client::recv(&mut self.conn, self.response_only, &self.rbuf, &mut more);
                    (used, event.map(|e| describe(&e)))
                }
                other => (used, other),
            };
            self.rbuf.drain(..used);
            match step {
                None if used == 0 => break,
                None => {}
                Some(step) => self.act(step),
            }
        }
    }

    pub(super) fn eof(&mut self) {
        self.feed(b"");
        if let Some(event) = self.conn.recv_eof() {
            let step = describe(&event);
            self.act(step);
        }
    }

    fn act(&mut self, step: Step) {
        match step {
            Step::Request { line, .. } => self.log.push(line),
            Step::Data(data) => match self.log.last_mut() {
                Some(last) if last.starts_with("data ") => last.push_str(&data),
                _ => self.log.push(format!("data {data}")),
            },
            Step::End(trailers) => self.log.push(format!("end{trailers}")),
            Step::Preface => self.log.push("h2 preface".into()),
            Step::NeedSlots(n) => self.log.push(format!("need {n} slots again")),
            Step::Error { status, .. } => self.log.push(format!("error {status}")),
        }
    }

    pub(super) fn log(&self) -> &[String] {
        &self.log
    }

    pub(super) fn rest(&self) -> &[u8] {
        &self.rbuf
    }
}
