//! The client's WebSockets: `ws://` and `wss://` URLs opened with the opening handshake over
//! HTTP/1.1 (RFC 6455 §4.1), the connection then the [`WebSocket`]'s.

use std::sync::Arc;

use http::{HeaderName, HeaderValue};

use super::Client;
use super::conn::{Connection, Event, Versions};
use super::error::{Error, Kind};
use super::origin::Origin;
use crate::Method;
use crate::Version;
use crate::net::tls::fill_random;
use crate::websocket::{Utf8Bytes, WebSocket};
use crate::ws::handshake::ClientHandshake;
use crate::ws::{self, Conn, DeflateConfig, Role};

/// A WebSocket about to be opened: [`Client::websocket`], configured, then
/// [`WebSocketRequest::connect`].
///
/// # Examples
/// ```no_run
/// use peregrine::client::Client;
/// use peregrine::websocket::Message;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = Client::new();
/// let mut ws = client.websocket("wss://example.com/chat").protocols(["chat.v1"]).connect().await?;
/// ws.send(Message::text("hello")).await?;
/// if let Some(Ok(Message::Text(reply))) = ws.recv().await {
///     println!("{reply}");
/// }
/// ws.close(peregrine::websocket::CloseCode::NORMAL, "").await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct WebSocketRequest {
    client: Client,
    url: Result<(Origin, String), Error>,
    protocols: Vec<String>,
    headers: Vec<(HeaderName, HeaderValue)>,
    config: ws::Config,
}

impl Client {
    /// A WebSocket to `url` (`ws://` or `wss://`; `http://` and `https://` are taken as
    /// them): see [`WebSocketRequest`]. The connection is the WebSocket's own (not pooled),
    /// made with this client's timeouts and TLS settings.
    pub fn websocket(&self, url: &str) -> WebSocketRequest {
        WebSocketRequest {
            client: self.clone(),
            url: parse(url),
            protocols: Vec::new(),
            headers: Vec::new(),
            config: ws::Config::default(),
        }
    }
}

/// The origin and target of a WebSocket URL (RFC 6455 §3: `ws` is `http`'s, `wss` is
/// `https`'s).
fn parse(url: &str) -> Result<(Origin, String), Error> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| Error::new(Kind::Request, "a WebSocket URL is ws://host/path"))?;
    let http = match scheme.to_ascii_lowercase().as_str() {
        "ws" | "http" => "http",
        "wss" | "https" => "https",
        _ => return Err(Error::new(Kind::Request, "a WebSocket URL is ws:// or wss://")),
    };
    let as_http = format!("{http}://{rest}");
    let (origin, target) = Origin::parse(&as_http)?;
    Ok((origin, target.to_owned()))
}

impl WebSocketRequest {
    /// Offers these subprotocols, in order of preference (`Sec-WebSocket-Protocol`).
    pub fn protocols<I, S>(mut self, protocols: I) -> WebSocketRequest
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protocols = protocols.into_iter().map(Into::into).collect();
        self
    }

    /// Offers permessage-deflate (RFC 7692) with the default [`DeflateConfig`] (`true`), or
    /// not (`false`, the default).
    pub fn deflate(mut self, on: bool) -> WebSocketRequest {
        self.config.deflate = on.then(DeflateConfig::default);
        self
    }

    /// The connection's limits, timeouts and compression (see [`ws::Config`]).
    pub fn config(mut self, config: ws::Config) -> WebSocketRequest {
        self.config = config;
        self
    }

    /// Adds a field to the handshake request (an `Origin`, a cookie, an authorization).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> WebSocketRequest {
        self.headers.push((name, value));
        self
    }

    /// Connects, sends the opening handshake and checks the server's `101`.
    ///
    /// # Errors
    /// As [`Client::send`] for the connection and the response; [`Error::is_protocol`] when
    /// the response does not accept the handshake (another status, a wrong
    /// `Sec-WebSocket-Accept`, an extension or subprotocol not offered).
    pub async fn connect(self) -> Result<WebSocket, Error> {
        let WebSocketRequest { client, url, protocols, headers, config } = self;
        let (origin, target) = url?;
        // RFC 8441 is HTTP/2's way; this connection speaks HTTP/1.1 (ALPN `http/1.1` only).
        let conn_config = client.inner.ws_config();
        let mut random = [0u8; 48];
        fill_random(&mut random)
            .map_err(|_| Error::new(Kind::Request, "no random bytes for the WebSocket key"))?;
        let (nonce, seed) = random.split_at(16);
        let protocol_refs: Vec<&str> = protocols.iter().map(String::as_str).collect();
        let mut handshake = ClientHandshake::new(nonce.try_into().unwrap_or_default());
        if let Some(deflate) = &config.deflate {
            handshake = handshake.deflate(deflate.clone());
        }
        let handshake = handshake.protocols(&protocol_refs);
        let mut fields: Vec<(&str, &[u8])> = handshake.fields(Version::Http11).collect();
        fields.extend(headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));

        let connect = async {
            let mut conn = Connection::connect_origin(&origin, conn_config).await?;
            conn.send_request(Method::Get, &target, &fields, b"")?;
            conn.flush().await?;
            let accepted = loop {
                match conn.next_event().await? {
                    Event::Head { head, .. } => {
                        let status = head.status();
                        let got: Vec<(&[u8], &[u8])> =
                            head.headers().map(|(n, v)| (n.as_bytes(), v)).collect();
                        let accepted = handshake.check_response(status, got).map_err(|e| {
                            Error::with_source(
                                Kind::Protocol,
                                "the server did not accept the WebSocket",
                                e,
                            )
                        })?;
                        break (accepted.protocol.map(Utf8Bytes::from), accepted.deflate);
                    }
                    Event::Failed { error, .. } => return Err(error),
                    _ => {}
                }
            };
            // The 101's (empty) body ends it; the bytes after are the WebSocket's.
            loop {
                match conn.next_event().await? {
                    Event::End { .. } => break,
                    Event::Failed { error, .. } => return Err(error),
                    _ => {}
                }
            }
            let (transport, input, single_thread) = conn.into_upgraded().ok_or_else(|| {
                Error::new(Kind::Protocol, "the connection did not switch protocols")
            })?;
            Ok::<_, Error>((transport, input, single_thread, accepted))
        };
        let (transport, input, single_thread, (protocol, deflate)) =
            match client.inner.request_timeout {
                None => connect.await?,
                Some(d) => tokio::time::timeout(d, connect).await.map_err(|_| {
                    Error::new(
                        Kind::Timeout(super::error::Deadline::Request),
                        "no WebSocket handshake within the request timeout",
                    )
                })??,
            };
        let seed: [u8; 32] = seed.try_into().unwrap_or_default();
        let conn =
            Conn::new(Role::Client, Arc::new(config), deflate, seed, std::time::Instant::now());
        let write_timeout = conn_config.read_timeout_value().unwrap_or(DEFAULT_WRITE_TIMEOUT);
        Ok(WebSocket::over_stream(conn, transport, input, !single_thread, write_timeout)
            .with_protocol(protocol))
    }
}

/// A write stalled this long fails, when the client has no read timeout to borrow.
const DEFAULT_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

impl super::Inner {
    /// The connection settings for WebSockets: this client's, HTTP/1.1 only.
    fn ws_config(&self) -> &super::conn::Config {
        self.ws_config.get_or_init(|| self.config.clone().versions(Versions::Http1Only))
    }
}
