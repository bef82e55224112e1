//! Calling a handler: its future is polled in place, inside the connection's future, and a
//! panic in it is caught, so the connection answers 500 and closes while the worker lives on.
//! Shared by every protocol's connection loop.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Poll};

use super::service::HandlerBox;

/// The handler panicked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Panicked;

/// Polls the handler future in `handler` once; when it is ready, hands its output to `done` while
/// still inside the panic guard (so a response is used where it is produced, not moved out
/// through the guard: each move of a `Response` copies a few hundred bytes).
///
/// An empty box (the future already completed) reads as a panic: never reached by callers,
/// which stop polling once the output was handed over.
#[inline(always)]
pub(crate) fn poll_handler<F: Future, R>(
    handler: &mut HandlerBox<F>,
    cx: &mut Context<'_>,
    done: impl FnOnce(F::Output) -> R,
) -> Poll<Result<R, Panicked>> {
    let polled = catch_unwind(AssertUnwindSafe(|| {
        let Some(fut) = handler.as_mut().as_pin_mut() else {
            return Poll::Ready(Err(Panicked));
        };
        match fut.poll(cx) {
            Poll::Ready(out) => Poll::Ready(Ok(done(out))),
            Poll::Pending => Poll::Pending,
        }
    }));
    polled.unwrap_or(Poll::Ready(Err(Panicked)))
}
