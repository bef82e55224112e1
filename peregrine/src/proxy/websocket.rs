//! WebSocket pass-through: a client's opening handshake (HTTP/1.1 `Upgrade: websocket`, RFC
//! 6455 §4.1; or HTTP/2 extended CONNECT, RFC 8441 §4) is first made to an upstream server,
//! over HTTP/1.1, with the client's subprotocols and the fields any forwarded request carries
//! (hop-by-hop ones removed, the forwarding ones added, the route's operations applied); once
//! the upstream accepted, the client's handshake is accepted with the subprotocol the upstream
//! chose, and messages are relayed both ways until either side closes.
//!
//! The proxy ends both WebSockets rather than copying bytes: each side's frames are parsed and
//! checked by its own connection (masking, UTF-8 of text, control frames, sizes, RFC 6455 §5),
//! so what the upstream receives is what peregrine's own WebSocket would accept, never a frame
//! smuggled past the proxy. Pings are answered by the side that receives them; a Close is
//! passed on with its code and reason and answered by each side; a side that fails (a
//! protocol error, a limit, a timeout, going away without a Close) closes the other with
//! 1001 (going away) or, for the upstream, 1014 (bad gateway, RFC 6455 §7.4.1 as registered).
//! Per-message compression is not negotiated with either side: messages pass whole.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use http::{HeaderName, HeaderValue, StatusCode};

use super::Shared;
use super::local::Local;
use super::route::Route;
use super::upstream::Pool;
use crate::Version;
use crate::request::Request;
use crate::response::Response;
use crate::websocket::{CloseCode, CloseFrame, Message, WebSocket, WebSocketUpgrade};

/// Whether `req` opens a WebSocket: over HTTP/1.1 a `GET` asking to switch protocols (its
/// `Connection` names `upgrade`: RFC 9110 §7.8, an `Upgrade` that `Connection` does not name
/// is no request to switch, and goes on as a plain request without it; HTTP/1.0's is ignored)
/// whose `Upgrade` names `websocket`; over HTTP/2 a `CONNECT` with `:protocol` `websocket`
/// (the handshake's other rules are checked when it is accepted).
///
/// The parse's framing already judged `Connection` and found `Upgrade`
/// ([`Request::asks_upgrade`]): a request without them, nearly every one, costs a flag read.
pub(super) fn is_websocket(req: &Request) -> bool {
    match req.version() {
        Version::Http2 => {
            req.method_str() == "CONNECT"
                && req.protocol().is_some_and(|p| p.eq_ignore_ascii_case("websocket"))
        }
        _ => {
            req.asks_upgrade()
                && req.method_str() == "GET"
                && req.headers().get_all("upgrade").any(|v| {
                    v.split(|&b| b == b',')
                        .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"websocket"))
                })
        }
    }
}

/// The client's handshake fields the upstream handshake writes for itself.
fn handshake_field(name: &str) -> bool {
    name.len() > 14 && name[..14].eq_ignore_ascii_case("sec-websocket-")
}

/// Opens the upstream WebSocket, then answers the client's handshake; see the [module
/// docs](self).
pub(super) async fn relay(
    shared: &Shared,
    local: &Arc<Local>,
    pool: &Arc<Pool>,
    route: &Route,
    mut req: Request,
) -> Response {
    let upgrade = match WebSocketUpgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return crate::IntoResponse::into_response(refused),
    };
    let server = {
        let mut rng = local.rng.lock().unwrap_or_else(|e| e.into_inner());
        pool.pick(None, 0, &mut rng)
    };
    let Some(server) = server else {
        return super::answer::answer(
            StatusCode::SERVICE_UNAVAILABLE,
            "no upstream server is available",
        );
    };
    let s = &pool.servers[server];
    s.requests.fetch_add(1, Ordering::Relaxed);
    let started = std::time::Instant::now();
    let (url, fields) = {
        let mut scratch = Vec::new();
        // A WebSocket opening has no trailers to ask for: no TE.
        super::request_head::with_head(shared, route, &req, None, &mut scratch, |target, fields| {
            // The client takes http:// and https:// as ws:// and wss://.
            let url = format!("{}{target}", s.name);
            let fields: Vec<(HeaderName, HeaderValue)> = fields
                .iter()
                .filter(|(n, _)| !handshake_field(n))
                .filter_map(|(n, v)| {
                    Some((
                        HeaderName::from_bytes(n.as_bytes()).ok()?,
                        HeaderValue::from_bytes(v).ok()?,
                    ))
                })
                .collect();
            (url, fields)
        })
    };
    let client = crate::client::Client::builder()
        .connection_config(pool.config.clone())
        .connect_timeout(pool.timeouts.connect)
        .tls_handshake_timeout(pool.timeouts.tls)
        .request_timeout(pool.timeouts.response_head)
        .build();
    let offered: Vec<String> = upgrade.offered_protocols().into_iter().map(str::to_owned).collect();
    let opening = fields
        .into_iter()
        .fold(client.websocket(&url).protocols(offered), |w, (n, v)| w.header(n, v));
    let upstream = match opening.connect().await {
        Ok(ws) => ws,
        Err(error) => {
            pool.failed(server);
            tracing::warn!(upstream = %s.name, target = req.target(), "proxy: websocket: {error}");
            crate::server::note_upstream(&s.name, started.elapsed());
            return super::answer::failed(&error);
        }
    };
    pool.succeeded(server);
    crate::server::note_upstream(&s.name, started.elapsed());
    let chosen: Vec<String> = upstream.protocol().map(str::to_owned).into_iter().collect();
    let waiting = Waiting::park(upstream);
    upgrade.protocols(chosen).on_upgrade(move |client| async move {
        match waiting.take() {
            Some(upstream) => pump(client, upstream).await,
            None => {
                let mut client = client;
                let _ = client.close(CloseCode::INTERNAL, "").await;
            }
        }
    })
}

thread_local! {
    /// Upstream WebSockets waiting for their client's session. A `WebSocket` is not `Send`
    /// (its buffers are the worker's), while the session's closure must be; the session runs
    /// on the worker thread whose handler opened the upstream one (`on_upgrade`'s promise),
    /// so the upstream WebSocket waits here, in that thread's table, under a number the
    /// closure carries.
    static WAITING: std::cell::RefCell<std::collections::HashMap<u64, WebSocket>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
    static NEXT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// An upstream WebSocket parked in [`WAITING`]; dropped unclaimed (the client went away
/// before its 101), it takes the WebSocket out, which closes it.
struct Waiting(u64);

impl Waiting {
    fn park(ws: WebSocket) -> Waiting {
        let key = NEXT.with(|n| {
            let key = n.get();
            n.set(key.wrapping_add(1));
            key
        });
        WAITING.with_borrow_mut(|w| w.insert(key, ws));
        Waiting(key)
    }

    fn take(&self) -> Option<WebSocket> {
        WAITING.with_borrow_mut(|w| w.remove(&self.0))
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        // A table already gone (the thread ending) has nothing left to take.
        let _ = WAITING.try_with(|w| w.borrow_mut().remove(&self.0));
    }
}

/// Relays messages both ways until one side closes or fails.
async fn pump(mut down: WebSocket, mut up: WebSocket) {
    loop {
        let (from_client, next) = tokio::select! {
            m = down.recv() => (true, m),
            m = up.recv() => (false, m),
        };
        let (from, to) = if from_client { (&mut down, &mut up) } else { (&mut up, &mut down) };
        match next {
            Some(Ok(Message::Close(frame))) => {
                // Answered by `from` already; passed on, and answered by `to` in turn.
                let frame = frame.filter(|f| f.code.is_allowed_on_wire());
                let _ = to.send(Message::Close(frame)).await;
                while let Some(Ok(_)) = to.recv().await {}
                return;
            }
            // A received Ping was answered by `from`; its Pong is not ours to pass on.
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(message)) => {
                if to.send(message).await.is_err() {
                    let code =
                        if from_client { CloseCode::BAD_GATEWAY } else { CloseCode::GOING_AWAY };
                    let _ = from.close(code, "").await;
                    return;
                }
            }
            Some(Err(_)) | None => {
                let code = if from_client { CloseCode::GOING_AWAY } else { CloseCode::BAD_GATEWAY };
                let frame = CloseFrame { code, reason: "".into() };
                let _ = to.send(Message::Close(Some(frame))).await;
                while let Some(Ok(_)) = to.recv().await {}
                return;
            }
        }
    }
}
