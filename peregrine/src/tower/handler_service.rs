//! A [`Handler`] as a tower service, and the [`Router`] as one: for hyper's server, or a
//! tower stack around peregrine's router.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use pin_project_lite::pin_project;
use tower_service::Service;

use super::BoxError;
use super::convert::from_http_request;
use crate::body::Body;
use crate::handler::Handler;
use crate::response::IntoResponse;
use crate::routing::Router;

/// `handler` as a tower service of `http::Request<B>` (`B` any [`http_body::Body`] of `Bytes`:
/// hyper's `Incoming`, a [`Body`], axum's), answering `http::Response<`[`Body`]`>`.
///
/// The request's head is written in HTTP/1.1 form for the handler (the `Uri`'s authority as a
/// Host field when it has none), its body streamed; [`Request::remote_addr`] is the
/// [`RemoteAddr`](super::RemoteAddr) of its extensions (or axum's `ConnectInfo<SocketAddr>`).
/// Always ready. The future is `Send` when the handler's is.
///
/// [`Request::remote_addr`]: crate::Request::remote_addr
///
/// # Examples
/// ```
/// use peregrine::{Body, Request};
/// use tower::ServiceExt;
///
/// let svc = peregrine::tower::into_service(|req: Request| async move { format!("{}", req.path()) });
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let res = svc.oneshot(http::Request::get("/hi").body(Body::empty()).unwrap()).await.unwrap();
/// assert_eq!(res.into_body().to_bytes(64).await.unwrap(), "/hi");
/// # });
/// ```
pub fn into_service<H: Handler>(handler: H) -> HandlerService<H> {
    HandlerService { handler }
}

/// A [`Handler`] as a tower service; made by [`into_service`].
#[derive(Clone, Debug)]
pub struct HandlerService<H> {
    handler: H,
}

impl<H> HandlerService<H> {
    /// The handler.
    pub fn into_inner(self) -> H {
        self.handler
    }
}

impl<H, B> Service<http::Request<B>> for HandlerService<H>
where
    H: Handler,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = HandlerFuture<H::Future>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        HandlerFuture { future: self.handler.call(from_http_request(req)) }
    }
}

/// The router is a tower service as any handler is ([`into_service`]), without the wrapper.
///
/// # Examples
/// ```
/// use peregrine::routing::get;
/// use peregrine::{Body, Request, Router};
/// use tower::ServiceExt;
///
/// async fn user(req: Request) -> String {
///     format!("user {}", req.param("id").unwrap_or_default())
/// }
/// let app = Router::new().route("/users/{id}", get(user));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let req = http::Request::get("/users/7").body(Body::empty()).unwrap();
/// let res = app.oneshot(req).await.unwrap();
/// assert_eq!(res.into_body().to_bytes(64).await.unwrap(), "user 7");
/// # });
/// ```
impl<B> Service<http::Request<B>> for Router
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = HandlerFuture<<Router as Handler>::Future>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        HandlerFuture { future: Handler::call(&*self, from_http_request(req)) }
    }
}

pin_project! {
    /// A handler's future as a tower service's: its output as an `http::Response`.
    pub struct HandlerFuture<F> {
        #[pin]
        future: F,
    }
}

impl<F> Future for HandlerFuture<F>
where
    F: Future,
    F::Output: IntoResponse,
{
    type Output = Result<http::Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().future.poll(cx).map(|out| Ok(out.into_response().into()))
    }
}
