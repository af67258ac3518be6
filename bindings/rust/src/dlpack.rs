//! DLPack interop: [`DlpackTensor`], an owned `DLManagedTensor` or
//! `DLManagedTensorVersioned`, and the zero-copy conversions with
//! [`Tensor`].

use std::ffi::{c_int, c_void};
use std::fmt;
use std::ptr::{self, NonNull};

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

impl Tensor {
    /// Zero-copy DLPack export (`sm_to_dlpack`): a versioned (1.x) or
    /// legacy managed tensor that keeps the storage alive until it is
    /// dropped or its consumer calls the deleter.
    pub fn to_dlpack(&self, versioned: bool) -> Result<DlpackTensor> {
        let mut out: *mut c_void = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_to_dlpack(self.as_raw(), versioned as c_int, &mut out) })?;
        // SAFETY: on success, a managed tensor we own.
        unsafe { DlpackTensor::from_raw(out, versioned) }
            .ok_or_else(|| Error::new(Status::Internal, "sm_to_dlpack returned NULL"))
    }

    /// DLPack export for consumers that cannot take negative strides
    /// (`sm_to_dlpack_ex` with `SM_DLPACK_NORMALIZE`): a tensor with a
    /// negative stride is exported as a dense copy (a versioned export is
    /// flagged `IS_COPIED`), others stay zero-copy. The flag says whether a
    /// copy was made.
    pub fn to_dlpack_normalized(&self, versioned: bool) -> Result<(DlpackTensor, bool)> {
        let mut out: *mut c_void = ptr::null_mut();
        let mut copied: c_int = 0;
        let mut flags = sys::SM_DLPACK_NORMALIZE;
        if versioned {
            flags |= sys::SM_DLPACK_VERSIONED;
        }
        // SAFETY: valid out-pointers.
        check(unsafe { sys::sm_to_dlpack_ex(self.as_raw(), flags, ptr::null(), &mut out, &mut copied) })?;
        // SAFETY: on success, a managed tensor we own.
        let m = unsafe { DlpackTensor::from_raw(out, versioned) }
            .ok_or_else(|| Error::new(Status::Internal, "sm_to_dlpack_ex returned NULL"))?;
        Ok((m, copied != 0))
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
