//! The program's allocator (interpreter/base/alloc.rs): plain mimalloc
//! blocks for small alignments, aligned ones otherwise.

use muster::base::alloc::Allocator;
use std::alloc::{GlobalAlloc, Layout};

/// Blocks of every small size and alignment come back aligned, keep
/// their contents through growing and shrinking, and zeroed ones are zero.
#[test]
fn blocks_are_aligned_and_keep_their_bytes() {
    let a = Allocator;
    for align in [1usize, 2, 4, 8, 16, 32, 64] {
        for size in (align..=600).step_by(align) {
            let l = Layout::from_size_align(size, align).unwrap();
            // SAFETY: non-zero sizes; each block freed once, with its layout.
            unsafe {
                let z = a.alloc_zeroed(l);
                assert_eq!(z as usize % align, 0, "zeroed {size}/{align}");
                assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                a.dealloc(z, l);
                let p = a.alloc(l);
                assert_eq!(p as usize % align, 0, "{size}/{align}");
                for i in 0..size {
                    *p.add(i) = i as u8;
                }
                let bigger = size * 3 + align;
                let q = a.realloc(p, l, bigger);
                assert_eq!(q as usize % align, 0, "grown {size}/{align}");
                assert!((0..size).all(|i| *q.add(i) == i as u8));
                let lq = Layout::from_size_align(bigger, align).unwrap();
                let r = a.realloc(q, lq, size);
                assert_eq!(r as usize % align, 0, "shrunk {size}/{align}");
                assert!((0..size).all(|i| *r.add(i) == i as u8));
                a.dealloc(r, l);
            }
        }
    }
}
