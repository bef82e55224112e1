//! `Alt-Svc` (RFC 7838 §3) on HTTP/1.1 and HTTP/2 responses when HTTP/3 is served: the
//! handler is wrapped so its responses advertise `h3=":PORT"; ma=86400`, and a browser
//! switches to QUIC for the next requests (RFC 9114 §3.1.1).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http::HeaderValue;
use http::header::ALT_SVC;
use pin_project_lite::pin_project;

use crate::handler::Handler;
use crate::response::IntoResponse;
use crate::{Request, Response, Version};

/// The field value advertising HTTP/3 on `port` for a day.
pub(crate) fn value(port: u16) -> HeaderValue {
    HeaderValue::try_from(format!("h3=\":{port}\"; ma=86400")).expect("ASCII")
}

/// A handler whose responses over TCP carry `Alt-Svc`.
#[derive(Clone)]
pub(crate) struct AltSvc<H> {
    pub(crate) inner: H,
    pub(crate) value: HeaderValue,
}

impl<H: Handler> Handler for AltSvc<H> {
    type Output = Response;
    type Future = AltSvcFuture<H::Future>;

    #[inline]
    fn call(&self, req: Request) -> Self::Future {
        // An HTTP/3 response has nothing to advertise.
        let add = (req.version() < Version::Http3).then(|| self.value.clone());
        AltSvcFuture { inner: self.inner.call(req), add }
    }
}

pin_project! {
    /// The wrapped handler's future, adding the field to its response.
    pub(crate) struct AltSvcFuture<F> {
        #[pin]
        inner: F,
        add: Option<HeaderValue>,
    }
}

impl<F: Future> Future for AltSvcFuture<F>
where
    F::Output: IntoResponse,
{
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = self.project();
        let mut response = ready!(this.inner.poll(cx)).into_response();
        if let Some(v) = this.add.take() {
            if !response.headers().contains_key(&ALT_SVC) {
                response.headers_mut().insert(ALT_SVC, v);
            }
        }
        Poll::Ready(response)
    }
}
