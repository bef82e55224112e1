//! What one worker thread keeps for the proxy: its idle upstream connections (per pool, server
//! and Host value) and its random sequence. Each worker gets its own (the
//! [`Proxy`](super::Proxy) handler is cloned once per worker), so the lock below is never
//! contended on the server; it is there because a handler is `Send` and may be used elsewhere.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::Shared;
use super::balance::Rng;
use crate::client::conn::Connection;

/// An upstream connection and what it is for: taken for one request, given back after.
#[derive(Debug)]
pub(crate) struct Leased {
    pub(crate) pool: usize,
    pub(crate) server: usize,
    /// The Host value its requests carry (its prelude), when it is not the server's own: made
    /// once per connection, and kept with it.
    pub(crate) authority: Option<Box<[u8]>>,
    /// Boxed once when it connects: a request's future and the idle list move a pointer, not
    /// the connection's ~900 bytes (which kept the request's future out of the pooled buffer).
    pub(crate) conn: Box<Connection>,
}

/// An idle upstream connection.
#[derive(Debug)]
struct Idle {
    leased: Leased,
    /// When it may no longer be used (idle since checkin plus the pool's idle timeout): a
    /// compare per entry, where the time since checkin was a subtraction each.
    expires: Instant,
}

/// Which connections a request may use: the pool, the server, and the Host it sends.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key<'a> {
    pub(crate) pool: usize,
    pub(crate) server: usize,
    pub(crate) authority: Option<&'a [u8]>,
}

impl Idle {
    fn is(&self, key: &Key<'_>) -> bool {
        let l = &self.leased;
        l.pool == key.pool && l.server == key.server && l.authority.as_deref() == key.authority
    }
}

#[derive(Debug)]
pub(crate) struct Local {
    idle: Mutex<Vec<Idle>>,
    pub(crate) rng: Mutex<Rng>,
    /// The routes this worker last saw, and their generation (see `Proxy::reload`).
    pub(crate) shared: Mutex<(u64, Arc<Shared>)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Local {
    pub(crate) fn new(seed: u64, generation: u64, shared: Arc<Shared>) -> Local {
        Local {
            idle: Mutex::new(Vec::new()),
            rng: Mutex::new(Rng::new(seed)),
            shared: Mutex::new((generation, shared)),
        }
    }

    /// The most recently used idle connection for `key` that is still open and has not been
    /// idle longer than its pool's idle timeout.
    pub(crate) fn checkout(&self, key: &Key<'_>) -> Option<Leased> {
        let mut idle = lock(&self.idle);
        let now = Instant::now();
        while let Some(i) = idle.iter().rposition(|c| c.is(key)) {
            let mut entry = idle.swap_remove(i);
            if now <= entry.expires && entry.leased.conn.check_idle() {
                return Some(entry.leased);
            }
        }
        None
    }

    /// Keeps `conn` for the next request of `key`, if it can carry one and there is room
    /// (`max` per server); the oldest ones past `max_idle_for` are closed on the way.
    pub(crate) fn checkin(&self, leased: Leased, max: usize, max_idle_for: std::time::Duration) {
        let conn = &leased.conn;
        if max == 0 || !conn.is_reusable() || conn.in_flight() > 0 {
            return;
        }
        let mut idle = lock(&self.idle);
        // Idle since its last bytes came (the end of its response): the connection read the
        // clock then, so no read here.
        let now = conn.received_at();
        idle.retain(|c| now <= c.expires);
        let same = |c: &&Idle| c.leased.pool == leased.pool && c.leased.server == leased.server;
        if idle.iter().filter(same).count() >= max {
            return;
        }
        // A timeout too long to add (a configured "never") keeps it for a century.
        let century = std::time::Duration::from_secs(100 * 365 * 24 * 3600);
        let expires = now.checked_add(max_idle_for).or_else(|| now.checked_add(century));
        idle.push(Idle { leased, expires: expires.unwrap_or(now) });
    }
}
