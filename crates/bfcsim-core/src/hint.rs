//! Cache hints for the hot path: they change timing only, never a result.

/// Starts bringing `value`'s cache line in, for a read some instructions from now. A hint (x86-64's
/// `prefetcht0`); on other architectures it does nothing.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let line: *const T = value;
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 processor has; a prefetch reads nothing the
        // program sees and never faults, and `line` comes from a live reference besides.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
