//! Close status codes (RFC 6455 §7.4): an open set, named where the RFC names them.

use std::fmt;

/// A close status code (RFC 6455 §7.4).
///
/// An open newtype: codes this crate does not name (an application's 4000-4999, a library's
/// 3000-3999) round-trip unchanged. [`CloseCode::is_allowed_on_wire`] says which codes a Close
/// frame may carry.
///
/// # Examples
/// ```
/// use peregrine::ws::CloseCode;
/// assert_eq!(CloseCode::from(1009), CloseCode::TOO_BIG);
/// assert_eq!(format!("{:?}", CloseCode::NORMAL), "NORMAL");
/// assert_eq!(format!("{:?}", CloseCode::from(4321)), "CloseCode(4321)");
/// assert!(CloseCode::from(4321).is_allowed_on_wire());
/// assert!(!CloseCode::NO_STATUS.is_allowed_on_wire());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(u16);

impl CloseCode {
    /// 1000: the purpose of the connection was fulfilled.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: the endpoint is going away (a server shutting down, a page navigated away).
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: a protocol error.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: a data type the endpoint cannot accept (text to a binary-only endpoint).
    pub const UNSUPPORTED_DATA: CloseCode = CloseCode(1003);
    /// 1004: reserved, meaning undefined; never sent.
    pub const RESERVED: CloseCode = CloseCode(1004);
    /// 1005: no status code was present (an empty Close payload); never sent.
    pub const NO_STATUS: CloseCode = CloseCode(1005);
    /// 1006: the connection closed without a Close frame; never sent.
    pub const ABNORMAL: CloseCode = CloseCode(1006);
    /// 1007: message data inconsistent with its type (text that is not UTF-8).
    pub const INVALID_PAYLOAD: CloseCode = CloseCode(1007);
    /// 1008: a message violates the endpoint's policy.
    pub const POLICY: CloseCode = CloseCode(1008);
    /// 1009: a message too big to process.
    pub const TOO_BIG: CloseCode = CloseCode(1009);
    /// 1010 (client): the server did not negotiate an extension the client requires.
    pub const MANDATORY_EXTENSION: CloseCode = CloseCode(1010);
    /// 1011 (server): an unexpected condition prevented it from fulfilling the request.
    pub const INTERNAL: CloseCode = CloseCode(1011);
    /// 1012 (IANA registry): the service is restarting.
    pub const SERVICE_RESTART: CloseCode = CloseCode(1012);
    /// 1013 (IANA registry): try again later (temporary overload).
    pub const TRY_AGAIN_LATER: CloseCode = CloseCode(1013);
    /// 1014 (IANA registry): a gateway received an invalid response from upstream.
    pub const BAD_GATEWAY: CloseCode = CloseCode(1014);
    /// 1015: the TLS handshake failed; never sent.
    pub const TLS_HANDSHAKE: CloseCode = CloseCode(1015);

    /// The numeric code.
    pub const fn get(self) -> u16 {
        self.0
    }

    /// Whether a Close frame may carry this code, sent or received (RFC 6455 §7.4.1, §7.4.2,
    /// and the IANA registry's 1012-1014).
    ///
    /// - 0-999: "not used".
    /// - 1000-2999: "reserved for definition by this protocol, its future revisions, and
    ///   extensions": only the defined ones; 1004 is reserved, and 1005, 1006 and 1015 "MUST
    ///   NOT be set as a status code in a Close control frame by an endpoint".
    /// - 3000-3999 (registered by libraries and frameworks) and 4000-4999 (private use):
    ///   allowed.
    /// - 5000 and above: undefined.
    pub const fn is_allowed_on_wire(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }

    /// The name RFC 6455 §7.4.1 (or the IANA registry) gives the code, if any.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1000 => "NORMAL",
            1001 => "GOING_AWAY",
            1002 => "PROTOCOL_ERROR",
            1003 => "UNSUPPORTED_DATA",
            1004 => "RESERVED",
            1005 => "NO_STATUS",
            1006 => "ABNORMAL",
            1007 => "INVALID_PAYLOAD",
            1008 => "POLICY",
            1009 => "TOO_BIG",
            1010 => "MANDATORY_EXTENSION",
            1011 => "INTERNAL",
            1012 => "SERVICE_RESTART",
            1013 => "TRY_AGAIN_LATER",
            1014 => "BAD_GATEWAY",
            1015 => "TLS_HANDSHAKE",
            _ => return None,
        })
    }
}

impl From<u16> for CloseCode {
    fn from(code: u16) -> CloseCode {
        CloseCode(code)
    }
}

impl From<CloseCode> for u16 {
    fn from(code: CloseCode) -> u16 {
        code.0
    }
}

impl fmt::Debug for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "CloseCode({})", self.0),
        }
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}
