//! Version 1: one line of US-ASCII text (spec §2.1).
//!
//! ```text
//! "PROXY" SP ( "TCP4" | "TCP6" ) SP src-addr SP dst-addr SP src-port SP dst-port CRLF
//! "PROXY" SP "UNKNOWN" [ anything but CRLF ] CRLF
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::{
    Addresses, Command, ProxyError, ProxyHeader, Status, Tlvs, V1_MAX_LEN, V1_SIGNATURE, Version,
};

/// Parses a version 1 line; `buf` starts with [`V1_SIGNATURE`].
pub(super) fn parse(buf: &[u8]) -> Result<Status<ProxyHeader<'_>>, ProxyError> {
    // "If the CRLF sequence is not found in the first 107 characters, the receiver should
    // declare the line invalid. [...] The receiver must not tolerate a single CR or LF
    // character to end the line when a complete CRLF sequence is expected."
    let window = &buf[..buf.len().min(V1_MAX_LEN)];
    let Some(end) = memchr::memchr2(b'\r', b'\n', window) else {
        return match buf.len() >= V1_MAX_LEN {
            true => Err(ProxyError::V1TooLong),
            false => Ok(Status::Partial),
        };
    };
    if window[end] == b'\n' || end + 1 >= V1_MAX_LEN {
        return Err(ProxyError::V1TooLong);
    }
    match buf.get(end + 1) {
        None => return Ok(Status::Partial),
        Some(b'\n') => {}
        Some(_) => return Err(ProxyError::V1TooLong),
    }
    let line = &buf[V1_SIGNATURE.len()..end];
    let len = end + 2;
    let header = |command, addresses| {
        Ok(Status::Complete(ProxyHeader {
            version: Version::V1,
            command,
            addresses,
            len,
            tlvs: Tlvs::empty(),
        }))
    };
    // "For "UNKNOWN", the rest of the line before the CRLF may be omitted by the sender, and
    // the receiver must ignore anything presented before the CRLF is found."
    if line == b"UNKNOWN" || line.starts_with(b"UNKNOWN ") {
        return header(Command::Local, Addresses::Unspecified);
    }
    // Fields are separated by "exactly one space": an empty field is an error.
    let mut fields = line.split(|&b| b == b' ');
    let mut next = || fields.next().filter(|f| !f.is_empty()).ok_or(ProxyError::V1Syntax);
    let v6 = match next()? {
        b"TCP4" => false,
        b"TCP6" => true,
        _ => return Err(ProxyError::V1Protocol),
    };
    let (src, dst) = (address(next()?, v6)?, address(next()?, v6)?);
    let (src_port, dst_port) = (port(next()?)?, port(next()?)?);
    if fields.next().is_some() {
        return Err(ProxyError::V1Syntax);
    }
    let addresses = Addresses::Inet {
        source: SocketAddr::new(src, src_port),
        destination: SocketAddr::new(dst, dst_port),
    };
    header(Command::Proxy, addresses)
}

/// An address in the canonical form of its family: IPv4 as four decimals without heading
/// zeros, IPv6 as colon-separated hex groups with at most one `::` (both as the standard
/// library's parsers read them: they refuse octal-looking IPv4 parts and IPv6 zone ids).
fn address(field: &[u8], v6: bool) -> Result<IpAddr, ProxyError> {
    let text = std::str::from_utf8(field).map_err(|_| ProxyError::V1Address)?;
    let parsed = match v6 {
        false => text.parse::<Ipv4Addr>().map(IpAddr::V4),
        true => text.parse::<Ipv6Addr>().map(IpAddr::V6),
    };
    parsed.map_err(|_| ProxyError::V1Address)
}

/// "a decimal integer in the range [0..65535] inclusive. Heading zeroes are not permitted".
fn port(field: &[u8]) -> Result<u16, ProxyError> {
    let digits = field.len() <= 5 && field.iter().all(u8::is_ascii_digit);
    if !digits || (field.len() > 1 && field[0] == b'0') {
        return Err(ProxyError::V1Port);
    }
    let n = field.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    u16::try_from(n).map_err(|_| ProxyError::V1Port)
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    enum Expect {
        Inet(&'static str, &'static str, usize),
        Unknown(usize),
        Partial,
        Err(ProxyError),
    }

    struct Case {
        input: &'static [u8],
        expect: Expect,
    }

    #[test]
    fn lines() {
        use Expect::*;
        let cases = [
            // The spec's example (§2.1), followed by the request it precedes.
            Case {
                input: b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\nGET / HTTP/1.1\r\n",
                expect: Inet("192.168.0.1:56324", "192.168.0.11:443", 47),
            },
            // The spec's longest lines (§2.1): 56, 104 and 107 bytes.
            Case {
                input: b"PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n",
                expect: Inet("255.255.255.255:65535", "255.255.255.255:65535", 56),
            },
            Case {
                input: b"PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff \
                         ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n",
                expect: Inet(
                    "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535",
                    "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535",
                    104,
                ),
            },
            Case { input: b"PROXY UNKNOWN\r\n", expect: Unknown(15) },
            Case {
                input: b"PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff \
                         ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n",
                expect: Unknown(107),
            },
            // "the receiver must ignore anything presented before the CRLF".
            Case { input: b"PROXY UNKNOWN whatever \x01 \r\nX", expect: Unknown(27) },
            Case {
                input: b"PROXY TCP6 2001:db8::1 ::1 0 8080\r\n",
                expect: Inet("[2001:db8::1]:0", "[::1]:8080", 35),
            },
            Case { input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r", expect: Partial },
            Case { input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2", expect: Partial },
            Case { input: b"PROXY UNKNOWN", expect: Partial },
            // Bad lines.
            Case { input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", expect: Err(ProxyError::V1TooLong) },
            Case { input: b"PROXY TCP4 1.2.3.4\r5.6.7.8", expect: Err(ProxyError::V1TooLong) },
            Case {
                input: b"PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n",
                expect: Err(ProxyError::V1Protocol),
            },
            Case {
                input: b"PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n",
                expect: Err(ProxyError::V1Protocol),
            },
            Case { input: b"PROXY \r\n", expect: Err(ProxyError::V1Syntax) },
            Case {
                input: b"PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n",
                expect: Err(ProxyError::V1Syntax),
            },
            Case {
                input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n",
                expect: Err(ProxyError::V1Syntax),
            },
            Case { input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", expect: Err(ProxyError::V1Syntax) },
            Case {
                input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",
                expect: Err(ProxyError::V1Syntax),
            },
            Case {
                input: b"PROXY TCP4 01.2.3.4 5.6.7.8 1 2\r\n",
                expect: Err(ProxyError::V1Address),
            },
            Case { input: b"PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n", expect: Err(ProxyError::V1Address) },
            Case { input: b"PROXY TCP4 ::1 ::1 1 2\r\n", expect: Err(ProxyError::V1Address) },
            Case { input: b"PROXY TCP6 1.2.3.4 ::1 1 2\r\n", expect: Err(ProxyError::V1Address) },
            Case {
                input: b"PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n",
                expect: Err(ProxyError::V1Address),
            },
            Case {
                input: b"PROXY TCP4 1.2.3.\xff 5.6.7.8 1 2\r\n",
                expect: Err(ProxyError::V1Address),
            },
            Case { input: b"PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n", expect: Err(ProxyError::V1Port) },
            Case {
                input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 65536\r\n",
                expect: Err(ProxyError::V1Port),
            },
            Case { input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 -2\r\n", expect: Err(ProxyError::V1Port) },
            Case {
                input: b"PROXY TCP4 1.2.3.4 5.6.7.8 1 999999\r\n",
                expect: Err(ProxyError::V1Port),
            },
        ];
        for case in cases {
            let got = parse(case.input);
            let input = String::from_utf8_lossy(case.input);
            match case.expect {
                Inet(src, dst, len) => {
                    let Ok(Status::Complete(h)) = got else { panic!("{input:?}: {got:?}") };
                    assert_eq!((h.version, h.command, h.len), (Version::V1, Command::Proxy, len));
                    let Addresses::Inet { source, destination } = h.addresses else {
                        panic!("{input:?}: {h:?}")
                    };
                    assert_eq!(
                        (source.to_string().as_str(), destination.to_string().as_str()),
                        (src, dst)
                    );
                    assert_eq!(h.source(), Some(source));
                }
                Unknown(len) => {
                    let Ok(Status::Complete(h)) = got else { panic!("{input:?}: {got:?}") };
                    assert_eq!(
                        (h.command, h.addresses, h.len),
                        (Command::Local, Addresses::Unspecified, len)
                    );
                    assert_eq!(h.source(), None);
                }
                Partial => assert_eq!(got, Ok(Status::Partial), "{input:?}"),
                Err(e) => assert_eq!(got, Result::Err(e), "{input:?}"),
            }
        }
    }

    #[test]
    fn no_crlf_within_107_bytes_is_refused() {
        let mut line = b"PROXY UNKNOWN ".to_vec();
        line.resize(106, b'x');
        assert_eq!(parse(&line), Ok(Status::Partial));
        line.push(b'\r');
        // The CR is the 107th byte: its LF would be the 108th.
        assert_eq!(parse(&line), Err(ProxyError::V1TooLong));
        line.truncate(105);
        line.extend_from_slice(b"\r\n");
        assert_eq!(parse(&line).map(|s| s.complete().map(|h| h.len)), Ok(Some(107)));
        let mut long = b"PROXY UNKNOWN ".to_vec();
        long.resize(400, b'x');
        assert_eq!(parse(&long), Err(ProxyError::V1TooLong));
    }

    /// Every prefix of a valid line is partial, never an error.
    #[test]
    fn every_prefix_is_partial() {
        let line = b"PROXY TCP6 2001:db8::1 ::1 65535 80\r\n";
        for n in 0..line.len() {
            assert_eq!(parse(&line[..n]), Ok(Status::Partial), "{n}");
        }
    }
}
