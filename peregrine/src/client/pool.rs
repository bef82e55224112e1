//! The [`Client`](super::Client)'s connections, per origin (scheme, host, port): idle
//! HTTP/1.1 connections (most recently used first, at most `max_idle` per origin, closed after
//! `idle_timeout`), and shared HTTP/2 connections (one carries concurrent requests up to the
//! server's limit; another opens when all are full). A connection the server closed (end of
//! input, unexpected bytes, GOAWAY) is never handed out: each idle HTTP/1.1 connection is
//! checked without waiting when it is taken.
//!
//! Beside them, per origin, the HTTP/3 connections to its alternative service (RFC 7838,
//! learned from `Alt-Svc`): shared as HTTP/2 ones are, and opened one at a time the same way,
//! but asked for only when the client routes a request there.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::conn::Connection;
use super::h2::Shared;
use super::origin::{Origin, UrlParts};
use tokio::sync::Notify;

/// A pooled connection for one request (moved once per request: not worth a box).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Pooled {
    /// An idle HTTP/1.1 connection, now the request's alone.
    H1(Connection),
    /// A shared HTTP/2 connection with room for one more stream.
    H2(Arc<Shared>),
}

struct Entry {
    origin: Origin,
    idle: Vec<(Connection, Instant)>,
    h2: Vec<Arc<Shared>>,
    /// The origin spoke HTTP/2 before: concurrent requests wait for one new connection
    /// instead of each opening its own.
    h2_seen: bool,
    /// ALPN chose HTTP/1.1 here before: no waiting for a shared connection.
    h1_seen: bool,
    /// A request is opening an HTTP/2 connection; the others wait for it.
    connecting: Option<Arc<Notify>>,
    /// HTTP/3 connections to the origin's alternative service.
    alt: Vec<Arc<Shared>>,
    /// A request is opening a connection to the alternative; the others wait for it.
    alt_connecting: Option<Arc<Notify>>,
}

impl Entry {
    fn new(origin: Origin) -> Entry {
        Entry {
            origin,
            idle: Vec::new(),
            h2: Vec::new(),
            h2_seen: false,
            h1_seen: false,
            connecting: None,
            alt: Vec::new(),
            alt_connecting: None,
        }
    }
}

/// Whether requests to an origin wait for one new connection to share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Share {
    /// HTTP/2 by prior knowledge: always.
    Always,
    /// `https` with ALPN: until a connection turned out HTTP/1.1.
    UnlessHttp1,
    /// HTTP/1.1 only: never (unless the origin spoke HTTP/2 before).
    Never,
}

/// What a request does after asking the pool.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Checkout {
    /// Use this connection.
    Ready(Pooled),
    /// Open a connection; with a guard when it is expected to be HTTP/2 (the other requests
    /// for the origin wait until the guard is dropped).
    Connect(Option<ConnectGuard>),
}

/// Held by the request opening an origin's HTTP/2 connection (or, with `alt`, the connection
/// to its alternative service); dropping it wakes the waiters.
pub(crate) struct ConnectGuard {
    pool: Arc<Pool>,
    origin: Origin,
    alt: bool,
}

impl Drop for ConnectGuard {
    fn drop(&mut self) {
        let mut entries = self.pool.lock();
        if let Some(e) = entries.iter_mut().find(|e| e.origin == self.origin) {
            let connecting = if self.alt { &mut e.alt_connecting } else { &mut e.connecting };
            if let Some(n) = connecting.take() {
                n.notify_waiters();
            }
        }
    }
}

/// What a request routed to an origin's alternative service does after asking the pool.
#[cfg(feature = "http3")]
pub(crate) enum AltCheckout {
    /// Use this HTTP/3 connection.
    Ready(Arc<Shared>),
    /// Open one (the other requests for the alternative wait until the guard is dropped).
    Connect(ConnectGuard),
}

/// The pool; see the [module docs](self).
pub(crate) struct Pool {
    entries: Mutex<Vec<Entry>>,
    max_idle: usize,
    idle_timeout: Duration,
}

impl Pool {
    pub(crate) fn new(max_idle: usize, idle_timeout: Duration) -> Pool {
        Pool { entries: Mutex::new(Vec::new()), max_idle, idle_timeout }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How long an idle connection is kept.
    pub(crate) fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// A connection to `parts`'s origin, or the turn to open one. For an origin that speaks
    /// HTTP/2 (or may: see [`Share`]) only one request opens a connection at a time:
    /// the others wait for it and share it.
    pub(crate) async fn get(self: &Arc<Pool>, parts: &UrlParts<'_>, share: Share) -> Checkout {
        loop {
            let notify;
            {
                let mut entries = self.lock();
                if let Some(p) = self.checkout_locked(&mut entries, parts) {
                    return Checkout::Ready(p);
                }
                let i = match entries.iter().position(|e| e.origin.matches(parts)) {
                    Some(i) => i,
                    None => {
                        let origin = Origin::new(parts.scheme, parts.host, parts.port);
                        entries.push(Entry::new(origin));
                        entries.len() - 1
                    }
                };
                let entry = &mut entries[i];
                let expect_h2 = match share {
                    Share::Always => true,
                    Share::UnlessHttp1 => !entry.h1_seen,
                    Share::Never => false,
                };
                if !(expect_h2 || entry.h2_seen) {
                    return Checkout::Connect(None);
                }
                match &entry.connecting {
                    None => {
                        entry.connecting = Some(Arc::new(Notify::new()));
                        let origin = entry.origin.clone();
                        return Checkout::Connect(Some(ConnectGuard {
                            pool: self.clone(),
                            origin,
                            alt: false,
                        }));
                    }
                    Some(n) => notify = n.clone(),
                }
            }
            let notified = notify.notified();
            tokio::pin!(notified);
            // Registered before looking again, so a wake-up in between is not missed.
            notified.as_mut().enable();
            if !self.lock().iter().any(|e| e.origin.matches(parts) && e.connecting.is_some()) {
                continue;
            }
            notified.await;
        }
    }

    /// An HTTP/3 connection to `parts`'s alternative service with room, if there is one.
    #[cfg(feature = "http3")]
    pub(crate) fn alt(&self, parts: &UrlParts<'_>) -> Option<Arc<Shared>> {
        let mut entries = self.lock();
        let entry = entries.iter_mut().find(|e| e.origin.matches(parts))?;
        entry.alt.retain(|s| !s.is_done());
        entry.alt.iter().find(|s| s.has_room()).cloned()
    }

    /// An HTTP/3 connection to `parts`'s alternative service, or the turn to open one: only
    /// one request opens a connection at a time, the others wait for it and share it.
    #[cfg(feature = "http3")]
    pub(crate) async fn get_alt(self: &Arc<Pool>, parts: &UrlParts<'_>) -> AltCheckout {
        loop {
            let notify;
            {
                let mut entries = self.lock();
                let i = match entries.iter().position(|e| e.origin.matches(parts)) {
                    Some(i) => i,
                    None => {
                        let origin = Origin::new(parts.scheme, parts.host, parts.port);
                        entries.push(Entry::new(origin));
                        entries.len() - 1
                    }
                };
                let entry = &mut entries[i];
                entry.alt.retain(|s| !s.is_done());
                if let Some(s) = entry.alt.iter().find(|s| s.has_room()) {
                    return AltCheckout::Ready(s.clone());
                }
                match &entry.alt_connecting {
                    None => {
                        entry.alt_connecting = Some(Arc::new(Notify::new()));
                        let origin = entry.origin.clone();
                        return AltCheckout::Connect(ConnectGuard {
                            pool: self.clone(),
                            origin,
                            alt: true,
                        });
                    }
                    Some(n) => notify = n.clone(),
                }
            }
            let notified = notify.notified();
            tokio::pin!(notified);
            // Registered before looking again, so a wake-up in between is not missed.
            notified.as_mut().enable();
            if !self.lock().iter().any(|e| e.origin.matches(parts) && e.alt_connecting.is_some()) {
                continue;
            }
            notified.await;
        }
    }

    /// Adds a new HTTP/3 connection to `origin`'s alternative service.
    #[cfg(feature = "http3")]
    pub(crate) fn add_alt(&self, origin: &Origin, shared: Arc<Shared>) {
        let mut entries = self.lock();
        let i = match entries.iter().position(|e| e.origin == *origin) {
            Some(i) => i,
            None => {
                entries.push(Entry::new(origin.clone()));
                entries.len() - 1
            }
        };
        let e = &mut entries[i];
        e.alt.retain(|s| !s.is_done());
        e.alt.push(shared);
    }

    /// A connection to `parts`'s origin: an HTTP/2 one with room, else the most recently used
    /// idle HTTP/1.1 one that is still open.
    fn checkout_locked(&self, entries: &mut [Entry], parts: &UrlParts<'_>) -> Option<Pooled> {
        let now = Instant::now();
        let entry = entries.iter_mut().find(|e| e.origin.matches(parts))?;
        entry.h2.retain(|s| !s.is_done());
        if let Some(s) = entry.h2.iter().find(|s| s.has_room()) {
            return Some(Pooled::H2(s.clone()));
        }
        while let Some((mut conn, since)) = entry.idle.pop() {
            if now.duration_since(since) <= self.idle_timeout && conn.check_idle() {
                return Some(Pooled::H1(conn));
            }
        }
        None
    }

    /// Gives back an HTTP/1.1 connection whose response ended; kept if it can carry another
    /// request and the origin has room.
    pub(crate) fn checkin(&self, conn: Connection) {
        if !conn.is_reusable() || conn.in_flight() > 0 || self.max_idle == 0 {
            return;
        }
        let now = Instant::now();
        let timeout = self.idle_timeout;
        let mut entries = self.lock();
        // Close what has been idle too long, everywhere (the pool has no timer of its own).
        for e in entries.iter_mut() {
            e.idle.retain(|(_, since)| now.duration_since(*since) <= timeout);
        }
        entries.retain(|e| {
            !e.idle.is_empty()
                || !e.h2.is_empty()
                || e.h2_seen
                || e.connecting.is_some()
                || !e.alt.is_empty()
                || e.alt_connecting.is_some()
                || e.origin == *conn.origin()
        });
        let entry = match entries.iter().position(|e| e.origin == *conn.origin()) {
            Some(i) => &mut entries[i],
            None => {
                entries.push(Entry::new(conn.origin().clone()));
                entries.last_mut().expect("just pushed")
            }
        };
        if entry.idle.len() < self.max_idle {
            entry.idle.push((conn, now));
        }
    }

    /// Records that ALPN chose HTTP/1.1 for `origin`: its requests stop waiting for a shared
    /// connection.
    pub(crate) fn note_http1(&self, origin: &Origin) {
        if let Some(e) = self.lock().iter_mut().find(|e| e.origin == *origin) {
            e.h1_seen = true;
        }
    }

    /// Adds a new shared HTTP/2 connection.
    pub(crate) fn add_h2(&self, origin: &Origin, shared: Arc<Shared>) {
        let mut entries = self.lock();
        let i = match entries.iter().position(|e| e.origin == *origin) {
            Some(i) => i,
            None => {
                entries.push(Entry::new(origin.clone()));
                entries.len() - 1
            }
        };
        let e = &mut entries[i];
        e.h2.retain(|s| !s.is_done());
        e.h2.push(shared);
        e.h2_seen = true;
    }

    /// Idle HTTP/1.1 and open shared (HTTP/2 and HTTP/3) connections held (tests and stats).
    pub(crate) fn counts(&self) -> (usize, usize) {
        let entries = self.lock();
        let idle = entries.iter().map(|e| e.idle.len()).sum();
        let open = |v: &[Arc<Shared>]| v.iter().filter(|s| !s.is_done()).count();
        let shared = entries.iter().map(|e| open(&e.h2) + open(&e.alt)).sum();
        (idle, shared)
    }
}
