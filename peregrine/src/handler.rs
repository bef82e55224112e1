//! The handler trait: what the server calls for each request.

use std::future::Future;

use crate::request::Request;
use crate::response::IntoResponse;

/// Answers requests: an async function from [`Request`] to something [`IntoResponse`].
///
/// Implemented for every `Fn(Request) -> impl Future<Output = impl IntoResponse>` that is
/// `Clone + Send + 'static`: each worker thread gets its own clone, so shared state is passed
/// the usual way, in an `Arc` captured by the closure. The future itself need not be `Send`:
/// it runs on the worker thread that accepted the connection.
///
/// The server polls the handler's future inline, inside the connection's own future, which is
/// generic over the handler: no box per request, so a handler that returns a static body
/// allocates nothing.
///
/// Type erasure (one router holding handlers of different types) keeps that property by giving
/// the erased future fixed inline storage instead of a `Box` per call; this is why the future is
/// an associated type rather than a boxed trait object.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use peregrine::{Handler, Request};
///
/// let hits = Arc::new(AtomicU64::new(0));
/// let handler = move |_req: Request| {
///     let hits = hits.clone();
///     async move { format!("hit {}", hits.fetch_add(1, Ordering::Relaxed) + 1) }
/// };
/// fn assert_handler<H: Handler>(_: &H) {}
/// assert_handler(&handler);
/// ```
pub trait Handler: Clone + Send + 'static {
    /// What the handler's future returns.
    type Output: IntoResponse;
    /// The future that answers one request.
    type Future: Future<Output = Self::Output>;

    /// Starts answering `req`.
    fn call(&self, req: Request) -> Self::Future;
}

impl<F, Fut> Handler for F
where
    F: Fn(Request) -> Fut + Clone + Send + 'static,
    Fut: Future,
    Fut::Output: IntoResponse,
{
    type Output = Fut::Output;
    type Future = Fut;

    #[inline]
    fn call(&self, req: Request) -> Fut {
        self(req)
    }
}
