//! `peregrine proxy` end to end: the real binary in front of real `peregrine serve` backends,
//! all on 127.0.0.1 with ports the kernel picks (the printed URLs tell which), checked with a
//! small raw HTTP/1.1 client.

use std::net::SocketAddr;
use std::process::Command;

mod support;
use support::{BIN, Client, Running, TempDir, get};

/// Two backends behind `--to`: requests alternate between them (round-robin, one worker), the
/// access log names the upstream of each with its time, `--metrics` counts per upstream,
/// `--health` answers, and SIGTERM drains and exits 0.
#[test]
fn to_two_backends_round_robin() {
    let (dir_a, dir_b) = (TempDir::new(&[("who", "a")]), TempDir::new(&[("who", "b")]));
    let (a, b) = (Running::serve(&dir_a.0), Running::serve(&dir_b.0));
    let logs = TempDir::new(&[]);
    let log = logs.0.join("access.log");
    let to = format!("http://{},http://{}", a.addr, b.addr);
    let proxy = Running::proxy(&[
        "--to",
        &to,
        "--workers",
        "1",
        "--metrics",
        "/metrics",
        "--health",
        "/healthz",
        "--access-log",
        log.to_str().unwrap(),
    ]);
    let mut client = Client::connect(proxy.addr);
    let got: Vec<String> = (0..4).map(|_| client.get("/who").2).collect();
    assert_eq!(got, ["a", "b", "a", "b"]);
    // A new connection goes on where the pool is.
    assert_eq!(get(proxy.addr, "/who"), (200, "a".to_owned()));
    assert_eq!(get(proxy.addr, "/healthz").0, 200);
    let (status, metrics) = get(proxy.addr, "/metrics");
    assert_eq!(status, 200);
    for (up, n) in [(a.addr, 3), (b.addr, 2)] {
        let line = format!("peregrine_upstream_requests_total{{upstream=\"http://{up}\"}} {n}");
        assert!(metrics.contains(&line), "{line} not in\n{metrics}");
        let line = format!("peregrine_upstream_up{{upstream=\"http://{up}\"}} 1");
        assert!(metrics.contains(&line), "{line} not in\n{metrics}");
    }
    drop(client);
    assert!(proxy.terminate().success());
    let log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("GET /who ")).collect();
    assert_eq!(lines.len(), 5, "{log}");
    assert!(lines[0].contains(&format!(" upstream=http://{} upstream_time=0.", a.addr)), "{log}");
    assert!(lines[1].contains(&format!(" upstream=http://{} upstream_time=0.", b.addr)), "{log}");
    // The proxy's own answers name no upstream.
    assert!(log.lines().any(|l| l.contains("GET /healthz ") && !l.contains("upstream=")), "{log}");
}

/// A file with a route to a directory (served as `serve` serves it, prefix stripped) and one
/// to a backend; the longest prefix wins, fields are set on the way to the backend.
#[test]
fn config_routes_to_a_directory_and_a_backend() {
    let app = TempDir::new(&[("who", "app"), ("staticx", "the app's, not the directory's")]);
    let backend = Running::serve(&app.0);
    let site = TempDir::new(&[("style.css", "body{}")]);
    let conf = TempDir::new(&[]);
    let file = conf.0.join("proxy.toml");
    std::fs::write(
        &file,
        format!(
            "[upstream.app]\nservers = [\"http://{}\"]\n\n\
             [[route]]\nupstream = \"app\"\nresponse_headers = {{ set = {{ X-Route = \"app\" }} }}\n\n\
             [[route]]\nprefix = \"/static\"\nfiles = \"{}\"\nstrip_prefix = true\n",
            backend.addr,
            site.0.display()
        ),
    )
    .unwrap();
    let proxy = Running::proxy(&["--config", file.to_str().unwrap(), "--quiet"]);
    let mut client = Client::connect(proxy.addr);
    let (status, head, body) = client.get("/static/style.css");
    assert_eq!((status, body.as_str()), (200, "body{}"));
    assert!(!head.to_ascii_lowercase().contains("x-route"), "{head}");
    let (status, head, body) = client.get("/who");
    assert_eq!((status, body.as_str()), (200, "app"));
    assert!(head.to_ascii_lowercase().contains("x-route: app"), "{head}");
    // Not under the prefix (it matches at a segment boundary): the backend's.
    assert_eq!(client.get("/staticx").2, "the app's, not the directory's");
    assert!(client.get("/static").2.contains("style.css"), "the directory's listing");
    assert_eq!(client.get("/static/missing").0, 404);
    assert!(proxy.terminate().success());
}

/// SIGHUP reads the file again: a good one moves new requests to the new backend, on a
/// connection opened before (none dropped); a bad one keeps the configuration in force and
/// stderr says where the error is.
#[test]
fn sighup_reloads_a_good_file_and_keeps_the_old_one_over_a_bad_file() {
    let (dir_a, dir_b) = (TempDir::new(&[("who", "a")]), TempDir::new(&[("who", "b")]));
    let (a, b) = (Running::serve(&dir_a.0), Running::serve(&dir_b.0));
    let conf = TempDir::new(&[]);
    let file = conf.0.join("proxy.toml");
    let to = |addr: SocketAddr| {
        format!("[upstream.app]\nservers = [\"http://{addr}\"]\n[[route]]\nupstream = \"app\"\n")
    };
    std::fs::write(&file, to(a.addr)).unwrap();
    let proxy = Running::proxy(&["--config", file.to_str().unwrap(), "--quiet"]);
    let mut client = Client::connect(proxy.addr);
    assert_eq!(client.get("/who").2, "a");

    std::fs::write(&file, to(b.addr)).unwrap();
    proxy.signal("-HUP");
    proxy.stderr_line("peregrine: reloaded");
    assert_eq!(client.get("/who").2, "b", "the same connection, the new route");
    assert_eq!(get(proxy.addr, "/who").1, "b");

    std::fs::write(
        &file,
        "[upstream.app]\nservers = [\"http://x\"]\n[[route]]\nupstream = \"ap\"\n",
    )
    .unwrap();
    proxy.signal("-HUP");
    let line = proxy.stderr_line("reload failed");
    assert!(line.contains("keeping the configuration in force"), "{line}");
    assert!(line.contains("route[0]: upstream 'ap' is not defined"), "{line}");
    std::fs::write(&file, "[[route]\n").unwrap();
    proxy.signal("-HUP");
    let line = proxy.stderr_line("reload failed");
    assert!(line.contains("line 1"), "{line}");
    assert_eq!(client.get("/who").2, "b");
    assert!(proxy.terminate().success());
}

/// Start-up errors: one line on stderr naming the flag or the place in the file, exit 2.
#[test]
fn bad_flags_and_files_exit_2_with_the_reason() {
    let conf = TempDir::new(&[
        ("unknown.toml", "[[route]]\nupstream = \"app\"\n"),
        ("typo.toml", "[upstream.app]\nserver = [\"http://127.0.0.1:1\"]\n"),
        (
            "timeout.toml",
            "[upstream.app]\nservers = [\"http://127.0.0.1:1\"]\ntimeouts = { idle = \"10\" }\n[[route]]\nupstream = \"app\"\n",
        ),
    ]);
    let path = |n: &str| conf.0.join(n).to_str().unwrap().to_owned();
    struct Case {
        args: Vec<String>,
        says: &'static str,
    }
    let cases = [
        Case { args: vec!["--to".into(), "ftp://127.0.0.1:1".into()], says: "--to:" },
        Case {
            args: vec![
                "--to".into(),
                "http://127.0.0.1:1".into(),
                "--balance".into(),
                "random".into(),
            ],
            says: "'random'",
        },
        Case { args: vec![], says: "--to" },
        Case {
            args: vec!["--config".into(), path("missing.toml")],
            says: "missing.toml: no such file",
        },
        Case {
            args: vec!["--config".into(), path("unknown.toml")],
            says: "route[0]: upstream 'app' is not defined",
        },
        Case { args: vec!["--config".into(), path("typo.toml")], says: "unknown field `server`" },
        Case {
            args: vec!["--config".into(), path("timeout.toml")],
            says: "upstream.app: timeouts.idle: '10'",
        },
    ];
    for c in cases {
        let out = Command::new(BIN)
            .arg("proxy")
            .args(["--addr", "127.0.0.1:0"])
            .args(&c.args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{:?}: {err}", c.args);
        assert!(err.contains(c.says), "{:?}: {err}", c.args);
        assert!(out.stdout.is_empty(), "{:?}", c.args);
    }
}

/// A file with a TLS listener and a plain one: both serve the routes, the TLS one with HTTP/2
/// by ALPN (checked with curl, skipped with the reason printed when it is missing).
#[test]
fn config_listeners_with_and_without_tls() {
    if !support::installed("curl", "--version") {
        return;
    }
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let dir = TempDir::new(&[
        ("cert.pem", &cert.cert.pem()),
        ("key.pem", &cert.signing_key.serialize_pem()),
        ("a.txt", "over tls"),
    ]);
    let (tls_port, plain_port) = (support::free_port(), support::free_port());
    std::fs::write(
        dir.0.join("proxy.toml"),
        format!(
            "[[listen]]\naddr = \"127.0.0.1:{tls_port}\"\ntls_cert = \"cert.pem\"\n\
             tls_key = \"key.pem\"\n\n[[listen]]\naddr = \"127.0.0.1:{plain_port}\"\n\n\
             [[route]]\nfiles = \".\"\n"
        ),
    )
    .unwrap();
    let file = dir.0.join("proxy.toml");
    let mut args = vec!["proxy", "--config", file.to_str().unwrap(), "--quiet"];
    args.extend(["--drain-grace", "0"]);
    let proxy = support::Running::start(&args, "Proxying http://");
    assert_eq!(proxy.addr.port(), plain_port, "plain listeners come first");
    assert_eq!(get(proxy.addr, "/a.txt"), (200, "over tls".to_owned()));
    let out = Command::new("curl")
        .args(["-s", "--http2", "-w", " %{http_version}", "--cacert"])
        .arg(dir.0.join("cert.pem"))
        .arg(format!("https://localhost:{tls_port}/a.txt"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "over tls 2");
    assert!(proxy.terminate().success());
}
