//! The future a [`Router`](crate::Router) returns: a handler's future, type-erased and stored in
//! a reusable pooled buffer (fixed storage plus two function pointers), or the router's own
//! answer.
//!
//! Buffers come from a free list per thread (each worker thread runs its own connections), so a
//! request takes a buffer and gives it back without allocating once the worker has warmed up,
//! and the erased future is three words: it adds almost nothing to the connection's future,
//! which every open connection keeps. (Storing the future inline instead made the connection's
//! future 1 KiB larger, 1,776 to 2,848 bytes, for the same instruction count per request.)
//!
//! Why not the `stackfuture` crate: its `StackFuture` requires `Send` futures (it erases to
//! `dyn Future + Send`), while [`Handler`](crate::Handler) deliberately accepts `!Send` futures
//! (each runs on the worker thread that accepted its connection), and it stores the future
//! inline, with the cost above.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::{self, ManuallyDrop, MaybeUninit};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::answer::Answer;
use crate::response::{IntoResponse, Response};

/// Bytes in a pooled future buffer: a handler whose future is larger than this (or aligned to more
/// than 16 bytes) has its future boxed instead, one allocation per request, decided by the
/// handler's type when its route is added (and logged then).
///
/// 1 KiB holds a handler that keeps its [`Request`](crate::Request) (about 330 bytes) across an
/// `.await` on the request body (about 950 bytes in all) or on a tokio timer (about 780). Public
/// for the tests (the `unstable` feature).
pub const POOLED_FUTURE_BYTES: usize = 1024;

/// Free buffers kept per thread; more (after a burst of concurrent requests) are freed.
const POOL_MAX: usize = 256;

/// The storage: aligned for any future whose alignment is at most 16.
#[repr(C, align(16))]
struct FutureBuf([MaybeUninit<u8>; POOLED_FUTURE_BYTES]);

/// A buffer on the heap, taken from the thread's free list and given back to it.
type PooledBuf = Box<MaybeUninit<FutureBuf>>;

thread_local! {
    static FREE: RefCell<Vec<PooledBuf>> = const { RefCell::new(Vec::new()) };
}

fn take_buf() -> PooledBuf {
    let reused = FREE.try_with(|free| free.borrow_mut().pop()).ok().flatten();
    reused.unwrap_or_else(Box::new_uninit)
}

fn give_buf(buf: PooledBuf) {
    // While the thread exits the list may be gone: the buffer is then simply freed.
    let _ = FREE.try_with(move |free| {
        let mut free = free.borrow_mut();
        if free.len() < POOL_MAX {
            free.push(buf);
        }
    });
}

/// A future answering a [`Response`], stored in a pooled buffer.
///
/// Invariant: `buf` holds a live, initialised value of the type `poll` and `drop` were
/// instantiated for, from construction until `Drop`, and that value never moves (the buffer
/// is on the heap and only its pointer moves with this struct).
struct PooledFuture {
    buf: ManuallyDrop<PooledBuf>,
    poll: unsafe fn(*mut u8, &mut Context<'_>) -> Poll<Response>,
    drop: unsafe fn(*mut u8),
    /// The stored future may be neither `Send` nor `Sync`.
    _local: PhantomData<*mut ()>,
}

impl PooledFuture {
    /// Whether a future of type `F` fits a buffer. A constant per type: the compiler folds the
    /// branch that uses it.
    const fn fits<F>() -> bool {
        mem::size_of::<F>() <= POOLED_FUTURE_BYTES
            && mem::align_of::<F>() <= mem::align_of::<FutureBuf>()
    }

    /// Stores `future` in a pooled buffer, or gives it back when it does not [fit](Self::fits).
    #[inline]
    fn try_new<F>(future: F) -> Result<PooledFuture, F>
    where
        F: Future + 'static,
        F::Output: IntoResponse,
    {
        if !Self::fits::<F>() {
            return Err(future);
        }
        let mut buf = take_buf();
        // SAFETY: `fits` checked that `F` is no larger than the buffer and that its alignment
        // divides the buffer's (16, from `repr(align(16))`), so the write is in bounds and
        // aligned. `F: 'static`, so no borrow can end while the erased value lives.
        unsafe { buf.as_mut_ptr().cast::<F>().write(future) };
        Ok(PooledFuture {
            buf: ManuallyDrop::new(buf),
            poll: poll_as::<F>,
            drop: drop_as::<F>,
            _local: PhantomData,
        })
    }

    fn ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr().cast()
    }
}

/// Polls the `F` at `ptr` and converts its output.
///
/// # Safety
/// `ptr` points to a live `F` that never moves until it is dropped in place.
unsafe fn poll_as<F>(ptr: *mut u8, cx: &mut Context<'_>) -> Poll<Response>
where
    F: Future,
    F::Output: IntoResponse,
{
    // SAFETY: the caller guarantees a live `F` at `ptr` that stays where it is until dropped
    // in place: pinned.
    let future = unsafe { Pin::new_unchecked(&mut *ptr.cast::<F>()) };
    future.poll(cx).map(IntoResponse::into_response)
}

/// Drops the `F` at `ptr` in place.
///
/// # Safety
/// `ptr` points to a live `F` that is never used again.
unsafe fn drop_as<F>(ptr: *mut u8) {
    // SAFETY: the caller guarantees a live `F` that is not used afterwards; dropping in place
    // honours the pinning contract (dropped before its memory is reused).
    unsafe { ptr.cast::<F>().drop_in_place() }
}

impl Drop for PooledFuture {
    fn drop(&mut self) {
        let ptr = self.ptr();
        // SAFETY: by the type's invariant the buffer holds the live future `drop` was made for;
        // nothing uses it after this.
        unsafe { (self.drop)(ptr) };
        // SAFETY: `buf` is not used after being taken: this is the end of `drop`.
        let buf = unsafe { ManuallyDrop::take(&mut self.buf) };
        give_buf(buf);
    }
}

/// The future of a request answered by a [`Router`](crate::Router): the matched handler's
/// future in a reusable pooled buffer (1 KiB, 16-byte aligned), or the router's own response.
///
/// A handler whose future does not fit is boxed on each call; that is decided by the handler's
/// type when the route is added (and logged then, at `warn` level), never per request.
#[must_use = "futures do nothing unless polled"]
pub struct RouteFuture {
    state: State,
}

enum State {
    Pooled(PooledFuture),
    Boxed(Pin<Box<dyn Future<Output = Response>>>),
    Ready(Option<Answer>),
}

impl RouteFuture {
    /// Whether the futures of type `F` are stored in a pooled buffer (else boxed).
    pub(crate) const fn fits<F>() -> bool {
        PooledFuture::fits::<F>()
    }

    /// Erases `future`: in a pooled buffer when its type fits, boxed otherwise (a constant per
    /// type).
    #[inline]
    pub(crate) fn new<F>(future: F) -> RouteFuture
    where
        F: Future + 'static,
        F::Output: IntoResponse,
    {
        let state = match PooledFuture::try_new(future) {
            Ok(pooled) => State::Pooled(pooled),
            Err(future) => State::Boxed(Box::pin(async move { future.await.into_response() })),
        };
        RouteFuture { state }
    }

    /// A future that answers `answer` on its first poll.
    pub(super) fn ready(answer: Answer) -> RouteFuture {
        RouteFuture { state: State::Ready(Some(answer)) }
    }
}

impl Future for RouteFuture {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        // Every variant is `Unpin`: a pooled future stays put on the heap however the
        // `RouteFuture` moves.
        match &mut self.get_mut().state {
            State::Pooled(pooled) => {
                let ptr = pooled.ptr();
                // SAFETY: by `PooledFuture`'s invariant `ptr` holds the live future `poll` was
                // made for, which never moves until dropped in place.
                unsafe { (pooled.poll)(ptr, cx) }
            }
            State::Boxed(boxed) => boxed.as_mut().poll(cx),
            // Polled again after `Ready`: an empty 500 rather than a panic.
            State::Ready(answer) => Poll::Ready(match answer.take() {
                Some(answer) => answer.into_response(),
                None => Response::with_status(http::StatusCode::INTERNAL_SERVER_ERROR, ()),
            }),
        }
    }
}

impl std::fmt::Debug for RouteFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.state {
            State::Pooled(_) => "Pooled",
            State::Boxed(_) => "Boxed",
            State::Ready(_) => "Ready",
        };
        f.debug_struct("RouteFuture").field("state", &kind).finish()
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
            Case { name: "u8", size: 1, align: 1, expect: PooledFuture::fits::<u8>() },
            Case {
                name: "full",
                size: POOLED_FUTURE_BYTES,
                align: 1,
                expect: PooledFuture::fits::<[u8; POOLED_FUTURE_BYTES]>(),
            },
            Case {
                name: "one over",
                size: POOLED_FUTURE_BYTES + 1,
                align: 1,
                expect: PooledFuture::fits::<[u8; POOLED_FUTURE_BYTES + 1]>(),
            },
            Case { name: "align 32", size: 32, align: 32, expect: PooledFuture::fits::<Wide>() },
        ];
        for case in cases {
            let want = case.size <= POOLED_FUTURE_BYTES && case.align <= 16;
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
        let mut fut = RouteFuture::new(fut);
        assert!(matches!(fut.state, State::Pooled(_)));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        // Moving the erased future does not move the handler's future.
        let mut moved = Box::new(fut);
        let Poll::Ready(res) = Pin::new(&mut *moved).poll(&mut cx) else { panic!("ready") };
        assert_eq!(res.status(), http::StatusCode::OK);
        assert_eq!(drops.get(), 0);
        drop(moved);
        assert_eq!(drops.get(), 1);
    }

    #[test]
    fn buffers_are_reused() {
        let first = RouteFuture::new(async { "a" });
        let State::Pooled(pooled) = &first.state else { panic!("pooled") };
        let addr = pooled.buf.as_ptr() as usize;
        drop(first);
        let second = RouteFuture::new(async { "b" });
        let State::Pooled(pooled) = &second.state else { panic!("pooled") };
        assert_eq!(pooled.buf.as_ptr() as usize, addr, "the freed buffer is taken again");
    }

    #[test]
    fn unpolled_future_is_dropped() {
        let drops = Rc::new(Cell::new(0));
        let guard = DropCount(drops.clone());
        let fut = RouteFuture::new(async move {
            let _keep = guard;
            "x"
        });
        drop(fut);
        assert_eq!(drops.get(), 1);
    }

    #[test]
    fn too_large_is_boxed_and_still_answers() {
        let big = [7u8; POOLED_FUTURE_BYTES + 8];
        let mut fut = RouteFuture::new(async move { big.len().to_string() });
        assert!(matches!(fut.state, State::Boxed(_)));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut fut).poll(&mut cx).is_ready());
    }

    #[test]
    fn stays_small() {
        // The connection's future holds one: keep it a few words.
        assert!(mem::size_of::<RouteFuture>() <= 64, "{}", mem::size_of::<RouteFuture>());
    }
}
