//! The client's WebSockets: `ws://` and `wss://` URLs opened with the opening handshake over
//! HTTP/1.1 (RFC 6455 §4.1), the connection then the [`WebSocket`]'s; or, when asked and the
//! server allows it, over HTTP/2 as an extended CONNECT stream (RFC 8441), the stream then the
//! [`WebSocket`]'s. The same frames, limits and closing handshake either way.

use std::sync::Arc;

use bytes::BytesMut;
use http::{HeaderName, HeaderValue};

use super::Client;
use super::conn::{Connection, Event, Protocol, Versions};
use super::error::{Deadline, Error, Kind};
use super::h2::Shared;
use super::origin::Origin;
use crate::Method;
use crate::Version;
use crate::body::{Body, BodySender};
use crate::http1::encode::Scheme;
use crate::net::Transport;
use crate::websocket::{Utf8Bytes, WebSocket};
use crate::ws::handshake::{Accepted, ClientHandshake};
use crate::ws::{self, Conn, DeflateConfig, DeflateParams, Role};

/// Room for the WebSocket's output chunks on an HTTP/2 stream: the channel between the
/// WebSocket and the task that sends its DATA (as the server's sessions have).
const H2_CHANNEL: usize = 4;

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
    http2: bool,
}

impl Client {
    /// A WebSocket to `url` (`ws://` or `wss://`; `http://` and `https://` are taken as
    /// them): see [`WebSocketRequest`]. The connection is the WebSocket's own (not pooled),
    /// made with this client's timeouts and TLS settings; HTTP/1.1 unless
    /// [`WebSocketRequest::http2`] asks for HTTP/2.
    pub fn websocket(&self, url: &str) -> WebSocketRequest {
        WebSocketRequest {
            client: self.clone(),
            url: parse(url),
            protocols: Vec::new(),
            headers: Vec::new(),
            config: ws::Config::default(),
            http2: false,
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

    /// Opens the WebSocket over HTTP/2 where the server allows it (`true`), or over HTTP/1.1
    /// (`false`, the default).
    ///
    /// With `true`, a `wss://` connection offers `h2` and `http/1.1` by ALPN, and a `ws://`
    /// one speaks HTTP/2 by prior knowledge (h2c, RFC 9113 §3.3: the server must speak it).
    /// Once the server's first SETTINGS arrived (RFC 8441 §3: not before), and if they allow
    /// extended CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL), the handshake is a CONNECT with
    /// `:protocol` `websocket` and the WebSocket is that stream (RFC 8441 §4-§5). Otherwise it
    /// opens over HTTP/1.1: on the same connection when ALPN chose `http/1.1`, on a new one
    /// when the server speaks HTTP/2 without the setting (as nginx does).
    ///
    /// Off by default because a server that speaks HTTP/2 but not RFC 8441 then costs a second
    /// connection. The HTTP/2 connection is the WebSocket's own, as the HTTP/1.1 one is: the
    /// pool's connections keep their read timeout, which a quiet WebSocket would trip.
    ///
    /// # Examples
    /// ```no_run
    /// # async fn run() -> Result<(), peregrine::client::Error> {
    /// let client = peregrine::client::Client::new();
    /// let ws = client.websocket("wss://example.com/chat").http2(true).connect().await?;
    /// # drop(ws); Ok(()) }
    /// ```
    pub fn http2(mut self, on: bool) -> WebSocketRequest {
        self.http2 = on;
        self
    }

    /// Connects, sends the opening handshake and checks the server's answer (a `101` over
    /// HTTP/1.1, a 2xx to the extended CONNECT over HTTP/2).
    ///
    /// # Errors
    /// As [`Client::send`] for the connection and the response; [`Error::is_protocol`] when
    /// the response does not accept the handshake (another status, a wrong
    /// `Sec-WebSocket-Accept`, an extension or subprotocol not offered).
    pub async fn connect(self) -> Result<WebSocket, Error> {
        let WebSocketRequest { client, url, protocols, headers, config, http2 } = self;
        let (origin, target) = url?;
        let mut random = [0u8; 48];
        // From the operating system (getrandom(2)), not the TLS provider's generator: aws-lc's
        // seeds itself with CPU jitter entropy on first use, ~40 ms of CPU for a ws:// connect.
        getrandom::fill(&mut random)
            .map_err(|_| Error::new(Kind::Request, "no random bytes for the WebSocket key"))?;
        let (nonce, seed) = random.split_at(16);
        let protocol_refs: Vec<&str> = protocols.iter().map(String::as_str).collect();
        let mut handshake = ClientHandshake::new(nonce.try_into().unwrap_or_default());
        if let Some(deflate) = &config.deflate {
            handshake = handshake.deflate(deflate.clone());
        }
        let handshake = handshake.protocols(&protocol_refs);
        let extra: Vec<(&str, &[u8])> =
            headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();

        let open = async {
            let mut conn = None;
            if http2 {
                match open_http2(&client, &origin, &target, &handshake, &extra).await? {
                    Tried::Opened(opened) => return Ok(opened),
                    Tried::Http1(c) => conn = c,
                }
            }
            let conn = match conn {
                Some(c) => *c,
                None => Connection::connect_origin(&origin, client.inner.ws_config()).await?,
            };
            open_http1(conn, &target, &handshake, &extra).await
        };
        let (opened, accepted) = match client.inner.request_timeout {
            None => open.await?,
            Some(d) => tokio::time::timeout(d, open).await.map_err(|_| {
                Error::new(
                    Kind::Timeout(Deadline::Request),
                    "no WebSocket handshake within the request timeout",
                )
            })??,
        };
        let (protocol, deflate) = accepted;
        let seed: [u8; 32] = seed.try_into().unwrap_or_default();
        let conn =
            Conn::new(Role::Client, Arc::new(config), deflate, seed, std::time::Instant::now());
        let write_timeout =
            client.inner.config.read_timeout_value().unwrap_or(DEFAULT_WRITE_TIMEOUT);
        let ws = match opened {
            Opened::Stream(transport, input, single_thread) => {
                WebSocket::over_stream(conn, transport, input, !single_thread, write_timeout)
            }
            Opened::Http2(incoming, outgoing) => {
                WebSocket::over_http2(conn, incoming, outgoing, write_timeout)
            }
        };
        Ok(ws.with_protocol(protocol))
    }
}

/// A connection or stream the handshake opened for the WebSocket.
enum Opened {
    /// HTTP/1.1 after the `101`: the transport, the bytes read past the head, and whether the
    /// connection was made on a current-thread runtime.
    Stream(Transport, BytesMut, bool),
    /// An HTTP/2 extended CONNECT stream: the server's DATA in, ours out.
    Http2(Body, BodySender),
}

/// What the handshake agreed: the subprotocol and permessage-deflate.
type Agreed = (Option<Utf8Bytes>, Option<DeflateParams>);

fn agreed(accepted: Accepted<'_>) -> Agreed {
    (accepted.protocol.map(Utf8Bytes::from), accepted.deflate)
}

fn refused(e: crate::ws::handshake::ResponseError) -> Error {
    Error::with_source(Kind::Protocol, "the server did not accept the WebSocket", e)
}

/// What an attempt over HTTP/2 came to.
enum Tried {
    Opened((Opened, Agreed)),
    /// HTTP/1.1 it is: on this connection (ALPN chose it), or on a new one (`None`: the server
    /// speaks HTTP/2 without extended CONNECT). Boxed: made once per WebSocket, and the
    /// connection is large.
    Http1(Option<Box<Connection>>),
}

/// The handshake over HTTP/1.1 (RFC 6455 §4.1) on `conn`.
async fn open_http1(
    mut conn: Connection,
    target: &str,
    handshake: &ClientHandshake<'_>,
    extra: &[(&str, &[u8])],
) -> Result<(Opened, Agreed), Error> {
    let mut fields: Vec<(&str, &[u8])> = handshake.fields(Version::Http11).collect();
    fields.extend_from_slice(extra);
    conn.send_request(Method::Get, target, &fields, b"")?;
    conn.flush().await?;
    let accepted = loop {
        match conn.next_event().await? {
            Event::Head { head, .. } => {
                let status = head.status();
                let got: Vec<(&[u8], &[u8])> =
                    head.headers().iter().map(|(n, v)| (n.as_bytes(), v)).collect();
                break agreed(handshake.check_response(status, got).map_err(refused)?);
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
    let (transport, input, single_thread) = conn
        .into_upgraded()
        .ok_or_else(|| Error::new(Kind::Protocol, "the connection did not switch protocols"))?;
    Ok((Opened::Stream(transport, input, single_thread), accepted))
}

/// The handshake over HTTP/2 (RFC 8441) on a connection of its own, if the server allows it.
async fn open_http2(
    client: &Client,
    origin: &Origin,
    target: &str,
    handshake: &ClientHandshake<'_>,
    extra: &[(&str, &[u8])],
) -> Result<Tried, Error> {
    let config = client.inner.ws_h2_config(origin.scheme());
    let mut conn = Connection::connect_origin(origin, config).await?;
    if conn.protocol() == Protocol::Http1 {
        return Ok(Tried::Http1(Some(Box::new(conn))));
    }
    // RFC 8441 §3: extended CONNECT only after "first receiving an ENABLE_CONNECT_PROTOCOL
    // parameter" (a server without it would find the request malformed).
    if !conn.extended_connect().await? {
        return Ok(Tried::Http1(None));
    }
    // The stream may be quiet for as long as the WebSocket likes: the wait for the response
    // is timed here, and the WebSocket keeps its own timers after.
    conn.untimed_reads();
    let shared = Shared::spawn(conn, client.inner.pool.idle_timeout());
    let mut fields: Vec<(&str, &[u8])> = handshake.fields(Version::Http2).collect();
    fields.extend_from_slice(extra);
    let (outgoing, body) = Body::channel(H2_CHANNEL);
    let connect = shared.connect("websocket", target, &fields, body);
    let mut response = match config.read_timeout_value() {
        None => connect.await?,
        Some(d) => tokio::time::timeout(d, connect).await.map_err(|_| {
            Error::new(
                Kind::Timeout(Deadline::Read),
                "no response to the extended CONNECT within the read timeout",
            )
        })??,
    };
    let status = response.status().as_u16();
    let got: Vec<(&[u8], &[u8])> =
        response.headers().iter().map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes())).collect();
    let accepted = agreed(handshake.check_connect_response(status, got).map_err(refused)?);
    let incoming = std::mem::take(response.body_mut());
    Ok(Tried::Opened((Opened::Http2(incoming, outgoing), accepted)))
}

/// A write stalled this long fails, when the client has no read timeout to borrow.
const DEFAULT_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

impl super::Inner {
    /// The connection settings for WebSockets over HTTP/1.1: this client's, HTTP/1.1 only.
    fn ws_config(&self) -> &super::conn::Config {
        self.ws_config.get_or_init(|| self.config.clone().versions(Versions::Http1Only))
    }

    /// The connection settings for WebSockets that may go over HTTP/2: this client's, with
    /// ALPN offering `h2` and `http/1.1` for `https`, and h2c by prior knowledge for `http`.
    fn ws_h2_config(&self, scheme: Scheme) -> &super::conn::Config {
        let (cell, versions) = match scheme {
            Scheme::Https => (&self.ws_h2_config, Versions::Auto),
            Scheme::Http => (&self.ws_h2c_config, Versions::Http2Only),
        };
        cell.get_or_init(|| self.config.clone().versions(versions))
    }
}
