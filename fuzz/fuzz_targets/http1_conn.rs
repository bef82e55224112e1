#![no_main]
//! The HTTP/1.1 connection state machine, both roles, fed arbitrary bytes as the peer's: never
//! panics, the output stays bounded, and feeding the input whole or split at arbitrary points
//! (the first bytes choose them) gives the same events and the same output (body pieces
//! merged; a `100 Continue`, whose sending depends on when the body's first bytes come, left
//! out) when the input ends with a line's end: a head trickled in is judged line by line as
//! its lines end (`HeadScanner`), so a bad byte in a line cut short may be found by the whole
//! input's parse and not yet by the split one's.
//!
//! The first byte chooses the role and how the driver plays: a server that reads every body
//! or answers without reading (then only the bounds are checked: what `settle` sees of an
//! unread body depends on the split), answers `101` to upgrade requests or not, and whether
//! the peer closes its side after the input; a client that sent a few requests.
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use peregrine::Method;
use peregrine::date::format_imf_fixdate;
use peregrine::http1::Header;
use peregrine::http1::conn::{Config, Conn, Event, Role};
use peregrine::http1::encode::{ResponseHeadOut, encode_head};
use peregrine::http1::framing::BodyLength;

#[derive(Clone, Copy)]
struct Plan {
    role: Role,
    read_bodies: bool,
    switch: bool,
    eof: bool,
    preface: bool,
}

struct Driver {
    conn: Conn,
    plan: Plan,
    rbuf: Vec<u8>,
    out: Vec<u8>,
    log: Vec<String>,
    reading: bool,
    stopped: bool,
    now: Instant,
}

impl Driver {
    fn new(plan: Plan) -> Driver {
        let config = Config {
            max_body_bytes: 4096,
            max_drain_bytes: 512,
            http2_preface: plan.preface,
            ..Config::default()
        };
        let now = Instant::now();
        let mut d = Driver {
            conn: Conn::new(plan.role, Arc::new(config), now),
            plan,
            rbuf: Vec::new(),
            out: Vec::new(),
            log: Vec::new(),
            reading: false,
            stopped: false,
            now,
        };
        if plan.role == Role::Client {
            for method in [Method::Get, Method::Head, Method::Get, Method::Post] {
                let _ = d.conn.send_request(method, Some(0), b"", &mut d.out, |_, out| {
                    out.extend_from_slice(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
                    Ok(())
                });
            }
        }
        d
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.rbuf.extend_from_slice(bytes);
        while !self.stopped {
            let mut storage = [const { MaybeUninit::<Header<'_>>::uninit() }; 8];
            let mut more: Vec<MaybeUninit<Header<'_>>> = Vec::new();
            let (mut used, mut step) = {
                let (used, e) = self.conn.recv(&self.rbuf, &mut storage, None);
                (used, e.map(|e| describe(&e)))
            };
            if let Some(Step::NeedSlots(n)) = step {
                assert!(n <= 100, "{n}");
                more.resize_with(n, MaybeUninit::uninit);
                let (u, e) = self.conn.recv(&self.rbuf, &mut more, None);
                (used, step) = (u, e.map(|e| describe(&e)));
            }
            assert!(used <= self.rbuf.len());
            self.rbuf.drain(..used);
            match step {
                None if used == 0 => break,
                None => {}
                Some(step) => self.act(step),
            }
        }
        self.conn.poll_transmit(&mut self.out, &format_imf_fixdate(std::time::UNIX_EPOCH));
        assert!(self.out.len() <= 1 << 20);
        // Time passes: every deadline handled keeps the connection consistent.
        let _ = self.conn.poll_timeout(self.now);
        self.now += Duration::from_millis(1);
        let _ = self.conn.handle_timeout(self.now);
    }

    fn finish(&mut self) {
        self.feed(b"");
        if self.plan.eof && !self.stopped {
            if let Some(e) = self.conn.recv_eof() {
                let step = describe(&e);
                self.act(step);
            }
            self.conn.poll_transmit(&mut self.out, &format_imf_fixdate(std::time::UNIX_EPOCH));
        }
    }

    fn act(&mut self, step: Step) {
        match step {
            Step::Head(line, has_body, upgrade) => {
                self.log.push(line);
                if self.plan.role == Role::Client {
                    return;
                }
                if has_body && self.plan.read_bodies {
                    self.reading = true;
                } else {
                    self.respond(if upgrade && self.plan.switch { 101 } else { 200 });
                }
            }
            Step::Data(data) => match self.log.last_mut() {
                Some(last) if last.starts_with("data ") => last.extend(data.escape_ascii().map(char::from)),
                _ => self.log.push(format!("data {}", data.escape_ascii())),
            },
            Step::End => {
                self.log.push("end".into());
                if std::mem::take(&mut self.reading) {
                    self.respond(200);
                }
            }
            Step::Preface => {
                self.log.push("preface".into());
                self.stopped = true;
            }
            Step::NeedSlots(n) => self.log.push(format!("slots {n}")),
            Step::Error(status) => {
                self.log.push(format!("error {status}"));
                if std::mem::take(&mut self.reading) {
                    self.respond(status);
                }
            }
        }
    }

    fn respond(&mut self, status: u16) {
        let mut status = status;
        if self.conn.is_receiving_body() {
            let (used, settled) = self.conn.settle(&self.rbuf);
            self.rbuf.drain(..used);
            if let Err(e) = settled {
                status = e.status();
            }
        }
        let date = format_imf_fixdate(std::time::UNIX_EPOCH);
        let r = self.conn.send_response(status, Some(3), false, &mut self.out, |plan, out| {
            let head = ResponseHeadOut {
                close: plan.close,
                request_version: plan.version,
                date: Some(&date),
                ..ResponseHeadOut::new(plan.status, &[])
            };
            encode_head(&head, plan.length, out)?;
            if plan.send_body && plan.length == BodyLength::Length(3) {
                out.extend_from_slice(b"abc");
                return Ok(3);
            }
            Ok(0)
        });
        match r {
            Ok(plan) => {
                self.log.push(format!("< {status} {}", plan.close));
                if plan.send_body && plan.length != BodyLength::Length(3) {
                    let _ = self.conn.send_data(b"abc", &mut self.out);
                    let _ = self.conn.finish(&[], &mut self.out);
                }
            }
            Err(e) => self.log.push(format!("send {e}")),
        }
    }
}

enum Step {
    Head(String, bool, bool),
    Data(Vec<u8>),
    End,
    Preface,
    NeedSlots(usize),
    Error(u16),
}

fn describe(e: &Event<'_, '_>) -> Step {
    match e {
        Event::Request { head, framing, .. } => Step::Head(
            format!("{} {} {:?}", head.method_token, head.target, framing),
            framing.body != BodyLength::Length(0),
            framing.upgrade,
        ),
        Event::Response { head, framing, .. } => {
            Step::Head(format!("{} {:?}", head.status, framing), false, false)
        }
        Event::Data { data, .. } => Step::Data(data.to_vec()),
        Event::End { .. } => Step::End,
        Event::Http2Preface => Step::Preface,
        Event::NeedSlots(n) => Step::NeedSlots(*n),
        Event::Error(e) => Step::Error(e.status()),
        _ => Step::Error(0),
    }
}

fn run(plan: Plan, pieces: &[&[u8]]) -> (Vec<String>, Vec<u8>, bool) {
    let mut d = Driver::new(plan);
    for piece in pieces {
        d.feed(piece);
    }
    d.finish();
    let out = String::from_utf8_lossy(&d.out).replace("HTTP/1.1 100 Continue\r\n\r\n", "");
    (d.log, out.into_bytes(), d.conn.is_closed())
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let Some((&cut, input)) = rest.split_first() else { return };
    let plan = Plan {
        role: if mode & 1 == 0 { Role::Server } else { Role::Client },
        read_bodies: mode & 2 == 0,
        switch: mode & 4 != 0,
        eof: mode & 8 != 0,
        preface: mode & 16 != 0,
    };
    let whole = run(plan, &[input]);
    // Split points: every `cut`-th byte, at least one.
    let step = usize::from(cut % 17) + 1;
    let pieces: Vec<&[u8]> = input.chunks(step).collect();
    let split = run(plan, &pieces);
    let lines_end = input.last().is_none_or(|&b| b == b'\n');
    if (plan.role == Role::Client || plan.read_bodies) && lines_end {
        assert_eq!(whole, split, "whole and split differ ({step}-byte pieces)");
    }
});
