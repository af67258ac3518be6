//! Raw declarations mirroring `include/stridemem.h` and
//! `include/stridemem_dlpack.h`, written by hand (no bindgen).
//!
//! Everything here is `unsafe` to call and follows the C conventions: a
//! status code is returned, results go through out-pointers, every handle
//! written to an out-pointer is owned by the caller. The safe API in the crate
//! root is built on these; use them directly only to pass handles to other C
//! code or to reach something the safe layer does not cover.
#![allow(non_camel_case_types, non_upper_case_globals, missing_docs)]

use std::ffi::{c_char, c_int, c_void};
use std::marker::{PhantomData, PhantomPinned};

// ---------------------------------------------------------------------------
// Version of the header these declarations mirror (SM_VERSION_* generated
// from the repository's VERSION file; a test keeps them equal).
// ---------------------------------------------------------------------------

pub const SM_VERSION_MAJOR: c_int = 0;
pub const SM_VERSION_MINOR: c_int = 4;
pub const SM_VERSION_PATCH: c_int = 0;
pub const SM_VERSION_STRING: &str = "0.4.0";

// ---------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------

/// Opaque target of [`sm_tensor`] (never constructed in Rust).
#[repr(C)]
pub struct sm_tensor_ {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
/// Opaque target of [`sm_storage`].
#[repr(C)]
pub struct sm_storage_ {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
/// Opaque target of [`sm_stack`].
#[repr(C)]
pub struct sm_stack_ {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

pub type sm_tensor = *mut sm_tensor_;
pub type sm_storage = *mut sm_storage_;
pub type sm_stack = *mut sm_stack_;

pub const SM_MAX_DIMS: usize = 16;

// ---------------------------------------------------------------------------
// Status codes
// ---------------------------------------------------------------------------

pub type sm_status = i32;
pub const SM_OK: sm_status = 0;
pub const SM_ERR_INVALID_ARGUMENT: sm_status = 1;
pub const SM_ERR_INVALID_HANDLE: sm_status = 2;
pub const SM_ERR_OUT_OF_MEMORY: sm_status = 3;
pub const SM_ERR_SHAPE: sm_status = 4;
pub const SM_ERR_OUT_OF_BOUNDS: sm_status = 5;
pub const SM_ERR_DTYPE: sm_status = 6;
pub const SM_ERR_DEVICE: sm_status = 7;
pub const SM_ERR_OVERLAP: sm_status = 8;
pub const SM_ERR_OVERFLOW: sm_status = 9;
pub const SM_ERR_UNSUPPORTED: sm_status = 10;
pub const SM_ERR_CUDA: sm_status = 11;
pub const SM_ERR_INTERNAL: sm_status = 12;
pub const SM_ERR_READ_ONLY: sm_status = 13;

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

pub type sm_dtype = i32;
pub const SM_BOOL: sm_dtype = 0;
pub const SM_UINT8: sm_dtype = 1;
pub const SM_INT8: sm_dtype = 2;
pub const SM_INT16: sm_dtype = 3;
pub const SM_INT32: sm_dtype = 4;
pub const SM_INT64: sm_dtype = 5;
pub const SM_FLOAT16: sm_dtype = 6;
pub const SM_BFLOAT16: sm_dtype = 7;
pub const SM_FLOAT32: sm_dtype = 8;
pub const SM_FLOAT64: sm_dtype = 9;
pub const SM_UINT16: sm_dtype = 10;
pub const SM_UINT32: sm_dtype = 11;
pub const SM_UINT64: sm_dtype = 12;
/// Two `float`s (re, im): `float _Complex`'s layout.
pub const SM_COMPLEX64: sm_dtype = 13;
/// Two `double`s (re, im): `double _Complex`'s layout.
pub const SM_COMPLEX128: sm_dtype = 14;
pub const SM_NUM_DTYPES: sm_dtype = 15;

pub const SM_DEVICE_CPU: i32 = 1;
pub const SM_DEVICE_CUDA: i32 = 2;
pub const SM_DEVICE_CUDA_HOST: i32 = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sm_device {
    pub type_: i32,
    pub index: i32,
}

pub type sm_memory_format = i32;
pub const SM_CONTIGUOUS: sm_memory_format = 0;
pub const SM_CHANNELS_LAST: sm_memory_format = 1;
pub const SM_CHANNELS_LAST_3D: sm_memory_format = 2;
pub const SM_PRESERVE: sm_memory_format = 3;

/// Python's `None` for `sm_slice`'s start or stop.
pub const SM_SLICE_NONE: i64 = i64::MIN;

pub type sm_deleter = Option<unsafe extern "C" fn(data: *mut c_void, ctx: *mut c_void)>;

pub type sm_op = i32;
pub const SM_OP_FILL: sm_op = 0;
pub const SM_OP_ZERO: sm_op = 1;
pub const SM_OP_ADD: sm_op = 2;
pub const SM_OP_SUB: sm_op = 3;
pub const SM_OP_MUL: sm_op = 4;
pub const SM_OP_DIV: sm_op = 5;
pub const SM_OP_CLAMP: sm_op = 6;
pub const SM_OP_RELU: sm_op = 7;
pub const SM_OP_NEG: sm_op = 8;
pub const SM_OP_ABS: sm_op = 9;
pub const SM_OP_SQRT: sm_op = 10;
pub const SM_OP_EXP: sm_op = 11;
pub const SM_OP_SIGN: sm_op = 12;

/// `struct sm_memory_stats` (`sm_memory_stats_t`): set `struct_size` to
/// `size_of::<sm_memory_stats_t>()` before the call.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sm_memory_stats_t {
    pub struct_size: u32,
    pub reserved0: u32,
    pub allocated_bytes: i64,
    pub reserved_bytes: i64,
    pub peak_allocated_bytes: i64,
    pub peak_reserved_bytes: i64,
    pub num_allocs: i64,
    pub num_frees: i64,
    pub cache_hits: i64,
    pub device_allocs: i64,
    pub device_frees: i64,
    pub active_views: i64,
    pub active_storages: i64,
    pub requested_bytes: i64,
    pub reserved: [i64; 8],
}

/// `sm_oom_info`: what the out-of-memory observer is told. Read only the
/// fields that end within `struct_size` (a later library may add fields, an
/// older one may have fewer).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sm_oom_info {
    pub struct_size: u32,
    pub device: sm_device,
    pub reserved0: u32,
    pub requested_bytes: i64,
    pub allocated_bytes: i64,
    pub reserved_bytes: i64,
    pub cached_free_bytes: i64,
    pub largest_free_block: i64,
    /// The report (what `sm_last_error` will say); valid during the call only.
    pub report: *const c_char,
}

/// `void (*)(const sm_oom_info* info, void* user_data)`.
pub type sm_oom_observer = Option<unsafe extern "C" fn(info: *const sm_oom_info, user_data: *mut c_void)>;

pub const SM_ALLOC_ROUND: i64 = 512;
pub const SM_SMALL_BLOCK_MAX: i64 = 1024 * 1024;
pub const SM_STACK_ALIGNMENT: i64 = 256;

// ---------------------------------------------------------------------------
// Processes: storages shared with other processes (Linux)
// ---------------------------------------------------------------------------

/// `"SMSH"` in memory on little-endian machines: the first field of every
/// descriptor.
pub const SM_SHARE_MAGIC: u32 = 0x48534d53;
/// Layout of `sm_share_desc`; bumped if it ever changes.
pub const SM_SHARE_FORMAT: u16 = 1;
/// `sizeof(sm_share_desc)`: part of the ABI, no padding.
pub const SM_SHARE_DESC_SIZE: usize = 144;

pub type sm_share_kind = i32;
/// CPU: a memfd; the fd travels with the descriptor.
pub const SM_SHARE_MEMFD: sm_share_kind = 1;
/// CUDA: the segment's `cudaIpcMemHandle_t` is in the descriptor; no fd (-1).
pub const SM_SHARE_CUDA_IPC: sm_share_kind = 2;

/// `sm_share_desc`: written by `sm_storage_export`, read by
/// `sm_storage_import`. Plain bytes with no padding (a layout test checks
/// every offset against the header), so it can be sent as it is.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct sm_share_desc {
    /// `SM_SHARE_MAGIC`.
    pub magic: u32,
    /// `SM_SHARE_FORMAT`.
    pub format: u16,
    /// `SM_SHARE_DESC_SIZE`.
    pub struct_size: u16,
    /// `SM_SHARE_*`.
    pub kind: sm_share_kind,
    /// The exporter's `SM_VERSION_NUMBER`.
    pub library_version: u32,
    /// Where the bytes live.
    pub device: sm_device,
    /// The storage's size.
    pub nbytes: i64,
    /// Where it starts in the shared object, in bytes.
    pub offset: i64,
    /// The shared object's size (memfd, CUDA segment).
    pub object_bytes: i64,
    /// memfd: its inode number (an fd of another object is refused).
    pub object_id: u64,
    /// memfd: its `st_dev`.
    pub object_dev: u64,
    /// For messages.
    pub exporter_pid: i64,
    /// `SM_SHARE_CUDA_IPC`: the segment's `cudaIpcMemHandle_t`.
    pub cuda_ipc_handle: [u8; 64],
    /// FNV-1a 64 over every byte before it.
    pub checksum: u64,
}

// ---------------------------------------------------------------------------
// DLPack (stridemem_dlpack.h, binary-identical to dlpack.h)
// ---------------------------------------------------------------------------

pub type sm_DLDeviceType = c_int;
pub const sm_kDLCPU: sm_DLDeviceType = 1;
pub const sm_kDLCUDA: sm_DLDeviceType = 2;
pub const sm_kDLCUDAHost: sm_DLDeviceType = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct sm_DLDevice {
    pub device_type: sm_DLDeviceType,
    pub device_id: i32,
}

pub const sm_kDLInt: u8 = 0;
pub const sm_kDLUInt: u8 = 1;
pub const sm_kDLFloat: u8 = 2;
pub const sm_kDLOpaqueHandle: u8 = 3;
pub const sm_kDLBfloat: u8 = 4;
pub const sm_kDLComplex: u8 = 5;
pub const sm_kDLBool: u8 = 6;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct sm_DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sm_DLTensor {
    pub data: *mut c_void,
    pub device: sm_DLDevice,
    pub ndim: i32,
    pub dtype: sm_DLDataType,
    pub shape: *mut i64,
    /// In elements; NULL means row-major.
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// The legacy (unversioned) managed tensor.
#[repr(C)]
pub struct sm_DLManagedTensor {
    pub dl_tensor: sm_DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut sm_DLManagedTensor)>,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct sm_DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

pub const SM_DLPACK_MAJOR_VERSION: u32 = 1;
pub const SM_DLPACK_MINOR_VERSION: u32 = 0;
pub const SM_DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
pub const SM_DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;

/// Flags for `sm_to_dlpack_ex`: produce a `DLManagedTensorVersioned`.
pub const SM_DLPACK_VERSIONED: u32 = 1;
/// Flags for `sm_to_dlpack_ex`: export a negative-stride tensor as a dense
/// copy (for consumers that cannot take negative strides).
pub const SM_DLPACK_NORMALIZE: u32 = 2;
/// Flags for `sm_to_dlpack_ex`: always export a fresh row-major copy.
pub const SM_DLPACK_COPY: u32 = 4;
/// Flags for `sm_to_dlpack_ex`: never copy; an export that would need a copy
/// is refused with `SM_ERR_UNSUPPORTED` (not with `SM_DLPACK_COPY`).
pub const SM_DLPACK_NO_COPY: u32 = 8;

/// DLPack 1.x managed tensor: version first, then flags.
#[repr(C)]
pub struct sm_DLManagedTensorVersioned {
    pub version: sm_DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut sm_DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: sm_DLTensor,
}

// ---------------------------------------------------------------------------
// Functions (linked by build.rs: -lstridemem)
// ---------------------------------------------------------------------------

unsafe extern "C" {
    // Errors and version
    pub fn sm_status_string(status: sm_status) -> *const c_char;
    pub fn sm_last_error() -> *const c_char;
    pub fn sm_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) -> sm_status;

    // Types
    pub fn sm_dtype_size(dtype: sm_dtype) -> usize;
    pub fn sm_dtype_name(dtype: sm_dtype) -> *const c_char;
    pub fn sm_cuda_device_count(out: *mut i32) -> sm_status;

    // Tensor lifetime
    pub fn sm_tensor_retain(t: sm_tensor) -> sm_status;
    pub fn sm_tensor_release(t: sm_tensor) -> sm_status;

    // Creation
    pub fn sm_empty(
        shape: *const i64,
        ndim: i32,
        dtype: sm_dtype,
        device: sm_device,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_empty_strided(
        shape: *const i64,
        strides: *const i64,
        ndim: i32,
        dtype: sm_dtype,
        device: sm_device,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_zeros(
        shape: *const i64,
        ndim: i32,
        dtype: sm_dtype,
        device: sm_device,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_full(
        shape: *const i64,
        ndim: i32,
        value: f64,
        dtype: sm_dtype,
        device: sm_device,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_arange(
        start: f64,
        step: f64,
        n: i64,
        dtype: sm_dtype,
        device: sm_device,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_from_host(
        data: *const c_void,
        shape: *const i64,
        ndim: i32,
        dtype: sm_dtype,
        device: sm_device,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_from_blob(
        data: *mut c_void,
        shape: *const i64,
        strides: *const i64,
        ndim: i32,
        dtype: sm_dtype,
        device: sm_device,
        deleter: sm_deleter,
        ctx: *mut c_void,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_copy_to_host(t: sm_tensor, dst: *mut c_void, nbytes: usize) -> sm_status;

    // Metadata
    pub fn sm_ndim(t: sm_tensor, out: *mut i32) -> sm_status;
    pub fn sm_shape(t: sm_tensor, out: *mut i64, capacity: i32) -> sm_status;
    pub fn sm_strides(t: sm_tensor, out: *mut i64, capacity: i32) -> sm_status;
    pub fn sm_storage_offset(t: sm_tensor, out: *mut i64) -> sm_status;
    pub fn sm_dtype_of(t: sm_tensor, out: *mut sm_dtype) -> sm_status;
    pub fn sm_device_of(t: sm_tensor, out: *mut sm_device) -> sm_status;
    pub fn sm_numel(t: sm_tensor, out: *mut i64) -> sm_status;
    pub fn sm_nbytes(t: sm_tensor, out: *mut i64) -> sm_status;
    pub fn sm_storage_nbytes(t: sm_tensor, out: *mut i64) -> sm_status;
    pub fn sm_data_ptr(t: sm_tensor, out: *mut *mut c_void) -> sm_status;
    pub fn sm_is_contiguous(t: sm_tensor, format: sm_memory_format, out: *mut c_int) -> sm_status;
    pub fn sm_same_storage(a: sm_tensor, b: sm_tensor, out: *mut c_int) -> sm_status;
    pub fn sm_version_counter(t: sm_tensor, out: *mut i64) -> sm_status;
    pub fn sm_is_read_only(t: sm_tensor, out: *mut c_int) -> sm_status;

    // Storages
    pub fn sm_tensor_storage(t: sm_tensor, out: *mut sm_storage) -> sm_status;
    pub fn sm_storage_retain(s: sm_storage) -> sm_status;
    pub fn sm_storage_release(s: sm_storage) -> sm_status;
    pub fn sm_storage_size(s: sm_storage, nbytes: *mut i64) -> sm_status;
    pub fn sm_storage_data_ptr(s: sm_storage, out: *mut *mut c_void) -> sm_status;
    pub fn sm_storage_device(s: sm_storage, out: *mut sm_device) -> sm_status;
    pub fn sm_storage_id(s: sm_storage, out: *mut u64) -> sm_status;
    pub fn sm_tensor_from_storage(
        s: sm_storage,
        shape: *const i64,
        strides: *const i64,
        ndim: i32,
        storage_offset: i64,
        dtype: sm_dtype,
        out: *mut sm_tensor,
    ) -> sm_status;

    // Views
    pub fn sm_view(t: sm_tensor, shape: *const i64, ndim: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_as_strided(
        t: sm_tensor,
        shape: *const i64,
        strides: *const i64,
        ndim: i32,
        storage_offset: i64,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_slice(
        t: sm_tensor,
        dim: i32,
        start: i64,
        stop: i64,
        step: i64,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_narrow(t: sm_tensor, dim: i32, start: i64, length: i64, out: *mut sm_tensor) -> sm_status;
    pub fn sm_select(t: sm_tensor, dim: i32, index: i64, out: *mut sm_tensor) -> sm_status;
    pub fn sm_permute(t: sm_tensor, dims: *const i32, ndim: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_transpose(t: sm_tensor, dim0: i32, dim1: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_movedim(
        t: sm_tensor,
        source: *const i32,
        destination: *const i32,
        n: i32,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_expand(t: sm_tensor, shape: *const i64, ndim: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_squeeze(t: sm_tensor, dims: *const i32, n: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_unsqueeze(t: sm_tensor, dim: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_flatten(t: sm_tensor, start_dim: i32, end_dim: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_unflatten(
        t: sm_tensor,
        dim: i32,
        sizes: *const i64,
        n: i32,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_unfold(t: sm_tensor, dim: i32, size: i64, step: i64, out: *mut sm_tensor) -> sm_status;
    pub fn sm_diagonal(t: sm_tensor, offset: i64, dim1: i32, dim2: i32, out: *mut sm_tensor) -> sm_status;
    pub fn sm_split(
        t: sm_tensor,
        split_size: i64,
        dim: i32,
        outs: *mut sm_tensor,
        capacity: i32,
        count: *mut i32,
    ) -> sm_status;
    pub fn sm_chunk(
        t: sm_tensor,
        chunks: i32,
        dim: i32,
        outs: *mut sm_tensor,
        capacity: i32,
        count: *mut i32,
    ) -> sm_status;
    pub fn sm_flip(t: sm_tensor, dims: *const i32, n: i32, out: *mut sm_tensor) -> sm_status;

    // Copies
    pub fn sm_reshape_would_copy(t: sm_tensor, shape: *const i64, ndim: i32, out: *mut c_int) -> sm_status;
    pub fn sm_reshape(
        t: sm_tensor,
        shape: *const i64,
        ndim: i32,
        out: *mut sm_tensor,
        copied: *mut c_int,
    ) -> sm_status;
    pub fn sm_contiguous(
        t: sm_tensor,
        format: sm_memory_format,
        out: *mut sm_tensor,
        copied: *mut c_int,
    ) -> sm_status;
    pub fn sm_clone(t: sm_tensor, format: sm_memory_format, out: *mut sm_tensor) -> sm_status;
    pub fn sm_to(
        t: sm_tensor,
        device: sm_device,
        dtype: sm_dtype,
        out: *mut sm_tensor,
        copied: *mut c_int,
    ) -> sm_status;
    pub fn sm_copy_into(dst: sm_tensor, src: sm_tensor) -> sm_status;
    pub fn sm_index_select(t: sm_tensor, dim: i32, index: sm_tensor, out: *mut sm_tensor) -> sm_status;

    // In-place
    pub fn sm_inplace_scalar(t: sm_tensor, op: sm_op, a: f64, b: f64) -> sm_status;
    pub fn sm_inplace_tensor(t: sm_tensor, op: sm_op, other: sm_tensor, alpha: f64) -> sm_status;

    // Memory
    pub fn sm_memory_stats(device: sm_device, out: *mut sm_memory_stats_t) -> sm_status;
    pub fn sm_reset_peak_stats(device: sm_device) -> sm_status;
    pub fn sm_empty_cache(device: sm_device) -> sm_status;
    pub fn sm_memory_summary(device: sm_device, buf: *mut c_char, len: usize, needed: *mut usize) -> sm_status;
    pub fn sm_memory_snapshot(device: sm_device, buf: *mut c_char, len: usize, needed: *mut usize) -> sm_status;
    pub fn sm_push_tag(tag: *const c_char) -> sm_status;
    pub fn sm_pop_tag() -> sm_status;
    pub fn sm_memory_record_history(device: sm_device, max_events: i64) -> sm_status;
    pub fn sm_set_oom_observer(observer: sm_oom_observer, user_data: *mut c_void) -> sm_status;

    // Stack of views
    pub fn sm_stack_create(device: sm_device, capacity_bytes: i64, out: *mut sm_stack) -> sm_status;
    pub fn sm_stack_push(
        s: sm_stack,
        shape: *const i64,
        ndim: i32,
        dtype: sm_dtype,
        out: *mut sm_tensor,
    ) -> sm_status;
    pub fn sm_stack_mark(s: sm_stack, mark: *mut i64) -> sm_status;
    pub fn sm_stack_pop_to(s: sm_stack, mark: i64) -> sm_status;
    pub fn sm_stack_used(s: sm_stack, used_bytes: *mut i64, capacity_bytes: *mut i64) -> sm_status;
    pub fn sm_stack_release(s: sm_stack) -> sm_status;
    pub fn sm_stack_create_shared(capacity_bytes: i64, out: *mut sm_stack) -> sm_status;
    pub fn sm_stack_storage(s: sm_stack, out: *mut sm_storage) -> sm_status;

    // Processes: storages shared with other processes (Linux)
    pub fn sm_empty_shared(shape: *const i64, ndim: i32, dtype: sm_dtype, out: *mut sm_tensor) -> sm_status;
    pub fn sm_share_memory(t: sm_tensor) -> sm_status;
    pub fn sm_is_shared(t: sm_tensor, out: *mut c_int) -> sm_status;
    pub fn sm_storage_export(s: sm_storage, desc: *mut sm_share_desc, fd: *mut c_int) -> sm_status;
    pub fn sm_tensor_export(t: sm_tensor, desc: *mut sm_share_desc, fd: *mut c_int) -> sm_status;
    pub fn sm_storage_import(desc: *const sm_share_desc, fd: c_int, out: *mut sm_storage) -> sm_status;
    pub fn sm_storage_is_shared(s: sm_storage, out: *mut c_int) -> sm_status;

    // Streams and devices
    pub fn sm_set_stream(device: sm_device, cuda_stream: *mut c_void) -> sm_status;
    pub fn sm_get_stream(device: sm_device, cuda_stream: *mut *mut c_void) -> sm_status;
    pub fn sm_synchronize(device: sm_device) -> sm_status;
    pub fn sm_record_stream(t: sm_tensor, cuda_stream: *mut c_void) -> sm_status;
    pub fn sm_set_num_threads(n: i32) -> sm_status;
    pub fn sm_get_num_threads(out: *mut i32) -> sm_status;

    // DLPack
    pub fn sm_to_dlpack(t: sm_tensor, versioned: c_int, managed: *mut *mut c_void) -> sm_status;
    pub fn sm_to_dlpack_ex(
        t: sm_tensor,
        flags: u32,
        device: *const sm_device,
        managed: *mut *mut c_void,
        copied: *mut c_int,
    ) -> sm_status;
    pub fn sm_from_dlpack(managed: *mut c_void, versioned: c_int, out: *mut sm_tensor) -> sm_status;

    // Testing hooks
    pub fn sm_debug_fail_alloc(n: i64) -> sm_status;
    pub fn sm_debug_live_handles(tensors: *mut i64, storages: *mut i64, stacks: *mut i64) -> sm_status;
    pub fn sm_debug_age_handle_slot(released: *const c_void, generations_left: i64) -> sm_status;
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    // Layouts of the C structs on LP64 (x86-64 / aarch64 Linux, macOS).
    #[test]
    fn struct_layouts_match_the_header() {
        assert_eq!(size_of::<sm_device>(), 8);
        assert_eq!(size_of::<sm_memory_stats_t>(), 8 + 12 * 8 + 8 * 8);
        assert_eq!(offset_of!(sm_memory_stats_t, allocated_bytes), 8);
        assert_eq!(offset_of!(sm_memory_stats_t, requested_bytes), 8 + 11 * 8);
        assert_eq!(size_of::<sm_DLDataType>(), 4);
        assert_eq!(size_of::<sm_DLTensor>(), 48);
        assert_eq!(offset_of!(sm_DLTensor, shape), 24);
        assert_eq!(offset_of!(sm_DLTensor, byte_offset), 40);
        assert_eq!(size_of::<sm_DLManagedTensor>(), 64);
        assert_eq!(offset_of!(sm_DLManagedTensorVersioned, flags), 24);
        assert_eq!(offset_of!(sm_DLManagedTensorVersioned, dl_tensor), 32);
        assert_eq!(size_of::<sm_DLManagedTensorVersioned>(), 80);
        assert_eq!(align_of::<sm_DLTensor>(), 8);
        assert_eq!(size_of::<sm_oom_info>(), 4 + 8 + 4 + 5 * 8 + 8);
        assert_eq!(offset_of!(sm_oom_info, device), 4);
        assert_eq!(offset_of!(sm_oom_info, reserved0), 12);
        assert_eq!(offset_of!(sm_oom_info, requested_bytes), 16);
        assert_eq!(offset_of!(sm_oom_info, largest_free_block), 48);
        assert_eq!(offset_of!(sm_oom_info, report), 56);
        assert_eq!(align_of::<sm_oom_info>(), 8);
        // sm_share_desc: the header's comment fixes the size (no padding);
        // tests/library.rs also derives every offset from the header's text.
        assert_eq!(size_of::<sm_share_desc>(), SM_SHARE_DESC_SIZE);
        assert_eq!(size_of::<sm_share_desc>(), 144);
        assert_eq!(offset_of!(sm_share_desc, format), 4);
        assert_eq!(offset_of!(sm_share_desc, struct_size), 6);
        assert_eq!(offset_of!(sm_share_desc, kind), 8);
        assert_eq!(offset_of!(sm_share_desc, library_version), 12);
        assert_eq!(offset_of!(sm_share_desc, device), 16);
        assert_eq!(offset_of!(sm_share_desc, nbytes), 24);
        assert_eq!(offset_of!(sm_share_desc, object_dev), 56);
        assert_eq!(offset_of!(sm_share_desc, exporter_pid), 64);
        assert_eq!(offset_of!(sm_share_desc, cuda_ipc_handle), 72);
        assert_eq!(offset_of!(sm_share_desc, checksum), 136);
        assert_eq!(align_of::<sm_share_desc>(), 8);
    }
}
