//! WebSockets in a tower service or an axum handler served by peregrine: the opening handshake
//! travels to the service in the `http::Request`'s extensions and the accepted session back in
//! the `http::Response`'s, so an axum handler takes a [`WebSocketUpgrade`] as an extractor, as
//! it would axum's own (which works only on hyper), over HTTP/1.1 and HTTP/2 alike.
//!
//! Only a request that asks for an upgrade pays: one with an `Upgrade` field (HTTP/1.1) or a
//! `:protocol` (HTTP/2's extended CONNECT, RFC 8441 §4) is checked as a handshake when it is
//! converted; other requests carry nothing more.

use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::body::Body;
use crate::request::Request;
use crate::response::IntoResponse;
use crate::websocket::{self, OnUpgrade, UpgradeRefused, WebSocket};
use crate::ws;

/// The handshake of a request, checked when the request was converted for the service.
#[derive(Clone)]
pub(super) struct PendingUpgrade(
    Arc<Mutex<Option<Result<websocket::WebSocketUpgrade, UpgradeRefused>>>>,
);

impl PendingUpgrade {
    /// Checks `req` when it asks for an upgrade (`asks`: it has an `Upgrade` field or a
    /// `:protocol`); over HTTP/2 its body, the stream's DATA, becomes the WebSocket's.
    pub(super) fn of(req: &mut Request, asks: bool) -> Option<PendingUpgrade> {
        let asks = asks || req.protocol().is_some();
        asks.then(|| {
            let checked = websocket::WebSocketUpgrade::from_request(req);
            PendingUpgrade(Arc::new(Mutex::new(Some(checked))))
        })
    }

    fn take(&self) -> Option<Result<websocket::WebSocketUpgrade, UpgradeRefused>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }
}

/// The session an accepted handshake starts, carried back to the server in the response.
#[derive(Clone)]
pub(super) struct AcceptedUpgrade(Arc<Mutex<Option<Box<OnUpgrade>>>>);

impl AcceptedUpgrade {
    /// What runs once the response is sent.
    pub(super) fn take(&self) -> Option<Box<OnUpgrade>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }
}

/// A WebSocket opening handshake in a tower service or an axum handler served by peregrine:
/// the same negotiation, limits and [`WebSocket`] as
/// [`websocket::WebSocketUpgrade`], with `http`'s types at its edges.
///
/// In axum it is an extractor (feature `axum`). Over HTTP/2 the handshake is an extended
/// CONNECT (RFC 8441 §4), not a GET: route it with `any` (or `get(h).connect(h)`) to accept
/// both. In a tower service,
/// [`WebSocketUpgrade::from_request`] takes it from the request. A request served by another
/// server (hyper) has no handshake for it: it is refused with `400`.
///
/// # Examples
/// ```no_run
/// use axum::response::IntoResponse;
/// use axum::routing::any;
/// use peregrine::tower::WebSocketUpgrade;
/// use peregrine::websocket::Message;
///
/// async fn echo(ws: WebSocketUpgrade) -> impl IntoResponse {
///     ws.deflate(true).on_upgrade(|mut ws| async move {
///         while let Some(Ok(msg)) = ws.recv().await {
///             if ws.send(msg).await.is_err() {
///                 break;
///             }
///         }
///     })
/// }
///
/// fn main() -> std::io::Result<()> {
///     let app = axum::Router::new().route("/ws", any(echo));
///     peregrine::Server::bind("127.0.0.1:8080").run(peregrine::tower::service(app))
/// }
/// ```
#[derive(Debug)]
pub struct WebSocketUpgrade {
    inner: websocket::WebSocketUpgrade,
}

impl WebSocketUpgrade {
    /// Takes the request's handshake out of its extensions.
    ///
    /// # Errors
    /// [`UpgradeRefused`] (its response is a `400`, or `426` for another protocol version)
    /// when the request is not a valid handshake, was served by another server, or its
    /// handshake was already taken.
    pub fn from_request<B>(req: &mut http::Request<B>) -> Result<WebSocketUpgrade, UpgradeRefused> {
        Self::from_extensions(req.extensions_mut())
    }

    fn from_extensions(
        extensions: &mut http::Extensions,
    ) -> Result<WebSocketUpgrade, UpgradeRefused> {
        let pending = extensions.remove::<PendingUpgrade>();
        match pending.and_then(|p| p.take()) {
            Some(Ok(inner)) => Ok(WebSocketUpgrade { inner }),
            Some(Err(refused)) => Err(refused),
            None => Err(UpgradeRefused::no_upgrade()),
        }
    }

    /// The subprotocols this server speaks, in its order of preference (see
    /// [`websocket::WebSocketUpgrade::protocols`]).
    pub fn protocols<I, S>(self, supported: I) -> WebSocketUpgrade
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        WebSocketUpgrade { inner: self.inner.protocols(supported) }
    }

    /// Accepts permessage-deflate when the client offers it (RFC 7692).
    pub fn deflate(self, on: bool) -> WebSocketUpgrade {
        WebSocketUpgrade { inner: self.inner.deflate(on) }
    }

    /// The connection's limits, timeouts and compression.
    pub fn config(self, config: ws::Config) -> WebSocketUpgrade {
        WebSocketUpgrade { inner: self.inner.config(config) }
    }

    /// The subprotocols the client offered, in its order.
    pub fn offered_protocols(&self) -> Vec<&str> {
        self.inner.offered_protocols()
    }

    /// The request's `Origin`, for the application's check (RFC 6455 §10.2).
    pub fn origin(&self) -> Option<&str> {
        self.inner.origin()
    }

    /// Accepts the handshake: the response to return (`101` over HTTP/1.1, `200` over
    /// HTTP/2), and `session`, which runs with the [`WebSocket`] once the server has sent it,
    /// on the worker thread that serves the connection. A response that does not reach the
    /// server unchanged in its extensions (a middleware that replaces it) opens no WebSocket.
    pub fn on_upgrade<F, Fut>(self, session: F) -> http::Response<Body>
    where
        F: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let mut res = self.inner.on_upgrade(session);
        let upgrade = res.take_upgrade();
        let mut out = http::Response::<Body>::from(res);
        if let Some(upgrade) = upgrade {
            out.extensions_mut().insert(AcceptedUpgrade(Arc::new(Mutex::new(Some(upgrade)))));
        }
        out
    }
}

/// The refusal as an `http::Response`, for a tower service.
impl From<UpgradeRefused> for http::Response<Body> {
    fn from(refused: UpgradeRefused) -> http::Response<Body> {
        refused.into_response().into()
    }
}

#[cfg(feature = "axum")]
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for WebSocketUpgrade {
    type Rejection = UpgradeRefused;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _state: &S,
    ) -> Result<WebSocketUpgrade, UpgradeRefused> {
        WebSocketUpgrade::from_extensions(&mut parts.extensions)
    }
}

#[cfg(feature = "axum")]
impl axum::response::IntoResponse for UpgradeRefused {
    fn into_response(self) -> axum::response::Response {
        http::Response::<Body>::from(self).map(axum::body::Body::new)
    }
}
