#![no_main]
//! The PROXY protocol parser on arbitrary bytes: never panics; a complete header's length lies
//! within the input and the version's bound; every prefix of the input up to that length is
//! partial (a header split anywhere parses the same once whole), and the TLVs it reports lie
//! within it. An error on the whole input is an error, or still partial, on every longer input
//! made by appending bytes (here: the input doubled).
use libfuzzer_sys::fuzz_target;
use peregrine::proxy_protocol::{MAX_LEN, ProxyInfo, Status, V1_MAX_LEN, Version, parse};

fuzz_target!(|data: &[u8]| {
    match parse(data) {
        Ok(Status::Complete(header)) => {
            assert!(header.len <= data.len());
            let bound = match header.version {
                Version::V1 => V1_MAX_LEN,
                Version::V2 => MAX_LEN,
            };
            assert!(header.len <= bound);
            for n in 0..header.len {
                assert_eq!(parse(&data[..n]), Ok(Status::Partial), "prefix {n}");
            }
            assert_eq!(parse(&data[..header.len]), Ok(Status::Complete(header)));
            let tlv_bytes: usize = header.tlvs.iter().map(|t| 3 + t.value.len()).sum();
            assert!(tlv_bytes <= header.len);
            let info = ProxyInfo::new(&header, "127.0.0.1:1".parse().unwrap());
            assert_eq!(info.source(), header.source());
        }
        Ok(Status::Partial) => {
            assert!(data.len() < MAX_LEN);
        }
        Err(e) => {
            let doubled = [data, data].concat();
            assert_eq!(parse(&doubled).err(), Some(e));
        }
    }
});
