//! Version 2: the binary header (spec §2.2).
//!
//! ```text
//! signature (12) | ver_cmd (1) | fam (1) | len (2, big-endian) | addresses | TLVs
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::crc32c::Crc32c;
use super::{Addresses, Command, ProxyError, ProxyHeader, Status, Tlvs, V2_MAX_LEN, Version, tlv};

/// The fixed part: signature, version and command, family and transport, length.
const FIXED: usize = 16;

/// Parses a version 2 header; `buf` starts with the whole signature.
pub(super) fn parse(buf: &[u8]) -> Result<Status<ProxyHeader<'_>>, ProxyError> {
    let Some(fixed) = buf.first_chunk::<FIXED>() else {
        return Ok(Status::Partial);
    };
    // "The highest four bits contains the version. [...] it must always be sent as \x2 and
    // the receiver must only accept this value."
    if fixed[12] >> 4 != 2 {
        return Err(ProxyError::V2Version);
    }
    // "other values are unassigned [...] Receivers must drop connections presenting
    // unexpected values here."
    let command = match fixed[12] & 0x0f {
        0 => Command::Local,
        1 => Command::Proxy,
        _ => return Err(ProxyError::V2Command),
    };
    // "the length of the protocol header in bytes is always exactly 16 + this value": known
    // from the fixed part, so an oversized header is refused before it is read.
    let len = FIXED + usize::from(u16::from_be_bytes([fixed[14], fixed[15]]));
    if len > V2_MAX_LEN {
        return Err(ProxyError::V2TooLong);
    }
    let Some(header) = buf.get(..len) else {
        return Ok(Status::Partial);
    };
    let body = &header[FIXED..];
    let (family, transport) = (fixed[13] >> 4, fixed[13] & 0x0f);
    // Families: 0 UNSPEC, 1 INET, 2 INET6, 3 UNIX; transports: 0 UNSPEC, 1 STREAM, 2 DGRAM.
    // "other values [...] must be rejected as invalid by receivers". For LOCAL the receiver
    // "must [...] discard the protocol block including the family which is ignored".
    let block = match family {
        0 => Some(0),
        1 => Some(12),
        2 => Some(36),
        3 => Some(216),
        _ => None,
    };
    if command == Command::Proxy && (block.is_none() || transport > 2) {
        return Err(ProxyError::V2Family);
    }
    let Some(block) = block.filter(|&b| b <= body.len() || command == Command::Proxy) else {
        // LOCAL with an unknown family, or a block the length does not cover: the block is
        // ignored, and the rest is not read as TLVs, whose start is unknown.
        return Ok(complete(command, Addresses::Unspecified, len, &[]));
    };
    let addresses = body.get(..block).ok_or(ProxyError::V2AddressLength)?;
    // "The receiver should ignore address information" for an UNSPEC transport.
    let addresses = match (command, transport) {
        (Command::Local, _) | (_, 0) => Addresses::Unspecified,
        _ => read_addresses(family, addresses),
    };
    let tlvs = &body[block..];
    if let Some(at) = tlv::check(tlvs)? {
        // §2.2.3: the checksum of the whole header with the checksum field zeroed.
        let at = FIXED + block + at;
        let sent = u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
        let sum = Crc32c::new().update(&header[..at]).update(&[0; 4]).update(&header[at + 4..]);
        if sum.finish() != sent {
            return Err(ProxyError::V2Checksum);
        }
    }
    Ok(complete(command, addresses, len, tlvs))
}

fn complete<'a>(
    command: Command,
    addresses: Addresses<'a>,
    len: usize,
    tlvs: &'a [u8],
) -> Status<ProxyHeader<'a>> {
    Status::Complete(ProxyHeader {
        version: Version::V2,
        command,
        addresses,
        len,
        tlvs: Tlvs::checked(tlvs),
    })
}

/// The addresses of a block of the family's exact size: "source layer 3 address, destination
/// layer 3 address, source layer 4 address, destination layer 4 address", in network order.
fn read_addresses(family: u8, block: &[u8]) -> Addresses<'_> {
    let port = |at: usize| u16::from_be_bytes([block[at], block[at + 1]]);
    match family {
        1 => {
            let ip = |at: usize| {
                IpAddr::V4(Ipv4Addr::new(block[at], block[at + 1], block[at + 2], block[at + 3]))
            };
            Addresses::Inet {
                source: SocketAddr::new(ip(0), port(8)),
                destination: SocketAddr::new(ip(4), port(10)),
            }
        }
        2 => {
            let ip = |at: usize| {
                let mut octets = [0; 16];
                octets.copy_from_slice(&block[at..at + 16]);
                IpAddr::V6(Ipv6Addr::from(octets))
            };
            Addresses::Inet {
                source: SocketAddr::new(ip(0), port(32)),
                destination: SocketAddr::new(ip(16), port(34)),
            }
        }
        3 => {
            // "The addresses are exactly 108 bytes each": a path, NUL-padded.
            let path = |b: &'_ [u8]| -> usize { b.iter().position(|&c| c == 0).unwrap_or(b.len()) };
            let (source, destination) = block.split_at(108);
            Addresses::Unix {
                source: &source[..path(source)],
                destination: &destination[..path(destination)],
            }
        }
        _ => Addresses::Unspecified,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{TlvType, V2_SIGNATURE, parse};
    use super::*;

    /// A version 2 header: `ver_cmd`, `fam`, then the address block and TLVs (the length is
    /// computed).
    fn header(ver_cmd: u8, fam: u8, rest: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.extend_from_slice(&[ver_cmd, fam]);
        h.extend_from_slice(&(rest.len() as u16).to_be_bytes());
        h.extend_from_slice(rest);
        h
    }

    const INET: [u8; 12] = [192, 168, 0, 1, 192, 168, 0, 11, 0xdc, 0x04, 0x01, 0xbb];

    enum Expect {
        Inet(&'static str, &'static str),
        Local,
        Unspecified,
        Unix(&'static [u8], &'static [u8]),
        Err(ProxyError),
    }

    #[test]
    fn headers() {
        use Expect::*;
        struct Case {
            input: Vec<u8>,
            expect: Expect,
        }
        let mut v6 = Vec::new();
        v6.extend_from_slice(&Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).octets());
        v6.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        v6.extend_from_slice(&[0x30, 0x39, 0x00, 0x50]);
        let mut unix = vec![0; 216];
        unix[..4].copy_from_slice(b"/a/b");
        unix[108..111].copy_from_slice(b"/cd");
        let mut crc_ok = header(0x21, 0x11, &[&INET[..], b"\x03\x00\x04\0\0\0\0"].concat());
        let sum = Crc32c::new().update(&crc_ok).finish();
        let n = crc_ok.len();
        crc_ok[n - 4..].copy_from_slice(&sum.to_be_bytes());
        let mut crc_bad = crc_ok.clone();
        crc_bad[16] ^= 1;
        let cases = [
            // As HAProxy sends it with `send-proxy-v2`: TCP over IPv4, 172.19.0.1:42578 to
            // 172.19.0.3:80.
            Case {
                input: [
                    &V2_SIGNATURE[..],
                    b"\x21\x11\x00\x0c\xac\x13\x00\x01\xac\x13\x00\x03\xa6\x52\x00\x50GET",
                ]
                .concat(),
                expect: Inet("172.19.0.1:42578", "172.19.0.3:80"),
            },
            Case {
                input: header(0x21, 0x11, &INET),
                expect: Inet("192.168.0.1:56324", "192.168.0.11:443"),
            },
            // UDP over IPv4 (\x12) gives the addresses too.
            Case {
                input: header(0x21, 0x12, &INET),
                expect: Inet("192.168.0.1:56324", "192.168.0.11:443"),
            },
            Case {
                input: header(0x21, 0x21, &v6),
                expect: Inet("[2001:db8::1]:12345", "[::1]:80"),
            },
            Case { input: header(0x21, 0x31, &unix), expect: Unix(b"/a/b", b"/cd") },
            // LOCAL: "must use the real connection endpoints", whatever the block says.
            Case { input: header(0x20, 0x00, b""), expect: Local },
            Case { input: header(0x20, 0x11, &INET), expect: Local },
            Case { input: header(0x20, 0xff, b"anything"), expect: Local },
            // UNSPEC family or transport with PROXY: the addresses are ignored.
            Case { input: header(0x21, 0x00, b""), expect: Unspecified },
            Case { input: header(0x21, 0x10, &INET), expect: Unspecified },
            // Address blocks longer than needed are followed by TLVs; here a NOOP.
            Case {
                input: header(0x21, 0x11, &[&INET[..], b"\x04\x00\x01z"].concat()),
                expect: Inet("192.168.0.1:56324", "192.168.0.11:443"),
            },
            Case { input: crc_ok, expect: Inet("192.168.0.1:56324", "192.168.0.11:443") },
            // Bad headers.
            Case { input: crc_bad, expect: Err(ProxyError::V2Checksum) },
            Case { input: header(0x11, 0x11, &INET), expect: Err(ProxyError::V2Version) },
            Case { input: header(0x31, 0x11, &INET), expect: Err(ProxyError::V2Version) },
            Case { input: header(0x22, 0x11, &INET), expect: Err(ProxyError::V2Command) },
            Case { input: header(0x2f, 0x11, &INET), expect: Err(ProxyError::V2Command) },
            Case { input: header(0x21, 0x41, &INET), expect: Err(ProxyError::V2Family) },
            Case { input: header(0x21, 0x13, &INET), expect: Err(ProxyError::V2Family) },
            Case {
                input: header(0x21, 0x11, &INET[..11]),
                expect: Err(ProxyError::V2AddressLength),
            },
            Case { input: header(0x21, 0x21, &INET), expect: Err(ProxyError::V2AddressLength) },
            Case { input: header(0x21, 0x31, &v6), expect: Err(ProxyError::V2AddressLength) },
            Case {
                input: header(0x21, 0x11, &[&INET[..], b"\x04\x00\x02z"].concat()),
                expect: Err(ProxyError::V2Tlv),
            },
            Case {
                input: header(0x21, 0x11, &[&INET[..], b"\x04\x00"].concat()),
                expect: Err(ProxyError::V2Tlv),
            },
            Case {
                input: header(0x21, 0x11, &vec![0; V2_MAX_LEN - 15]),
                expect: Err(ProxyError::V2TooLong),
            },
        ];
        for case in cases {
            let got = parse(&case.input);
            let input = &case.input;
            let len = u16::from_be_bytes([input[14], input[15]]) as usize + 16;
            fn complete<'a>(
                got: Result<Status<ProxyHeader<'a>>, ProxyError>,
                len: usize,
            ) -> ProxyHeader<'a> {
                match got {
                    Ok(Status::Complete(h)) => {
                        assert_eq!((h.version, h.len), (Version::V2, len));
                        h
                    }
                    other => panic!("{other:?}"),
                }
            }
            match case.expect {
                Inet(src, dst) => {
                    let h = complete(got, len);
                    let Addresses::Inet { source, destination } = h.addresses else {
                        panic!("{h:?}")
                    };
                    assert_eq!(source.to_string(), src);
                    assert_eq!(destination.to_string(), dst);
                    assert_eq!(h.source(), Some(source));
                }
                Local => {
                    let h = complete(got, len);
                    assert_eq!((h.command, h.addresses), (Command::Local, Addresses::Unspecified));
                    assert_eq!(h.source(), None);
                }
                Unspecified => {
                    let h = complete(got, len);
                    assert_eq!((h.command, h.addresses), (Command::Proxy, Addresses::Unspecified));
                    assert_eq!(h.source(), None);
                }
                Unix(src, dst) => {
                    let h = complete(got, len);
                    assert_eq!(h.addresses, Addresses::Unix { source: src, destination: dst });
                    assert_eq!(h.source(), None);
                }
                Err(e) => assert_eq!(got, Result::Err(e), "{input:?}"),
            }
        }
    }

    /// Every prefix of a valid header is partial; the longest header accepted is accepted.
    #[test]
    fn prefixes_and_the_size_limit() {
        let h = header(0x21, 0x11, &[&INET[..], b"\x02\x00\x0bexample.com"].concat());
        for n in 0..h.len() {
            assert_eq!(parse(&h[..n]), Ok(Status::Partial), "{n}");
        }
        let Ok(Status::Complete(got)) = parse(&h) else { panic!() };
        assert_eq!(got.tlvs.get(TlvType::AUTHORITY), Some(&b"example.com"[..]));
        // A NOOP TLV padding the header to exactly V2_MAX_LEN.
        let pad = V2_MAX_LEN - 16 - 12 - 3;
        let mut rest = INET.to_vec();
        rest.extend_from_slice(&[0x04, (pad >> 8) as u8, pad as u8]);
        rest.resize(rest.len() + pad, 0);
        let max = header(0x21, 0x11, &rest);
        assert_eq!(max.len(), V2_MAX_LEN);
        assert!(matches!(parse(&max), Ok(Status::Complete(h)) if h.len == V2_MAX_LEN));
        // The oversized length is refused from the fixed part alone.
        let mut over = header(0x21, 0x11, &INET);
        over[14..16].copy_from_slice(&((V2_MAX_LEN - 15) as u16).to_be_bytes());
        assert_eq!(parse(&over[..16]), Err(ProxyError::V2TooLong));
    }
}
