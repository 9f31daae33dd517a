//! The allocator the program and the benchmarks use: mimalloc, asked for
//! plain blocks whenever a plain block is aligned enough.
//!
//! `mimalloc::MiMalloc` passes every request to `mi_malloc_aligned`, whose
//! fast path serves a request only from a free block that happens to sit at
//! the alignment asked. When the size's page has no free block (the first
//! request of a size, or a full page), a size that is not a power of two (a
//! 24-, 40- or 56-byte node, most of a syntax tree) is not "naturally
//! aligned" to mimalloc and is over-allocated (size + alignment - 1, the next
//! size class up), so that size's own page is never started and every later
//! request of it takes the same slow path: 3,170 of them in one `muster
//! odds` call on TVBD, 8% of its instructions (issue 33).
//!
//! Every mimalloc block is a whole number of 8-byte words from an aligned
//! start, so a request whose alignment is at most 8 and at most its size
//! is served aligned by plain `mi_malloc`, as Rust's own `System`
//! allocator does with `malloc`. Anything else goes to `MiMalloc` as before.
//! Freeing is `mi_free` either way.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// Alignment every mimalloc block has (its word size).
const PLAIN_ALIGN: usize = 8;

/// The program's global allocator (see the module's note).
pub struct Allocator;

/// Whether a plain (unaligned) mimalloc request serves `layout`.
#[inline(always)]
fn plain(align: usize, size: usize) -> bool {
    align <= PLAIN_ALIGN && align <= size
}

// SAFETY: every path hands out a block from mimalloc of at least the size
// asked and at the alignment asked (plain blocks are 8-aligned, see above),
// and frees only blocks mimalloc gave.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            // SAFETY: a plain allocation of a non-zero size.
            unsafe { libmimalloc_sys::mi_malloc(layout.size()) as *mut u8 }
        } else {
            // SAFETY: the caller's layout, passed on.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            // SAFETY: as in `alloc`.
            unsafe { libmimalloc_sys::mi_zalloc(layout.size()) as *mut u8 }
        } else {
            // SAFETY: the caller's layout, passed on.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from mimalloc (aligned or not, `mi_free` takes it).
        unsafe { libmimalloc_sys::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(layout.align(), new_size) {
            // SAFETY: `ptr` came from mimalloc; the new block is 8-aligned,
            // enough for `layout.align()`.
            unsafe { libmimalloc_sys::mi_realloc(ptr as *mut c_void, new_size) as *mut u8 }
        } else {
            // SAFETY: the caller's block and layout, passed on.
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}
