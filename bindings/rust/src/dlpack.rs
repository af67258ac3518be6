//! DLPack interop: [`DlpackTensor`], an owned `DLManagedTensor` or
//! `DLManagedTensorVersioned`, and the zero-copy conversions with
//! [`Tensor`].

use std::ffi::{c_int, c_void};
use std::fmt;
use std::ptr::{self, NonNull};

use crate::device::Device;
use crate::error::{Error, Result, Status, check};
use crate::sys;
use crate::tensor::Tensor;

/// An owned DLPack managed tensor: legacy `DLManagedTensor` or versioned
/// `DLManagedTensorVersioned` (DLPack 1.x). Dropping it calls the producer's
/// deleter once; [`into_raw`](DlpackTensor::into_raw) hands it to a consumer
/// instead.
///
/// ```
/// use stridemem::{DlpackTensor, Tensor};
///
/// let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let capsule: DlpackTensor = t.to_dlpack(true).unwrap();
/// assert_eq!(capsule.shape(), &[2, 2]);
/// let back = Tensor::from_dlpack(capsule).unwrap(); // zero copy both ways
/// assert_eq!(back.data_ptr().unwrap(), t.data_ptr().unwrap());
/// ```
pub struct DlpackTensor {
    ptr: NonNull<c_void>,
    versioned: bool,
}

impl DlpackTensor {
    /// Takes ownership of a managed tensor.
    ///
    /// # Safety
    /// `ptr` must be a valid `DLManagedTensorVersioned*` (`versioned`) or
    /// `DLManagedTensor*` whose deleter has not run, and not be used by the
    /// caller afterwards. `None` for NULL.
    pub unsafe fn from_raw(ptr: *mut c_void, versioned: bool) -> Option<DlpackTensor> {
        NonNull::new(ptr).map(|ptr| DlpackTensor { ptr, versioned })
    }

    /// Gives up ownership: the caller (a DLPack consumer) must call the
    /// deleter once.
    pub fn into_raw(self) -> *mut c_void {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// The managed tensor pointer, still owned by `self`.
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr.as_ptr()
    }

    /// True for a `DLManagedTensorVersioned`.
    pub fn is_versioned(&self) -> bool {
        self.versioned
    }

    /// The `DLTensor` description.
    pub fn dl_tensor(&self) -> &sys::sm_DLTensor {
        // SAFETY: ptr is a valid managed tensor of the recorded kind while
        // self lives.
        unsafe {
            if self.versioned {
                &(*(self.ptr.as_ptr() as *const sys::sm_DLManagedTensorVersioned)).dl_tensor
            } else {
                &(*(self.ptr.as_ptr() as *const sys::sm_DLManagedTensor)).dl_tensor
            }
        }
    }

    /// The DLPack version of a versioned tensor, `None` for a legacy one.
    pub fn version(&self) -> Option<(u32, u32)> {
        self.versioned.then(|| {
            // SAFETY: a versioned managed tensor.
            let v = unsafe { (*(self.ptr.as_ptr() as *const sys::sm_DLManagedTensorVersioned)).version };
            (v.major, v.minor)
        })
    }

    /// The flags of a versioned tensor (`SM_DLPACK_FLAG_BITMASK_*`); 0 for a
    /// legacy one.
    pub fn flags(&self) -> u64 {
        if self.versioned {
            // SAFETY: a versioned managed tensor.
            unsafe { (*(self.ptr.as_ptr() as *const sys::sm_DLManagedTensorVersioned)).flags }
        } else {
            0
        }
    }

    /// Is this a versioned tensor flagged IS_COPIED (an export that is a
    /// copy)? Always false for a legacy one, which cannot say.
    pub fn is_copied(&self) -> bool {
        self.flags() & sys::SM_DLPACK_FLAG_BITMASK_IS_COPIED != 0
    }

    /// The shape.
    pub fn shape(&self) -> &[i64] {
        let t = self.dl_tensor();
        if t.ndim <= 0 || t.shape.is_null() {
            return &[];
        }
        // SAFETY: DLPack: shape holds ndim values, alive as long as the
        // managed tensor.
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }

    /// The strides in elements; `None` means row-major (DLPack's NULL).
    pub fn strides(&self) -> Option<&[i64]> {
        let t = self.dl_tensor();
        if t.strides.is_null() {
            return None;
        }
        if t.ndim <= 0 {
            return Some(&[]);
        }
        // SAFETY: as shape.
        Some(unsafe { std::slice::from_raw_parts(t.strides, t.ndim as usize) })
    }
}

impl Drop for DlpackTensor {
    fn drop(&mut self) {
        // SAFETY: we own the managed tensor; its deleter runs once here.
        unsafe {
            if self.versioned {
                let m = self.ptr.as_ptr() as *mut sys::sm_DLManagedTensorVersioned;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            } else {
                let m = self.ptr.as_ptr() as *mut sys::sm_DLManagedTensor;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            }
        }
    }
}

impl fmt::Debug for DlpackTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.dl_tensor();
        f.debug_struct("DlpackTensor")
            .field("versioned", &self.versioned)
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("dtype", &t.dtype)
            .field("device", &t.device)
            .field("flags", &self.flags())
            .finish()
    }
}

/// Whether a DLPack export may copy: the Python array API's `copy` argument
/// of `__dlpack__` (`None`, `True`, `False`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DlpackCopy {
    /// Zero copy unless the export needs one (another device, or
    /// [`normalize`](DlpackExport::normalize) of a negative stride).
    #[default]
    IfNeeded,
    /// Always a fresh row-major copy (`SM_DLPACK_COPY`).
    Always,
    /// Never a copy (`SM_DLPACK_NO_COPY`): an export that would need one
    /// fails with [`Status::Unsupported`].
    Never,
}

/// How [`Tensor::to_dlpack_with`] exports: `sm_to_dlpack_ex`'s flags and
/// device. Start from [`DlpackExport::new`] and change fields with struct
/// update syntax:
///
/// ```
/// use stridemem::{Device, DlpackCopy, DlpackExport, Tensor};
///
/// let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let how = DlpackExport { copy: DlpackCopy::Always, ..DlpackExport::new(true) };
/// let (capsule, copied) = t.to_dlpack_with(how).unwrap();
/// assert!(copied && capsule.is_copied());
/// assert_ne!(capsule.dl_tensor().data, t.data_ptr().unwrap());
///
/// // No copy allowed, and none needed: the tensor's own memory.
/// let how = DlpackExport { copy: DlpackCopy::Never, device: Some(Device::Cpu), ..DlpackExport::new(true) };
/// let (capsule, copied) = t.to_dlpack_with(how).unwrap();
/// assert!(!copied && !capsule.is_copied());
/// assert_eq!(capsule.dl_tensor().data, t.data_ptr().unwrap());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DlpackExport {
    /// A `DLManagedTensorVersioned` (DLPack 1.x: it carries the READ_ONLY
    /// and IS_COPIED flags) rather than a legacy `DLManagedTensor`
    /// (`SM_DLPACK_VERSIONED`).
    pub versioned: bool,
    /// For consumers that cannot take negative strides: a tensor with one is
    /// exported as a dense copy; others stay zero-copy (`SM_DLPACK_NORMALIZE`).
    pub normalize: bool,
    /// May, must or must not the export copy.
    pub copy: DlpackCopy,
    /// The device the consumer wants; `None` is the tensor's own. Another
    /// device makes the export a copy there.
    pub device: Option<Device>,
}

impl DlpackExport {
    /// Zero copy unless needed, no normalization, on the tensor's device;
    /// versioned or legacy.
    pub const fn new(versioned: bool) -> DlpackExport {
        DlpackExport { versioned, normalize: false, copy: DlpackCopy::IfNeeded, device: None }
    }

    /// The `SM_DLPACK_*` flags these options pass to `sm_to_dlpack_ex`.
    pub fn flags(&self) -> u32 {
        let mut flags = 0;
        if self.versioned {
            flags |= sys::SM_DLPACK_VERSIONED;
        }
        if self.normalize {
            flags |= sys::SM_DLPACK_NORMALIZE;
        }
        flags
            | match self.copy {
                DlpackCopy::IfNeeded => 0,
                DlpackCopy::Always => sys::SM_DLPACK_COPY,
                DlpackCopy::Never => sys::SM_DLPACK_NO_COPY,
            }
    }
}

/// The managed tensor a successful export call wrote.
fn exported(out: *mut c_void, versioned: bool, function: &str) -> Result<DlpackTensor> {
    // SAFETY: written by a successful export: a managed tensor we own.
    unsafe { DlpackTensor::from_raw(out, versioned) }
        .ok_or_else(|| Error::new(Status::Internal, format!("{function} returned NULL")))
}

impl Tensor {
    /// Zero-copy DLPack export (`sm_to_dlpack`): a versioned (1.x) or
    /// legacy managed tensor that keeps the storage alive until it is
    /// dropped or its consumer calls the deleter. Negative strides go out
    /// as they are: PyTorch aborts the process on them; for a consumer that
    /// cannot take them use [`to_dlpack_normalized`](Tensor::to_dlpack_normalized).
    pub fn to_dlpack(&self, versioned: bool) -> Result<DlpackTensor> {
        let mut out: *mut c_void = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_to_dlpack(self.as_raw(), versioned as c_int, &mut out) })?;
        exported(out, versioned, "sm_to_dlpack")
    }

    /// DLPack export as `how` says (`sm_to_dlpack_ex`, the whole protocol
    /// of the array API's `__dlpack__`): copy or not, normalize negative
    /// strides, the consumer's device. Returns the managed tensor and
    /// whether it is a copy (a versioned copy is also flagged IS_COPIED).
    ///
    /// Errors: [`Status::Unsupported`] when [`DlpackCopy::Never`] meets an
    /// export that needs a copy, or for a tensor carved from a stack of
    /// views unless [`DlpackCopy::Always`]; [`Status::Device`] for a device
    /// the library cannot use.
    pub fn to_dlpack_with(&self, how: DlpackExport) -> Result<(DlpackTensor, bool)> {
        let device = how.device.map(Device::to_raw);
        let device_ptr = device.as_ref().map_or(ptr::null(), |d| d as *const sys::sm_device);
        let mut out: *mut c_void = ptr::null_mut();
        let mut copied: c_int = 0;
        // SAFETY: device_ptr is NULL or points at `device`, alive for the
        // call; valid out-pointers.
        check(unsafe { sys::sm_to_dlpack_ex(self.as_raw(), how.flags(), device_ptr, &mut out, &mut copied) })?;
        Ok((exported(out, how.versioned, "sm_to_dlpack_ex")?, copied != 0))
    }

    /// DLPack export for consumers that cannot take negative strides: a
    /// tensor with a negative stride is exported as a dense copy (a
    /// versioned export is flagged `IS_COPIED`), others stay zero-copy. The
    /// flag says whether a copy was made. Short for
    /// [`to_dlpack_with`](Tensor::to_dlpack_with) with
    /// [`normalize`](DlpackExport::normalize).
    pub fn to_dlpack_normalized(&self, versioned: bool) -> Result<(DlpackTensor, bool)> {
        self.to_dlpack_with(DlpackExport { normalize: true, ..DlpackExport::new(versioned) })
    }

    /// Zero-copy DLPack import (`sm_from_dlpack`): the producer's deleter
    /// runs exactly once, when the last view dies. On failure the managed
    /// tensor is dropped (its deleter runs now).
    pub fn from_dlpack(managed: DlpackTensor) -> Result<Tensor> {
        crate::ensure_compatible()?;
        let mut out: sys::sm_tensor = ptr::null_mut();
        // SAFETY: a managed tensor we own, of the recorded kind.
        let status = unsafe { sys::sm_from_dlpack(managed.as_ptr(), managed.versioned as c_int, &mut out) };
        check(status)?; // on failure `managed` is still ours and drops here
        let _ = managed.into_raw(); // the library owns it now
        // SAFETY: a handle we own.
        unsafe { Tensor::from_raw(out) }
    }
}
