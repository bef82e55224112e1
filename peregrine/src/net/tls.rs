//! TLS for the server: certificate chains and keys from PEM, SNI over several certificates,
//! ALPN, TLS 1.2 and 1.3 with session resumption, on rustls.
//!
//! The crypto provider is aws-lc-rs by default (feature `aws-lc-rs`); `ring` is the
//! alternative (feature `ring`, without the default features). BENCHMARKS.md has the figures
//! behind the default.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Why a TLS configuration could not be built: a one-line reason naming the file at fault.
///
/// # Examples
/// ```
/// use peregrine::server::TlsConfig;
/// let err = TlsConfig::from_pem_files("/no/such/cert.pem", "/no/such/key.pem").unwrap_err();
/// assert_eq!(err.to_string(), "/no/such/cert.pem: cannot read: no such file or directory");
/// assert_eq!(err.path(), Some(std::path::Path::new("/no/such/cert.pem")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsError {
    path: Option<PathBuf>,
    reason: String,
}

impl TlsError {
    pub(crate) fn new(path: Option<&Path>, reason: impl Into<String>) -> TlsError {
        TlsError { path: path.map(Path::to_owned), reason: reason.into() }
    }

    /// The file the error is about, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}: {}", path.display(), self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for TlsError {}

/// The server's TLS settings: one certificate chain and key for every name, and optionally
/// more for particular names chosen by SNI (RFC 6066 §3).
///
/// TLS 1.3 and 1.2 are offered (1.3 preferred), with the provider's default cipher suites;
/// sessions resume with tickets (RFC 8446 §4.6.1) and from a server-side cache. ALPN offers
/// what the server speaks (`http/1.1`; see [`Server::tls`](crate::Server::tls)).
///
/// # Examples
/// ```no_run
/// use peregrine::{Request, Server};
/// use peregrine::server::TlsConfig;
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let tls = TlsConfig::from_pem_files("cert.pem", "key.pem")?
///         .with_sni_pem_files("api.example.com", "api-cert.pem", "api-key.pem")?;
///     Server::bind("0.0.0.0:8443").tls(tls).run(|_req: Request| async { "hello over TLS" })?;
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct TlsConfig {
    resolver: Arc<SniResolver>,
    provider: Arc<CryptoProvider>,
    custom: Option<Arc<rustls::ServerConfig>>,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("sni_names", &self.resolver.by_name.len())
            .field("custom", &self.custom.is_some())
            .finish()
    }
}

impl TlsConfig {
    /// Reads a PEM certificate chain (end-entity certificate first) and its PEM private key
    /// (PKCS#8, PKCS#1 or SEC1).
    ///
    /// # Errors
    /// A file that cannot be read, holds no certificate or no key, or a key that does not
    /// match the certificate; the message names the file.
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsConfig, TlsError> {
        let provider = Arc::new(default_provider());
        let certified = certified_key_from_files(cert_chain.as_ref(), key.as_ref(), &provider)?;
        Ok(TlsConfig::with_default(certified, provider))
    }

    /// As [`TlsConfig::from_pem_files`], from PEM text in memory.
    ///
    /// # Errors
    /// No certificate or no key in the text, or a key that does not match.
    pub fn from_pem(cert_chain: &[u8], key: &[u8]) -> Result<TlsConfig, TlsError> {
        let provider = Arc::new(default_provider());
        let chain = certs_from_pem(cert_chain, None)?;
        let key = key_from_pem(key, None)?;
        let certified = certified_key(chain, key, &provider, None)?;
        Ok(TlsConfig::with_default(certified, provider))
    }

    /// Uses a rustls configuration as it is (its certificates, versions, ALPN list and
    /// resumption settings): for needs the builder does not cover, like client certificates.
    pub fn from_rustls(config: Arc<rustls::ServerConfig>) -> TlsConfig {
        let provider = config.crypto_provider().clone();
        let resolver = Arc::new(SniResolver { default: None, by_name: HashMap::new() });
        TlsConfig { resolver, provider, custom: Some(config) }
    }

    /// Serves the chain and key in these PEM files to clients that ask for `name` by SNI;
    /// other names get the default certificate.
    ///
    /// # Errors
    /// As [`TlsConfig::from_pem_files`]; also for a configuration made by
    /// [`TlsConfig::from_rustls`], whose certificates are its own.
    pub fn with_sni_pem_files(
        mut self,
        name: &str,
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsConfig, TlsError> {
        if self.custom.is_some() {
            return Err(TlsError::new(None, "SNI names cannot be added to a rustls configuration"));
        }
        let certified =
            certified_key_from_files(cert_chain.as_ref(), key.as_ref(), &self.provider)?;
        let mut resolver = (*self.resolver).clone();
        resolver.by_name.insert(name.to_ascii_lowercase(), Arc::new(certified));
        self.resolver = Arc::new(resolver);
        Ok(self)
    }

    fn with_default(certified: CertifiedKey, provider: Arc<CryptoProvider>) -> TlsConfig {
        let resolver =
            Arc::new(SniResolver { default: Some(Arc::new(certified)), by_name: HashMap::new() });
        TlsConfig { resolver, provider, custom: None }
    }

    /// The rustls configuration for a listener that speaks the protocols in `alpn`, in order of
    /// preference.
    pub(crate) fn server_config(
        &self,
        alpn: &[&[u8]],
    ) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        if let Some(custom) = &self.custom {
            return Ok(custom.clone());
        }
        let mut config = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| TlsError::new(None, e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(self.resolver.clone());
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        // Stateless resumption: tickets sealed with a key rotated every 6 hours, so a resumed
        // session finds its state on any worker (RFC 8446 §4.6.1; RFC 5077 for TLS 1.2).
        config.ticketer = ticketer().map_err(|e| TlsError::new(None, e.to_string()))?;
        // Stateful resumption for clients that do not take tickets: the builder's default
        // in-memory cache (256 sessions) is shared by every worker.
        Ok(Arc::new(config))
    }
}

#[cfg(feature = "aws-lc-rs")]
pub(crate) fn default_provider() -> CryptoProvider {
    rustls::crypto::aws_lc_rs::default_provider()
}

#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
pub(crate) fn default_provider() -> CryptoProvider {
    rustls::crypto::ring::default_provider()
}

#[cfg(feature = "aws-lc-rs")]
fn ticketer() -> Result<Arc<dyn rustls::server::ProducesTickets>, rustls::Error> {
    rustls::crypto::aws_lc_rs::Ticketer::new()
}

#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
fn ticketer() -> Result<Arc<dyn rustls::server::ProducesTickets>, rustls::Error> {
    rustls::crypto::ring::Ticketer::new()
}

#[cfg(not(any(feature = "aws-lc-rs", feature = "ring")))]
compile_error!("peregrine needs a TLS crypto provider: enable the `aws-lc-rs` or `ring` feature");

/// Picks the certificate by the SNI name the client sent, else the default.
#[derive(Debug, Clone)]
struct SniResolver {
    default: Option<Arc<CertifiedKey>>,
    /// Lowercase DNS names.
    by_name: HashMap<String, Arc<CertifiedKey>>,
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // rustls hands the name lowercased and checked as a DNS name (RFC 6066 §3).
        if let Some(found) = hello.server_name().and_then(|name| self.by_name.get(name)) {
            return Some(found.clone());
        }
        self.default.clone()
    }
}

fn certified_key_from_files(
    chain: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsError> {
    let chain_pem = read(chain)?;
    let key_pem = read(key)?;
    let certs = certs_from_pem(&chain_pem, Some(chain))?;
    let key_der = key_from_pem(&key_pem, Some(key))?;
    certified_key(certs, key_der, provider, Some(key))
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|e| {
        let reason = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            _ => e.to_string(),
        };
        TlsError::new(Some(path), format!("cannot read: {reason}"))
    })
}

pub(crate) fn certs_from_pem(
    pem: &[u8],
    path: Option<&Path>,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(pem).collect();
    let certs = certs.map_err(|e| TlsError::new(path, format!("malformed PEM: {e}")))?;
    if certs.is_empty() {
        return Err(TlsError::new(path, "no certificate (expected a PEM CERTIFICATE block)"));
    }
    Ok(certs)
}

fn key_from_pem(pem: &[u8], path: Option<&Path>) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => TlsError::new(
            path,
            "no private key (expected a PEM PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block)",
        ),
        e => TlsError::new(path, format!("malformed PEM: {e}")),
    })
}

fn certified_key(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    provider: &CryptoProvider,
    key_path: Option<&Path>,
) -> Result<CertifiedKey, TlsError> {
    let signer = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| TlsError::new(key_path, format!("unusable private key: {e}")))?;
    let certified = CertifiedKey::new(chain, signer);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {
            Ok(certified)
        }
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            Err(TlsError::new(key_path, "private key does not match the certificate"))
        }
        Err(e) => Err(TlsError::new(key_path, format!("certificate and key unusable: {e}"))),
    }
}
