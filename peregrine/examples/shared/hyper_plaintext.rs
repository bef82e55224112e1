//! The plaintext test's handler for the hyper peers (`hyper_plaintext`, `hyper_h2`):
//! `GET /plaintext` answers `Hello, World!` as text/plain, anything else 404; `Server: hyper`.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue, SERVER};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;

pub async fn plaintext(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut res = if req.uri().path() == "/plaintext" {
        let mut res = Response::new(Full::new(Bytes::from_static(b"Hello, World!")));
        res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        res
    } else {
        let mut res = Response::new(Full::new(Bytes::new()));
        *res.status_mut() = StatusCode::NOT_FOUND;
        res
    };
    res.headers_mut().insert(SERVER, HeaderValue::from_static("hyper"));
    Ok(res)
}
