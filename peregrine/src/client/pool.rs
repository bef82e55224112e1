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

    /// An HTTP/3 connection to the alternative service with room (closed ones dropped).
    #[cfg(feature = "http3")]
    fn alt_with_room(&mut self) -> Option<Arc<Shared>> {
        self.alt.retain(|s| !s.is_done());
        self.alt.iter().find(|s| s.has_room()).cloned()
    }

    /// Who is opening a connection in `lane`, if anyone.
    fn connecting(&mut self, lane: Lane) -> &mut Option<Arc<Notify>> {
        match lane {
            Lane::Origin => &mut self.connecting,
            Lane::Alt => &mut self.alt_connecting,
        }
    }
}

/// The connections of an origin that requests wait on one another to open: to the origin
/// itself (HTTP/2), or to its alternative service (HTTP/3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lane {
    Origin,
    #[cfg_attr(not(feature = "http3"), allow(dead_code))]
    Alt,
}

/// `origin`'s entry, added if it has none (`matches` finds it).
fn entry_for(
    entries: &mut Vec<Entry>,
    matches: impl Fn(&Origin) -> bool,
    origin: impl FnOnce() -> Origin,
) -> &mut Entry {
    let i = match entries.iter().position(|e| matches(&e.origin)) {
        Some(i) => i,
        None => {
            entries.push(Entry::new(origin()));
            entries.len() - 1
        }
    };
    &mut entries[i]
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

/// Held by the request opening an origin's HTTP/2 connection (or the connection to its
/// alternative service: see [`Lane`]); dropping it wakes the waiters.
pub(crate) struct ConnectGuard {
    pool: Arc<Pool>,
    origin: Origin,
    lane: Lane,
}

impl Drop for ConnectGuard {
    fn drop(&mut self) {
        let mut entries = self.pool.lock();
        if let Some(e) = entries.iter_mut().find(|e| e.origin == self.origin)
            && let Some(n) = e.connecting(self.lane).take()
        {
            n.notify_waiters();
        }
    }
}

/// A request's turn in a [`Lane`]: something ready to use, or the guard of the one request
/// opening a connection there (the others wait until it is dropped).
pub(crate) enum Turn<T> {
    Ready(T),
    Connect(ConnectGuard),
}

/// What a request routed to an origin's alternative service does after asking the pool: use
/// this HTTP/3 connection, or open one.
#[cfg(feature = "http3")]
pub(crate) type AltCheckout = Turn<Arc<Shared>>;

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
        let look = |pool: &Pool, entry: &mut Entry| {
            if let Some(p) = pool.checkout_locked(entry) {
                return Some(Checkout::Ready(p));
            }
            let expect_h2 = match share {
                Share::Always => true,
                Share::UnlessHttp1 => !entry.h1_seen,
                Share::Never => false,
            };
            (!(expect_h2 || entry.h2_seen)).then_some(Checkout::Connect(None))
        };
        match self.turn(parts, Lane::Origin, look).await {
            Turn::Ready(checkout) => checkout,
            Turn::Connect(guard) => Checkout::Connect(Some(guard)),
        }
    }

    /// `look` at `parts`'s entry until it finds something, or the turn to open a connection in
    /// `lane`: only one request opens one at a time, the others wait for it and look again.
    async fn turn<T>(
        self: &Arc<Pool>,
        parts: &UrlParts<'_>,
        lane: Lane,
        mut look: impl FnMut(&Pool, &mut Entry) -> Option<T>,
    ) -> Turn<T> {
        loop {
            let notify;
            {
                let mut entries = self.lock();
                let entry = entry_for(
                    &mut entries,
                    |o| o.matches(parts),
                    || Origin::new(parts.scheme, parts.host, parts.port),
                );
                if let Some(found) = look(self, entry) {
                    return Turn::Ready(found);
                }
                if let Some(n) = entry.connecting(lane) {
                    notify = n.clone();
                } else {
                    *entry.connecting(lane) = Some(Arc::new(Notify::new()));
                    let origin = entry.origin.clone();
                    return Turn::Connect(ConnectGuard { pool: self.clone(), origin, lane });
                }
            }
            let notified = notify.notified();
            tokio::pin!(notified);
            // Registered before looking again, so a wake-up in between is not missed.
            notified.as_mut().enable();
            let busy = |e: &mut Entry| e.origin.matches(parts) && e.connecting(lane).is_some();
            if !self.lock().iter_mut().any(busy) {
                continue;
            }
            notified.await;
        }
    }

    /// An HTTP/3 connection to `parts`'s alternative service with room, if there is one.
    #[cfg(feature = "http3")]
    pub(crate) fn alt(&self, parts: &UrlParts<'_>) -> Option<Arc<Shared>> {
        let mut entries = self.lock();
        entries.iter_mut().find(|e| e.origin.matches(parts))?.alt_with_room()
    }

    /// An HTTP/3 connection to `parts`'s alternative service, or the turn to open one: only
    /// one request opens a connection at a time, the others wait for it and share it.
    #[cfg(feature = "http3")]
    pub(crate) async fn get_alt(self: &Arc<Pool>, parts: &UrlParts<'_>) -> AltCheckout {
        self.turn(parts, Lane::Alt, |_, entry| entry.alt_with_room()).await
    }

    /// Adds a new HTTP/3 connection to `origin`'s alternative service.
    #[cfg(feature = "http3")]
    pub(crate) fn add_alt(&self, origin: &Origin, shared: Arc<Shared>) {
        let mut entries = self.lock();
        let e = entry_for(&mut entries, |o| o == origin, || origin.clone());
        e.alt.retain(|s| !s.is_done());
        e.alt.push(shared);
    }

    /// A connection to `entry`'s origin: an HTTP/2 one with room, else the most recently used
    /// idle HTTP/1.1 one that is still open.
    fn checkout_locked(&self, entry: &mut Entry) -> Option<Pooled> {
        let now = Instant::now();
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
        let entry = entry_for(&mut entries, |o| o == conn.origin(), || conn.origin().clone());
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
        let e = entry_for(&mut entries, |o| o == origin, || origin.clone());
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
