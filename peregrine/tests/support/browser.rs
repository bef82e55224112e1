//! Headless Chromium for the browser tests: found, launched on a URL with a fresh profile and
//! the test certificate trusted by its key's hash, and stopped with its helper processes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use base64::Engine;

use super::tls::TestCert;

/// Chromium, if installed.
pub fn chromium() -> Option<PathBuf> {
    let ok = Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| PathBuf::from("chromium"))
}

/// The base64 SHA-256 of `cert`'s public key info, for `--ignore-certificate-errors-spki-list`:
/// Chromium then treats the connection as any valid HTTPS one.
pub fn spki(cert: &TestCert) -> String {
    let key = rcgen::KeyPair::from_pem(&cert.key_pem).unwrap();
    base64::engine::general_purpose::STANDARD
        .encode(sha256(&rcgen::PublicKeyData::subject_public_key_info(&key)))
}

/// SHA-256 with the crypto provider the crate was built with (rustls's).
fn sha256(data: &[u8]) -> Vec<u8> {
    #[cfg(feature = "aws-lc-rs")]
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    #[cfg(not(feature = "aws-lc-rs"))]
    let provider = rustls::crypto::ring::default_provider();
    let hash = provider
        .cipher_suites
        .iter()
        .filter_map(|s| s.tls13())
        .map(|s| s.common.hash_provider)
        .find(|h| h.algorithm() == rustls::crypto::hash::HashAlgorithm::SHA256)
        .expect("a SHA-256 suite");
    hash.hash(data).as_ref().to_vec()
}

/// Headless Chromium on `url` with a fresh profile, trusting the key whose SPKI hashes to
/// `spki`, with `extra` flags. `localhost` resolves to 127.0.0.1 (Chromium would dial `::1`
/// first). In its own process group, so that its helpers go with it.
pub fn launch(chromium: &Path, url: &str, spki: &str, profile: &Path, extra: &[&str]) -> Child {
    use std::os::unix::process::CommandExt;
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--host-resolver-rules=MAP localhost 127.0.0.1",
        ])
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--ignore-certificate-errors-spki-list={spki}"))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start chromium")
}

/// Ends Chromium's process group (the browser and its helpers).
pub fn stop(mut child: Child) {
    let group = child.id() as i32;
    // SAFETY: kill(2) on the process group this test started; no memory is involved.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
    let _ = child.wait();
}
