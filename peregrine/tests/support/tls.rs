//! TLS for the tests: throw-away certificates and a rustls client that trusts them.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

/// A self-signed certificate and its key, as PEM.
pub struct TestCert {
    pub cert_pem: String,
    pub key_pem: String,
}

/// A self-signed certificate for `names` (DNS names or IP addresses).
pub fn self_signed(names: &[&str]) -> TestCert {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let certified = rcgen::generate_simple_self_signed(names).expect("generate certificate");
    TestCert { cert_pem: certified.cert.pem(), key_pem: certified.signing_key.serialize_pem() }
}

/// A client configuration trusting exactly `certs`, offering `alpn`.
pub fn client_config(certs: &[&TestCert], alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs {
        let der = CertificateDer::from_pem_slice(cert.cert_pem.as_bytes()).expect("PEM");
        roots.add(der).expect("trust anchor");
    }
    let mut config =
        rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// A TLS connection to `addr` as `name`, with its handshake done.
pub fn connect(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    name: &str,
) -> io::Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
    let tcp = super::tcp(addr);
    let name = ServerName::try_from(name.to_owned()).map_err(io::Error::other)?;
    let conn = rustls::ClientConnection::new(config, name).map_err(io::Error::other)?;
    let mut stream = rustls::StreamOwned::new(conn, tcp);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock)?;
    }
    Ok(stream)
}
