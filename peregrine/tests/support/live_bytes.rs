//! A global allocator that keeps the process's live heap bytes and their peak, for tests that
//! bound what a server buffers for a hostile peer (a deflate bomb, a peer that never reads):
//! exact where RSS is coarse and lags. Every thread counts (the server runs in-process), so a
//! test that reads the peak runs alone (a lock of its own).
//!
//! Use: `#[path = "support/live_bytes.rs"] mod live_bytes;` and
//! `#[global_allocator] static GLOBAL: live_bytes::Tracking = live_bytes::Tracking;`.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The allocator: the system allocator plus the live and peak byte counts.
pub struct Tracking;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Heap bytes allocated and not freed.
pub fn live() -> usize {
    LIVE.load(Ordering::SeqCst)
}

/// The most live bytes since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::SeqCst)
}

/// Starts a new peak at the live bytes now, and returns them.
pub fn reset_peak() -> usize {
    let now = live();
    PEAK.store(now, Ordering::SeqCst);
    now
}

fn grow(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrink(n: usize) {
    LIVE.fetch_sub(n, Ordering::Relaxed);
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grow(new_size);
            shrink(layout.size());
        }
        p
    }
}
