//! The handler of one worker's connections ([`Service`]) and the reusable boxes its futures run
//! in ([`HandlerBox`]), so an idle connection does not carry one.
//!
//! A handler's future (which holds its [`Request`](crate::Request), a few hundred bytes) used
//! to live inside the connection's future, whose size is that of its largest state: every
//! connection, idle or not, paid for it. Instead the future runs in a pinned box taken from the
//! worker's pool for the time of one request and given back, emptied, afterwards. On a
//! current-thread runtime only the connections whose handler is waiting hold a box, so a few
//! serve thousands of kept-alive connections, and steady-state requests allocate nothing.

use std::cell::RefCell;
use std::pin::Pin;

use crate::handler::Handler;

/// Boxes kept per worker; more are freed.
const POOL_MAX: usize = 64;

/// One handler future's box: `None` between requests.
pub(crate) type HandlerBox<F> = Pin<Box<Option<F>>>;

/// The handler and its pool of future boxes, shared by one worker's connections.
pub(crate) struct Service<H: Handler> {
    pub(crate) handler: H,
    free: RefCell<Vec<HandlerBox<H::Future>>>,
}

impl<H: Handler> Service<H> {
    pub(crate) fn new(handler: H) -> Service<H> {
        Service { handler, free: RefCell::new(Vec::new()) }
    }

    /// Starts the handler on `req` in a box from the pool (a new one when the pool is empty).
    #[inline(always)]
    pub(crate) fn call(&self, req: crate::Request) -> HandlerBox<H::Future> {
        let fut = self.handler.call(req);
        match self.free.borrow_mut().pop() {
            Some(mut boxed) => {
                boxed.as_mut().set(Some(fut));
                boxed
            }
            None => Box::pin(Some(fut)),
        }
    }

    /// Drops the future in its box and keeps the box for the next request.
    pub(crate) fn put(&self, mut boxed: HandlerBox<H::Future>) {
        boxed.as_mut().set(None);
        let mut free = self.free.borrow_mut();
        if free.len() < POOL_MAX {
            free.push(boxed);
        }
    }
}
