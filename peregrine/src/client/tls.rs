//! TLS for the client: which certificates to trust (Mozilla's roots bundled with the crate,
//! the system's store, CA files), SNI, and ALPN offering `h2` and `http/1.1`, on rustls.
//! Certificate errors are errors: only [`TlsConfig::danger_accept_invalid_certs`] (the load
//! generator's `--insecure`) turns verification off.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::net::TlsError;
use crate::net::tls::{certs_from_pem, default_provider, read};

/// What the client trusts when it speaks TLS.
///
/// The default trusts Mozilla's root certificates (the `webpki-roots` bundle, the same on
/// every machine); [`TlsConfig::native_roots`] trusts the operating system's store instead.
/// Either can add CA certificates from PEM ([`TlsConfig::add_ca_pem_file`]). TLS 1.3 and 1.2
/// are offered, the server name is sent by SNI for DNS names (RFC 6066 §3), and ALPN offers
/// `h2` and `http/1.1` (RFC 7301; RFC 9113 §3.2) unless the client is limited to one version.
///
/// # Examples
/// ```no_run
/// use peregrine::client::{Client, TlsConfig};
/// let tls = TlsConfig::webpki_roots().add_ca_pem_file("my-ca.pem")?;
/// let client = Client::builder().tls(tls).build();
/// # Ok::<(), peregrine::server::TlsError>(())
/// ```
#[derive(Clone)]
pub struct TlsConfig {
    roots: Arc<RootCertStore>,
    insecure: bool,
    provider: Arc<CryptoProvider>,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("roots", &self.roots.len())
            .field("insecure", &self.insecure)
            .finish()
    }
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig::webpki_roots()
    }
}

/// Which protocols ALPN offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alpn {
    /// `h2`, then `http/1.1`.
    Both,
    /// `http/1.1` only.
    Http1,
    /// `h2` only.
    Http2,
    /// `h3` (RFC 9114 §3.1), over QUIC: TLS 1.3 only (RFC 9001 §4.2).
    #[cfg(feature = "http3")]
    Http3,
}

impl TlsConfig {
    /// Trusts Mozilla's root certificates, bundled with the crate (`webpki-roots`).
    pub fn webpki_roots() -> TlsConfig {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        TlsConfig::with_roots(roots)
    }

    /// Trusts the operating system's certificate store (on Linux, the bundle `openssl`
    /// would read, or `SSL_CERT_FILE`).
    ///
    /// # Errors
    /// When the store cannot be read or holds no usable certificate.
    pub fn native_roots() -> Result<TlsConfig, TlsError> {
        let found = rustls_native_certs::load_native_certs();
        let mut roots = RootCertStore::empty();
        let (added, _ignored) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            let why = match found.errors.first() {
                Some(e) => format!("no usable certificate in the system's store: {e}"),
                None => "no certificate in the system's store".to_owned(),
            };
            return Err(TlsError::new(None, why));
        }
        Ok(TlsConfig::with_roots(roots))
    }

    /// Trusts nothing yet: add CA certificates with [`TlsConfig::add_ca_pem`] or
    /// [`TlsConfig::add_ca_pem_file`].
    pub fn empty() -> TlsConfig {
        TlsConfig::with_roots(RootCertStore::empty())
    }

    fn with_roots(roots: RootCertStore) -> TlsConfig {
        TlsConfig {
            roots: Arc::new(roots),
            insecure: false,
            provider: Arc::new(default_provider()),
        }
    }

    /// Also trusts the CA certificates in a PEM file (`curl --cacert`).
    ///
    /// # Errors
    /// When the file cannot be read, holds no certificate, or one is not a valid trust anchor;
    /// the error names the file.
    pub fn add_ca_pem_file(self, path: impl AsRef<Path>) -> Result<TlsConfig, TlsError> {
        let path = path.as_ref();
        let pem = read(path)?;
        self.add(&pem, Some(path))
    }

    /// Also trusts the CA certificates in `pem`.
    ///
    /// # Errors
    /// When `pem` holds no certificate or one is not a valid trust anchor.
    pub fn add_ca_pem(self, pem: &[u8]) -> Result<TlsConfig, TlsError> {
        self.add(pem, None)
    }

    fn add(mut self, pem: &[u8], path: Option<&Path>) -> Result<TlsConfig, TlsError> {
        let certs = certs_from_pem(pem, path)?;
        let roots = Arc::make_mut(&mut self.roots);
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| TlsError::new(path, format!("not a usable CA certificate: {e}")))?;
        }
        Ok(self)
    }

    /// Accepts any certificate for any name: **no authentication of the server**, for load
    /// tests against a server with a throw-away certificate. The handshake's signatures are
    /// still checked, so the connection is encrypted, but to whoever answers.
    pub fn danger_accept_invalid_certs(mut self) -> TlsConfig {
        self.insecure = true;
        self
    }

    /// The rustls configuration for connections offering `alpn`, built once per client.
    pub(crate) fn rustls_config(&self, alpn: Alpn) -> Result<Arc<rustls::ClientConfig>, TlsError> {
        let builder = rustls::ClientConfig::builder_with_provider(self.provider.clone());
        let builder = match alpn {
            #[cfg(feature = "http3")]
            Alpn::Http3 => builder.with_protocol_versions(&[&rustls::version::TLS13]),
            _ => builder.with_safe_default_protocol_versions(),
        }
        .map_err(|e| TlsError::new(None, format!("TLS provider: {e}")))?;
        let mut config = if self.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAny(self.provider.clone())))
                .with_no_client_auth()
        } else {
            builder.with_root_certificates(self.roots.clone()).with_no_client_auth()
        };
        config.alpn_protocols = match alpn {
            Alpn::Both => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
            Alpn::Http1 => vec![b"http/1.1".to_vec()],
            Alpn::Http2 => vec![b"h2".to_vec()],
            #[cfg(feature = "http3")]
            Alpn::Http3 => vec![b"h3".to_vec()],
        };
        Ok(Arc::new(config))
    }
}

/// The server name a connection to `host` verifies and sends by SNI (rustls sends SNI for
/// DNS names only, as RFC 6066 §3 requires: "Literal IPv4 and IPv6 addresses are not
/// permitted").
pub(crate) fn server_name(host: &str) -> Option<ServerName<'static>> {
    ServerName::try_from(host).ok().map(|n| n.to_owned())
}

/// A verifier that accepts every certificate but still checks the handshake signatures.
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ca_files_are_checked_and_named() {
        let err = TlsConfig::empty().add_ca_pem_file("/no/such/ca.pem").unwrap_err();
        assert_eq!(err.path(), Some(Path::new("/no/such/ca.pem")));
        assert!(TlsConfig::empty().add_ca_pem(b"not pem").is_err());
        assert!(TlsConfig::webpki_roots().roots.len() > 50);
    }

    #[test]
    fn alpn_offers() {
        let tls = TlsConfig::empty();
        let both = tls.rustls_config(Alpn::Both).unwrap();
        assert_eq!(both.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
        assert_eq!(tls.rustls_config(Alpn::Http1).unwrap().alpn_protocols, [b"http/1.1".to_vec()]);
        #[cfg(feature = "http3")]
        assert_eq!(tls.rustls_config(Alpn::Http3).unwrap().alpn_protocols, [b"h3".to_vec()]);
    }

    #[test]
    fn server_names() {
        assert!(server_name("example.com").is_some());
        assert!(matches!(server_name("127.0.0.1"), Some(ServerName::IpAddress(_))));
        assert!(matches!(server_name("::1"), Some(ServerName::IpAddress(_))));
        assert!(server_name("bad name").is_none());
    }
}
