//! The TLS crypto provider under the server: aws-lc-rs against ring, on the server's side of
//! rustls only, in memory (no sockets, no kernel), on the shapes bench/tls.sh measures end to
//! end, where the kernel's share and a shared machine's noise hide a few percent.
//!
//! Scenarios, each with the server configured as `net/tls.rs` does (TLS 1.3 and 1.2, ALPN,
//! tickets from the provider's ticketer) and an EC P-256 certificate; the client offers only
//! TLS 1.3, TLS_AES_128_GCM_SHA256 and X25519, as bench/tls.sh's clients do:
//! - `handshake-full`: a new server connection through a full handshake, its two session
//!   tickets included (X25519, an ECDSA P-256 signature, the key schedule, the tickets sealed);
//! - `handshake-resumed`: the same with a ticket from an earlier session (PSK with X25519);
//! - `request`: on an established session, one 78-byte request record decrypted and read, one
//!   150-byte response written and encrypted;
//! - `bulk-1MiB`: 1 MiB of response body written, encrypted into 16 KiB records and drained
//!   (into `io::sink()`, so no copy that the kernel would make is counted).
//!
//! Only the server's calls are timed (thread CPU time, summed around each of them); the client
//! runs untimed between them. The compared providers are those compiled in: run with
//! `--features ring` beside the default aws-lc-rs to compare both.
//!
//! Run: `cargo bench -p peregrine --bench tls_provider --features ring`. The last lines are the
//! summary, from criterion's medians.

use std::hint::black_box;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::ProducesTickets;
use rustls::{ClientConfig, ClientConnection, HandshakeKind, ServerConfig, ServerConnection};

mod cpu_time;
use cpu_time::{CpuTime, thread_cpu_ns};

const REQUEST: &[u8] =
    b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:18500\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n";
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\
    Server: peregrine\r\nDate: Mon, 24 Nov 2025 06:00:00 GMT\r\n\r\nHello, World!";
const BULK: usize = 1 << 20;
/// Requests encrypted by the client ahead of each timed batch.
const BATCH: usize = 64;

struct Provider {
    name: &'static str,
    provider: fn() -> CryptoProvider,
    ticketer: fn() -> Result<Arc<dyn ProducesTickets>, rustls::Error>,
}

fn providers() -> Vec<Provider> {
    vec![
        #[cfg(feature = "aws-lc-rs")]
        Provider {
            name: "aws-lc-rs",
            provider: rustls::crypto::aws_lc_rs::default_provider,
            ticketer: rustls::crypto::aws_lc_rs::Ticketer::new,
        },
        #[cfg(feature = "ring")]
        Provider {
            name: "ring",
            provider: rustls::crypto::ring::default_provider,
            ticketer: rustls::crypto::ring::Ticketer::new,
        },
    ]
}

/// A P-256 certificate (rcgen's default key type) and its key.
struct Cert {
    der: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

fn cert() -> Cert {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let key = PrivateKeyDer::from_pem_slice(made.signing_key.serialize_pem().as_bytes()).unwrap();
    Cert { der: made.cert.der().clone(), key }
}

/// The server as `net/tls.rs` builds it.
fn server_config(p: &Provider, cert: &Cert) -> Arc<ServerConfig> {
    let mut config = ServerConfig::builder_with_provider(Arc::new((p.provider)()))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der.clone()], cert.key.clone_key())
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.ticketer = (p.ticketer)().unwrap();
    Arc::new(config)
}

/// A client offering what bench/tls.sh's OPENSSL_CONF allows; `resume`: it keeps tickets.
fn client_config(p: &Provider, cert: &Cert, resume: bool) -> Arc<ClientConfig> {
    let mut provider = (p.provider)();
    provider.cipher_suites.retain(|s| s.suite() == rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    provider.kx_groups.retain(|g| g.name() == rustls::NamedGroup::X25519);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.der.clone()).unwrap();
    let mut config = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    if !resume {
        config.resumption = rustls::client::Resumption::disabled();
    }
    Arc::new(config)
}

/// The server takes in and processes `wire`.
fn server_recv(server: &mut ServerConnection, mut wire: &[u8]) {
    while !wire.is_empty() {
        server.read_tls(&mut wire).unwrap();
        server.process_new_packets().unwrap();
    }
}

/// One handshake (the tickets included); returns the server's CPU time in it and both ends.
fn handshake(
    server_cfg: &Arc<ServerConfig>,
    client_cfg: &Arc<ClientConfig>,
    wire: &mut Vec<u8>,
) -> (u64, ServerConnection, ClientConnection) {
    let name = ServerName::try_from("localhost").unwrap();
    let mut client = ClientConnection::new(client_cfg.clone(), name).unwrap();
    let t = thread_cpu_ns();
    let mut server = ServerConnection::new(server_cfg.clone()).unwrap();
    let mut spent = thread_cpu_ns() - t;
    loop {
        wire.clear();
        while client.wants_write() {
            client.write_tls(wire).unwrap();
        }
        if !wire.is_empty() {
            let t = thread_cpu_ns();
            server_recv(&mut server, wire);
            spent += thread_cpu_ns() - t;
        }
        wire.clear();
        let t = thread_cpu_ns();
        while server.wants_write() {
            server.write_tls(wire).unwrap();
        }
        spent += thread_cpu_ns() - t;
        if !wire.is_empty() {
            let mut rd = &wire[..];
            while !rd.is_empty() {
                client.read_tls(&mut rd).unwrap();
                client.process_new_packets().unwrap();
            }
        }
        if !client.is_handshaking() && !server.is_handshaking() && !client.wants_write() {
            // The tickets went with the server's last flight.
            if !server.wants_write() {
                return (spent, server, client);
            }
        }
    }
}

/// One provider's server and clients, and an established session for the request and bulk
/// scenarios.
struct Setup {
    name: &'static str,
    server_cfg: Arc<ServerConfig>,
    full_cfg: Arc<ClientConfig>,
    resume_cfg: Arc<ClientConfig>,
    server: ServerConnection,
    client: ClientConnection,
    wire: Vec<u8>,
    records: Vec<Vec<u8>>,
}

impl Setup {
    fn new(p: &Provider, cert: &Cert) -> Setup {
        let server_cfg = server_config(p, cert);
        let full_cfg = client_config(p, cert, false);
        let resume_cfg = client_config(p, cert, true);
        let mut wire = Vec::with_capacity(64 * 1024);
        // Check each shape is what its name says before timing it.
        let (_, s, _) = handshake(&server_cfg, &full_cfg, &mut wire);
        assert_eq!(s.handshake_kind(), Some(HandshakeKind::Full));
        let _ = handshake(&server_cfg, &resume_cfg, &mut wire);
        let (_, s, _) = handshake(&server_cfg, &resume_cfg, &mut wire);
        assert_eq!(s.handshake_kind(), Some(HandshakeKind::Resumed), "{}", p.name);
        let (_, server, client) = handshake(&server_cfg, &full_cfg, &mut wire);
        let records = (0..BATCH).map(|_| Vec::with_capacity(256)).collect();
        Setup { name: p.name, server_cfg, full_cfg, resume_cfg, server, client, wire, records }
    }

    /// Server CPU time (ns) of `iters` handshakes.
    fn handshakes(&mut self, iters: u64, resume: bool) -> u64 {
        let client_cfg = if resume { &self.resume_cfg } else { &self.full_cfg };
        (0..iters)
            .map(|_| black_box(handshake(&self.server_cfg, client_cfg, &mut self.wire)).0)
            .sum()
    }

    /// Server CPU time (ns) of `iters` requests read and answered, in batches the client
    /// encrypts untimed.
    fn requests(&mut self, iters: u64) -> u64 {
        let Setup { server, client, records, .. } = self;
        let mut plain = [0u8; 512];
        let (mut spent, mut left) = (0, iters);
        while left > 0 {
            let n = left.min(BATCH as u64) as usize;
            for record in &mut records[..n] {
                client.writer().write_all(REQUEST).unwrap();
                record.clear();
                while client.wants_write() {
                    client.write_tls(record).unwrap();
                }
            }
            let t = thread_cpu_ns();
            for record in &records[..n] {
                server_recv(server, record);
                let got = server.reader().read(&mut plain).unwrap();
                black_box(&plain[..got]);
                server.writer().write_all(RESPONSE).unwrap();
                while server.wants_write() {
                    server.write_tls(&mut io::sink()).unwrap();
                }
            }
            spent += thread_cpu_ns() - t;
            left -= n as u64;
        }
        spent
    }

    /// Server CPU time (ns) of `iters` times `body` written, encrypted and drained.
    fn bulk(&mut self, iters: u64, body: &[u8]) -> u64 {
        let server = &mut self.server;
        let t = thread_cpu_ns();
        for _ in 0..iters {
            let mut rest = body;
            while !rest.is_empty() {
                let n = server.writer().write(rest).unwrap();
                rest = &rest[n..];
                while server.wants_write() {
                    server.write_tls(&mut io::sink()).unwrap();
                }
            }
        }
        thread_cpu_ns() - t
    }
}

/// Each scenario is one group with every provider in it, run back to back, so a change in the
/// machine's load between scenarios does not fall between the providers.
fn bench(c: &mut Criterion<CpuTime>, setups: &mut [Setup]) {
    let body: Vec<u8> = (0..BULK).map(|i| (i * 7 + i / 251) as u8).collect();
    for group in GROUPS {
        let mut g = c.benchmark_group(group.0);
        if group.0 == "bulk-1MiB" {
            g.throughput(Throughput::Bytes(BULK as u64));
        }
        for setup in setups.iter_mut() {
            g.bench_function(setup.name, |b| {
                b.iter_custom(|iters| match group.0 {
                    "handshake-full" => setup.handshakes(iters, false),
                    "handshake-resumed" => setup.handshakes(iters, true),
                    "request" => setup.requests(iters),
                    _ => setup.bulk(iters, &body),
                })
            });
        }
        g.finish();
    }
}

/// The scenarios (criterion groups) and the unit of one iteration.
const GROUPS: [(&str, &str); 4] = [
    ("handshake-full", "handshake"),
    ("handshake-resumed", "handshake"),
    ("request", "request"),
    ("bulk-1MiB", "MiB"),
];

fn output_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t).join("criterion"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/criterion"),
    }
}

/// This run's median time per iteration (ns) from criterion's estimates.
fn median_ns(dir: &std::path::Path, group: &str, function: &str) -> Option<f64> {
    let file = dir.join(group).join(function).join("new/estimates.json");
    let text = std::fs::read_to_string(file).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn main() {
    let dir = output_dir();
    let mut c = Criterion::default()
        .with_measurement(CpuTime)
        .output_directory(&dir)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
        .without_plots()
        .configure_from_args();
    let cert = cert();
    let all = providers();
    let mut setups: Vec<Setup> = all.iter().map(|p| Setup::new(p, &cert)).collect();
    bench(&mut c, &mut setups);
    c.final_summary();

    println!();
    let [a, b] = &all[..] else {
        println!("summary tls-provider: only {} compiled in; add --features ring", all[0].name);
        return;
    };
    for (group, unit) in GROUPS {
        let (Some(x), Some(y)) = (median_ns(&dir, group, a.name), median_ns(&dir, group, b.name))
        else {
            continue;
        };
        println!(
            "summary tls-provider {group}: {} {:.2} µs/{unit}, {} {:.2} µs/{unit}, ratio {:.2}x",
            a.name,
            x / 1e3,
            b.name,
            y / 1e3,
            x / y
        );
    }
}
