//! The peer's settings as its SETTINGS frames have set them (RFC 9113 §6.5.2).

use crate::http2::flow::DEFAULT_WINDOW;
use crate::http2::frame::{DEFAULT_MAX_FRAME_SIZE, SettingId};

/// The peer's current settings: the RFC 9113 §6.5.2 initial values until its SETTINGS say
/// otherwise.
///
/// # Examples
/// ```
/// use peregrine::http2::PeerSettings;
/// let s = PeerSettings::default();
/// assert_eq!((s.initial_window_size, s.max_frame_size), (65_535, 16_384));
/// assert_eq!(s.max_concurrent_streams, None); // unlimited until the peer says
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerSettings {
    /// SETTINGS_HEADER_TABLE_SIZE: the table our encoder may use (initial 4,096).
    pub header_table_size: u32,
    /// SETTINGS_ENABLE_PUSH (initial true; irrelevant, we never push).
    pub enable_push: bool,
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams we may open (initially unlimited).
    pub max_concurrent_streams: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE: each stream's send window at its start (initial 65,535).
    pub initial_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE: the largest payload we may send (initial 16,384).
    pub max_frame_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE (advisory; initially unlimited).
    pub max_header_list_size: Option<u32>,
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441): the server accepts extended CONNECT.
    pub enable_connect_protocol: bool,
    /// SETTINGS_NO_RFC7540_PRIORITIES (RFC 9218).
    pub no_rfc7540_priorities: bool,
}

impl Default for PeerSettings {
    fn default() -> PeerSettings {
        PeerSettings {
            header_table_size: 4096,
            enable_push: true,
            max_concurrent_streams: None,
            initial_window_size: DEFAULT_WINDOW,
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            max_header_list_size: None,
            enable_connect_protocol: false,
            no_rfc7540_priorities: false,
        }
    }
}

impl PeerSettings {
    /// Applies one (already range-checked) entry; unknown identifiers are ignored (§6.5.2).
    pub fn apply(&mut self, id: SettingId, value: u32) {
        match id {
            SettingId::HEADER_TABLE_SIZE => self.header_table_size = value,
            SettingId::ENABLE_PUSH => self.enable_push = value == 1,
            SettingId::MAX_CONCURRENT_STREAMS => self.max_concurrent_streams = Some(value),
            SettingId::INITIAL_WINDOW_SIZE => self.initial_window_size = value,
            SettingId::MAX_FRAME_SIZE => self.max_frame_size = value,
            SettingId::MAX_HEADER_LIST_SIZE => self.max_header_list_size = Some(value),
            SettingId::ENABLE_CONNECT_PROTOCOL => self.enable_connect_protocol = value == 1,
            SettingId::NO_RFC7540_PRIORITIES => self.no_rfc7540_priorities = value == 1,
            _ => {}
        }
    }
}
