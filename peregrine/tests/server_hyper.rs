//! A real client from the ecosystem (hyper 1) talking to the server.

mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;

#[test]
fn hyper_client_keep_alive_get_post_head() {
    let server = support::spawn(support::app);
    let addr = server.local_addr();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(conn);

        for i in 0..3 {
            let req = http::Request::get(format!("/info?{i}"))
                .header("host", "t")
                .body(Full::new(Bytes::new()))
                .unwrap();
            let res = sender.send_request(req).await.unwrap();
            assert_eq!(res.status(), 200);
            assert!(res.headers().contains_key("date"));
            let body = res.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, format!("GET /info {i} Http11"));
        }

        let payload = Bytes::from(vec![7u8; 50_000]);
        let req = http::Request::post("/echo")
            .header("host", "t")
            .body(Full::new(payload.clone()))
            .unwrap();
        let res = sender.send_request(req).await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), payload);

        let req = http::Request::get("/stream")
            .header("host", "t")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let res = sender.send_request(req).await.unwrap();
        assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "part1;part2;part3;");

        let req =
            http::Request::head("/").header("host", "t").body(Full::new(Bytes::new())).unwrap();
        let res = sender.send_request(req).await.unwrap();
        assert_eq!(res.headers()["content-length"], "5");
        assert!(res.into_body().collect().await.unwrap().to_bytes().is_empty());
    });
}

#[test]
fn hyper_legacy_client_pool() {
    let server = support::spawn(support::app);
    let addr = server.local_addr();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<Full<Bytes>>();
        for _ in 0..5 {
            let uri: http::Uri = format!("http://{addr}/").parse().unwrap();
            let res = client.get(uri).await.unwrap();
            assert_eq!(res.status(), 200);
            assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "hello");
        }
    });
}
