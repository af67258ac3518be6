//! Memory statistics of the caching allocators, and the testing hooks.

use std::ffi::c_char;

use crate::device::Device;
use crate::error::{Result, check};
use crate::sys;

/// A snapshot of one device's allocator statistics (`sm_memory_stats`).
///
/// ```
/// use stridemem::{DType, Device, Tensor};
///
/// let before = stridemem::memory_stats(Device::Cpu).unwrap();
/// let t = Tensor::zeros(&[1024], DType::F32, Device::Cpu).unwrap();
/// let after = stridemem::memory_stats(Device::Cpu).unwrap();
/// // Other threads may allocate too, so only a lower bound holds here.
/// assert!(after.num_allocs > before.num_allocs);
/// assert!(after.peak_allocated_bytes >= 4096);
/// # drop(t);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryStats {
    /// Bytes in blocks handed to live storages.
    pub allocated_bytes: i64,
    /// Allocated plus cached bytes, as held from the system.
    pub reserved_bytes: i64,
    /// Peak of `allocated_bytes` since start or [`reset_peak_stats`].
    pub peak_allocated_bytes: i64,
    /// Peak of `reserved_bytes` since start or [`reset_peak_stats`].
    pub peak_reserved_bytes: i64,
    /// Storage allocations served.
    pub num_allocs: i64,
    /// Storage blocks returned.
    pub num_frees: i64,
    /// Allocations served from the cache.
    pub cache_hits: i64,
    /// Allocations from the system (malloc / cudaMalloc).
    pub device_allocs: i64,
    /// Blocks given back to the system.
    pub device_frees: i64,
    /// Live tensor objects on this device.
    pub active_views: i64,
    /// Live storages on this device.
    pub active_storages: i64,
    /// Bytes asked for by live storages, before rounding.
    pub requested_bytes: i64,
}

impl From<sys::sm_memory_stats_t> for MemoryStats {
    fn from(s: sys::sm_memory_stats_t) -> MemoryStats {
        MemoryStats {
            allocated_bytes: s.allocated_bytes,
            reserved_bytes: s.reserved_bytes,
            peak_allocated_bytes: s.peak_allocated_bytes,
            peak_reserved_bytes: s.peak_reserved_bytes,
            num_allocs: s.num_allocs,
            num_frees: s.num_frees,
            cache_hits: s.cache_hits,
            device_allocs: s.device_allocs,
            device_frees: s.device_frees,
            active_views: s.active_views,
            active_storages: s.active_storages,
            requested_bytes: s.requested_bytes,
        }
    }
}

/// The allocator statistics of `device` (`sm_memory_stats`).
pub fn memory_stats(device: Device) -> Result<MemoryStats> {
    crate::ensure_compatible()?;
    let mut raw = sys::sm_memory_stats_t {
        struct_size: std::mem::size_of::<sys::sm_memory_stats_t>() as u32,
        ..Default::default()
    };
    // SAFETY: raw is a valid, sized sm_memory_stats_t.
    check(unsafe { sys::sm_memory_stats(device.to_raw(), &mut raw) })?;
    Ok(raw.into())
}

/// Restarts the peaks of `device` from the current values
/// (`sm_reset_peak_stats`).
pub fn reset_peak_stats(device: Device) -> Result<()> {
    crate::ensure_compatible()?;
    // SAFETY: plain value argument.
    check(unsafe { sys::sm_reset_peak_stats(device.to_raw()) })
}

/// Returns every unused cached block of `device` to the system, never a live
/// one (`sm_empty_cache`).
pub fn empty_cache(device: Device) -> Result<()> {
    crate::ensure_compatible()?;
    // SAFETY: plain value argument.
    check(unsafe { sys::sm_empty_cache(device.to_raw()) })
}

/// A readable table of the statistics of `device` (`sm_memory_summary`).
pub fn memory_summary(device: Device) -> Result<String> {
    crate::ensure_compatible()?;
    // SAFETY: read_text passes a buffer of len writable bytes (or NULL with 0).
    read_text(|buf, len, needed| unsafe { sys::sm_memory_summary(device.to_raw(), buf, len, needed) })
}

/// A text under the C API's "needed" convention: ask for the size, then call
/// again until the buffer holds the whole text (it may grow between calls).
pub(crate) fn read_text(call: impl Fn(*mut c_char, usize, *mut usize) -> sys::sm_status) -> Result<String> {
    let mut need = 0usize;
    check(call(std::ptr::null_mut(), 0, &mut need))?;
    loop {
        let len = need;
        let mut buf = vec![0u8; len];
        check(call(buf.as_mut_ptr() as *mut c_char, len, &mut need))?;
        if need <= len {
            buf.truncate(need.saturating_sub(1)); // the NUL
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
    }
}

/// Testing hooks (`sm_debug_*`). They act on the whole process: tests that
/// use them must not run beside other tests that allocate.
pub mod debug {
    use crate::error::{Result, check};
    use crate::sys;

    /// Makes the `n`-th data allocation from now (1-based, any device) fail
    /// as if the system were out of memory; `n <= 0` disables
    /// (`sm_debug_fail_alloc`).
    pub fn fail_alloc(n: i64) -> Result<()> {
        // SAFETY: plain value argument.
        check(unsafe { sys::sm_debug_fail_alloc(n) })
    }

    /// Live handles in the process (`sm_debug_live_handles`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct LiveHandles {
        /// Live tensor handles.
        pub tensors: i64,
        /// Live storage handles.
        pub storages: i64,
        /// Live stack handles.
        pub stacks: i64,
    }

    /// The number of live tensor, storage and stack handles (leak checks).
    pub fn live_handles() -> Result<LiveHandles> {
        let mut h = LiveHandles { tensors: 0, storages: 0, stacks: 0 };
        // SAFETY: three valid out-pointers.
        check(unsafe { sys::sm_debug_live_handles(&mut h.tensors, &mut h.storages, &mut h.stacks) })?;
        Ok(h)
    }
}
