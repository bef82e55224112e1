//! The client's side of the opening handshake: the request's fields (RFC 6455 §4.1; RFC 8441
//! §4 over HTTP/2) and the checks of the server's response.

use crate::Version;
use crate::base64;
use crate::http1::field_syntax::{is_token, trim_ows};
use crate::ws::deflate;
use crate::ws::extension::{self, DeflateConfig, DeflateParams, ExtensionValue};

use super::{VERSION, accept_key, has_token, lines};

/// A client's opening handshake: the request's fields, then the check of the response.
///
/// sans-I/O: the caller gives the key's 16 random octets (RFC 6455 §4.1: "randomly selected"
/// for each connection), from the operating system's random source.
///
/// # Examples
/// ```
/// use peregrine::Version;
/// use peregrine::ws::handshake::ClientHandshake;
/// let hs = ClientHandshake::new(*b"the sample nonce");
/// assert_eq!(hs.key(), b"dGhlIHNhbXBsZSBub25jZQ==");
/// let fields: Vec<(&str, &[u8])> = hs.fields(Version::Http11).collect();
/// assert_eq!(fields[0], ("upgrade", &b"websocket"[..]));
/// let response: [(&[u8], &[u8]); 3] = [
///     (b"Upgrade", b"websocket"),
///     (b"Connection", b"Upgrade"),
///     (b"Sec-WebSocket-Accept", b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
/// ];
/// let accepted = hs.check_response(101, response).unwrap();
/// assert_eq!((accepted.protocol, accepted.deflate), (None, None));
/// ```
#[derive(Clone, Debug)]
pub struct ClientHandshake<'p> {
    key: [u8; 24],
    protocols: &'p [&'p str],
    deflate: Option<(DeflateConfig, ExtensionValue)>,
}

/// What the server's response agreed to, for [`Conn::new`](crate::ws::Conn::new).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accepted<'p> {
    /// The subprotocol the server chose, one of ours.
    pub protocol: Option<&'p str>,
    /// The permessage-deflate parameters, if the server accepted our offer.
    pub deflate: Option<DeflateParams>,
}

/// Why a response fails the handshake (RFC 6455 §4.1: "the client MUST _Fail the WebSocket
/// Connection_").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseError {
    /// Not 101 (HTTP/1.1), not 2xx (HTTP/2): the status.
    Status(u16),
    /// No `Upgrade: websocket`.
    Upgrade,
    /// No `Connection: upgrade`.
    Connection,
    /// `Sec-WebSocket-Accept` missing, repeated, or not the value of our key.
    Accept,
    /// `Sec-WebSocket-Extensions` malformed, with an extension we did not offer, or with
    /// parameters we cannot accept.
    Extensions(extension::ResponseError),
    /// `Sec-WebSocket-Protocol` not one we offered, or more than one.
    Protocol,
}

impl std::fmt::Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseError::Status(s) => write!(f, "websocket handshake: status {s}"),
            ResponseError::Upgrade => f.write_str("websocket handshake: no Upgrade: websocket"),
            ResponseError::Connection => f.write_str("websocket handshake: no Connection: upgrade"),
            ResponseError::Accept => f.write_str("websocket handshake: wrong Sec-WebSocket-Accept"),
            ResponseError::Extensions(e) => write!(f, "websocket handshake: extensions: {e:?}"),
            ResponseError::Protocol => f.write_str("websocket handshake: subprotocol not offered"),
        }
    }
}

impl std::error::Error for ResponseError {}

impl ClientHandshake<'static> {
    /// A handshake whose `Sec-WebSocket-Key` is the base64 of `nonce`.
    pub fn new(nonce: [u8; 16]) -> ClientHandshake<'static> {
        ClientHandshake { key: base64::encode_padded(&nonce), protocols: &[], deflate: None }
    }
}

impl<'p> ClientHandshake<'p> {
    /// Offers these subprotocols, in our order of preference.
    ///
    /// # Panics
    /// If one is not a token (RFC 6455 §4.1): a programming error.
    pub fn protocols<'q>(self, protocols: &'q [&'q str]) -> ClientHandshake<'q> {
        assert!(protocols.iter().all(|p| is_token(p.as_bytes())), "subprotocols are tokens");
        ClientHandshake { key: self.key, protocols, deflate: self.deflate }
    }

    /// Offers permessage-deflate with `config` (not in a build without the `ws-deflate`
    /// feature).
    pub fn deflate(mut self, config: DeflateConfig) -> ClientHandshake<'p> {
        if deflate::AVAILABLE {
            let offer = extension::offer(&config);
            self.deflate = Some((config, offer));
        }
        self
    }

    /// The `Sec-WebSocket-Key` value.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The request's fields, names in lowercase: over HTTP/1.1 `upgrade`, `connection` and
    /// `sec-websocket-key`; then `sec-websocket-version`, one `sec-websocket-protocol` per
    /// subprotocol (RFC 6455 §11.3.4: several lines are one list) and
    /// `sec-websocket-extensions` when offered. Over HTTP/2 the request is an extended
    /// CONNECT with `:protocol` `websocket` (RFC 8441 §4), which the caller writes.
    pub fn fields(&self, version: Version) -> impl Iterator<Item = (&'static str, &[u8])> {
        let h1 = version < Version::Http2;
        let head = [
            h1.then_some(("upgrade", &b"websocket"[..])),
            h1.then_some(("connection", &b"Upgrade"[..])),
            h1.then_some(("sec-websocket-key", &self.key[..])),
            Some(("sec-websocket-version", VERSION.as_bytes())),
            self.deflate.as_ref().map(|(_, v)| ("sec-websocket-extensions", v.as_bytes())),
        ];
        let protocols = self.protocols.iter().map(|p| ("sec-websocket-protocol", p.as_bytes()));
        head.into_iter().flatten().chain(protocols)
    }

    /// Checks an HTTP/1.1 response (RFC 6455 §4.1, the client's steps 1-6): status 101,
    /// `Upgrade: websocket`, `Connection: upgrade`, `Sec-WebSocket-Accept` of our key, only
    /// extensions and a subprotocol we offered.
    ///
    /// # Errors
    /// The first rule broken ([`ResponseError`]).
    pub fn check_response<'a, I>(
        &self,
        status: u16,
        fields: I,
    ) -> Result<Accepted<'p>, ResponseError>
    where
        I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
        I::IntoIter: Clone,
    {
        if status != 101 {
            return Err(ResponseError::Status(status));
        }
        let fields = fields.into_iter();
        if !has_token(lines(fields.clone(), "upgrade"), "websocket") {
            return Err(ResponseError::Upgrade);
        }
        if !has_token(lines(fields.clone(), "connection"), "upgrade") {
            return Err(ResponseError::Connection);
        }
        let mut accepts = lines(fields.clone(), "sec-websocket-accept");
        let want = accept_key(&self.key);
        match (accepts.next(), accepts.next()) {
            (Some(a), None) if trim_ows(a) == want => {}
            _ => return Err(ResponseError::Accept),
        }
        self.agreed(fields)
    }

    /// Checks an HTTP/2 response to the extended CONNECT (RFC 8441 §5): a 2xx status, only
    /// extensions and a subprotocol we offered.
    ///
    /// # Errors
    /// As [`ClientHandshake::check_response`].
    pub fn check_connect_response<'a, I>(
        &self,
        status: u16,
        fields: I,
    ) -> Result<Accepted<'p>, ResponseError>
    where
        I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
        I::IntoIter: Clone,
    {
        if !(200..300).contains(&status) {
            return Err(ResponseError::Status(status));
        }
        self.agreed(fields.into_iter())
    }

    /// The extensions and subprotocol of a response (RFC 6455 §4.1 steps 5 and 6).
    fn agreed<'a, I>(&self, fields: I) -> Result<Accepted<'p>, ResponseError>
    where
        I: Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
    {
        let offered = self.deflate.as_ref().map(|(c, _)| c);
        let deflate =
            extension::check_response(offered, lines(fields.clone(), "sec-websocket-extensions"))
                .map_err(ResponseError::Extensions)?;
        let mut protocols = lines(fields, "sec-websocket-protocol");
        let protocol = match (protocols.next(), protocols.next()) {
            (None, _) => None,
            (Some(p), None) => {
                let p = trim_ows(p);
                let ours = self.protocols.iter().find(|o| o.as_bytes() == p);
                Some(*ours.ok_or(ResponseError::Protocol)?)
            }
            _ => return Err(ResponseError::Protocol),
        };
        Ok(Accepted { protocol, deflate })
    }
}
