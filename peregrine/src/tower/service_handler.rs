//! A tower service as a [`Handler`]: each request converted to an `http::Request`, a clone of
//! the service readied and called, its response converted back.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use pin_project_lite::pin_project;
use tower_service::Service;

use super::convert::{from_http_response, to_http_request};
use super::{BoxError, internal_error};
use crate::Method;
use crate::body::Body;
use crate::handler::Handler;
use crate::request::Request;
use crate::response::Response;

/// Serves `service`, a tower service: the [`Handler`] to give the server.
///
/// The service answers `http::Request<`[`Body`]`>` with `http::Response<B>`, where `B` is
/// any [`http_body::Body`] of `Bytes`; its error and its body's convert into [`BoxError`].
/// It is cloned per worker thread and per request (see the [module docs](super) for
/// readiness, errors and panics, and how the types map). An axum `Router` has its routes
/// prepared once here, as `axum::serve` does.
///
/// # Examples
/// ```
/// use std::convert::Infallible;
/// use peregrine::{Body, Server};
///
/// let svc = tower::service_fn(|req: http::Request<Body>| async move {
///     let text = format!("{} {}", req.method(), req.uri().path());
///     Ok::<_, Infallible>(http::Response::new(Body::from(text)))
/// });
/// let server = Server::bind("127.0.0.1:0").workers(1).spawn(peregrine::tower::service(svc))?;
/// server.shutdown();
/// server.join()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn service<S>(service: S) -> ServiceHandler<S>
where
    S: Clone + Send + 'static,
{
    #[cfg(feature = "axum")]
    let service = prepare_axum(service);
    ServiceHandler { service }
}

/// An axum `Router` turns each route's handler into a service when it is called, unless its
/// state was given with `with_state`: then once, here, as `axum::serve` does per connection.
#[cfg(feature = "axum")]
fn prepare_axum<S: 'static>(mut service: S) -> S {
    use std::any::Any;
    if let Some(router) = (&mut service as &mut dyn Any).downcast_mut::<axum::Router>() {
        *router = std::mem::take(router).with_state(());
    }
    service
}

/// A tower service as a [`Handler`]; made by [`service`].
#[derive(Clone, Debug)]
pub struct ServiceHandler<S> {
    service: S,
}

impl<S> ServiceHandler<S> {
    /// The service.
    pub fn into_inner(self) -> S {
        self.service
    }
}

impl<S, B> Handler for ServiceHandler<S>
where
    S: Service<http::Request<Body>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Response;
    type Future = ServiceFuture<S>;

    fn call(&self, req: Request) -> ServiceFuture<S> {
        let method = req.method();
        let state = match to_http_request(req) {
            Some(request) => State::Ready { service: self.service.clone(), request: Some(request) },
            None => State::Refused,
        };
        ServiceFuture { state, method }
    }
}

pin_project! {
    /// One request answered by a tower service: [`ServiceHandler`]'s future.
    pub struct ServiceFuture<S>
    where
        S: Service<http::Request<Body>>,
    {
        #[pin]
        state: State<S>,
        // The request's method, for the response's framing (HEAD).
        method: Method,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S>
    where
        S: Service<http::Request<Body>>,
    {
        // Waiting for the service to be ready: its clone, and the request to call it with.
        Ready { service: S, request: Option<http::Request<Body>> },
        // Called: its future.
        Called { #[pin] future: S::Future },
        // The request cannot be put to the service (its target is no `Uri`): 400.
        Refused,
        Done,
    }
}

impl<S, B> Future for ServiceFuture<S>
where
    S: Service<http::Request<Body>, Response = http::Response<B>>,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = self.project();
        let method = *this.method;
        let mut state = this.state;
        if let StateProj::Refused = state.as_mut().project() {
            state.set(State::Done);
            return Poll::Ready(Response::with_status(
                http::StatusCode::BAD_REQUEST,
                Body::from_static(b"invalid request target"),
            ));
        }
        // The panic is caught here, not by the server (which closes the connection after a
        // handler's): the service's state is dropped with it, and the connection's is intact.
        // The response is converted inside, as that polls its body.
        let polled = catch_unwind(AssertUnwindSafe(|| {
            let res = ready!(poll_service(state.as_mut(), cx))?;
            Poll::Ready(Ok::<_, BoxError>(from_http_response(res, method, cx)))
        }));
        let response = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(Ok(res))) => res,
            Ok(Poll::Ready(Err(e))) => {
                tracing::error!("peregrine: the service failed: {e}; answered 500");
                internal_error()
            }
            Err(_) => {
                tracing::error!("peregrine: the service panicked; answered 500");
                internal_error()
            }
        };
        state.set(State::Done);
        Poll::Ready(response)
    }
}

/// Readies the service, calls it once, and polls its future: tower's contract (`call` only
/// after `poll_ready` said `Ready`).
fn poll_service<S, B>(
    mut state: Pin<&mut State<S>>,
    cx: &mut Context<'_>,
) -> Poll<Result<http::Response<B>, BoxError>>
where
    S: Service<http::Request<Body>, Response = http::Response<B>>,
    S::Error: Into<BoxError>,
{
    loop {
        match state.as_mut().project() {
            StateProj::Ready { service, request } => {
                ready!(service.poll_ready(cx)).map_err(Into::into)?;
                let Some(request) = request.take() else {
                    return Poll::Ready(Err("the request was taken".into()));
                };
                let future = service.call(request);
                state.set(State::Called { future });
            }
            StateProj::Called { future } => return future.poll(cx).map_err(Into::into),
            StateProj::Refused | StateProj::Done => {
                return Poll::Ready(Err("polled after its response".into()));
            }
        }
    }
}
