//! Memory statistics of the caching allocators, tags, the allocation
//! history, the out-of-memory observer, and the testing hooks.

use std::ffi::{CStr, CString, c_char, c_void};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::device::Device;
use crate::error::{Error, Result, Status, check};
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

/// Names the memory allocated on this thread until the returned guard is
/// dropped (`sm_push_tag`; the drop is `sm_pop_tag`, also during a panic's
/// unwinding). Tags nest into a path: `"encoder"` around `"attn"` records
/// `"encoder/attn"`, which a [`memory_snapshot`](crate::memory_snapshot)
/// shows for every block allocated inside ([`Block::tag`](crate::Block),
/// [`SnapshotSummary::tags`](crate::SnapshotSummary)), as the
/// out-of-memory report and the history do.
///
/// The tag stack is per thread, so [`TagGuard`] is neither `Send` nor
/// `Sync`: it drops on the thread that pushed. Guards must drop in reverse
/// order of creation (as scoped `let` bindings do): dropping an outer guard
/// first pops the inner name instead (the library pops its top), so the
/// names of the allocations in between are wrong, though the stack stays
/// balanced. `std::mem::forget` on a guard leaves its tag pushed.
/// [`with_tag`] gives the scope as a closure.
///
/// `name`: 1 to 256 bytes of UTF-8 without control characters (a NUL
/// included), at most 256 nested per thread; anything else is
/// [`Status::InvalidArgument`] and pushes nothing.
///
/// ```
/// use stridemem::{DType, Device, Tensor};
///
/// let weights = {
///     let _encoder = stridemem::tag("encoder")?;
///     let _attn = stridemem::tag("attn")?;
///     Tensor::zeros(&[64, 64], DType::F32, Device::Cpu)?
/// }; // both tags popped here, inner first
/// let snap = stridemem::memory_snapshot_summary(Device::Cpu)?;
/// let block = snap.block_of_storage(weights.storage()?.id()?).unwrap();
/// assert_eq!(block.tag.as_deref(), Some("encoder/attn"));
/// assert!(stridemem::tag("").is_err());
/// # Ok::<(), stridemem::Error>(())
/// ```
pub fn tag(name: &str) -> Result<TagGuard> {
    crate::ensure_compatible()?;
    let c = CString::new(name).map_err(|e| {
        Error::new(
            Status::InvalidArgument,
            format!("tag {name:?} has a NUL byte at {} (tags are text without control characters)", e.nul_position()),
        )
    })?;
    // SAFETY: a NUL-terminated string that lives across the call.
    check(unsafe { sys::sm_push_tag(c.as_ptr()) })?;
    Ok(TagGuard { _same_thread: PhantomData })
}

/// Runs `f` with `name` pushed as this thread's innermost tag (see [`tag`]),
/// popped when `f` returns or panics.
///
/// ```
/// use stridemem::{DType, Device, Tensor};
///
/// let t = stridemem::with_tag("decoder", || Tensor::zeros(&[8], DType::F32, Device::Cpu))??;
/// let snap = stridemem::memory_snapshot_summary(Device::Cpu)?;
/// assert_eq!(snap.block_of_storage(t.storage()?.id()?).unwrap().tag.as_deref(), Some("decoder"));
/// # Ok::<(), stridemem::Error>(())
/// ```
pub fn with_tag<R>(name: &str, f: impl FnOnce() -> R) -> Result<R> {
    let _guard = tag(name)?;
    Ok(f())
}

/// A pushed tag ([`tag`]); dropping it pops the tag. Not `Send`: tags are
/// per thread.
#[must_use = "the tag is popped when the guard is dropped: bind it (`let _g = ...`), not `let _ = ...`"]
pub struct TagGuard {
    // *const (): !Send and !Sync, so the pop happens on the pushing thread.
    _same_thread: PhantomData<*const ()>,
}

impl Drop for TagGuard {
    fn drop(&mut self) {
        // SAFETY: no arguments. It cannot fail here: this guard's push is on
        // this thread's stack (the guard never left the thread).
        unsafe { sys::sm_pop_tag() };
    }
}

impl std::fmt::Debug for TagGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TagGuard")
    }
}

/// Starts recording the last `max_events` allocator events of `device`
/// (alloc, free, segment_map, segment_unmap, empty_cache, oom: time, size,
/// address, tag and the totals after each) into a ring that the snapshot
/// includes ([`SnapshotSummary::history`](crate::SnapshotSummary));
/// `max_events` 1 ..= 2^24 starts afresh, 0 stops and drops the events
/// (`sm_memory_record_history`). Off by default.
///
/// ```
/// use stridemem::Device;
///
/// stridemem::record_memory_history(Device::Cpu, 1000)?;
/// let h = stridemem::memory_snapshot_summary(Device::Cpu)?.history.unwrap();
/// assert_eq!(h.capacity, 1000);
/// stridemem::record_memory_history(Device::Cpu, 0)?;
/// assert!(!stridemem::memory_snapshot_summary(Device::Cpu)?.history_enabled());
/// # Ok::<(), stridemem::Error>(())
/// ```
pub fn record_memory_history(device: Device, max_events: i64) -> Result<()> {
    crate::ensure_compatible()?;
    // SAFETY: plain value arguments.
    check(unsafe { sys::sm_memory_record_history(device.to_raw(), max_events) })
}

/// What the out-of-memory observer is told ([`set_oom_observer`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OomInfo {
    /// The device that ran out (`None` only for a device type these
    /// bindings do not know).
    pub device: Option<Device>,
    /// Bytes the failing allocation asked for.
    pub requested_bytes: i64,
    /// Bytes allocated to live storages at the failure.
    pub allocated_bytes: i64,
    /// Bytes held from the system.
    pub reserved_bytes: i64,
    /// Free bytes in the cache.
    pub cached_free_bytes: i64,
    /// The largest free block.
    pub largest_free_block: i64,
    /// The report (what was requested, allocated, reserved and cached,
    /// fragmentation, the largest holders by tag); the failing call's
    /// [`Error::message`] carries it too.
    pub report: String,
}

impl OomInfo {
    /// Reads the fields that end within `info.struct_size` (0 / empty for
    /// the others).
    ///
    /// # Safety
    /// `info.report` is NULL or a NUL-terminated string.
    unsafe fn from_raw(info: &sys::sm_oom_info) -> OomInfo {
        use std::mem::{offset_of, size_of};
        let size = info.struct_size as usize;
        let has = |offset: usize, len: usize| offset + len <= size;
        let int = |offset: usize, v: i64| if has(offset, 8) { v } else { 0 };
        let device = if has(offset_of!(sys::sm_oom_info, device), size_of::<sys::sm_device>()) {
            Device::from_raw(info.device)
        } else {
            None
        };
        let report = if has(offset_of!(sys::sm_oom_info, report), size_of::<*const c_char>()) && !info.report.is_null() {
            // SAFETY: the caller vouches for the string; it is copied now.
            unsafe { CStr::from_ptr(info.report) }.to_string_lossy().into_owned()
        } else {
            String::new()
        };
        OomInfo {
            device,
            requested_bytes: int(offset_of!(sys::sm_oom_info, requested_bytes), info.requested_bytes),
            allocated_bytes: int(offset_of!(sys::sm_oom_info, allocated_bytes), info.allocated_bytes),
            reserved_bytes: int(offset_of!(sys::sm_oom_info, reserved_bytes), info.reserved_bytes),
            cached_free_bytes: int(offset_of!(sys::sm_oom_info, cached_free_bytes), info.cached_free_bytes),
            largest_free_block: int(offset_of!(sys::sm_oom_info, largest_free_block), info.largest_free_block),
            report,
        }
    }
}

/// An out-of-memory observer ([`set_oom_observer`]).
pub type OomObserver = Box<dyn Fn(&OomInfo) + Send + Sync + 'static>;

type SharedObserver = Arc<dyn Fn(&OomInfo) + Send + Sync + 'static>;

/// The observer the trampoline calls. The library is given the one
/// trampoline below, which never goes away: `sm_set_oom_observer` does not
/// wait for observers already running on other threads, so what it was
/// given must stay callable. The trampoline clones the Arc and calls it
/// outside the lock, so an observer may itself replace the observer.
static OOM_OBSERVER: Mutex<Option<SharedObserver>> = Mutex::new(None);
/// Counts `set_oom_observer` calls; changed under `OOM_OBSERVER`'s lock.
static OOM_CHANGES: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" fn oom_trampoline(info: *const sys::sm_oom_info, _user_data: *mut c_void) {
    // A panic must not unwind into C (it would abort the process): it is
    // caught here, after the panic hook has printed it, and the failing
    // call still returns Status::OutOfMemory.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let observer = OOM_OBSERVER.lock().unwrap_or_else(|e| e.into_inner()).clone();
        // SAFETY: the library passes a valid sm_oom_info for the call.
        if let (Some(observer), Some(info)) = (observer, unsafe { info.as_ref() }) {
            // SAFETY: as above; report is NULL or NUL-terminated.
            observer(&unsafe { OomInfo::from_raw(info) });
        }
    }));
}

/// Calls `observer` when an allocation is about to fail with
/// [`Status::OutOfMemory`], before the failing call returns, on the thread
/// that asked (`sm_set_oom_observer`); `None` removes it. One observer for
/// the whole process (and every binding in it): this replaces any other,
/// and returns once the calls of the replaced observer in flight on other
/// threads have returned (not waiting for the calling thread's own).
/// The observer may call the library (take a snapshot, drop tensors); an
/// allocation that fails inside it does not call it again. A panic in it
/// is caught (the panic hook prints it) and never crosses into C.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use stridemem::{DType, Device, Status, Tensor};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&seen);
/// stridemem::set_oom_observer(Some(Box::new(move |info: &stridemem::OomInfo| {
///     sink.lock().unwrap().push(info.requested_bytes);
/// })))?;
/// stridemem::debug::fail_alloc(1)?; // the next allocation fails
/// let err = Tensor::empty(&[100], DType::F64, Device::Cpu).unwrap_err();
/// assert_eq!(err.status(), Status::OutOfMemory);
/// assert_eq!(*seen.lock().unwrap(), [800]);
/// stridemem::set_oom_observer(None)?;
/// # Ok::<(), stridemem::Error>(())
/// ```
pub fn set_oom_observer(observer: Option<OomObserver>) -> Result<()> {
    crate::ensure_compatible()?;
    {
        let mut slot = OOM_OBSERVER.lock().unwrap_or_else(|e| e.into_inner());
        *slot = observer.map(Arc::from);
        OOM_CHANGES.fetch_add(1, Ordering::SeqCst);
    }
    // sm_set_oom_observer waits for the observer calls in flight, and each
    // takes the lock (oom_trampoline): it is called without the lock. A call
    // that another thread's change overtook is made again with the newer
    // state, so the library's observer always matches the newest one here.
    loop {
        let (install, seen) = {
            let slot = OOM_OBSERVER.lock().unwrap_or_else(|e| e.into_inner());
            (slot.is_some(), OOM_CHANGES.load(Ordering::SeqCst))
        };
        let trampoline: sys::sm_oom_observer = if install { Some(oom_trampoline) } else { None };
        // SAFETY: a function that lives for the whole process, or NULL (removes it).
        let status = unsafe { sys::sm_set_oom_observer(trampoline, std::ptr::null_mut()) };
        let _slot = OOM_OBSERVER.lock().unwrap_or_else(|e| e.into_inner());
        if OOM_CHANGES.load(Ordering::SeqCst) == seen {
            return check(status);
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
