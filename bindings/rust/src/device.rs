//! [`Device`], streams, and the device-wide calls.

use std::ffi::c_void;
use std::fmt;

use crate::error::{Error, Result, Status, check};
use crate::sys;

/// Where a storage lives (`sm_device`; the type codes are DLPack's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// Host memory.
    Cpu,
    /// A CUDA GPU, by ordinal.
    Cuda(i32),
    /// Pinned host memory, reachable from the GPU.
    CudaHost,
}

impl Device {
    /// The C struct.
    pub fn to_raw(self) -> sys::sm_device {
        match self {
            Device::Cpu => sys::sm_device { type_: sys::SM_DEVICE_CPU, index: 0 },
            Device::Cuda(index) => sys::sm_device { type_: sys::SM_DEVICE_CUDA, index },
            Device::CudaHost => sys::sm_device { type_: sys::SM_DEVICE_CUDA_HOST, index: 0 },
        }
    }

    /// The device for a C struct; `None` for a type code these bindings do
    /// not know.
    pub fn from_raw(raw: sys::sm_device) -> Option<Device> {
        match raw.type_ {
            sys::SM_DEVICE_CPU => Some(Device::Cpu),
            sys::SM_DEVICE_CUDA => Some(Device::Cuda(raw.index)),
            sys::SM_DEVICE_CUDA_HOST => Some(Device::CudaHost),
            _ => None,
        }
    }

    pub(crate) fn try_from_raw(raw: sys::sm_device) -> Result<Device> {
        Device::from_raw(raw).ok_or_else(|| {
            Error::new(
                Status::Device,
                format!(
                    "the library returned device type {} (index {}), which these bindings do not know",
                    raw.type_, raw.index
                ),
            )
        })
    }

    /// Waits for all work queued on the device (`sm_synchronize`; returns at
    /// once for the CPU).
    pub fn synchronize(self) -> Result<()> {
        // SAFETY: plain value arguments.
        check(unsafe { sys::sm_synchronize(self.to_raw()) })
    }

    /// Sets the calling thread's current CUDA stream for this device
    /// (`sm_set_stream`; NULL is the default stream).
    ///
    /// # Safety
    /// `stream` must be NULL or a valid `cudaStream_t` of this device that
    /// outlives its use as the current stream.
    pub unsafe fn set_stream(self, stream: *mut c_void) -> Result<()> {
        // SAFETY: the caller vouches for the stream.
        check(unsafe { sys::sm_set_stream(self.to_raw(), stream) })
    }

    /// The calling thread's current CUDA stream for this device
    /// (`sm_get_stream`; NULL is the default stream).
    pub fn stream(self) -> Result<*mut c_void> {
        let mut out = std::ptr::null_mut();
        // SAFETY: out is a valid out-pointer.
        check(unsafe { sys::sm_get_stream(self.to_raw(), &mut out) })?;
        Ok(out)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
            Device::CudaHost => f.write_str("cuda_host"),
        }
    }
}

/// Number of usable CUDA devices (`sm_cuda_device_count`): 0 when the
/// library was built without CUDA or no GPU is usable.
///
/// ```
/// let n = stridemem::cuda_device_count().unwrap();
/// assert!(n >= 0);
/// ```
pub fn cuda_device_count() -> Result<i32> {
    let mut n = 0;
    // SAFETY: n is a valid out-pointer.
    check(unsafe { sys::sm_cuda_device_count(&mut n) })?;
    Ok(n)
}

/// Sets the number of CPU worker threads for large copies
/// (`sm_set_num_threads`; 0 = one per core).
pub fn set_num_threads(n: i32) -> Result<()> {
    // SAFETY: plain value argument.
    check(unsafe { sys::sm_set_num_threads(n) })
}

/// The number of CPU worker threads for large copies (`sm_get_num_threads`).
pub fn num_threads() -> Result<i32> {
    let mut n = 0;
    // SAFETY: n is a valid out-pointer.
    check(unsafe { sys::sm_get_num_threads(&mut n) })?;
    Ok(n)
}
