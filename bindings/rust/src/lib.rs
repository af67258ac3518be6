#![doc = include_str!("../README.md")]
//!
//! # Crate layout
//!
//! * [`sys`]: the raw `extern "C"` declarations, mirroring `stridemem.h`.
//! * [`Tensor`] (views, copies, in-place ops, host I/O), [`Storage`],
//!   [`Stack`], [`DType`], [`Device`], [`MemoryStats`], [`Error`].
//! * Seeing memory: [`memory_snapshot`] (JSON) and [`memory_snapshot_summary`]
//!   ([`SnapshotSummary`]), [`tag`] / [`TagGuard`], [`record_memory_history`],
//!   [`set_oom_observer`] ([`OomInfo`]), [`Storage::id`]; [`json`]: the small
//!   JSON reader behind the summary.
//! * Sharing with other processes (Linux): [`Tensor::empty_shared`],
//!   [`Tensor::share_memory`], [`Tensor::export_shared`], [`Storage::export`],
//!   [`Storage::import`], [`Stack::new_shared`]; the descriptor that travels
//!   with the fd is a [`ShareDescriptor`].
//! * [`DlpackTensor`]: DLPack interop; [`Tensor::to_dlpack_with`] exports
//!   as [`DlpackExport`] says (copy modes, the consumer's device).
//! * Std traits: `Display` for [`Tensor`] (values, NumPy-style), element
//!   access ([`Tensor::get`], [`Tensor::at`], [`Tensor::set`]), iterators
//!   ([`Tensor::iter`], [`Elements`]), `From<Vec<T>>`, `TryFrom<&Tensor>`
//!   for `Vec<T>`, `FromStr` for [`DType`], shapes as `usize` or `i64`
//!   ([`IntoShape`]).
//!
//! Every fallible call returns [`Result`]; the [`Error`] carries the
//! library's status and its message.

// build.rs found no library: stop here with its list of places tried.
// rustdoc (cfg(doc)) goes on, so `cargo doc` works without the library.
#[cfg(all(stridemem_missing, not(doc)))]
compile_error!(include_str!(concat!(env!("OUT_DIR"), "/not_found.txt")));

// build.rs found only a shared library the dynamic loader will not find,
// and nobody chose the shared library: fine for this crate's own tests and
// examples (build.rs gives them an rpath), but a dependent's program would
// build and not start, since cargo passes no rpath to dependents. Cargo sets
// CARGO_PRIMARY_PACKAGE only when this crate is the one being built.
#[cfg(all(stridemem_dylib_unreachable, not(doc)))]
const _: () = if option_env!("CARGO_PRIMARY_PACKAGE").is_none() {
    panic!("{}", include_str!(concat!(env!("OUT_DIR"), "/dylib_unreachable.txt")))
};

pub mod json;
pub mod sys;

mod access;
mod device;
mod dlpack;
mod dtype;
mod error;
mod format;
mod memory;
mod shape;
#[cfg(unix)]
mod share;
mod snapshot;
mod stack;
mod tensor;

pub use access::Elements;
pub use device::{Device, cuda_device_count, num_threads, set_num_threads};
pub use dlpack::{DlpackCopy, DlpackExport, DlpackTensor};
pub use dtype::{BFloat16, Complex32, Complex64, DType, Element, Float16, MemoryFormat};
pub use error::{Error, Result, Status};
pub use format::{PRINT_EDGE_ITEMS, PRINT_THRESHOLD};
pub use memory::{
    MemoryStats, OomInfo, OomObserver, TagGuard, debug, empty_cache, memory_stats, memory_summary,
    record_memory_history, reset_peak_stats, set_oom_observer, tag, with_tag,
};
pub use snapshot::{
    Block, BlockState, Fragmentation, History, HistoryEvent, PoolFragmentation, Segment, SnapshotSummary,
    TagUsage, memory_snapshot, memory_snapshot_summary,
};
pub use shape::IntoShape;
#[cfg(unix)]
pub use share::{ShareDescriptor, ShareKind};
pub use stack::{Mark, Stack};
pub use tensor::{MAX_DIMS, Op, Storage, Tensor};

use std::sync::OnceLock;

/// The version of the library loaded at run time (`sm_version`).
///
/// ```
/// let (major, minor, patch) = stridemem::version();
/// assert_eq!((major, minor), (stridemem::sys::SM_VERSION_MAJOR, stridemem::sys::SM_VERSION_MINOR));
/// # let _ = patch;
/// ```
pub fn version() -> (i32, i32, i32) {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    let status = unsafe { sys::sm_version(&mut major, &mut minor, &mut patch) };
    if status != sys::SM_OK {
        return (-1, -1, -1);
    }
    (major, minor, patch)
}

/// The version of the header these bindings mirror
/// (`SM_VERSION_MAJOR/MINOR/PATCH` in [`sys`]).
pub fn header_version() -> (i32, i32, i32) {
    (sys::SM_VERSION_MAJOR, sys::SM_VERSION_MINOR, sys::SM_VERSION_PATCH)
}

/// Is a library of version `lib` compatible with bindings for `header`?
/// Semver: the same major and at least the header's minor; while the major
/// is 0, the minor must match exactly.
pub fn is_compatible(header: (i32, i32, i32), lib: (i32, i32, i32)) -> bool {
    if header.0 != lib.0 {
        return false;
    }
    if header.0 == 0 { header.1 == lib.1 } else { lib.1 >= header.1 }
}

/// Checks once per process, at the first constructor call, that the loaded
/// library matches the header these bindings were written against (as
/// SQLite recommends). Every constructor returns this error when it does
/// not.
pub fn ensure_compatible() -> Result<()> {
    static CHECK: OnceLock<Result<()>> = OnceLock::new();
    CHECK
        .get_or_init(|| {
            let lib = version();
            let header = header_version();
            if is_compatible(header, lib) {
                Ok(())
            } else {
                Err(Error::new(
                    Status::Unsupported,
                    format!(
                        "libstridemem {}.{}.{} is not compatible with these bindings, written for \
                         stridemem.h {}.{}.{}",
                        lib.0, lib.1, lib.2, header.0, header.1, header.2
                    ),
                ))
            }
        })
        .clone()
}
