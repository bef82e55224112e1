//! A connection's configuration: its limits, how it frames what it sends, and its
//! permessage-deflate preferences.

use super::extension::DeflateConfig;
use super::limits::Limits;

/// What a connection enforces and how it sends, shared by the connections of a server or a
/// client (an `Arc`, so a connection holds a pointer, not a copy).
///
/// | Setting | Default |
/// |---|---|
/// | `limits` | [`Limits::default`] (16 MiB frames, 64 MiB messages, 5 s close timeout) |
/// | `fragment_size` | `None`: a message is one frame |
/// | `deflate` | `None`: permessage-deflate neither offered nor accepted |
///
/// permessage-deflate is off by default because of its memory: with context takeover each
/// connection keeps about 420 KiB of compression state for its life (see [`DeflateConfig`]),
/// against a few hundred octets for an idle connection without it.
///
/// # Examples
/// ```
/// use peregrine::ws::{Config, DeflateConfig};
/// let config = Config { deflate: Some(DeflateConfig::default()), ..Config::default() };
/// assert_eq!(config.fragment_size, None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Limits on what is received, and the timers.
    pub limits: Limits,
    /// Messages sent are cut into frames of at most this many payload octets (at least 1);
    /// `None`: one frame per message.
    pub fragment_size: Option<usize>,
    /// permessage-deflate: what the handshake offers or accepts, and how we compress.
    pub deflate: Option<DeflateConfig>,
}
