//! What one WebSocket connection accepts and how long it waits: the limits on received
//! frames and messages, and the connection's timers.

use std::time::Duration;

/// The limits of one connection, and its timers.
///
/// | Field | Default | Exceeded |
/// |---|---|---|
/// | `max_frame_size` | 16 MiB | close 1009, from the header alone |
/// | `max_message_size` | 64 MiB | close 1009 (inflated size, for a compressed message) |
/// | `max_fragments` | 65,536 | close 1008 |
/// | `close_timeout` | 5 s | the connection closes without the peer's Close |
/// | `ping_interval` | off | a Ping after this long without a received byte |
/// | `idle_timeout` | off | close 1001 after this long without a received byte |
///
/// The sizes are tungstenite's defaults. `max_fragments` bounds the work per message, not
/// its memory (the size limit does): a flood of empty continuation frames would otherwise
/// never end. Its default lets Autobahn's largest fragmented cases through (4 MiB in 64-octet
/// fragments is 65,536 of them) and stops a 64 MiB message sent in 1-octet fragments after
/// 64 KiB of it.
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use peregrine::ws::Limits;
/// let limits = Limits { max_message_size: 1 << 20, ping_interval: Some(Duration::from_secs(30)), ..Limits::default() };
/// assert_eq!(limits.max_frame_size, 16 << 20);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest frame payload received, checked on the header before any of the payload
    /// is buffered.
    pub max_frame_size: u64,
    /// The longest message received: the sum of its frames' payloads, or what a compressed
    /// message inflates to (inflation stops there: a deflate bomb costs this much memory at
    /// most).
    pub max_message_size: usize,
    /// The most frames one message may arrive in.
    pub max_fragments: u32,
    /// After we send a Close, how long the peer has to answer with its own (RFC 6455 §7.1.1:
    /// then the connection is closed anyway).
    pub close_timeout: Duration,
    /// When nothing has been received for this long, a Ping is sent (again every interval
    /// while the silence lasts); `None`: no keep-alive pings.
    pub ping_interval: Option<Duration>,
    /// When nothing has been received for this long, the connection is failed (a Close with
    /// 1001 queued, nothing more read); `None`: no limit.
    pub idle_timeout: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_frame_size: 16 << 20,
            max_message_size: 64 << 20,
            max_fragments: 65_536,
            close_timeout: Duration::from_secs(5),
            ping_interval: None,
            idle_timeout: None,
        }
    }
}
