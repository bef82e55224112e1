//! What a [`WebSocket`](super::WebSocket) sends and receives.

use bytes::Bytes;

use super::text::Utf8Bytes;
use crate::ws::CloseCode;

/// A WebSocket message (RFC 6455 §5.6) or control frame (§5.5).
///
/// Received messages share the connection's buffer where the wire allowed it: a message that
/// came in one uncompressed frame is not copied.
///
/// # Examples
/// ```
/// use peregrine::websocket::Message;
/// let m = Message::text("hello");
/// assert_eq!(m.as_text(), Some("hello"));
/// assert!(Message::binary(vec![1, 2, 3]).is_binary());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A text message: valid UTF-8.
    Text(Utf8Bytes),
    /// A binary message.
    Binary(Bytes),
    /// A Ping. A received Ping has already been answered with its Pong; a Ping sent asks the
    /// peer for one (at most 125 bytes).
    Ping(Bytes),
    /// A Pong (at most 125 bytes).
    Pong(Bytes),
    /// A Close: the peer's code and reason when received (`None` when it gave no code); when
    /// sent, the closing handshake starts ([`WebSocket::close`](super::WebSocket::close) also
    /// waits for the peer's answer).
    Close(Option<CloseFrame>),
}

/// The code and reason of a Close frame (RFC 6455 §5.5.1, §7.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseFrame {
    /// The status code.
    pub code: CloseCode,
    /// The reason, at most 123 bytes of UTF-8 on the wire.
    pub reason: Utf8Bytes,
}

impl Message {
    /// A text message.
    pub fn text(text: impl Into<Utf8Bytes>) -> Message {
        Message::Text(text.into())
    }

    /// A binary message.
    pub fn binary(data: impl Into<Bytes>) -> Message {
        Message::Binary(data.into())
    }

    /// Whether this is a text message.
    pub fn is_text(&self) -> bool {
        matches!(self, Message::Text(_))
    }

    /// Whether this is a binary message.
    pub fn is_binary(&self) -> bool {
        matches!(self, Message::Binary(_))
    }

    /// Whether this is a Close.
    pub fn is_close(&self) -> bool {
        matches!(self, Message::Close(_))
    }

    /// The text of a text message.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Message::Text(t) => Some(t.as_str()),
            _ => None,
        }
    }

    /// The payload's bytes: a text's UTF-8, a binary's or control frame's data, a Close's
    /// reason.
    pub fn into_data(self) -> Bytes {
        match self {
            Message::Text(t) => t.into_bytes(),
            Message::Binary(b) | Message::Ping(b) | Message::Pong(b) => b,
            Message::Close(Some(frame)) => frame.reason.into_bytes(),
            Message::Close(None) => Bytes::new(),
        }
    }

    /// The payload's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Message::Text(t) => t.len(),
            Message::Binary(b) | Message::Ping(b) | Message::Pong(b) => b.len(),
            Message::Close(Some(frame)) => frame.reason.len(),
            Message::Close(None) => 0,
        }
    }

    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<String> for Message {
    fn from(s: String) -> Message {
        Message::Text(s.into())
    }
}

impl From<&str> for Message {
    fn from(s: &str) -> Message {
        Message::Text(s.into())
    }
}

impl From<Bytes> for Message {
    fn from(b: Bytes) -> Message {
        Message::Binary(b)
    }
}

impl From<Vec<u8>> for Message {
    fn from(b: Vec<u8>) -> Message {
        Message::Binary(b.into())
    }
}
