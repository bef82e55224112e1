//! [`WebSocketUpgrade`]: a handler accepts a WebSocket opening handshake, over HTTP/1.1
//! (`Upgrade`, RFC 6455 §4.2) or HTTP/2 (extended CONNECT, RFC 8441), with the same code.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use http::{HeaderName, HeaderValue, StatusCode};

use super::io::{Handoff, OnUpgrade, Session};
use super::socket::WebSocket;
use super::text::Utf8Bytes;
use crate::body::Body;
use crate::request::Request;
use crate::response::{IntoResponse, Response};
use crate::version::Version;
use crate::ws::handshake::{self, RequestError};
use crate::ws::{self, Conn, DeflateConfig, Role};

/// Room for the session's output chunks on an HTTP/2 stream: the channel between the session
/// and the connection's task.
const H2_CHANNEL: usize = 4;

/// A request's WebSocket opening handshake, checked and ready to accept.
///
/// Built from a request by [`WebSocketUpgrade::from_request`], configured (subprotocols,
/// permessage-deflate, limits), then [`WebSocketUpgrade::on_upgrade`] gives the response to
/// return from the handler and the function the connection runs once it is sent. The same
/// handler serves HTTP/1.1 (`101 Switching Protocols`, then the connection is the
/// WebSocket's) and HTTP/2 (`200` to an extended CONNECT, then the stream is; the server
/// offers `SETTINGS_ENABLE_CONNECT_PROTOCOL`).
///
/// # Examples
/// ```no_run
/// use peregrine::websocket::{Message, WebSocketUpgrade};
/// use peregrine::{IntoResponse, Request, Response, Server};
///
/// async fn chat(mut req: Request) -> Response {
///     let upgrade = match WebSocketUpgrade::from_request(&mut req) {
///         Ok(upgrade) => upgrade,
///         Err(refused) => return refused.into_response(),
///     };
///     upgrade.protocols(["chat.v1"]).deflate(true).on_upgrade(|mut ws| async move {
///         while let Some(Ok(msg)) = ws.recv().await {
///             if let Message::Text(text) = msg {
///                 let _ = ws.send(Message::text(format!("you said: {text}"))).await;
///             }
///         }
///     })
/// }
///
/// fn main() -> std::io::Result<()> {
///     Server::bind("127.0.0.1:8080").run(chat)
/// }
/// ```
pub struct WebSocketUpgrade {
    /// The request's head (shared bytes), for the negotiation.
    head: Request,
    /// HTTP/2: the stream's DATA, taken from the request.
    incoming: Option<Body>,
    supported: Vec<String>,
    config: ws::Config,
}

impl fmt::Debug for WebSocketUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("version", &self.head.version())
            .field("supported", &self.supported)
            .finish()
    }
}

/// Why a request is not a WebSocket opening handshake: its response is a `400 Bad Request`,
/// or a `426 Upgrade Required` with `Sec-WebSocket-Version: 13` for another version of the
/// protocol (RFC 6455 §4.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpgradeRefused(RequestError);

impl UpgradeRefused {
    /// A request that did not ask for an upgrade.
    #[cfg(feature = "tower")]
    pub(crate) fn no_upgrade() -> UpgradeRefused {
        UpgradeRefused(RequestError::Upgrade)
    }

    /// The response's status.
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::BAD_REQUEST)
    }

    /// What was wrong, in a few words.
    pub fn reason(&self) -> &'static str {
        self.0.reason()
    }
}

impl fmt::Display for UpgradeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a WebSocket handshake: {}", self.reason())
    }
}

impl std::error::Error for UpgradeRefused {}

impl IntoResponse for UpgradeRefused {
    fn into_response(self) -> Response {
        let mut res = Response::with_status(self.status(), self.reason());
        for (name, value) in self.0.fields() {
            if let (Ok(n), Ok(v)) =
                (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_bytes(value.as_bytes()))
            {
                res = res.with_header(n, v);
            }
        }
        res
    }
}

/// Checks `req` as a handshake of its version.
fn check(req: &Request) -> Result<handshake::Request<'_>, RequestError> {
    let fields = req.headers().iter().map(|(n, v)| (n.as_bytes(), v));
    match req.version() {
        Version::Http2 => handshake::check_connect(
            req.method_str().as_bytes(),
            req.protocol().map(str::as_bytes),
            fields,
        ),
        version => handshake::check_request(req.method_str().as_bytes(), version, fields),
    }
}

impl WebSocketUpgrade {
    /// Checks `req` as a WebSocket opening handshake: over HTTP/1.1 a `GET` with `Upgrade:
    /// websocket`, `Connection: Upgrade`, a valid `Sec-WebSocket-Key` and
    /// `Sec-WebSocket-Version: 13` (RFC 6455 §4.2.1); over HTTP/2 a `CONNECT` with
    /// `:protocol` `websocket` and the version (RFC 8441 §4, §5). Over HTTP/2 the request's
    /// body (the stream's DATA) becomes the WebSocket's input, so it is taken from `req`.
    ///
    /// # Errors
    /// [`UpgradeRefused`], which is the response to send back.
    pub fn from_request(req: &mut Request) -> Result<WebSocketUpgrade, UpgradeRefused> {
        check(req).map_err(UpgradeRefused)?;
        let incoming = (req.version() == Version::Http2).then(|| req.take_body());
        Ok(WebSocketUpgrade {
            head: req.head_only(),
            incoming,
            supported: Vec::new(),
            config: ws::Config::default(),
        })
    }

    /// The subprotocols this server speaks, in its order of preference: the first the
    /// client also offered is agreed (RFC 6455 §4.2.2); none when the client offered none of
    /// them (the connection still opens, without `Sec-WebSocket-Protocol`).
    pub fn protocols<I, S>(mut self, supported: I) -> WebSocketUpgrade
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.supported = supported.into_iter().map(Into::into).collect();
        self
    }

    /// Accepts permessage-deflate (RFC 7692) when the client offers it, with the default
    /// [`DeflateConfig`] (`true`), or not (`false`, the default: compression costs CPU and
    /// tens of KiB of memory per connection).
    pub fn deflate(mut self, on: bool) -> WebSocketUpgrade {
        self.config.deflate = on.then(DeflateConfig::default);
        self
    }

    /// The connection's limits, timeouts and compression (see [`ws::Config`]).
    pub fn config(mut self, config: ws::Config) -> WebSocketUpgrade {
        self.config = config;
        self
    }

    /// The subprotocols the client offered, in its order.
    pub fn offered_protocols(&self) -> Vec<&str> {
        let Ok(handshake) = check(&self.head) else { return Vec::new() };
        handshake.protocols().filter_map(|p| std::str::from_utf8(p).ok()).collect()
    }

    /// The request's `Origin`, for the application's check (RFC 6455 §10.2: a browser's
    /// page from another site can open a WebSocket to any server).
    pub fn origin(&self) -> Option<&str> {
        self.head.headers().get_str("origin")
    }

    /// Accepts the handshake: the response to return from the handler (`101` over HTTP/1.1,
    /// `200` over HTTP/2, with the agreed subprotocol and extension), and `session`, which runs
    /// with the [`WebSocket`] once the response is sent, on the worker thread that serves the
    /// connection (its future need not be `Send`).
    pub fn on_upgrade<F, Fut>(self, session: F) -> Response
    where
        F: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let WebSocketUpgrade { head, incoming, supported, config } = self;
        let Ok(handshake) = check(&head) else {
            // `from_request` checked these very bytes.
            return Response::with_status(StatusCode::BAD_REQUEST, "not a WebSocket handshake");
        };
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        let accept = handshake.accept(&supported, config.deflate.as_ref());
        let status = StatusCode::from_u16(accept.status()).unwrap_or(StatusCode::OK);
        let protocol = accept.protocol().map(Utf8Bytes::from);
        let deflate = accept.deflate();
        let fields: Vec<(HeaderName, HeaderValue)> = accept
            .fields()
            .filter_map(|(n, v)| {
                Some((HeaderName::from_static(n), HeaderValue::from_bytes(v).ok()?))
            })
            .collect();
        let config = Arc::new(config);
        // HTTP/2: the session's output is the response's body, a channel the connection's
        // task sends as DATA while the stream's flow control allows.
        let (h2, body) = match incoming {
            Some(incoming) => {
                let (outgoing, body) = Body::channel(H2_CHANNEL);
                (Some((incoming, outgoing)), body)
            }
            None => (None, Body::empty()),
        };
        let make = move |handoff: Handoff| -> Session {
            let conn = Conn::new(Role::Server, config, deflate, [0; 32], std::time::Instant::now());
            let ws = match (handoff.connection, h2) {
                (Some((transport, input)), _) => {
                    WebSocket::over_stream(conn, transport, input, false, handoff.write_timeout)
                        .with_buffers(handoff.buffers)
                }
                (None, Some((incoming, outgoing))) => {
                    WebSocket::over_http2(conn, incoming, outgoing, handoff.write_timeout)
                }
                // A driver always hands one or the other over.
                (None, None) => return Box::pin(async {}),
            };
            let ws = ws.with_drain(handoff.drain).with_protocol(protocol);
            Box::pin(session(ws))
        };
        let mut res = Response::with_status(status, body);
        for (name, value) in fields {
            res = res.with_header(name, value);
        }
        res.with_upgrade(OnUpgrade::new(make))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(parts: &[(&str, &str)]) -> Request {
        let mut b = http::Request::get("/chat").header("host", "example.com");
        for (n, v) in parts {
            b = b.header(*n, *v);
        }
        b.body(()).unwrap().into()
    }

    struct Case {
        name: &'static str,
        fields: &'static [(&'static str, &'static str)],
        status: Result<u16, u16>,
    }

    /// RFC 6455 §4.2.1-§4.2.2: the request's checks and the response they lead to.
    #[test]
    fn checks_the_opening_handshake() {
        const GOOD: &[(&str, &str)] = &[
            ("upgrade", "websocket"),
            ("connection", "Upgrade"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("sec-websocket-version", "13"),
        ];
        let cases = [
            Case { name: "the RFC's example", fields: GOOD, status: Ok(101) },
            Case { name: "no upgrade", fields: &GOOD[1..], status: Err(400) },
            Case {
                name: "another version",
                fields: &[
                    ("upgrade", "websocket"),
                    ("connection", "Upgrade"),
                    ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
                    ("sec-websocket-version", "8"),
                ],
                status: Err(426),
            },
            Case {
                name: "a short key",
                fields: &[
                    ("upgrade", "websocket"),
                    ("connection", "Upgrade"),
                    ("sec-websocket-key", "c2hvcnQ="),
                    ("sec-websocket-version", "13"),
                ],
                status: Err(400),
            },
        ];
        for case in cases {
            let mut req = request(case.fields);
            match WebSocketUpgrade::from_request(&mut req) {
                Ok(up) => {
                    let res = up.on_upgrade(|_ws| async {});
                    assert_eq!(Ok(res.status().as_u16()), case.status, "{}", case.name);
                    let accept = res.headers().iter().find(|(n, _)| *n == "sec-websocket-accept");
                    assert_eq!(
                        accept.map(|(_, v)| v.as_bytes()),
                        Some(&b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="[..]),
                        "{}",
                        case.name
                    );
                }
                Err(refused) => {
                    let res = refused.into_response();
                    assert_eq!(Err(res.status().as_u16()), case.status, "{}", case.name);
                    let version = res
                        .headers()
                        .iter()
                        .any(|(n, v)| *n == "sec-websocket-version" && v.as_bytes() == b"13");
                    assert_eq!(version, case.status == Err(426), "{}", case.name);
                }
            }
        }
    }

    /// RFC 6455 §4.2.2: the first of the server's subprotocols that the client offered.
    #[test]
    fn agrees_the_servers_first_offered_protocol() {
        let mut req = request(&[
            ("upgrade", "websocket"),
            ("connection", "Upgrade"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("sec-websocket-version", "13"),
            ("sec-websocket-protocol", "chat, superchat"),
        ]);
        let up = WebSocketUpgrade::from_request(&mut req).unwrap();
        assert_eq!(up.offered_protocols(), ["chat", "superchat"]);
        let res = up.protocols(["superchat", "chat"]).on_upgrade(|_ws| async {});
        let protocol = res.headers().iter().find(|(n, _)| *n == "sec-websocket-protocol");
        assert_eq!(protocol.map(|(_, v)| v.as_bytes()), Some(&b"superchat"[..]));
    }
}
