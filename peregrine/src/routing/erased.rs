//! Handlers of different types behind one type, so one router can hold them all.

use std::mem;

use super::route_future::{POOLED_FUTURE_BYTES, RouteFuture};
use crate::handler::Handler;
use crate::request::Request;

/// The object-safe face of a [`Handler`]: its future comes back erased as a [`RouteFuture`].
trait ErasedCall: Send {
    fn call(&self, req: Request) -> RouteFuture;
    fn clone_box(&self) -> Box<dyn ErasedCall>;
}

struct Erased<H>(H);

impl<H> ErasedCall for Erased<H>
where
    H: Handler,
    H::Future: 'static,
{
    #[inline]
    fn call(&self, req: Request) -> RouteFuture {
        RouteFuture::new(self.0.call(req))
    }

    fn clone_box(&self) -> Box<dyn ErasedCall> {
        Box::new(Erased(self.0.clone()))
    }
}

/// A handler of any type. Cloning clones the handler (each worker thread gets its own, as
/// with a handler given to the server directly).
pub(crate) struct ErasedHandler(Box<dyn ErasedCall>);

impl ErasedHandler {
    /// Erases `handler`. Whether its future is stored in a pooled buffer or boxed is decided
    /// here, by its type; a boxed one is logged, since it costs an allocation per request.
    pub(crate) fn new<H>(handler: H) -> ErasedHandler
    where
        H: Handler,
        H::Future: 'static,
    {
        if !RouteFuture::fits::<H::Future>() {
            tracing::warn!(
                handler = std::any::type_name::<H>(),
                future_bytes = mem::size_of::<H::Future>(),
                future_align = mem::align_of::<H::Future>(),
                pooled_bytes = POOLED_FUTURE_BYTES,
                "handler future too large to pool: it is boxed, one allocation per request"
            );
        }
        ErasedHandler(Box::new(Erased(handler)))
    }

    /// Starts answering `req`.
    #[inline]
    pub(crate) fn call(&self, req: Request) -> RouteFuture {
        self.0.call(req)
    }
}

impl Clone for ErasedHandler {
    fn clone(&self) -> Self {
        ErasedHandler(self.0.clone_box())
    }
}

impl std::fmt::Debug for ErasedHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ErasedHandler")
    }
}
