//! The future a [`Router`](crate::Router) returns: a handler's future, type-erased and stored
//! inline (fixed storage plus two function pointers, no `Box`), or a response ready at once.
//!
//! Why not the `stackfuture` crate: its `StackFuture` requires `Send` futures (it erases to
//! `dyn Future + Send`), while [`Handler`](crate::Handler) deliberately accepts `!Send` futures
//! (each runs on the worker thread that accepted its connection). This module is the small
//! subset we need, without that bound: construct (by value, before any poll), poll, drop.
#![allow(unsafe_code)]

use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::mem::{self, MaybeUninit};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::response::{IntoResponse, Response};

/// Bytes of inline storage for a handler's future; a future larger than this (or aligned to
/// more than 16 bytes) is boxed instead, one allocation per request, decided per handler type.
///
/// 1 KiB holds a handler that keeps its [`Request`](crate::Request) (a few hundred bytes)
/// across an `.await` with room for its own locals.
pub const INLINE_FUTURE_BYTES: usize = 1024;

/// The storage: aligned for any future whose alignment is at most 16.
#[repr(C, align(16))]
struct Slot([MaybeUninit<u8>; INLINE_FUTURE_BYTES]);

/// A future answering a [`Response`], stored in place.
///
/// Invariant: `slot` holds a live, initialised value of the type `poll` and `drop` were
/// instantiated for, from construction until `Drop`; once pinned it never moves (`!Unpin`).
pub(crate) struct InlineFuture {
    slot: Slot,
    poll: unsafe fn(*mut u8, &mut Context<'_>) -> Poll<Response>,
    drop: unsafe fn(*mut u8),
    /// The stored future may be self-referential once polled.
    _pinned: PhantomPinned,
    /// The stored future may be neither `Send` nor `Sync`.
    _local: PhantomData<*mut ()>,
}

impl InlineFuture {
    /// Whether a future of type `F` fits the inline storage. A constant per type: the compiler
    /// folds the branch that uses it.
    pub(crate) const fn fits<F>() -> bool {
        mem::size_of::<F>() <= INLINE_FUTURE_BYTES
            && mem::align_of::<F>() <= mem::align_of::<Slot>()
    }

    /// Stores `future`, or gives it back when it does not [fit](Self::fits).
    pub(crate) fn try_new<F>(future: F) -> Result<InlineFuture, F>
    where
        F: Future + 'static,
        F::Output: IntoResponse,
    {
        if !Self::fits::<F>() {
            return Err(future);
        }
        let mut slot = Slot([MaybeUninit::uninit(); INLINE_FUTURE_BYTES]);
        // SAFETY: `fits` checked that `F` is no larger than the slot and that its alignment
        // divides the slot's (16, from `repr(align(16))`), so the write is in bounds and
        // aligned. `F: 'static`, so no borrow can end while the erased value lives.
        unsafe { slot.0.as_mut_ptr().cast::<F>().write(future) };
        Ok(InlineFuture {
            slot,
            poll: poll_as::<F>,
            drop: drop_as::<F>,
            _pinned: PhantomPinned,
            _local: PhantomData,
        })
    }
}

/// Polls the `F` at `ptr` and converts its output.
///
/// # Safety
/// `ptr` points to a live, pinned `F`.
unsafe fn poll_as<F>(ptr: *mut u8, cx: &mut Context<'_>) -> Poll<Response>
where
    F: Future,
    F::Output: IntoResponse,
{
    // SAFETY: the caller guarantees a live `F` at `ptr` that will not move again (it lives in
    // a pinned `InlineFuture`, which is `!Unpin`).
    let future = unsafe { Pin::new_unchecked(&mut *ptr.cast::<F>()) };
    future.poll(cx).map(IntoResponse::into_response)
}

/// Drops the `F` at `ptr` in place.
///
/// # Safety
/// `ptr` points to a live `F` that is never used again.
unsafe fn drop_as<F>(ptr: *mut u8) {
    // SAFETY: the caller guarantees a live `F` that is not used afterwards; dropping in place
    // honours the pinning contract (drop before the memory is reused).
    unsafe { ptr.cast::<F>().drop_in_place() }
}

/// The future of a request answered by a [`Router`](crate::Router): the matched handler's
/// future, stored inline when it fits [`INLINE_FUTURE_BYTES`], or the router's own response.
///
/// A handler whose future does not fit is boxed on each call; that is decided by the handler's
/// type when the route is added (and logged then, at `warn` level), never per request.
#[must_use = "futures do nothing unless polled"]
pub struct RouteFuture {
    state: State,
}

// The inline variant is large on purpose: boxing it is the allocation this type exists to avoid.
#[allow(clippy::large_enum_variant)]
enum State {
    Inline(InlineFuture),
    Boxed(Pin<Box<dyn Future<Output = Response>>>),
    Ready(Option<Response>),
}

impl RouteFuture {
    /// Erases `future`: inline when its type fits, boxed otherwise.
    pub(crate) fn new<F>(future: F) -> RouteFuture
    where
        F: Future + 'static,
        F::Output: IntoResponse,
    {
        let state = match InlineFuture::try_new(future) {
            Ok(inline) => State::Inline(inline),
            Err(future) => State::Boxed(Box::pin(async move { future.await.into_response() })),
        };
        RouteFuture { state }
    }

    /// A future that answers `res` on its first poll.
    pub(crate) fn ready(res: Response) -> RouteFuture {
        RouteFuture { state: State::Ready(Some(res)) }
    }
}

impl Future for RouteFuture {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        // SAFETY: pin projection: `state` is never moved out of a pinned `RouteFuture`, and an
        // `Inline` future is only reached pinned, through this method.
        let state = unsafe { &mut self.get_unchecked_mut().state };
        match state {
            // SAFETY: the inline future lives in `self`, which is pinned: it will not move.
            State::Inline(inline) => unsafe { Pin::new_unchecked(inline) }.poll(cx),
            State::Boxed(boxed) => boxed.as_mut().poll(cx),
            // Polled again after `Ready`: an empty 500 rather than a panic.
            State::Ready(res) => Poll::Ready(res.take().unwrap_or_else(|| {
                Response::with_status(http::StatusCode::INTERNAL_SERVER_ERROR, ())
            })),
        }
    }
}

impl std::fmt::Debug for RouteFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.state {
            State::Inline(_) => "Inline",
            State::Boxed(_) => "Boxed",
            State::Ready(_) => "Ready",
        };
        f.debug_struct("RouteFuture").field("state", &kind).finish()
    }
}

impl Future for InlineFuture {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        // SAFETY: the fields are not moved out; the stored future is only reached through
        // `poll`, which keeps it pinned in place.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: by the type's invariant `slot` holds the live future `poll` was made for, and
        // it is pinned because `self` is.
        unsafe { (this.poll)(this.slot.0.as_mut_ptr().cast(), cx) }
    }
}

impl Drop for InlineFuture {
    fn drop(&mut self) {
        // SAFETY: by the type's invariant `slot` holds the live future `drop` was made for;
        // nothing uses it after this.
        unsafe { (self.drop)(self.slot.0.as_mut_ptr().cast()) }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;
    use std::task::Waker;

    use super::*;

    struct Case {
        name: &'static str,
        size: usize,
        align: usize,
        expect: bool,
    }

    #[test]
    fn fits_by_size_and_alignment() {
        #[repr(align(32))]
        struct Wide(#[allow(dead_code)] u8);
        let cases = [
            Case { name: "u8", size: 1, align: 1, expect: InlineFuture::fits::<u8>() },
            Case {
                name: "full",
                size: INLINE_FUTURE_BYTES,
                align: 1,
                expect: InlineFuture::fits::<[u8; INLINE_FUTURE_BYTES]>(),
            },
            Case {
                name: "one over",
                size: INLINE_FUTURE_BYTES + 1,
                align: 1,
                expect: InlineFuture::fits::<[u8; INLINE_FUTURE_BYTES + 1]>(),
            },
            Case { name: "align 32", size: 32, align: 32, expect: InlineFuture::fits::<Wide>() },
        ];
        for case in cases {
            let want = case.size <= INLINE_FUTURE_BYTES && case.align <= 16;
            assert_eq!(case.expect, want, "{}", case.name);
        }
    }

    /// Counts drops, to check the erased future is dropped exactly once.
    struct DropCount(Rc<Cell<u32>>);
    impl Drop for DropCount {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn polls_through_pending_and_drops_once() {
        let drops = Rc::new(Cell::new(0));
        let guard = DropCount(drops.clone());
        let mut first = true;
        let fut = std::future::poll_fn(move |cx| {
            let _keep = &guard;
            if std::mem::take(&mut first) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready("done")
        });
        let Ok(inline) = InlineFuture::try_new(fut) else { panic!("fits") };
        let mut inline = Box::pin(inline);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(inline.as_mut().poll(&mut cx).is_pending());
        let Poll::Ready(res) = inline.as_mut().poll(&mut cx) else { panic!("ready") };
        assert_eq!(res.status(), http::StatusCode::OK);
        assert_eq!(drops.get(), 0);
        drop(inline);
        assert_eq!(drops.get(), 1);
    }

    #[test]
    fn unpolled_future_is_dropped() {
        let drops = Rc::new(Cell::new(0));
        let guard = DropCount(drops.clone());
        let fut = async move {
            let _keep = guard;
            "x"
        };
        let inline = InlineFuture::try_new(fut).ok().expect("fits");
        drop(inline);
        assert_eq!(drops.get(), 1);
    }

    #[test]
    fn too_large_is_given_back() {
        let big = [7u8; INLINE_FUTURE_BYTES + 8];
        let fut = async move { big.len().to_string() };
        let back = InlineFuture::try_new(fut).err().expect("does not fit");
        let mut back = Box::pin(back);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(back.as_mut().poll(&mut cx).is_ready());
    }
}
