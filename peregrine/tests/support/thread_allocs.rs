//! A counting global allocator for the zero-allocation tests of sans-I/O code: it counts the
//! allocations of the calling thread, so the test harness's other threads cannot disturb a
//! count (`counting.rs` counts a server's marked threads instead).
//!
//! Use: `#[path = "support/thread_allocs.rs"] mod thread_allocs;` and
//! `#[global_allocator] static GLOBAL: thread_allocs::Counting = thread_allocs::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The allocator: the system allocator plus a per-thread counter.
pub struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

/// Allocations (and reallocations) the calling thread made so far.
pub fn allocations() -> usize {
    ALLOCS.with(Cell::get)
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|a| a.set(a.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|a| a.set(a.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
