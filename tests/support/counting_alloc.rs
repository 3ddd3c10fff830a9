//! Global allocators that count allocations and reallocations, and the bytes they ask for,
//! shared via `#[path]` by the allocation tests and the render benchmark: `Counting` counts on
//! every thread (`tests/alloc_free.rs`, `benches/render.rs`); `OnThreads` only on threads whose
//! name starts with a prefix, such as the engine's `ingestbench-w` workers
//! (`tests/alloc_engine.rs`) or the sink's `sink-w` workers (`tests/alloc_sink_syslog.rs`,
//! `tests/alloc_sink_http.rs`).

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Counting;

/// Counts only on threads named `prefix…`.
pub struct OnThreads(pub &'static str);

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// 1 when this thread is counted, 0 when not, unknown (2) until first asked.
    static COUNTED: Cell<u8> = const { Cell::new(2) };
}

/// Allocations and reallocations counted so far, process-wide.
pub fn allocations() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

/// Bytes asked for by the allocations and reallocations counted so far (a reallocation
/// counts its new size).
pub fn allocated_bytes() -> u64 {
    BYTES.load(Ordering::Relaxed)
}

fn count(bytes: usize) {
    ALLOCS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

impl OnThreads {
    fn counts_here(&self) -> bool {
        COUNTED
            .try_with(|c| {
                if c.get() == 2 {
                    // Reading the name does not allocate.
                    let yes = std::thread::current()
                        .name()
                        .is_some_and(|n| n.starts_with(self.0));
                    c.set(u8::from(yes));
                }
                c.get() == 1
            })
            .unwrap_or(false)
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count(l.size());
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count(n);
        unsafe { System.realloc(p, l, n) }
    }
}

unsafe impl GlobalAlloc for OnThreads {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if self.counts_here() {
            count(l.size());
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if self.counts_here() {
            count(n);
        }
        unsafe { System.realloc(p, l, n) }
    }
}
