//! permessage-deflate's parameters (RFC 7692 §7.1): our preferences, what both ends agreed,
//! the server's choice among offers, the client's offer and its check of the response.

use std::fmt::Write;

use super::{Extension, PERMESSAGE_DEFLATE, extensions};
use crate::text::Text;

/// Our permessage-deflate preferences, for either end (RFC 7692 §7.1). The window sizes are
/// base-2 logarithms, 9..=15 (see [`DeflateConfig::server_max_window_bits`] on 8).
///
/// Memory, measured with zlib-rs: a compressor holds about 370 KiB at a 2^15 window (245 KiB
/// at 2^9), an inflater about 46 KiB; with context takeover they live as long as the
/// connection. Each is made on first use; one without context takeover is dropped by
/// [`Conn::shrink`](crate::ws::Conn::shrink) and made again when next needed.
///
/// # Examples
/// ```
/// use peregrine::ws::DeflateConfig;
/// let config = DeflateConfig { server_no_context_takeover: true, ..DeflateConfig::default() };
/// assert_eq!(config.server_max_window_bits, 15);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeflateConfig {
    /// The compression level, 0-9 (1: the fastest that compresses).
    pub level: u32,
    /// Messages shorter than this are sent uncompressed (RFC 7692 §6: any message may be).
    pub min_size: usize,
    /// A server resets its compressor after every message (announced in its response even
    /// when the client did not ask: RFC 7692 §7.1.1.1); a client asks the server for it.
    pub server_no_context_takeover: bool,
    /// A server asks the client to reset its compressor after every message (RFC 7692
    /// §7.1.1.2: allowed in any response); a client does so and says it in its offer.
    pub client_no_context_takeover: bool,
    /// A server's compressor window: at most this (and at most what a client asks for); a
    /// client asks the server for at most this when below 15.
    ///
    /// zlib cannot compress raw deflate with a 2^8 window (it refuses 8 for raw streams and
    /// turns 8 into 9 for zlib streams; zlib-rs does the same, and flate2 panics below 9);
    /// compressing with 9 instead could make back-references the peer's 256-octet window
    /// cannot resolve. So an end limited to 8 by its peer accepts, and sends its messages
    /// uncompressed (RSV1 clear), which RFC 7692 allows for any message.
    pub server_max_window_bits: u8,
    /// A server asks a client that allows it to compress with at most this window (when below
    /// 15); a client compresses with at most this.
    pub client_max_window_bits: u8,
}

impl Default for DeflateConfig {
    fn default() -> DeflateConfig {
        DeflateConfig {
            level: 1,
            min_size: 32,
            server_no_context_takeover: false,
            client_no_context_takeover: false,
            server_max_window_bits: 15,
            client_max_window_bits: 15,
        }
    }
}

/// The permessage-deflate parameters both ends agreed on (RFC 7692 §7.1): what the server's
/// response says, with the defaults for what it leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeflateParams {
    /// The server resets its compressor after every message.
    pub server_no_context_takeover: bool,
    /// The client resets its compressor after every message.
    pub client_no_context_takeover: bool,
    /// The server compresses with at most this window (8..=15).
    pub server_max_window_bits: u8,
    /// The client compresses with at most this window (8..=15).
    pub client_max_window_bits: u8,
}

impl Default for DeflateParams {
    /// The parameters of an offer without any: context takeover, 2^15 windows.
    fn default() -> DeflateParams {
        DeflateParams {
            server_no_context_takeover: false,
            client_no_context_takeover: false,
            server_max_window_bits: 15,
            client_max_window_bits: 15,
        }
    }
}

/// A `Sec-WebSocket-Extensions` value we send, on the stack.
#[derive(Clone, Copy, Debug)]
pub struct ExtensionValue(Text<160>);

impl ExtensionValue {
    /// The value's octets.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl DeflateParams {
    /// The server's response: `permessage-deflate` and every parameter that differs from the
    /// default (both window sizes when the offer had them: `window_bits_offered`).
    fn response(&self, server_bits_offered: bool, client_bits_offered: bool) -> ExtensionValue {
        let mut t = Text::new();
        let _ = t.write_str(PERMESSAGE_DEFLATE);
        if self.server_no_context_takeover {
            let _ = t.write_str("; server_no_context_takeover");
        }
        if self.client_no_context_takeover {
            let _ = t.write_str("; client_no_context_takeover");
        }
        if server_bits_offered || self.server_max_window_bits < 15 {
            let _ = write!(t, "; server_max_window_bits={}", self.server_max_window_bits);
        }
        if client_bits_offered {
            let _ = write!(t, "; client_max_window_bits={}", self.client_max_window_bits);
        }
        ExtensionValue(t)
    }
}

/// A permessage-deflate offer's or response's parameters, each at most once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Parsed {
    server_no_context_takeover: bool,
    client_no_context_takeover: bool,
    server_max_window_bits: Option<u8>,
    /// `Some(None)`: the parameter without a value (allowed in an offer only).
    client_max_window_bits: Option<Option<u8>>,
}

/// Reads permessage-deflate parameters (RFC 7692 §7.1): `None` for an unknown parameter, one
/// given twice, a value where none is allowed or none where one is required, a window size
/// outside 8..=15.
fn parse_params(ext: &Extension<'_>) -> Option<Parsed> {
    let mut p = Parsed::default();
    for param in ext.params() {
        let name = param.name;
        let bits = || param.value?.small_int().filter(|b| (8..=15).contains(b));
        let is = |s: &str| name.eq_ignore_ascii_case(s.as_bytes());
        if is("server_no_context_takeover") {
            if p.server_no_context_takeover || param.value.is_some() {
                return None;
            }
            p.server_no_context_takeover = true;
        } else if is("client_no_context_takeover") {
            if p.client_no_context_takeover || param.value.is_some() {
                return None;
            }
            p.client_no_context_takeover = true;
        } else if is("server_max_window_bits") {
            if p.server_max_window_bits.is_some() {
                return None;
            }
            p.server_max_window_bits = Some(bits()?);
        } else if is("client_max_window_bits") {
            if p.client_max_window_bits.is_some() {
                return None;
            }
            p.client_max_window_bits = Some(match param.value {
                None => None,
                Some(_) => Some(bits()?),
            });
        } else {
            return None;
        }
    }
    Some(p)
}

/// Server: picks the first permessage-deflate offer of the request's
/// `Sec-WebSocket-Extensions` lines it can accept (RFC 7692 §5.1: offers come in the client's
/// order of preference) and returns the agreed parameters and the response's value.
///
/// An offer with an unknown or repeated parameter, or a bad value, is declined (RFC 7692
/// §5.1) and the next one tried; a malformed list declines them all (the handshake goes on
/// without compression). Other extensions are ignored: we support none.
///
/// # Examples
/// ```
/// use peregrine::ws::DeflateConfig;
/// use peregrine::ws::extension::negotiate;
/// let offers: [&[u8]; 1] = [b"permessage-deflate; foo, permessage-deflate; client_max_window_bits"];
/// let (params, value) = negotiate(&DeflateConfig::default(), offers).unwrap();
/// assert_eq!(params.client_max_window_bits, 15);
/// assert_eq!(value.as_bytes(), b"permessage-deflate; client_max_window_bits=15");
/// ```
pub fn negotiate<'a, I>(config: &DeflateConfig, lines: I) -> Option<(DeflateParams, ExtensionValue)>
where
    I: IntoIterator<Item = &'a [u8]>,
    I::IntoIter: Clone,
{
    let lines = lines.into_iter();
    if extensions(lines.clone()).any(|e| e.is_err()) {
        return None;
    }
    extensions(lines).flatten().find_map(|ext| {
        if !ext.name.eq_ignore_ascii_case(PERMESSAGE_DEFLATE.as_bytes()) {
            return None;
        }
        let offer = parse_params(&ext)?;
        let ours_s = config.server_max_window_bits.clamp(9, 15);
        let ours_c = config.client_max_window_bits.clamp(9, 15);
        let params = DeflateParams {
            // RFC 7692 §7.1.1.1: a server accepting an offer with server_no_context_takeover
            // "MUST include" it; it may include it unasked.
            server_no_context_takeover: offer.server_no_context_takeover
                || config.server_no_context_takeover,
            // §7.1.1.2: the offer's parameter is a hint; a server may include it regardless.
            client_no_context_takeover: offer.client_no_context_takeover
                || config.client_no_context_takeover,
            // §7.1.2.1: "the same or smaller value as the offer"; a server may limit its own
            // window unasked.
            server_max_window_bits: offer.server_max_window_bits.map_or(ours_s, |b| b.min(ours_s)),
            // §7.1.2.2: only if the offer has the parameter, at most its value if it has one;
            // without it the client may use 2^15.
            client_max_window_bits: match offer.client_max_window_bits {
                Some(bits) => bits.unwrap_or(15).min(ours_c),
                None => 15,
            },
        };
        let value = params.response(
            offer.server_max_window_bits.is_some(),
            offer.client_max_window_bits.is_some(),
        );
        Some((params, value))
    })
}

/// Client: the permessage-deflate offer of `config` (RFC 7692 §7.1), always saying it accepts
/// `client_max_window_bits` from the server.
///
/// # Examples
/// ```
/// use peregrine::ws::DeflateConfig;
/// use peregrine::ws::extension::offer;
/// assert_eq!(offer(&DeflateConfig::default()).as_bytes(), b"permessage-deflate; client_max_window_bits");
/// ```
pub fn offer(config: &DeflateConfig) -> ExtensionValue {
    let mut t = Text::new();
    let _ = t.write_str(PERMESSAGE_DEFLATE);
    if config.server_no_context_takeover {
        let _ = t.write_str("; server_no_context_takeover");
    }
    if config.client_no_context_takeover {
        let _ = t.write_str("; client_no_context_takeover");
    }
    let server_bits = config.server_max_window_bits.clamp(9, 15);
    if server_bits < 15 {
        let _ = write!(t, "; server_max_window_bits={server_bits}");
    }
    let client_bits = config.client_max_window_bits.clamp(9, 15);
    let _ = t.write_str("; client_max_window_bits");
    if client_bits < 15 {
        let _ = write!(t, "={client_bits}");
    }
    ExtensionValue(t)
}

/// Why a server's `Sec-WebSocket-Extensions` fails the handshake (RFC 6455 §4.1: "the client
/// MUST _Fail the WebSocket Connection_" on an extension it did not offer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResponseError {
    /// The value does not follow the grammar.
    Malformed,
    /// An extension we did not offer, or permessage-deflate twice.
    NotOffered,
    /// permessage-deflate with a parameter that breaks RFC 7692 §7.1 or our offer.
    BadParams,
}

/// Client: checks the server's `Sec-WebSocket-Extensions` lines against our offer (`None`: we
/// offered nothing) and returns the agreed parameters (`None`: no compression).
///
/// # Errors
/// See [`ResponseError`]. RFC 7692 §7.1: the response may add `server_no_context_takeover`
/// and `client_no_context_takeover` unasked and lower `server_max_window_bits` below ours; it
/// must have `server_max_window_bits` if we asked for it, and may have
/// `client_max_window_bits` (with a value, at most ours) because we always allow it.
///
/// # Examples
/// ```
/// use peregrine::ws::DeflateConfig;
/// use peregrine::ws::extension::check_response;
/// let config = DeflateConfig::default();
/// let params = check_response(Some(&config), [&b"permessage-deflate; server_max_window_bits=10"[..]]).unwrap().unwrap();
/// assert_eq!(params.server_max_window_bits, 10);
/// assert!(check_response(None, [&b"permessage-deflate"[..]]).is_err());
/// ```
pub fn check_response<'a, I>(
    offered: Option<&DeflateConfig>,
    lines: I,
) -> Result<Option<DeflateParams>, ResponseError>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let mut agreed = None;
    for ext in extensions(lines) {
        let ext = ext.map_err(|_| ResponseError::Malformed)?;
        let Some(config) = offered else { return Err(ResponseError::NotOffered) };
        if !ext.name.eq_ignore_ascii_case(PERMESSAGE_DEFLATE.as_bytes()) || agreed.is_some() {
            return Err(ResponseError::NotOffered);
        }
        let p = parse_params(&ext).ok_or(ResponseError::BadParams)?;
        let asked_s = config.server_max_window_bits.clamp(9, 15);
        let ours_c = config.client_max_window_bits.clamp(9, 15);
        let server_bits = match p.server_max_window_bits {
            Some(b) if b <= asked_s => b,
            Some(_) => return Err(ResponseError::BadParams),
            // §7.1.2.1: a server accepts our limit "by including" the parameter.
            None if asked_s < 15 => return Err(ResponseError::BadParams),
            None => 15,
        };
        let client_bits = match p.client_max_window_bits {
            None => ours_c,
            Some(Some(b)) if b <= ours_c => b,
            // A response's client_max_window_bits needs a value (§7.1.2.2), within our offer.
            Some(_) => return Err(ResponseError::BadParams),
        };
        agreed = Some(DeflateParams {
            server_no_context_takeover: p.server_no_context_takeover,
            client_no_context_takeover: p.client_no_context_takeover
                || config.client_no_context_takeover,
            server_max_window_bits: server_bits,
            client_max_window_bits: client_bits,
        });
    }
    Ok(agreed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(server_nct: bool, client_nct: bool, s: u8, c: u8) -> DeflateParams {
        DeflateParams {
            server_no_context_takeover: server_nct,
            client_no_context_takeover: client_nct,
            server_max_window_bits: s,
            client_max_window_bits: c,
        }
    }

    struct Offer {
        config: DeflateConfig,
        input: &'static [u8],
        expect: Option<(DeflateParams, &'static str)>,
    }

    /// RFC 7692 §7.1: the server's side of each parameter, and the offers it declines.
    #[test]
    fn server_negotiation_rfc7692_7_1() {
        let d = DeflateConfig::default();
        let small = DeflateConfig {
            server_max_window_bits: 10,
            client_max_window_bits: 11,
            client_no_context_takeover: true,
            ..DeflateConfig::default()
        };
        let pmd = "permessage-deflate";
        let cases = [
            Offer { config: d.clone(), input: b"", expect: None },
            Offer { config: d.clone(), input: b"x-webkit-deflate-frame", expect: None },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate",
                expect: Some((params(false, false, 15, 15), pmd)),
            },
            Offer {
                config: d.clone(),
                input: b"PerMessage-Deflate",
                expect: Some((params(false, false, 15, 15), pmd)),
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; client_max_window_bits",
                expect: Some((
                    params(false, false, 15, 15),
                    "permessage-deflate; client_max_window_bits=15",
                )),
            },
            Offer {
                config: d.clone(),
                input:
                    b"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
                expect: Some((
                    params(true, true, 15, 15),
                    "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
                )),
            },
            Offer {
                config: d.clone(),
                input:
                    b"permessage-deflate; server_max_window_bits=10; client_max_window_bits=\"12\"",
                expect: Some((
                    params(false, false, 10, 12),
                    "permessage-deflate; server_max_window_bits=10; client_max_window_bits=12",
                )),
            },
            // 8 is accepted: that end then sends uncompressed (see DeflateConfig).
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; server_max_window_bits=8",
                expect: Some((
                    params(false, false, 8, 15),
                    "permessage-deflate; server_max_window_bits=8",
                )),
            },
            // Our own limits, announced.
            Offer {
                config: small.clone(),
                input: b"permessage-deflate; client_max_window_bits",
                expect: Some((
                    params(false, true, 10, 11),
                    "permessage-deflate; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=11",
                )),
            },
            // Without client_max_window_bits in the offer we cannot limit the client.
            Offer {
                config: small.clone(),
                input: b"permessage-deflate",
                expect: Some((
                    params(false, true, 10, 15),
                    "permessage-deflate; client_no_context_takeover; server_max_window_bits=10",
                )),
            },
            // Declined offers: the next one is taken.
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; foo, permessage-deflate; server_no_context_takeover",
                expect: Some((
                    params(true, false, 15, 15),
                    "permessage-deflate; server_no_context_takeover",
                )),
            },
            Offer {
                config: d.clone(),
                input:
                    b"permessage-deflate; server_no_context_takeover; server_no_context_takeover",
                expect: None,
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; server_no_context_takeover=1",
                expect: None,
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; server_max_window_bits",
                expect: None,
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; server_max_window_bits=7",
                expect: None,
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; server_max_window_bits=16",
                expect: None,
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; server_max_window_bits=010",
                expect: None,
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; client_max_window_bits=1a",
                expect: None,
            },
            Offer {
                config: d.clone(),
                input: b"permessage-deflate; client_max_window_bits; client_max_window_bits=9",
                expect: None,
            },
            // A malformed list declines everything.
            Offer { config: d.clone(), input: b"permessage-deflate, bad bad", expect: None },
        ];
        for c in &cases {
            let got = negotiate(&c.config, [c.input]);
            let got = got.map(|(p, v)| (p, String::from_utf8(v.as_bytes().to_vec()).unwrap()));
            let want = c.expect.map(|(p, v)| (p, v.to_string()));
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(c.input));
        }
    }

    struct Response {
        config: Option<DeflateConfig>,
        input: &'static [u8],
        expect: Result<Option<DeflateParams>, ResponseError>,
    }

    /// RFC 7692 §7.1: what a client accepts in the server's response.
    #[test]
    fn client_checks_the_response_rfc7692_7_1() {
        let d = Some(DeflateConfig::default());
        let asked = Some(DeflateConfig {
            server_max_window_bits: 10,
            client_max_window_bits: 12,
            client_no_context_takeover: true,
            ..DeflateConfig::default()
        });
        let cases = [
            Response { config: d.clone(), input: b"", expect: Ok(None) },
            Response { config: None, input: b"", expect: Ok(None) },
            Response {
                config: None,
                input: b"permessage-deflate",
                expect: Err(ResponseError::NotOffered),
            },
            Response {
                config: d.clone(),
                input: b"permessage-deflate",
                expect: Ok(Some(params(false, false, 15, 15))),
            },
            Response { config: d.clone(), input: b"foo", expect: Err(ResponseError::NotOffered) },
            Response {
                config: d.clone(),
                input: b"permessage-deflate, permessage-deflate",
                expect: Err(ResponseError::NotOffered),
            },
            Response {
                config: d.clone(),
                input: b"permessage-deflate;",
                expect: Err(ResponseError::Malformed),
            },
            Response {
                config: d.clone(),
                input:
                    b"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
                expect: Ok(Some(params(true, true, 15, 15))),
            },
            Response {
                config: d.clone(),
                input: b"permessage-deflate; server_max_window_bits=8",
                expect: Ok(Some(params(false, false, 8, 15))),
            },
            Response {
                config: d.clone(),
                input: b"permessage-deflate; client_max_window_bits=9",
                expect: Ok(Some(params(false, false, 15, 9))),
            },
            Response {
                config: d.clone(),
                input: b"permessage-deflate; client_max_window_bits",
                expect: Err(ResponseError::BadParams),
            },
            Response {
                config: d.clone(),
                input: b"permessage-deflate; x=1",
                expect: Err(ResponseError::BadParams),
            },
            // We asked for server_max_window_bits=10: the response must say at most that.
            Response {
                config: asked.clone(),
                input: b"permessage-deflate; server_max_window_bits=10",
                expect: Ok(Some(params(false, true, 10, 12))),
            },
            Response {
                config: asked.clone(),
                input: b"permessage-deflate; server_max_window_bits=9; client_max_window_bits=10",
                expect: Ok(Some(params(false, true, 9, 10))),
            },
            Response {
                config: asked.clone(),
                input: b"permessage-deflate; server_max_window_bits=11",
                expect: Err(ResponseError::BadParams),
            },
            Response {
                config: asked.clone(),
                input: b"permessage-deflate",
                expect: Err(ResponseError::BadParams),
            },
            Response {
                config: asked.clone(),
                input: b"permessage-deflate; server_max_window_bits=10; client_max_window_bits=13",
                expect: Err(ResponseError::BadParams),
            },
        ];
        for c in &cases {
            let got = check_response(c.config.as_ref(), [c.input]);
            assert_eq!(got, c.expect, "{:?}", String::from_utf8_lossy(c.input));
        }
    }

    #[test]
    fn offers_say_what_the_config_asks() {
        let c = DeflateConfig {
            server_no_context_takeover: true,
            client_no_context_takeover: true,
            server_max_window_bits: 10,
            client_max_window_bits: 9,
            ..DeflateConfig::default()
        };
        assert_eq!(
            offer(&c).as_bytes(),
            b"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=9"
        );
        // The server reads our offer as we mean it.
        let (p, _) = negotiate(&DeflateConfig::default(), [offer(&c).as_bytes()]).unwrap();
        assert_eq!(p, params(true, true, 10, 9));
    }
}
