//! Fixed answers (`Server::fixed`): the prepared HTTP/1.1 path must answer exactly what the
//! general encoder answers and what a handler returning the same response answers; everything
//! that is not a `GET` or `HEAD` without a body of the path goes to the handler; long
//! pipelined batches keep their order; HTTP/2 and a drain take the general path; a response
//! that cannot be a fixed answer stops the server from starting.

mod support;

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue, SERVER};
use http::{Method, StatusCode};
use peregrine::server::Config;
use peregrine::{Body, Request, Response, Server, ServerHandle};
use support::{RawClient, RawResponse, get, test_config};

fn hello() -> Response {
    Response::new("Hello, World!")
        .with_header(CONTENT_TYPE, HeaderValue::from_static("text/plain"))
        .with_header(SERVER, HeaderValue::from_static("peregrine"))
}

fn big() -> Response {
    Response::new(Body::from(vec![b'b'; 9000]))
}

/// Answers what the fixed answers answer (`GET` and `HEAD` of `/plaintext` and `/big` without
/// a body) as they do; anything else names its method and path (and the body's length), so a
/// test sees which requests reached it.
async fn app(mut req: Request) -> Response {
    let bodyless = req.body_mut().is_end();
    match (req.method(), req.path()) {
        (peregrine::Method::Get | peregrine::Method::Head, "/plaintext") if bodyless => hello(),
        (peregrine::Method::Get | peregrine::Method::Head, "/big") if bodyless => big(),
        _ => {
            let (method, path) = (req.method_str().to_owned(), req.path().to_owned());
            let mut body = req.into_body();
            let mut len = 0;
            while let Some(Ok(chunk)) = std::future::poll_fn(|cx| body.poll_chunk(cx)).await {
                len += chunk.len();
            }
            Response::with_status(StatusCode::NOT_FOUND, format!("app {method} {path} {len}"))
        }
    }
}

fn fixed_server(config: Config, log: bool) -> ServerHandle {
    let mut server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(config)
        .fixed("/plaintext", hello())
        .fixed("/big", big());
    if log {
        server = server.access_log(|_| {});
    }
    server.spawn(app).unwrap()
}

/// The response with its Date's value masked (checked to be an IMF-fixdate first).
fn masked(mut res: RawResponse) -> RawResponse {
    for (name, value) in &mut res.headers {
        if name.eq_ignore_ascii_case("date") {
            // The prepared head is encoded with the epoch: an answer must carry the clock's.
            assert!(value.len() == 29 && value.ends_with(" GMT"), "{value}");
            assert!(!value.contains("1970"), "{value}");
            *value = "(date)".into();
        }
    }
    res
}

/// The answer to `request` sent alone on a fresh connection, its Date masked.
fn single(server: &ServerHandle, request: &[u8], head: bool) -> RawResponse {
    let mut c = RawClient::connect(server.local_addr());
    c.send(request);
    masked(c.response_to(head).unwrap())
}

#[test]
fn a_fixed_answer_is_the_handlers_response_byte_for_byte() {
    let prepared = fixed_server(test_config(), false);
    // An access log sends fixed answers through the general encoder.
    let general = fixed_server(test_config(), true);
    let handler = support::spawn(app);
    let requests: &[(&[u8], bool)] = &[
        (b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n", false),
        (b"HEAD /plaintext HTTP/1.1\r\nHost: t\r\n\r\n", true),
        (b"GET /plaintext?x=1 HTTP/1.1\r\nHost: t\r\n\r\n", false),
        (b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n", false),
        (b"HEAD /big HTTP/1.1\r\nHost: t\r\n\r\n", true),
        (b"GET /plaintext HTTP/1.0\r\n\r\n", false),
        (b"GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false),
        (b"GET /plaintext HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", false),
        (b"GET http://t/plaintext HTTP/1.1\r\nHost: t\r\n\r\n", false),
    ];
    for &(request, head) in requests {
        let text = String::from_utf8_lossy(request);
        let answers: Vec<RawResponse> = [&prepared, &general, &handler]
            .iter()
            .map(|server| {
                let mut c = RawClient::connect(server.local_addr());
                // Twice on one connection where it stays open: the second answer's Date
                // comes from the batch's cached one.
                c.send(request);
                let first = masked(c.response_to(head).expect("an answer"));
                if first.header("connection").is_none() {
                    c.send(request);
                    assert_eq!(masked(c.response_to(head).unwrap()), first, "{text}");
                }
                first
            })
            .collect();
        assert_eq!(answers[0], answers[2], "prepared vs handler: {text}");
        assert_eq!(answers[1], answers[2], "general vs handler: {text}");
        assert!(answers[0].header("date").is_some(), "{text}");
    }
    let first = {
        let mut c = RawClient::connect(prepared.local_addr());
        c.send(&get("/plaintext"));
        c.response()
    };
    assert_eq!((first.status, first.body.as_slice()), (200, &b"Hello, World!"[..]));
    assert_eq!(first.header("content-type"), Some("text/plain"));
    for server in [prepared, general, handler] {
        server.shutdown_now();
    }
}

#[test]
fn other_methods_bodies_and_paths_go_to_the_handler() {
    let server = fixed_server(test_config(), false);
    let mut c = RawClient::connect(server.local_addr());
    let rows: &[(&[u8], &[u8])] = &[
        (
            b"POST /plaintext HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc",
            b"app POST /plaintext 3",
        ),
        (
            b"GET /plaintext HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi",
            b"app GET /plaintext 2",
        ),
        (b"DELETE /plaintext HTTP/1.1\r\nHost: t\r\n\r\n", b"app DELETE /plaintext 0"),
        (b"GET /plaintext/ HTTP/1.1\r\nHost: t\r\n\r\n", b"app GET /plaintext/ 0"),
        (b"GET /plaintextx HTTP/1.1\r\nHost: t\r\n\r\n", b"app GET /plaintextx 0"),
        (b"GET /PLAINTEXT HTTP/1.1\r\nHost: t\r\n\r\n", b"app GET /PLAINTEXT 0"),
        // Between them, on the same connection, the fixed answer.
        (b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n", b"Hello, World!"),
    ];
    for _ in 0..2 {
        for &(request, want) in rows {
            c.send(request);
            let res = c.response();
            assert_eq!(res.body, want, "{}", String::from_utf8_lossy(request));
        }
    }
    // The strict rules still come first: a missing Host is a 400, whatever the path.
    c.send(b"GET /plaintext HTTP/1.1\r\n\r\n");
    let res = c.response();
    assert_eq!((res.status, res.header("connection")), (400, Some("close")));
    server.shutdown_now();
}

/// 3,000 pipelined requests in one write, fixed answers (9 KB each: past the write buffer's
/// flush mark many times) interleaved with requests a handler answers: every answer arrives,
/// in order.
#[test]
fn a_long_pipelined_batch_is_answered_in_order() {
    let server = fixed_server(test_config(), false);
    let mut c = RawClient::connect(server.local_addr());
    let mut batch = Vec::new();
    for i in 0..3000 {
        let path = match i % 3 {
            0 => "/big".to_string(),
            1 => "/plaintext".to_string(),
            _ => format!("/app/{i}"),
        };
        batch.extend_from_slice(&get(&path));
    }
    // Written from another thread: the server's answers fill the socket while it reads.
    let mut writer = c.tcp().try_clone().unwrap();
    let sender = std::thread::spawn(move || io::Write::write_all(&mut writer, &batch));
    for i in 0..3000 {
        let res = c.response();
        match i % 3 {
            0 => assert_eq!(res.body.len(), 9000, "{i}"),
            1 => assert_eq!(res.body, b"Hello, World!", "{i}"),
            _ => assert_eq!(res.body, format!("app GET /app/{i} 0").as_bytes(), "{i}"),
        }
    }
    sender.join().unwrap().unwrap();
    server.shutdown_now();
}

/// Pipelined fixed answers are written in runs from one prepared copy (`h1/fixed_run.rs`): a
/// run longer than it covers, a HEAD after GETs, another answer, a query, a handler's answer
/// and a refused head in one batch all arrive in order, each byte for byte the single answer.
#[test]
fn runs_of_fixed_answers_keep_their_order_and_bytes() {
    let server = fixed_server(test_config(), false);
    let get_plain = get("/plaintext");
    let head_plain = b"HEAD /plaintext HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
    let (want_get, want_head) =
        (single(&server, &get_plain, false), single(&server, &head_plain, true));
    let want_big = single(&server, &get("/big"), false);
    assert_eq!(want_get.body, b"Hello, World!");
    // (request, HEAD, the answer expected; None: the handler's), in runs of these lengths.
    let app = get("/app");
    let query = get("/plaintext?q=1");
    let runs: &[(&[u8], bool, Option<&RawResponse>, usize)] = &[
        (&get_plain, false, Some(&want_get), 150),
        (&head_plain, true, Some(&want_head), 5),
        (&get_plain, false, Some(&want_get), 1),
        (&query, false, Some(&want_get), 70),
        (&get("/big"), false, Some(&want_big), 3),
        (&app, false, None, 1),
        (&get_plain, false, Some(&want_get), 10),
    ];
    let mut batch = Vec::new();
    for &(request, _, _, n) in runs {
        for _ in 0..n {
            batch.extend_from_slice(request);
        }
    }
    // The strict rules still apply inside a batch: the 400 comes after every answer before it.
    batch.extend_from_slice(b"GET /plaintext HTTP/1.1\r\n\r\n");
    let mut c = RawClient::connect(server.local_addr());
    c.send(&batch);
    for (i, &(request, head, want, n)) in runs.iter().enumerate() {
        for k in 0..n {
            let got = masked(c.response_to(head).expect("an answer"));
            let text = String::from_utf8_lossy(request);
            match want {
                Some(want) => assert_eq!(&got, want, "run {i}, answer {k}: {text}"),
                None => assert_eq!(got.body, b"app GET /app 0", "run {i}: {text}"),
            }
        }
    }
    let refused = c.response();
    assert_eq!((refused.status, refused.header("connection")), (400, Some("close")));
    assert!(c.response_to(false).is_none(), "the connection ends after the 400");
    server.shutdown_now();
}

/// Pipelined requests of every kind, written in pieces of random sizes (so runs of fixed
/// answers start and end anywhere, and heads are split mid-run): every answer arrives in
/// order, each equal to the single answer. Three seeds of a fixed generator, so a failure
/// repeats.
#[test]
fn pipelined_requests_in_random_pieces_are_answered_in_order() {
    let server = fixed_server(test_config(), false);
    let head_plain = b"HEAD /plaintext HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
    let plain = single(&server, &get("/plaintext"), false);
    let kinds: Vec<(Vec<u8>, bool, Option<RawResponse>)> = vec![
        (get("/plaintext"), false, Some(plain.clone())),
        (get("/plaintext"), false, Some(plain.clone())),
        (get("/plaintext"), false, Some(plain)),
        (head_plain.clone(), true, Some(single(&server, &head_plain, true))),
        (get("/big"), false, Some(single(&server, &get("/big"), false))),
        (get("/plaintext?v=2"), false, Some(single(&server, &get("/plaintext?v=2"), false))),
        (get("/app"), false, None),
    ];
    for seed in [1u64, 7, 1234] {
        let mut state = seed;
        let mut next = |n: u64| {
            // xorshift64: a fixed sequence per seed.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let picks: Vec<usize> = (0..600).map(|_| next(kinds.len() as u64) as usize).collect();
        let batch: Vec<u8> = picks.iter().flat_map(|&k| kinds[k].0.clone()).collect();
        let mut pieces = Vec::new();
        let mut at = 0;
        while at < batch.len() {
            let n = (1 + next(300) as usize).min(batch.len() - at);
            pieces.push(batch[at..at + n].to_vec());
            at += n;
        }
        let mut c = RawClient::connect(server.local_addr());
        let mut writer = c.tcp().try_clone().unwrap();
        let sender = std::thread::spawn(move || {
            for (i, piece) in pieces.iter().enumerate() {
                io::Write::write_all(&mut writer, piece)?;
                if i % 8 == 0 {
                    std::thread::sleep(Duration::from_micros(300));
                }
            }
            Ok::<_, io::Error>(())
        });
        for (i, &k) in picks.iter().enumerate() {
            let (_, head, want) = &kinds[k];
            let got = masked(c.response_to(*head).expect("an answer"));
            match want {
                Some(want) => assert_eq!(&got, want, "seed {seed}, answer {i}"),
                None => assert_eq!(got.body, b"app GET /app 0", "seed {seed}, answer {i}"),
            }
        }
        sender.join().unwrap().unwrap();
    }
    server.shutdown_now();
}

/// A client that pipelines fixed answers in small batches (a run each) and starts reading
/// late, with a small receive window: every answer arrives, in order. (The write a socket
/// takes only in part is `h1::fixed_run`'s unit test: here the loopback's send buffer grows
/// too large for a test to fill it with runs.)
#[test]
fn small_pipelined_batches_read_late_are_answered_whole() {
    use socket2::{Domain, SockAddr, Socket, Type};
    let server = fixed_server(test_config(), false);
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    // Set before connecting, so the window the server sees stays small.
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&SockAddr::from(server.local_addr())).unwrap();
    let stream = std::net::TcpStream::from(socket);
    stream.set_nodelay(true).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut c = RawClient::over(stream);
    const BATCHES: usize = 500;
    const DEPTH: usize = 16;
    let batch: Vec<u8> = (0..DEPTH).flat_map(|_| get("/plaintext")).collect();
    let sender = std::thread::spawn(move || {
        for _ in 0..BATCHES {
            io::Write::write_all(&mut writer, &batch)?;
            // Apart, so each batch is read (and answered) on its own.
            std::thread::sleep(Duration::from_micros(200));
        }
        Ok::<_, io::Error>(())
    });
    std::thread::sleep(Duration::from_millis(300));
    for i in 0..BATCHES * DEPTH {
        let res = c.response();
        assert_eq!((res.status, res.body.as_slice()), (200, &b"Hello, World!"[..]), "{i}");
    }
    sender.join().unwrap().unwrap();
    c.send(&get("/app"));
    assert_eq!(c.response().body, b"app GET /app 0");
    server.shutdown_now();
}

/// A connection whose first requests were fixed answers waits for the next one under the
/// keep-alive timeout, not the first head's (which runs from the accept); a head begun after
/// them is still timed by the header timeout.
#[test]
fn after_fixed_answers_the_timeouts_are_those_between_requests() {
    let config = Config {
        header_read_timeout: Duration::from_millis(300),
        keep_alive_timeout: Duration::from_secs(5),
        ..test_config()
    };
    let server = fixed_server(config, false);
    let mut c = RawClient::connect(server.local_addr());
    c.send(&[get("/plaintext"), get("/plaintext")].concat());
    assert_eq!(c.response().body, b"Hello, World!");
    assert_eq!(c.response().body, b"Hello, World!");
    // Idle past the header timeout, within the keep-alive one: still served.
    std::thread::sleep(Duration::from_millis(600));
    c.send(&get("/plaintext"));
    assert_eq!(c.response().body, b"Hello, World!");
    // A head left incomplete after a fixed answer: closed by the header timeout.
    c.send(&[get("/plaintext").as_slice(), b"GET /plaintext HTTP/1.1\r\nHo"].concat());
    assert_eq!(c.response().body, b"Hello, World!");
    let start = std::time::Instant::now();
    assert!(c.closed_within(Duration::from_secs(3)), "the partial head is timed out");
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    server.shutdown_now();
}

/// A batch of fixed answers alone, far larger than a read and than the socket's buffers: the
/// loop reads it in turns, flushes as the answers pile up, and hands the connection to a task
/// when the socket is full; every answer arrives, in order.
#[test]
fn a_long_batch_of_fixed_answers_alone_is_answered_in_order() {
    let server = fixed_server(test_config(), false);
    let mut c = RawClient::connect(server.local_addr());
    let paths = |i: usize| if i % 7 == 0 { "/big" } else { "/plaintext" };
    let batch: Vec<u8> = (0..20_000).flat_map(|i| get(paths(i))).collect();
    let mut writer = c.tcp().try_clone().unwrap();
    let sender = std::thread::spawn(move || io::Write::write_all(&mut writer, &batch));
    for i in 0..20_000 {
        let res = c.response();
        match paths(i) {
            "/big" => assert_eq!(res.body.len(), 9000, "{i}"),
            _ => assert_eq!(res.body, b"Hello, World!", "{i}"),
        }
    }
    sender.join().unwrap().unwrap();
    c.send(&get("/plaintext"));
    assert_eq!(c.response().body, b"Hello, World!");
    server.shutdown_now();
}

/// A connection served by the worker's fixed-answer loop keeps the same deadlines as one on a
/// task (the loop checks them in periods of an eighth of the shorter timeout): idle past the
/// keep-alive timeout it is closed, not before; silent from the accept, the header timeout
/// closes it.
#[test]
fn idle_fixed_answer_connections_close_at_their_timeouts() {
    let config = Config {
        header_read_timeout: Duration::from_millis(400),
        keep_alive_timeout: Duration::from_millis(800),
        ..test_config()
    };
    let server = fixed_server(config, false);
    let mut idle = RawClient::connect(server.local_addr());
    idle.send(&get("/plaintext"));
    assert_eq!(idle.response().body, b"Hello, World!");
    let answered = std::time::Instant::now();
    let mut silent = RawClient::connect(server.local_addr());
    let accepted = std::time::Instant::now();
    assert!(silent.closed_within(Duration::from_secs(3)), "never closed");
    let waited = accepted.elapsed();
    assert!(
        (Duration::from_millis(400)..Duration::from_millis(1400)).contains(&waited),
        "{waited:?}"
    );
    assert!(idle.closed_within(Duration::from_secs(3)), "never closed");
    let waited = answered.elapsed();
    assert!(
        (Duration::from_millis(800)..Duration::from_millis(1800)).contains(&waited),
        "{waited:?}"
    );
    server.shutdown_now();
}

/// At the connection limit, a connection idle after fixed answers is closed to admit a new
/// one, as an idle connection on a task is (once it has been idle for the loop's period).
#[test]
fn at_the_limit_an_idle_fixed_answer_connection_makes_room() {
    let config = Config {
        max_connections: 2,
        header_read_timeout: Duration::from_secs(1),
        keep_alive_timeout: Duration::from_secs(5),
        ..test_config()
    };
    let server = fixed_server(config, false);
    let mut a = RawClient::connect(server.local_addr());
    let mut b = RawClient::connect(server.local_addr());
    for c in [&mut a, &mut b] {
        c.send(&get("/plaintext"));
        assert_eq!(c.response().body, b"Hello, World!");
    }
    // Past two periods of 125 ms: both are in the idle list, `a` first.
    std::thread::sleep(Duration::from_millis(500));
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/plaintext"));
    assert_eq!(c.response().body, b"Hello, World!");
    assert!(a.closed_within(Duration::from_secs(2)), "the longest idle makes room");
    b.send(&get("/plaintext"));
    assert_eq!(b.response().body, b"Hello, World!");
    server.shutdown_now();
}

/// A client that sends its requests and then shuts its side gets every answer before the
/// connection closes.
#[test]
fn a_client_that_shuts_its_side_gets_its_answers() {
    let server = fixed_server(test_config(), false);
    let mut c = RawClient::connect(server.local_addr());
    c.send(&[get("/plaintext"), get("/big"), get("/plaintext")].concat());
    c.tcp().shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(c.response().body, b"Hello, World!");
    assert_eq!(c.response().body.len(), 9000);
    assert_eq!(c.response().body, b"Hello, World!");
    assert!(c.closed_within(Duration::from_secs(2)), "closed after the answers");
    server.shutdown_now();
}

#[test]
fn during_a_drain_a_fixed_answer_closes_the_connection() {
    let config = Config { drain_grace: Duration::from_millis(500), ..test_config() };
    let server = fixed_server(config, false);
    let mut before = RawClient::connect(server.local_addr());
    before.send(&get("/plaintext"));
    assert_eq!(before.response().header("connection"), None);
    server.shutdown();
    std::thread::sleep(Duration::from_millis(50));
    let mut during = RawClient::connect(server.local_addr());
    during.send(&get("/plaintext"));
    let res = during.response();
    assert_eq!(
        (res.body.as_slice(), res.header("connection")),
        (&b"Hello, World!"[..], Some("close"))
    );
    assert!(during.response_to(false).is_none(), "the connection ends after it");
    server.join().unwrap();
}

#[test]
fn fixed_answers_over_http2() {
    let server = fixed_server(test_config(), false);
    let addr = server.local_addr();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (send, conn) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut send = send.ready().await.unwrap();
        let rows = [
            (Method::GET, "/plaintext?q", None, 200, &b"Hello, World!"[..]),
            (Method::HEAD, "/plaintext", None, 200, &b""[..]),
            (
                Method::POST,
                "/plaintext",
                Some(Bytes::from_static(b"abcd")),
                404,
                b"app POST /plaintext 4",
            ),
            (Method::POST, "/plaintext", None, 404, b"app POST /plaintext 0"),
            (Method::GET, "/plaintext/", None, 404, b"app GET /plaintext/ 0"),
        ];
        for (method, path, body, status, want) in rows {
            let req = http::Request::builder()
                .method(method.clone())
                .uri(format!("http://{addr}{path}"))
                .body(())
                .unwrap();
            let (res, mut stream) = send.send_request(req, body.is_none()).unwrap();
            if let Some(body) = body {
                stream.send_data(body, true).unwrap();
            }
            let res = res.await.unwrap();
            assert_eq!(res.status().as_u16(), status, "{method} {path}");
            if status == 200 {
                assert_eq!(res.headers()["content-type"], "text/plain", "{method} {path}");
                assert_eq!(res.headers()["content-length"], "13", "{method} {path}");
                assert!(res.headers().contains_key("date"), "{method} {path}");
            }
            let mut body = res.into_body();
            let mut got = Vec::new();
            while let Some(chunk) = body.data().await {
                let chunk = chunk.unwrap();
                body.flow_control().release_capacity(chunk.len()).unwrap();
                got.extend_from_slice(&chunk);
            }
            assert_eq!(got, want, "{method} {path}");
        }
    });
    server.shutdown_now();
}

#[test]
fn what_cannot_be_a_fixed_answer_stops_the_server_from_starting() {
    let start = |server: Server| server.spawn(app).map(|s| s.shutdown_now()).unwrap_err();
    let bind = || Server::bind("127.0.0.1:0").workers(1);
    let (_tx, stream) = Body::channel(1);
    let rows: Vec<(Server, &str)> = vec![
        (bind().fixed("plaintext", hello()), "must start with '/'"),
        (bind().fixed("/a", hello()).fixed("/a", hello()), "answered already"),
        (bind().health("/healthz").fixed("/healthz", hello()), "answered already"),
        (bind().fixed("/s", Response::new(stream)), "not a stream"),
        (
            bind().fixed("/c", Response::with_status(StatusCode::CONTINUE, "")),
            "cannot answer a GET",
        ),
    ];
    for (server, want) in rows {
        let err = start(server);
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert!(err.to_string().contains(want), "{err}");
    }
}
