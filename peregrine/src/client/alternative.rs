//! [`Client`](super::Client) requests through an origin's HTTP/3 alternative service (RFC 7838,
//! learned from `Alt-Svc`; RFC 9114 §3.1.1), when the client was built to use them.
//!
//! A request to an `https` origin asks the [`Cache`] how to go (one lock and one scan, no
//! allocation): to the origin; over an HTTP/3 connection to the alternative already in the
//! pool; or to the alternative, opening that connection first (once: the origin's other
//! requests wait for it, as for a new HTTP/2 connection). When opening it fails (a timeout,
//! UDP blocked, a failed handshake or certificate check) the request goes to the origin over
//! TCP instead, the caller sees no error, and the alternative is marked broken for a while.
//! Responses that came over TCP teach the cache (their `Alt-Svc` and `Age`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::{AGE, ALT_SVC};

use super::alt_svc::{Cache, Route};
use super::conn::{Config, Connection};
use super::error::Error;
use super::h2::Shared;
use super::origin::{Origin, UrlParts};
use super::pool::{AltCheckout, Pool};
use super::request::{OutBody, Outgoing};
use crate::response::Response;

/// Alternative services as a client uses them: what it learned, and how long a connection
/// attempt to one may take before the request goes to the origin.
#[derive(Debug)]
pub(crate) struct AltSvc {
    pub(crate) cache: Cache,
    pub(crate) timeout: Duration,
}

/// Where a request went.
pub(crate) enum Outcome {
    /// Over HTTP/3 to the alternative: its result.
    Sent(Result<Response, Error>),
    /// Nowhere yet: it goes to the origin, with its body.
    Origin(OutBody),
}

impl AltSvc {
    pub(crate) fn new(timeout: Duration) -> AltSvc {
        AltSvc { cache: Cache::default(), timeout }
    }

    /// Sends `out` over the origin's alternative if the cache routes it there and a connection
    /// to it is (or can be) open; else hands the body back for the origin.
    pub(crate) async fn send(
        &self,
        pool: &Arc<Pool>,
        config: &Config,
        parts: &UrlParts<'_>,
        out: &Outgoing,
        body: OutBody,
    ) -> Outcome {
        let shared = match self.cache.route(parts, Instant::now()) {
            Route::Origin => return Outcome::Origin(body),
            Route::Existing => match pool.alt(parts) {
                Some(shared) => shared,
                None => return Outcome::Origin(body),
            },
            Route::Alternative => match pool.get_alt(parts).await {
                AltCheckout::Ready(shared) => shared,
                AltCheckout::Connect(guard) => match self.connect(pool, config, parts).await {
                    Some(shared) => {
                        drop(guard);
                        shared
                    }
                    None => return Outcome::Origin(body),
                },
            },
        };
        Outcome::Sent(shared.send(out, body).await)
    }

    /// Opens an HTTP/3 connection to `parts`'s alternative and pools it; on failure marks the
    /// alternative broken.
    async fn connect(
        &self,
        pool: &Arc<Pool>,
        config: &Config,
        parts: &UrlParts<'_>,
    ) -> Option<Arc<Shared>> {
        // Looked up again: the request that held the turn before may have found it broken.
        let target = self.cache.target(parts, Instant::now())?;
        let origin = Origin::new(parts.scheme, parts.host, parts.port);
        let host = target.host.as_deref().unwrap_or(parts.host);
        let dial = (host, target.port);
        match Connection::connect_alternative(&origin, dial, config, self.timeout).await {
            Ok(conn) => {
                self.cache.confirmed(parts);
                let shared = Shared::spawn(conn, pool.idle_timeout());
                pool.add_alt(&origin, shared.clone());
                Some(shared)
            }
            Err(e) => {
                tracing::debug!(%origin, alternative = ?dial, error = %e, "HTTP/3 alternative failed");
                self.cache.broken(parts, Instant::now());
                None
            }
        }
    }

    /// Learns from a response of `parts`'s origin that came over TCP.
    pub(crate) fn learn(&self, parts: &UrlParts<'_>, response: &Response) {
        let headers = response.headers();
        if !headers.contains_key(&ALT_SVC) {
            return;
        }
        // RFC 9111 §5.1: Age is delta-seconds; one that is not counts as none.
        let age = headers
            .get(&AGE)
            .and_then(|v| std::str::from_utf8(v.as_bytes()).ok()?.parse::<u64>().ok())
            .unwrap_or(0);
        let lines = headers.get_all(&ALT_SVC).map(|v| v.as_bytes());
        self.cache.learn(parts, lines, age, Instant::now());
    }
}
