//! A real browser over HTTP/3: headless Chromium, forced onto QUIC for the server's origin
//! (`--origin-to-force-quic-on`), loads a page whose script fetches a small body and a 1 MiB
//! one and uploads 256 KiB to an echo, checks every byte, and reports its verdict. The server
//! records the protocol version of every request it served: all must be HTTP/3.
//!
//! Skipped with a printed notice when `chromium` is not installed (`.ci/run` installs Debian's).
//! The certificate is trusted by its key's hash (`--ignore-certificate-errors-spki-list`), so
//! Chromium treats the connection as any valid HTTPS one.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peregrine::server::TlsConfig;
use peregrine::{Request, Response, Server, Version};
use support::browser;

/// The page: fetches `/small` and `/large`, posts 256 KiB to `/echo`, checks each byte for
/// byte against what it expects, and reports `/report?pass` or what went wrong.
const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>h3</title></head><body><script>
function counter(n) {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 255;
  return b;
}
function same(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
(async () => {
  const why = [];
  try {
    const small = await (await fetch("/small")).text();
    if (small !== "Hello, HTTP/3!") why.push("small:" + small);
    const large = new Uint8Array(await (await fetch("/large")).arrayBuffer());
    if (!same(large, counter(1 << 20))) why.push("large:" + large.length);
    const up = counter(256 * 1024);
    const echo = new Uint8Array(await (await fetch("/echo", { method: "POST", body: up })).arrayBuffer());
    if (!same(echo, up)) why.push("echo:" + echo.length);
  } catch (e) {
    why.push("error:" + e);
  }
  await fetch("/report?" + (why.length ? encodeURIComponent(why.join(",")) : "pass"));
})();
</script></body></html>
"#;

/// What the server saw: each request's path and version, and the page's report.
#[derive(Default, Debug)]
struct Seen {
    requests: Vec<(String, Version)>,
    report: Option<String>,
}

fn counter(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(31).wrapping_add(7)) as u8).collect()
}

#[test]
fn chromium_fetches_over_http3() {
    let Some(chromium) = browser::chromium() else {
        println!("skipped: chromium is not installed");
        return;
    };
    let cert = support::tls::self_signed(&["localhost"]);
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let large = bytes::Bytes::from(counter(1 << 20));
    let recorded = seen.clone();
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(support::test_config())
        .tls(tls)
        .http3(true)
        .spawn(move |req: Request| {
            let seen = recorded.clone();
            let large = large.clone();
            async move {
                let path = req.path().to_owned();
                seen.lock().unwrap().requests.push((path.clone(), req.version()));
                match path.as_str() {
                    "/" => Response::new(PAGE).with_header(
                        http::header::CONTENT_TYPE,
                        "text/html; charset=utf-8".parse().unwrap(),
                    ),
                    "/small" => Response::new("Hello, HTTP/3!"),
                    "/large" => Response::new(large),
                    "/echo" => match req.into_body().to_bytes(1 << 20).await {
                        Ok(body) => Response::new(body),
                        Err(e) => {
                            Response::with_status(http::StatusCode::BAD_REQUEST, e.to_string())
                        }
                    },
                    "/report" => {
                        seen.lock().unwrap().report = Some(req.query().unwrap_or("").to_owned());
                        Response::new("ok")
                    }
                    _ => Response::with_status(http::StatusCode::NOT_FOUND, "not found"),
                }
            }
        })
        .unwrap();
    let port = server.local_addr().port();
    let profile = std::env::temp_dir().join(format!("peregrine-h3-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let force = format!("--origin-to-force-quic-on=localhost:{port}");
    let url = format!("https://localhost:{port}/");
    let child = browser::launch(
        &chromium,
        &url,
        &browser::spki(&cert),
        &profile,
        &["--enable-quic", &force],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.lock().unwrap().report.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    browser::stop(child);
    let _ = std::fs::remove_dir_all(&profile);
    server.shutdown();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    println!("{seen:?}");
    assert_eq!(seen.report.as_deref(), Some("pass"), "{seen:?}");
    for path in ["/", "/small", "/large", "/echo", "/report"] {
        assert!(seen.requests.iter().any(|(p, _)| p == path), "{path} not requested: {seen:?}");
    }
    // Chromium may ask for /favicon.ico too; every request came over HTTP/3.
    assert!(seen.requests.iter().all(|(_, v)| *v == Version::Http3), "{seen:?}");
}
