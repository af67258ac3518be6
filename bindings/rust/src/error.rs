//! [`Error`] and [`Status`]: a failed call's status code and the library's
//! message.

use std::ffi::CStr;
use std::fmt;

use crate::sys;

/// A `std::result::Result` whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The status code of a failed call (`sm_status`, minus `SM_OK`).
///
/// The codes are frozen integers; a later library may add codes, which arrive
/// here as [`Status::Unknown`] (hence `#[non_exhaustive]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// `SM_ERR_INVALID_ARGUMENT`: NULL pointer, bad enum, bad count.
    InvalidArgument,
    /// `SM_ERR_INVALID_HANDLE`: released, forged or stale handle (for
    /// example a tensor whose stack region was popped).
    InvalidHandle,
    /// `SM_ERR_OUT_OF_MEMORY`: an allocation (or a stack push) could not be
    /// satisfied.
    OutOfMemory,
    /// `SM_ERR_SHAPE`: shapes or strides are incompatible.
    Shape,
    /// `SM_ERR_OUT_OF_BOUNDS`: index or dim out of range, or a view escapes
    /// its storage.
    OutOfBounds,
    /// `SM_ERR_DTYPE`: dtype not allowed or not castable.
    Dtype,
    /// `SM_ERR_DEVICE`: no such device, or no usable one.
    Device,
    /// `SM_ERR_OVERLAP`: written elements overlap.
    Overlap,
    /// `SM_ERR_OVERFLOW`: int64 overflow in sizes, strides or bytes.
    Overflow,
    /// `SM_ERR_UNSUPPORTED`: a valid request this build cannot do.
    Unsupported,
    /// `SM_ERR_CUDA`: the CUDA runtime reported an error.
    Cuda,
    /// `SM_ERR_INTERNAL`: a bug in stridemem.
    Internal,
    /// `SM_ERR_READ_ONLY`: a write to a read-only (imported) tensor.
    ReadOnly,
    /// A code this version of the bindings does not know.
    Unknown(i32),
}

impl Status {
    /// The status for a non-zero C code.
    pub fn from_code(code: i32) -> Status {
        match code {
            sys::SM_ERR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::SM_ERR_INVALID_HANDLE => Status::InvalidHandle,
            sys::SM_ERR_OUT_OF_MEMORY => Status::OutOfMemory,
            sys::SM_ERR_SHAPE => Status::Shape,
            sys::SM_ERR_OUT_OF_BOUNDS => Status::OutOfBounds,
            sys::SM_ERR_DTYPE => Status::Dtype,
            sys::SM_ERR_DEVICE => Status::Device,
            sys::SM_ERR_OVERLAP => Status::Overlap,
            sys::SM_ERR_OVERFLOW => Status::Overflow,
            sys::SM_ERR_UNSUPPORTED => Status::Unsupported,
            sys::SM_ERR_CUDA => Status::Cuda,
            sys::SM_ERR_INTERNAL => Status::Internal,
            sys::SM_ERR_READ_ONLY => Status::ReadOnly,
            other => Status::Unknown(other),
        }
    }

    /// The C code (`SM_ERR_*`).
    pub fn code(self) -> i32 {
        match self {
            Status::InvalidArgument => sys::SM_ERR_INVALID_ARGUMENT,
            Status::InvalidHandle => sys::SM_ERR_INVALID_HANDLE,
            Status::OutOfMemory => sys::SM_ERR_OUT_OF_MEMORY,
            Status::Shape => sys::SM_ERR_SHAPE,
            Status::OutOfBounds => sys::SM_ERR_OUT_OF_BOUNDS,
            Status::Dtype => sys::SM_ERR_DTYPE,
            Status::Device => sys::SM_ERR_DEVICE,
            Status::Overlap => sys::SM_ERR_OVERLAP,
            Status::Overflow => sys::SM_ERR_OVERFLOW,
            Status::Unsupported => sys::SM_ERR_UNSUPPORTED,
            Status::Cuda => sys::SM_ERR_CUDA,
            Status::Internal => sys::SM_ERR_INTERNAL,
            Status::ReadOnly => sys::SM_ERR_READ_ONLY,
            Status::Unknown(code) => code,
        }
    }

    /// The library's static description of the code (`sm_status_string`).
    pub fn description(self) -> &'static str {
        // SAFETY: sm_status_string accepts any code and returns a static,
        // NUL-terminated string that is never NULL (checked anyway).
        unsafe { static_str(sys::sm_status_string(self.code())) }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// A failed call: its [`Status`] and the library's message (`sm_last_error`,
/// read on the failing thread right after the failure), or a message from
/// these bindings when they refused a call before reaching the library.
///
/// ```
/// use stridemem::{DType, Device, Status, Tensor};
///
/// let t = Tensor::zeros(&[2, 3], DType::F32, Device::Cpu).unwrap();
/// let err = t.view(&[4, 2]).unwrap_err();
/// assert_eq!(err.status(), Status::Shape);
/// assert!(!err.message().is_empty());
/// println!("{err}"); // the status description, then the message
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// The error for a failed C call with non-zero `code`: reads the calling
    /// thread's `sm_last_error()`.
    #[cold]
    #[inline(never)]
    pub(crate) fn from_code(code: i32) -> Error {
        // SAFETY: sm_last_error returns a thread-local NUL-terminated string
        // valid until the next failing call on this thread; it is copied at
        // once.
        let message = unsafe { borrowed_string(sys::sm_last_error()) };
        Error {
            status: Status::from_code(code),
            message,
        }
    }

    /// An error raised by the bindings themselves (the library was not
    /// called).
    #[cold]
    #[inline(never)]
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The status code.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The status as the C integer (`SM_ERR_*`).
    pub fn code(&self) -> i32 {
        self.status.code()
    }

    /// The detailed message: which call, which argument, the offending values.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.status.description())
        } else {
            write!(f, "{}: {}", self.status.description(), self.message)
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("status", &self.status)
            .field("code", &self.status.code())
            .field("message", &self.message)
            .finish()
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `SM_OK`, else the library's error.
#[inline]
pub(crate) fn check(code: sys::sm_status) -> Result<()> {
    if code == sys::SM_OK {
        Ok(())
    } else {
        Err(Error::from_code(code))
    }
}

/// A copy of a C string ("" for NULL, lossy for invalid UTF-8).
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string valid for the call.
pub(crate) unsafe fn borrowed_string(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the caller guarantees a valid NUL-terminated string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// A static C string from the library as `&'static str`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that lives as long as
/// the library stays loaded (which is the whole process: it is linked, not
/// dlopened).
pub(crate) unsafe fn static_str(p: *const std::ffi::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: see the function's contract.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("(invalid UTF-8)")
}
