//! The TLS flags: certificate files, or a throw-away self-signed certificate.

use std::io;
use std::path::{Path, PathBuf};

use peregrine::server::TlsConfig;

use crate::flags::TlsArgs;
use crate::io_error::describe;

/// The TLS configuration the flags ask for (with the path of a generated certificate), or a
/// one-line reason naming the file at fault.
pub(super) fn tls_config(args: &TlsArgs) -> Result<Option<(TlsConfig, Option<PathBuf>)>, String> {
    if args.tls_self_signed {
        let (cert, key) = self_signed()?;
        let tls = TlsConfig::from_pem_files(&cert, &key).map_err(|e| e.to_string())?;
        return Ok(Some((tls, Some(cert))));
    }
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let tls = TlsConfig::from_pem_files(cert, key).map_err(|e| e.to_string())?;
            Ok(Some((tls, None)))
        }
        _ => Ok(None),
    }
}

/// Writes a throw-away certificate and key for localhost / 127.0.0.1 / ::1 into a new private
/// directory under the system's temp dir; returns their paths.
fn self_signed() -> Result<(PathBuf, PathBuf), String> {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    let generated = rcgen::generate_simple_self_signed(names)
        .map_err(|e| format!("cannot generate a certificate: {e}"))?;
    let dir = std::env::temp_dir().join(format!("peregrine-tls-{}", std::process::id()));
    let write = |dir: &Path| -> io::Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(dir)?;
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert, generated.cert.pem())?;
        write_private(&key, generated.signing_key.serialize_pem().as_bytes())?;
        Ok((cert, key))
    };
    write(&dir)
        .map_err(|e| format!("{}: cannot write the certificate: {}", dir.display(), describe(&e)))
}

/// Writes a file only its owner can read (a private key).
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}
