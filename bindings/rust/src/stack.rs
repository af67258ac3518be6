//! [`Stack`]: tensors carved out of one preallocated buffer, freed LIFO.

use std::fmt;
use std::ptr::{self, NonNull};

use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result, Status, check};
use crate::shape::IntoShape;
use crate::sys;
use crate::tensor::{Storage, Tensor};

/// A position in a [`Stack`] to return to with [`Stack::pop_to`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mark(pub i64);

/// A "stack of views": one storage of fixed capacity, from which
/// [`push`](Stack::push) hands out row-major tensors in O(1) (each aligned
/// to [`Stack::ALIGNMENT`] bytes) and [`pop_to`](Stack::pop_to) frees them
/// LIFO in O(1). No allocation happens after [`Stack::new`].
///
/// A tensor still alive after its region was popped becomes invalid: every
/// call on it (and on its views) but release fails with
/// [`Status::InvalidHandle`], never silent corruption. Dropping the stack
/// while tensors are still pushed is fine: they pin the buffer until they
/// are dropped.
///
/// ```
/// use stridemem::{DType, Device, Stack, Status};
///
/// let stack = Stack::new(Device::Cpu, 1 << 16).unwrap();
/// let mark = stack.mark().unwrap();
/// let mut a = stack.push(&[16, 16], DType::F32).unwrap();
/// a.fill(1.0).unwrap();
/// assert_eq!(stack.used().unwrap().0, 1024);
/// stack.pop_to(mark).unwrap();
/// assert_eq!(stack.used().unwrap().0, 0);
/// // `a` lived in the popped region: it is now refused, not corrupted.
/// assert_eq!(a.to_vec::<f32>().unwrap_err().status(), Status::InvalidHandle);
///
/// // Past capacity: OutOfMemory, and nothing changes.
/// assert_eq!(stack.push(&[1 << 20], DType::F32).unwrap_err().status(), Status::OutOfMemory);
/// ```
pub struct Stack {
    raw: NonNull<sys::sm_stack_>,
}

// SAFETY: every stack call is thread-safe in the library; popping only
// invalidates handles (detected), never frees memory a live handle uses.
unsafe impl Send for Stack {}
// SAFETY: as above.
unsafe impl Sync for Stack {}

impl Stack {
    /// Every pushed tensor starts at a multiple of this many bytes
    /// (`SM_STACK_ALIGNMENT`).
    pub const ALIGNMENT: i64 = sys::SM_STACK_ALIGNMENT;

    /// One storage of `capacity_bytes` on `device` (`sm_stack_create`).
    pub fn new(device: Device, capacity_bytes: i64) -> Result<Stack> {
        crate::ensure_compatible()?;
        let mut out: sys::sm_stack = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_stack_create(device.to_raw(), capacity_bytes, &mut out) })?;
        NonNull::new(out)
            .map(|raw| Stack { raw })
            .ok_or_else(|| Error::new(Status::Internal, "sm_stack_create returned NULL"))
    }

    /// A CPU stack whose buffer is shared memory (`sm_stack_create_shared`):
    /// another process imports [`storage`](Stack::storage)'s export (or any
    /// pushed tensor's [`Tensor::export_shared`], which exports the whole
    /// buffer) and rebuilds the pushed tensors from their offsets with
    /// [`Tensor::from_storage`], so workers fill regions this process pushed.
    /// Marks and pops stay per process: a region popped here and pushed again
    /// is reused under the other process's views, so order that yourself.
    ///
    /// ```
    /// use stridemem::{DType, Stack, Storage, Tensor};
    ///
    /// let stack = Stack::new_shared(1 << 16)?;
    /// let batch = stack.push(&[4, 8], DType::F32)?;
    /// let (desc, fd) = stack.storage()?.export()?;
    /// // ... another process imports desc + fd and fills the batch in place:
    /// let there = Storage::import(&desc, fd.as_ref().map(std::os::fd::AsFd::as_fd))?;
    /// let mut view = Tensor::from_storage(&there, batch.shape(), batch.strides(),
    ///                                     batch.storage_offset(), DType::F32)?;
    /// view.fill(1.5)?;
    /// assert_eq!(batch.to_vec::<f32>()?, vec![1.5; 32]);
    /// # Ok::<(), stridemem::Error>(())
    /// ```
    pub fn new_shared(capacity_bytes: i64) -> Result<Stack> {
        crate::ensure_compatible()?;
        let mut out: sys::sm_stack = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_stack_create_shared(capacity_bytes, &mut out) })?;
        NonNull::new(out)
            .map(|raw| Stack { raw })
            .ok_or_else(|| Error::new(Status::Internal, "sm_stack_create_shared returned NULL"))
    }

    /// A new owner of the stack's whole buffer (`sm_stack_storage`), to
    /// export or to view with [`Tensor::from_storage`]. Its size is the
    /// stack's capacity; pushed tensors sit at their
    /// [`storage_offset`](Tensor::storage_offset)s in it.
    pub fn storage(&self) -> Result<Storage> {
        let mut out: sys::sm_storage = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_stack_storage(self.as_raw(), &mut out) })?;
        Storage::from_owned(out, "sm_stack_storage")
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::sm_stack {
        self.raw.as_ptr()
    }

    /// A row-major tensor carved from the top of the stack, O(1)
    /// (`sm_stack_push`). Past capacity: [`Status::OutOfMemory`] and nothing
    /// changes. The contents are uninitialized (whatever the region held).
    pub fn push(&self, shape: impl IntoShape, dtype: DType) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        let n = i32::try_from(shape.len())
            .map_err(|_| Error::new(Status::InvalidArgument, "Stack::push: too many dims"))?;
        let shape_ptr = if shape.is_empty() { ptr::null() } else { shape.as_ptr() };
        let mut out: sys::sm_tensor = ptr::null_mut();
        // SAFETY: shape holds n values; valid out-pointer.
        check(unsafe { sys::sm_stack_push(self.as_raw(), shape_ptr, n, dtype.code(), &mut out) })?;
        // SAFETY: on success the handle is ours.
        unsafe { Tensor::from_raw(out) }
    }

    /// The current top, to return to later (`sm_stack_mark`).
    pub fn mark(&self) -> Result<Mark> {
        let mut m = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_stack_mark(self.as_raw(), &mut m) })?;
        Ok(Mark(m))
    }

    /// Frees every push made after `mark`, O(1) (`sm_stack_pop_to`).
    /// Tensors still alive in the popped region become invalid.
    pub fn pop_to(&self, mark: Mark) -> Result<()> {
        // SAFETY: value arguments.
        check(unsafe { sys::sm_stack_pop_to(self.as_raw(), mark.0) })
    }

    /// `(used_bytes, capacity_bytes)` (`sm_stack_used`).
    pub fn used(&self) -> Result<(i64, i64)> {
        let (mut used, mut cap) = (0, 0);
        // SAFETY: valid out-pointers.
        check(unsafe { sys::sm_stack_used(self.as_raw(), &mut used, &mut cap) })?;
        Ok((used, cap))
    }

    /// Runs `f` and then pops everything it pushed, whatever it returned
    /// (also when it panics): a scope of temporaries.
    ///
    /// ```
    /// use stridemem::{DType, Device, Stack};
    /// let stack = Stack::new(Device::Cpu, 4096).unwrap();
    /// let sum = stack
    ///     .scope(|s| {
    ///         let mut t = s.push(&[4], DType::F64)?;
    ///         t.fill(2.5)?;
    ///         Ok::<f64, stridemem::Error>(t.to_vec::<f64>()?.iter().sum())
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(sum, 10.0);
    /// assert_eq!(stack.used().unwrap().0, 0);
    /// ```
    pub fn scope<R>(&self, f: impl FnOnce(&Stack) -> R) -> Result<R> {
        struct PopOnUnwind<'a>(&'a Stack, Mark);
        impl Drop for PopOnUnwind<'_> {
            fn drop(&mut self) {
                let _ = self.0.pop_to(self.1);
            }
        }
        let mark = self.mark()?;
        let guard = PopOnUnwind(self, mark);
        let r = f(self);
        std::mem::forget(guard);
        self.pop_to(mark)?;
        Ok(r)
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: we own the handle; pushed tensors keep the buffer alive.
        unsafe { sys::sm_stack_release(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Stack");
        if let Ok((used, cap)) = self.used() {
            d.field("used", &used).field("capacity", &cap);
        }
        d.finish()
    }
}
