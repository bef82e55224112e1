//! What a connection advertises in its SETTINGS and the limits it enforces, with their
//! defaults. One struct: the server and the client both start from [`Config::default`].

use std::time::Duration;

/// The settings we advertise and the timers we keep (RFC 9113 §6.5.2).
///
/// | Field | Default | Advertised as |
/// |---|---|---|
/// | `header_table_size` | 4,096 | SETTINGS_HEADER_TABLE_SIZE |
/// | `max_concurrent_streams` | 100 | SETTINGS_MAX_CONCURRENT_STREAMS |
/// | `initial_window_size` | 256 KiB | SETTINGS_INITIAL_WINDOW_SIZE (every stream's receive window) |
/// | `connection_window_size` | 1 MiB | a WINDOW_UPDATE on stream 0 right after SETTINGS |
/// | `max_frame_size` | 16,384 | SETTINGS_MAX_FRAME_SIZE |
/// | `max_header_list_size` | 16 KiB | SETTINGS_MAX_HEADER_LIST_SIZE |
/// | `enable_connect_protocol` | false | SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441), servers only |
/// | `settings_timeout` | 10 s | (our SETTINGS unacknowledged that long: GOAWAY SETTINGS_TIMEOUT) |
/// | `shutdown_timeout` | 5 s | (graceful shutdown's second GOAWAY at the latest this long after the first) |
/// | `max_send_buffer` | 1 MiB | (bytes queued for the socket beyond which `send_data` accepts nothing) |
///
/// SETTINGS_ENABLE_PUSH is always advertised as 0: server push is not implemented (RFC 9113
/// §8.4; browsers have removed it).
///
/// # Examples
/// ```
/// use peregrine::http2::Config;
/// let config = Config { max_concurrent_streams: 250, ..Config::default() };
/// assert_eq!(config.limits.max_continuation_frames, 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The HPACK dynamic table our decoder allows the peer's encoder.
    pub header_table_size: u32,
    /// Streams the peer may have open at once; a HEADERS beyond it is refused with
    /// RST_STREAM(REFUSED_STREAM) (RFC 9113 §5.1.2).
    pub max_concurrent_streams: u32,
    /// Every stream's receive window: how much request (or response) body the peer may send
    /// ahead of the application releasing it. Fixed; not grown by BDP estimation.
    pub initial_window_size: u32,
    /// The connection's receive window, across all streams.
    pub connection_window_size: u32,
    /// The largest frame payload we accept (16,384..=16,777,215).
    pub max_frame_size: u32,
    /// The largest decoded header list we accept (name + value + 32 per field, RFC 9113
    /// §6.5.2). A larger request gets a 431 response; a larger response resets the stream.
    pub max_header_list_size: u32,
    /// Accept extended CONNECT (RFC 8441): requests with `:protocol`.
    pub enable_connect_protocol: bool,
    /// How long our SETTINGS may go unacknowledged (RFC 9113 §6.5.3).
    pub settings_timeout: Duration,
    /// The longest graceful shutdown waits for the PING round trip between its two GOAWAY
    /// frames (RFC 9113 §6.8).
    pub shutdown_timeout: Duration,
    /// Bytes of frames queued for the socket beyond which `send_data` accepts no more, so a
    /// peer that grants window but does not read cannot make the connection buffer without
    /// bound. Streams refused for this become writable when `poll_transmit` drains the queue.
    pub max_send_buffer: usize,
    /// The abuse budgets.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            header_table_size: 4096,
            max_concurrent_streams: 100,
            initial_window_size: 256 * 1024,
            connection_window_size: 1024 * 1024,
            max_frame_size: 16_384,
            max_header_list_size: 16 * 1024,
            enable_connect_protocol: false,
            settings_timeout: Duration::from_secs(10),
            shutdown_timeout: Duration::from_secs(5),
            max_send_buffer: 1024 * 1024,
            limits: Limits::default(),
        }
    }
}

/// A burst size and a refill rate: a token bucket's (the abuse budgets of [`Limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Events allowed at once, from a full bucket.
    pub burst: u32,
    /// Events per second the bucket refills (0: never refills; `burst` per connection).
    pub per_second: u32,
}

/// Abuse budgets: each bounds the work or memory one kind of peer behaviour can cost, and ends
/// the connection with GOAWAY(ENHANCE_YOUR_CALM) when spent. Rates are token buckets
/// ([`Rate`]: a burst, then a sustained rate), so a peer that does the thing legitimately now
/// and then is never punished.
///
/// | Budget | Default | Counts | Reaction |
/// |---|---|---|---|
/// | `rapid_reset` | burst 200, 100/s | RST_STREAM from the peer on a stream it opened before we finished our response (CVE-2023-44487) | GOAWAY(ENHANCE_YOUR_CALM) |
/// | `provoked_reset` | burst 200, 100/s | RST_STREAM we send because of the peer's frames: malformed messages, flow-control and state errors, refused streams (CVE-2025-8671) | GOAWAY(ENHANCE_YOUR_CALM) |
/// | `max_continuation_frames` | 8 | CONTINUATION frames in one field block (CVE-2024-27316 family) | GOAWAY(ENHANCE_YOUR_CALM) |
/// | `max_header_block_bytes` | 64 KiB | compressed octets of one field block, buffered until END_HEADERS | GOAWAY(ENHANCE_YOUR_CALM) |
/// | `tiny_data` | burst 1000, 500/s | DATA frames without END_STREAM carrying fewer than `tiny_data_bytes` (8) octets, empty ones included | GOAWAY(ENHANCE_YOUR_CALM) |
/// | `max_queued_acks` | 128 | PING and SETTINGS acknowledgements queued since the last `poll_transmit` (a peer that does not read) | GOAWAY(ENHANCE_YOUR_CALM) |
/// | `max_settings_entries` | 32 | entries in one SETTINGS frame | GOAWAY(ENHANCE_YOUR_CALM) |
/// | `control_frames` | burst 1000, 500/s, +2 per DATA and +1 per HEADERS frame we send | PING, SETTINGS, PRIORITY, WINDOW_UPDATE and RST_STREAM frames (those not counted above), unknown frame types, DATA and HEADERS ignored on streams we reset | GOAWAY(ENHANCE_YOUR_CALM) |
///
/// The header list itself is bounded by [`Config::max_header_list_size`] (431 or a reset,
/// not a connection error), and concurrent streams by [`Config::max_concurrent_streams`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Peer-opened streams the peer cancels before we finished responding.
    pub rapid_reset: Rate,
    /// Stream resets the peer's frames make us send.
    pub provoked_reset: Rate,
    /// CONTINUATION frames per field block.
    pub max_continuation_frames: u32,
    /// Compressed octets per field block (HEADERS + CONTINUATION fragments).
    pub max_header_block_bytes: usize,
    /// DATA frames without END_STREAM carrying fewer than `tiny_data_bytes` octets.
    pub tiny_data: Rate,
    /// What "tiny" means for [`tiny_data`](Self::tiny_data).
    pub tiny_data_bytes: u32,
    /// PING and SETTINGS ACKs queued and not yet taken by `poll_transmit`.
    pub max_queued_acks: u32,
    /// Entries per SETTINGS frame.
    pub max_settings_entries: usize,
    /// Control frames (PING, SETTINGS, PRIORITY, WINDOW_UPDATE, stray RST_STREAM, unknown), and
    /// frames ignored on streams we reset.
    pub control_frames: Rate,
    /// How many closed streams are remembered (how they closed decides what a late frame on
    /// them means, RFC 9113 §5.1); older ones are treated as reset by us, their late frames
    /// ignored.
    pub closed_streams_remembered: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            rapid_reset: Rate { burst: 200, per_second: 100 },
            provoked_reset: Rate { burst: 200, per_second: 100 },
            max_continuation_frames: 8,
            max_header_block_bytes: 64 * 1024,
            tiny_data: Rate { burst: 1000, per_second: 500 },
            tiny_data_bytes: 8,
            max_queued_acks: 128,
            max_settings_entries: 32,
            control_frames: Rate { burst: 1000, per_second: 500 },
            closed_streams_remembered: 256,
        }
    }
}
