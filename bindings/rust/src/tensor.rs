//! [`Tensor`]: an owned handle to one strided view of a storage, and
//! [`Storage`]: an owned handle to the storage itself.

use std::ffi::{c_int, c_void};
use std::fmt;
use std::mem::ManuallyDrop;
use std::ptr::{self, NonNull};

use crate::device::Device;
use crate::dtype::{DType, Element, MemoryFormat};
use crate::error::{Error, Result, Status, check};
use crate::shape::IntoShape;
use crate::sys;

/// The most dimensions a tensor can have (`SM_MAX_DIMS`).
pub const MAX_DIMS: usize = sys::SM_MAX_DIMS;

/// An in-place operation (`sm_op`) for [`Tensor::apply_scalar`] and
/// [`Tensor::apply_tensor`]; the named methods ([`Tensor::fill`],
/// [`Tensor::add`], ...) cover the same ground.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `t = a` | `t = other`.
    Fill,
    /// `t = 0`.
    Zero,
    /// `t = t + a` | `t = t + alpha * other`.
    Add,
    /// `t = t - a` | `t = t - alpha * other`.
    Sub,
    /// `t = t * a` | `t = t * other`.
    Mul,
    /// `t = t / a` | `t = t / other` (floating dtypes only).
    Div,
    /// `t = min(max(t, a), b)`, scalar only; a NaN bound is no bound.
    Clamp,
    /// `t = max(t, 0)`.
    Relu,
    /// `t = -t`.
    Neg,
    /// `t = |t|`.
    Abs,
    /// `t = sqrt(t)` (floating only).
    Sqrt,
    /// `t = exp(t)` (floating only).
    Exp,
    /// `t = -1, 0 or +1` as `t < 0`, `== 0`, `> 0`; NaN stays NaN, `-0.0`
    /// becomes `+0.0`; not for complex dtypes.
    Sign,
}

impl Op {
    /// The C code (`SM_OP_*`).
    pub fn code(self) -> sys::sm_op {
        match self {
            Op::Fill => sys::SM_OP_FILL,
            Op::Zero => sys::SM_OP_ZERO,
            Op::Add => sys::SM_OP_ADD,
            Op::Sub => sys::SM_OP_SUB,
            Op::Mul => sys::SM_OP_MUL,
            Op::Div => sys::SM_OP_DIV,
            Op::Clamp => sys::SM_OP_CLAMP,
            Op::Relu => sys::SM_OP_RELU,
            Op::Neg => sys::SM_OP_NEG,
            Op::Abs => sys::SM_OP_ABS,
            Op::Sqrt => sys::SM_OP_SQRT,
            Op::Exp => sys::SM_OP_EXP,
            Op::Sign => sys::SM_OP_SIGN,
        }
    }
}

/// One strided view of a storage: shape, strides, storage offset, dtype and
/// device over a refcounted block of bytes, as a PyTorch tensor.
///
/// * Views ([`view`](Tensor::view), [`narrow`](Tensor::narrow),
///   [`select`](Tensor::select), [`unfold`](Tensor::unfold), ...) cost
///   metadata only: the result shares the storage and keeps it alive.
/// * Only the calls documented as copies allocate tensor data.
/// * `Drop` releases the handle, `Clone` adds an owner of the *same* handle
///   (no data is copied; use [`clone_data`](Tensor::clone_data) for a copy).
/// * Shape, strides, offset, dtype and device never change for a handle, so
///   they are read once and returned without a library call.
/// * `Send + Sync`: every library call is thread-safe. Several views of one
///   storage may be written from several threads; writing the *same
///   elements* concurrently is a data race, exactly as with raw memory.
///
/// In-place methods take `&mut self`, but because views share storage, the
/// write is seen through every other view of the same storage, including
/// clones of this handle.
///
/// ```
/// use stridemem::Tensor;
///
/// let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
/// assert_eq!(t.shape(), &[2, 3]);
/// assert_eq!(t.strides(), &[3, 1]);
///
/// // A view: column 1, shares t's storage.
/// let mut col = t.select(1, 1).unwrap();
/// assert_eq!(col.to_vec::<f32>().unwrap(), vec![2.0, 5.0]);
///
/// // Writing through the view is visible through t.
/// col.mul_scalar(10.0).unwrap();
/// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 20.0, 3.0, 4.0, 50.0, 6.0]);
/// ```
pub struct Tensor {
    raw: NonNull<sys::sm_tensor_>,
    meta: Meta,
}

#[derive(Clone, Copy)]
struct Meta {
    ndim: u8,
    dtype: DType,
    device: Device,
    offset: i64,
    shape: [i64; MAX_DIMS],
    strides: [i64; MAX_DIMS],
}

// SAFETY: the library's handles are thread-safe (every call is, refcounts are
// atomic) and the cached metadata is immutable.
unsafe impl Send for Tensor {}
// SAFETY: as above; &Tensor only reads cached metadata or calls thread-safe
// library functions.
unsafe impl Sync for Tensor {}

/// Converts a slice length to the C `int32_t` count.
pub(crate) fn count(len: usize, what: &str) -> Result<i32> {
    i32::try_from(len).map_err(|_| Error::new(Status::InvalidArgument, format!("{what}: {len} entries is too many")))
}

/// `shape.iter().product()` for a host buffer: every dim non-negative, no
/// overflow.
fn host_numel(shape: &[i64], call: &str) -> Result<usize> {
    let mut n: usize = 1;
    for &d in shape {
        let d = usize::try_from(d)
            .map_err(|_| Error::new(Status::Shape, format!("{call}: negative size {d} in shape {shape:?}")))?;
        n = n
            .checked_mul(d)
            .ok_or_else(|| Error::new(Status::Overflow, format!("{call}: shape {shape:?} overflows")))?;
    }
    Ok(n)
}

/// Runs a C call that writes one tensor handle and wraps it.
pub(crate) fn make(call: impl FnOnce(*mut sys::sm_tensor) -> sys::sm_status) -> Result<Tensor> {
    let mut out: sys::sm_tensor = ptr::null_mut();
    check(call(&mut out))?;
    // SAFETY: on SM_OK the library wrote a handle we now own.
    unsafe { Tensor::from_raw(out) }
}

/// Wraps a vector of raw handles we own; on a failure releases the rest.
fn wrap_all(raws: Vec<sys::sm_tensor>) -> Result<Vec<Tensor>> {
    let mut out = Vec::with_capacity(raws.len());
    let mut iter = raws.into_iter();
    while let Some(raw) = iter.next() {
        // SAFETY: each handle is owned and wrapped (or released) once.
        match unsafe { Tensor::from_raw(raw) } {
            Ok(t) => out.push(t),
            Err(e) => {
                for rest in iter {
                    // SAFETY: owned handles not yet wrapped.
                    unsafe { sys::sm_tensor_release(rest) };
                }
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// The data pointer to pass for an optional slice (NULL when empty).
pub(crate) fn opt_ptr<T>(s: &[T]) -> *const T {
    if s.is_empty() { ptr::null() } else { s.as_ptr() }
}

unsafe extern "C" fn drop_boxed_vec<T>(_data: *mut c_void, ctx: *mut c_void) {
    // SAFETY: ctx is the Box<Vec<T>> leaked by from_vec; the library calls
    // the deleter exactly once.
    drop(unsafe { Box::from_raw(ctx as *mut Vec<T>) });
}

impl Tensor {
    // ------------------------------------------------------------------
    // Raw handles
    // ------------------------------------------------------------------

    /// Takes ownership of a raw handle (one owner's worth of its refcount)
    /// and reads its metadata. On failure the handle is released.
    ///
    /// # Safety
    /// `raw` must be a handle the caller owns (returned by a `sm_*` call or
    /// retained), not used by the caller afterwards.
    pub unsafe fn from_raw(raw: sys::sm_tensor) -> Result<Tensor> {
        let Some(nn) = NonNull::new(raw) else {
            return Err(Error::new(Status::InvalidHandle, "Tensor::from_raw: NULL handle"));
        };
        match Self::read_meta(raw) {
            Ok(meta) => Ok(Tensor { raw: nn, meta }),
            Err(e) => {
                // SAFETY: we own raw and give it up here.
                unsafe { sys::sm_tensor_release(raw) };
                Err(e)
            }
        }
    }

    fn read_meta(raw: sys::sm_tensor) -> Result<Meta> {
        let mut ndim: i32 = 0;
        let mut meta = Meta {
            ndim: 0,
            dtype: DType::F32,
            device: Device::Cpu,
            offset: 0,
            shape: [0; MAX_DIMS],
            strides: [0; MAX_DIMS],
        };
        let mut dtype: sys::sm_dtype = 0;
        let mut device = sys::sm_device::default();
        // SAFETY: valid out-pointers; capacities are the arrays' lengths.
        unsafe {
            check(sys::sm_ndim(raw, &mut ndim))?;
            check(sys::sm_shape(raw, meta.shape.as_mut_ptr(), MAX_DIMS as i32))?;
            check(sys::sm_strides(raw, meta.strides.as_mut_ptr(), MAX_DIMS as i32))?;
            check(sys::sm_storage_offset(raw, &mut meta.offset))?;
            check(sys::sm_dtype_of(raw, &mut dtype))?;
            check(sys::sm_device_of(raw, &mut device))?;
        }
        if !(0..=MAX_DIMS as i32).contains(&ndim) {
            return Err(Error::new(Status::Internal, format!("the library reported ndim {ndim}")));
        }
        meta.ndim = ndim as u8;
        meta.dtype = DType::try_from_code(dtype)?;
        meta.device = Device::try_from_raw(device)?;
        Ok(meta)
    }

    /// The raw handle, still owned by `self` (for passing to C code).
    pub fn as_raw(&self) -> sys::sm_tensor {
        self.raw.as_ptr()
    }

    /// Gives up ownership: the caller must release the handle
    /// (`sm_tensor_release`) or pass it back to [`Tensor::from_raw`].
    pub fn into_raw(self) -> sys::sm_tensor {
        let this = ManuallyDrop::new(self);
        this.raw.as_ptr()
    }

    /// A new owner of the same handle (`sm_tensor_retain`); fails for a
    /// tensor whose stack region was popped. [`Clone`] panics instead.
    pub fn try_clone(&self) -> Result<Tensor> {
        // SAFETY: self.raw is a handle we own.
        check(unsafe { sys::sm_tensor_retain(self.raw.as_ptr()) })?;
        Ok(Tensor { raw: self.raw, meta: self.meta })
    }

    // ------------------------------------------------------------------
    // Creation
    // ------------------------------------------------------------------

    /// An uninitialized row-major tensor (`sm_empty`). An empty `shape` is a
    /// 0-d tensor (one element).
    pub fn empty(shape: impl IntoShape, dtype: DType, device: Device) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        let n = count(shape.len(), "Tensor::empty")?;
        // SAFETY: shape holds n values; out is valid.
        make(|out| unsafe { sys::sm_empty(opt_ptr(shape), n, dtype.code(), device.to_raw(), out) })
    }

    /// An uninitialized tensor with the given strides (negative allowed);
    /// the storage holds exactly the elements the strides reach
    /// (`sm_empty_strided`).
    pub fn empty_strided(shape: impl IntoShape, strides: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        if shape.len() != strides.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("Tensor::empty_strided: shape {shape:?} and strides {strides:?} differ in length"),
            ));
        }
        let n = count(shape.len(), "Tensor::empty_strided")?;
        // SAFETY: shape and strides hold n values each.
        make(|out| unsafe {
            sys::sm_empty_strided(opt_ptr(shape), opt_ptr(strides), n, dtype.code(), device.to_raw(), out)
        })
    }

    /// A row-major tensor of zeros (`sm_zeros`).
    pub fn zeros(shape: impl IntoShape, dtype: DType, device: Device) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        let n = count(shape.len(), "Tensor::zeros")?;
        // SAFETY: shape holds n values.
        make(|out| unsafe { sys::sm_zeros(opt_ptr(shape), n, dtype.code(), device.to_raw(), out) })
    }

    /// A row-major tensor with every element `value` converted to `dtype`
    /// (`sm_full`).
    pub fn full(shape: impl IntoShape, value: f64, dtype: DType, device: Device) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        let n = count(shape.len(), "Tensor::full")?;
        // SAFETY: shape holds n values.
        make(|out| unsafe { sys::sm_full(opt_ptr(shape), n, value, dtype.code(), device.to_raw(), out) })
    }

    /// A 1-D tensor `start, start + step, ...` of `n` elements, computed in
    /// `f64` (`sm_arange`).
    ///
    /// ```
    /// use stridemem::{DType, Device, Tensor};
    /// let t = Tensor::arange(0.0, 2.0, 4, DType::I64, Device::Cpu).unwrap();
    /// assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 2, 4, 6]);
    /// ```
    pub fn arange(start: f64, step: f64, n: i64, dtype: DType, device: Device) -> Result<Tensor> {
        crate::ensure_compatible()?;
        // SAFETY: value arguments; out is valid.
        make(|out| unsafe { sys::sm_arange(start, step, n, dtype.code(), device.to_raw(), out) })
    }

    /// A CPU tensor holding a copy of `data`, read in row-major order
    /// (`sm_from_host`); `data.len()` must equal the shape's element count.
    ///
    /// ```
    /// use stridemem::{DType, Tensor};
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], &[3, 2]).unwrap();
    /// assert_eq!(t.dtype(), DType::I32);
    /// assert_eq!(t.numel(), 6);
    /// assert!(Tensor::from_slice(&[1i32, 2, 3], &[2, 2]).is_err());
    /// ```
    pub fn from_slice<T: Element>(data: &[T], shape: impl IntoShape) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        Tensor::from_slice_on(data, shape, Device::Cpu)
    }

    /// As [`from_slice`](Tensor::from_slice), onto `device`.
    pub fn from_slice_on<T: Element>(data: &[T], shape: impl IntoShape, device: Device) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        let numel = host_numel(shape, "Tensor::from_slice")?;
        if numel != data.len() {
            return Err(Error::new(
                Status::Shape,
                format!(
                    "Tensor::from_slice: shape {shape:?} has {numel} elements but the slice has {}",
                    data.len()
                ),
            ));
        }
        let n = count(shape.len(), "Tensor::from_slice")?;
        // SAFETY: data holds numel elements of T::DTYPE, read as bytes.
        make(|out| unsafe {
            sys::sm_from_host(
                data.as_ptr() as *const c_void,
                opt_ptr(shape),
                n,
                T::DTYPE.code(),
                device.to_raw(),
                out,
            )
        })
    }

    /// A CPU tensor over `data`'s buffer, zero copy (`sm_from_blob`): the
    /// vector is dropped when the last view of it dies. `data.len()` must
    /// equal the shape's element count.
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0]);
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, shape: impl IntoShape) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        let numel = host_numel(shape, "Tensor::from_vec")?;
        if numel != data.len() {
            return Err(Error::new(
                Status::Shape,
                format!(
                    "Tensor::from_vec: shape {shape:?} has {numel} elements but the vector has {}",
                    data.len()
                ),
            ));
        }
        let n = count(shape.len(), "Tensor::from_vec")?;
        let mut boxed = Box::new(data);
        let ptr = boxed.as_mut_ptr() as *mut c_void;
        let ctx = Box::into_raw(boxed) as *mut c_void;
        let mut out: sys::sm_tensor = ptr::null_mut();
        // SAFETY: ptr addresses numel elements that stay valid until the
        // deleter drops the box; the deleter matches T.
        let status = unsafe {
            sys::sm_from_blob(
                ptr,
                opt_ptr(shape),
                ptr::null(),
                n,
                T::DTYPE.code(),
                Device::Cpu.to_raw(),
                Some(drop_boxed_vec::<T>),
                ctx,
                &mut out,
            )
        };
        if status != sys::SM_OK {
            let err = Error::from_code(status);
            // SAFETY: on failure the deleter is not called; the box is ours.
            drop(unsafe { Box::from_raw(ctx as *mut Vec<T>) });
            return Err(err);
        }
        // SAFETY: a handle we own.
        unsafe { Tensor::from_raw(out) }
    }

    /// Wraps memory the caller owns, zero copy (`sm_from_blob`). `strides`
    /// `None` is row-major.
    ///
    /// # Safety
    /// `data` must address every element the shape and strides reach, of
    /// `dtype`, on `device`, and stay valid (and not be accessed in ways
    /// that race with the tensor) until `deleter` is called with `data` and
    /// `ctx` (exactly once, when the last view dies) or, for a `None`
    /// deleter, for as long as any view exists. On failure the deleter is
    /// not called.
    pub unsafe fn from_blob(
        data: *mut c_void,
        shape: impl IntoShape,
        strides: Option<&[i64]>,
        dtype: DType,
        device: Device,
        deleter: sys::sm_deleter,
        ctx: *mut c_void,
    ) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        if let Some(s) = strides {
            if s.len() != shape.len() {
                return Err(Error::new(
                    Status::InvalidArgument,
                    format!("Tensor::from_blob: shape {shape:?} and strides {s:?} differ in length"),
                ));
            }
        }
        let n = count(shape.len(), "Tensor::from_blob")?;
        let strides_ptr = strides.map_or(ptr::null(), |s| s.as_ptr());
        // SAFETY: the caller's contract covers data, deleter and ctx.
        make(|out| unsafe {
            sys::sm_from_blob(data, opt_ptr(shape), strides_ptr, n, dtype.code(), device.to_raw(), deleter, ctx, out)
        })
    }

    /// A tensor over an existing storage, bounds-checked as
    /// [`as_strided`](Tensor::as_strided) (`sm_tensor_from_storage`).
    pub fn from_storage(
        storage: &Storage,
        shape: impl IntoShape,
        strides: &[i64],
        storage_offset: i64,
        dtype: DType,
    ) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        if shape.len() != strides.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("Tensor::from_storage: shape {shape:?} and strides {strides:?} differ in length"),
            ));
        }
        let n = count(shape.len(), "Tensor::from_storage")?;
        // SAFETY: shape and strides hold n values; storage is a live handle.
        make(|out| unsafe {
            sys::sm_tensor_from_storage(
                storage.as_raw(),
                opt_ptr(shape),
                opt_ptr(strides),
                n,
                storage_offset,
                dtype.code(),
                out,
            )
        })
    }

    // ------------------------------------------------------------------
    // Host I/O
    // ------------------------------------------------------------------

    /// The elements in row-major order (`sm_copy_to_host`). `T` must match
    /// the tensor's dtype (else [`Status::Dtype`]); convert first with
    /// [`to_dtype`](Tensor::to_dtype) if needed.
    ///
    /// ```
    /// use stridemem::{Status, Tensor};
    /// let t = Tensor::from_slice(&[1.5f32, 2.5], &[2]).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.5, 2.5]);
    /// assert_eq!(t.to_vec::<f64>().unwrap_err().status(), Status::Dtype);
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.check_element::<T>("to_vec")?;
        let n = self.host_len()?;
        if T::ANY_BIT_PATTERN {
            let mut v: Vec<T> = Vec::with_capacity(n);
            // SAFETY: v has room for n elements = nbytes bytes; every bit
            // pattern is a valid T, and exactly nbytes are written.
            unsafe {
                self.copy_out(v.as_mut_ptr() as *mut c_void, n * T::DTYPE.size())?;
                v.set_len(n);
            }
            Ok(v)
        } else {
            let bytes = self.raw_bytes()?;
            Ok(bytes.chunks_exact(T::DTYPE.size()).map(T::from_raw_bytes).collect())
        }
    }

    /// Copies the elements in row-major order into `dst`, whose length must
    /// equal [`numel`](Tensor::numel) (`sm_copy_to_host`).
    pub fn copy_to_slice<T: Element>(&self, dst: &mut [T]) -> Result<()> {
        self.check_element::<T>("copy_to_slice")?;
        let n = self.host_len()?;
        if dst.len() != n {
            return Err(Error::new(
                Status::Shape,
                format!("Tensor::copy_to_slice: the tensor has {n} elements, the slice {}", dst.len()),
            ));
        }
        if T::ANY_BIT_PATTERN {
            // SAFETY: dst holds n elements; every bit pattern is a valid T.
            unsafe { self.copy_out(dst.as_mut_ptr() as *mut c_void, n * T::DTYPE.size()) }
        } else {
            let bytes = self.raw_bytes()?;
            for (d, b) in dst.iter_mut().zip(bytes.chunks_exact(T::DTYPE.size())) {
                *d = T::from_raw_bytes(b);
            }
            Ok(())
        }
    }

    /// The elements' bytes in row-major order, whatever the dtype.
    pub fn raw_bytes(&self) -> Result<Vec<u8>> {
        let nbytes = self.host_len()? * self.meta.dtype.size();
        let mut v = vec![0u8; nbytes];
        // SAFETY: v holds nbytes bytes.
        unsafe { self.copy_out(v.as_mut_ptr() as *mut c_void, nbytes)? };
        Ok(v)
    }

    /// # Safety
    /// `dst` holds `nbytes` writable bytes.
    unsafe fn copy_out(&self, dst: *mut c_void, nbytes: usize) -> Result<()> {
        // SAFETY: per the contract.
        check(unsafe { sys::sm_copy_to_host(self.as_raw(), dst, nbytes) })
    }

    pub(crate) fn check_element<T: Element>(&self, call: &str) -> Result<()> {
        if T::DTYPE == self.meta.dtype {
            Ok(())
        } else {
            Err(Error::new(
                Status::Dtype,
                format!(
                    "Tensor::{call}: the tensor is {} but the element type is {}",
                    self.meta.dtype,
                    T::DTYPE
                ),
            ))
        }
    }

    fn host_len(&self) -> Result<usize> {
        usize::try_from(self.numel()).map_err(|_| Error::new(Status::Overflow, "tensor too large for this host"))
    }

    // ------------------------------------------------------------------
    // Metadata
    // ------------------------------------------------------------------

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.meta.ndim as usize
    }

    /// Sizes, one per dimension.
    pub fn shape(&self) -> &[i64] {
        &self.meta.shape[..self.ndim()]
    }

    /// Strides in elements (any sign), one per dimension.
    pub fn strides(&self) -> &[i64] {
        &self.meta.strides[..self.ndim()]
    }

    /// Offset of element `[0, ..., 0]` in the storage, in elements.
    pub fn storage_offset(&self) -> i64 {
        self.meta.offset
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.meta.dtype
    }

    /// The device of the storage.
    pub fn device(&self) -> Device {
        self.meta.device
    }

    /// Number of elements (1 for a 0-d tensor).
    pub fn numel(&self) -> i64 {
        self.shape().iter().product()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.numel() == 0
    }

    /// `numel * dtype size`: the bytes this view addresses logically.
    pub fn nbytes(&self) -> i64 {
        self.numel() * self.meta.dtype.size() as i64
    }

    /// Bytes of the whole storage this view keeps alive
    /// (`sm_storage_nbytes`): a small view of a big tensor pins it all.
    pub fn storage_nbytes(&self) -> Result<i64> {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_storage_nbytes(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// Address of element `[0, ..., 0]` (`sm_data_ptr`); a device address
    /// for CUDA tensors.
    pub fn data_ptr(&self) -> Result<*mut c_void> {
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_data_ptr(self.as_raw(), &mut p) })?;
        Ok(p)
    }

    /// Row-major dense? (`sm_is_contiguous` with `SM_CONTIGUOUS`).
    pub fn is_contiguous(&self) -> Result<bool> {
        self.is_contiguous_in(MemoryFormat::Contiguous)
    }

    /// Dense in `format`? (`sm_is_contiguous`).
    pub fn is_contiguous_in(&self, format: MemoryFormat) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_is_contiguous(self.as_raw(), format.code(), &mut v) })?;
        Ok(v != 0)
    }

    /// Do `self` and `other` view the same storage? (`sm_same_storage`).
    pub fn same_storage(&self, other: &Tensor) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: valid out-pointer; both handles live.
        check(unsafe { sys::sm_same_storage(self.as_raw(), other.as_raw(), &mut v) })?;
        Ok(v != 0)
    }

    /// The storage's version counter, bumped by every in-place write through
    /// any view of it (`sm_version_counter`, PyTorch's `_version`).
    pub fn version_counter(&self) -> Result<i64> {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_version_counter(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// Does the tensor refuse writes (an import of read-only memory)?
    /// (`sm_is_read_only`).
    pub fn is_read_only(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_is_read_only(self.as_raw(), &mut v) })?;
        Ok(v != 0)
    }

    /// A new owner of the storage (`sm_tensor_storage`).
    pub fn storage(&self) -> Result<Storage> {
        let mut s: sys::sm_storage = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_tensor_storage(self.as_raw(), &mut s) })?;
        Storage::from_owned(s, "sm_tensor_storage")
    }

    // ------------------------------------------------------------------
    // Views: metadata only, share the storage
    // ------------------------------------------------------------------

    /// PyTorch's `view()`: the same elements with a new shape (one `-1` is
    /// inferred). [`Status::Shape`] when the strides cannot express it; the
    /// message names the dims and suggests reshape (`sm_view`).
    ///
    /// ```
    /// use stridemem::{Status, Tensor};
    /// let t = Tensor::from_slice(&[0u8, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
    /// assert_eq!(t.view(&[3, -1]).unwrap().shape(), &[3, 2]);
    /// let tt = t.transpose(0, 1).unwrap();
    /// assert_eq!(tt.view(&[6]).unwrap_err().status(), Status::Shape);
    /// ```
    pub fn view(&self, shape: impl IntoShape) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        let n = count(shape.len(), "Tensor::view")?;
        // SAFETY: shape holds n values.
        make(|out| unsafe { sys::sm_view(self.as_raw(), opt_ptr(shape), n, out) })
    }

    /// Any shape, strides and absolute storage offset over the same storage;
    /// every reachable element must lie inside it (`sm_as_strided`).
    pub fn as_strided(&self, shape: impl IntoShape, strides: &[i64], storage_offset: i64) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        if shape.len() != strides.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("Tensor::as_strided: shape {shape:?} and strides {strides:?} differ in length"),
            ));
        }
        let n = count(shape.len(), "Tensor::as_strided")?;
        // SAFETY: shape and strides hold n values.
        make(|out| unsafe {
            sys::sm_as_strided(self.as_raw(), opt_ptr(shape), opt_ptr(strides), n, storage_offset, out)
        })
    }

    /// Python's `t[start:stop:step]` along `dim` (`sm_slice`): `None` is
    /// Python's omitted bound, negative indices count from the end,
    /// out-of-range bounds clamp, a negative step gives a negative stride.
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_slice(&[0i64, 1, 2, 3, 4, 5], &[6]).unwrap();
    /// let rev = t.slice(0, None, None, -2).unwrap(); // t[::-2]
    /// assert_eq!(rev.strides(), &[-2]);
    /// assert_eq!(rev.to_vec::<i64>().unwrap(), vec![5, 3, 1]);
    /// ```
    pub fn slice(&self, dim: i32, start: Option<i64>, stop: Option<i64>, step: i64) -> Result<Tensor> {
        let start = start.unwrap_or(sys::SM_SLICE_NONE);
        let stop = stop.unwrap_or(sys::SM_SLICE_NONE);
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_slice(self.as_raw(), dim, start, stop, step, out) })
    }

    /// Elements `[start, start + length)` of `dim`; `start` may be negative;
    /// no clamping (`sm_narrow`).
    pub fn narrow(&self, dim: i32, start: i64, length: i64) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_narrow(self.as_raw(), dim, start, length, out) })
    }

    /// Removes `dim`, keeping `index` (negative counts from the end)
    /// (`sm_select`).
    pub fn select(&self, dim: i32, index: i64) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_select(self.as_raw(), dim, index, out) })
    }

    /// Reorders the dims (`sm_permute`).
    pub fn permute(&self, dims: &[i32]) -> Result<Tensor> {
        let n = count(dims.len(), "Tensor::permute")?;
        // SAFETY: dims holds n values.
        make(|out| unsafe { sys::sm_permute(self.as_raw(), opt_ptr(dims), n, out) })
    }

    /// Swaps two dims (`sm_transpose`).
    pub fn transpose(&self, dim0: i32, dim1: i32) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_transpose(self.as_raw(), dim0, dim1, out) })
    }

    /// Moves dims `source[i]` to positions `destination[i]` (`sm_movedim`).
    pub fn movedim(&self, source: &[i32], destination: &[i32]) -> Result<Tensor> {
        if source.len() != destination.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("Tensor::movedim: source {source:?} and destination {destination:?} differ in length"),
            ));
        }
        let n = count(source.len(), "Tensor::movedim")?;
        // SAFETY: both hold n values.
        make(|out| unsafe { sys::sm_movedim(self.as_raw(), opt_ptr(source), opt_ptr(destination), n, out) })
    }

    /// Broadcasts to `shape` (new leading dims allowed, `-1` keeps a size);
    /// expanded dims get stride 0 (`sm_expand`). Such a view cannot be
    /// written in place ([`Status::Overlap`]).
    pub fn expand(&self, shape: impl IntoShape) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        let n = count(shape.len(), "Tensor::expand")?;
        // SAFETY: shape holds n values.
        make(|out| unsafe { sys::sm_expand(self.as_raw(), opt_ptr(shape), n, out) })
    }

    /// Removes the listed dims that have size 1 (others are left, as
    /// PyTorch); an empty list removes every size-1 dim (`sm_squeeze`).
    pub fn squeeze(&self, dims: &[i32]) -> Result<Tensor> {
        let n = count(dims.len(), "Tensor::squeeze")?;
        // SAFETY: dims holds n values (NULL when n == 0: "every dim").
        make(|out| unsafe { sys::sm_squeeze(self.as_raw(), opt_ptr(dims), n, out) })
    }

    /// Removes every size-1 dim (`sm_squeeze` with no dims).
    pub fn squeeze_all(&self) -> Result<Tensor> {
        self.squeeze(&[])
    }

    /// Inserts a size-1 dim at `dim` (`sm_unsqueeze`).
    pub fn unsqueeze(&self, dim: i32) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_unsqueeze(self.as_raw(), dim, out) })
    }

    /// Merges dims `start_dim..=end_dim`: a view when the strides allow,
    /// else [`Status::Shape`] (use [`reshape`](Tensor::reshape) to copy)
    /// (`sm_flatten`).
    pub fn flatten(&self, start_dim: i32, end_dim: i32) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_flatten(self.as_raw(), start_dim, end_dim, out) })
    }

    /// Splits `dim` into `sizes` (one `-1` inferred); always a view
    /// (`sm_unflatten`).
    pub fn unflatten(&self, dim: i32, sizes: impl IntoShape) -> Result<Tensor> {
        let sizes_dims = sizes.dims()?;
        let sizes: &[i64] = &sizes_dims;
        let n = count(sizes.len(), "Tensor::unflatten")?;
        // SAFETY: sizes holds n values.
        make(|out| unsafe { sys::sm_unflatten(self.as_raw(), dim, opt_ptr(sizes), n, out) })
    }

    /// All windows of `size` elements along `dim`, `step` apart: `dim`
    /// becomes the window count and a new last dim of `size` is added;
    /// windows may overlap (`sm_unfold`).
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_slice(&[0i32, 1, 2, 3, 4], &[5]).unwrap();
    /// let w = t.unfold(0, 3, 1).unwrap(); // 3 overlapping windows of 3
    /// assert_eq!(w.shape(), &[3, 3]);
    /// assert_eq!(w.strides(), &[1, 1]);
    /// assert_eq!(w.to_vec::<i32>().unwrap(), vec![0, 1, 2, 1, 2, 3, 2, 3, 4]);
    /// ```
    pub fn unfold(&self, dim: i32, size: i64, step: i64) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_unfold(self.as_raw(), dim, size, step, out) })
    }

    /// The diagonal of dims `dim1`/`dim2` (`offset > 0` above, `< 0` below),
    /// appended as the last dim (`sm_diagonal`).
    pub fn diagonal(&self, offset: i64, dim1: i32, dim2: i32) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_diagonal(self.as_raw(), offset, dim1, dim2, out) })
    }

    /// Views of `split_size` elements along `dim`, the last possibly smaller
    /// (`sm_split`).
    pub fn split(&self, split_size: i64, dim: i32) -> Result<Vec<Tensor>> {
        // SAFETY: NULL outs asks for the count only; then outs holds
        // capacity slots.
        self.multi(|outs, cap, cnt| unsafe { sys::sm_split(self.as_raw(), split_size, dim, outs, cap, cnt) })
    }

    /// As `torch.chunk`: `ceil(size / chunks)` elements per view, possibly
    /// fewer views (`sm_chunk`).
    pub fn chunk(&self, chunks: i32, dim: i32) -> Result<Vec<Tensor>> {
        // SAFETY: as split.
        self.multi(|outs, cap, cnt| unsafe { sys::sm_chunk(self.as_raw(), chunks, dim, outs, cap, cnt) })
    }

    fn multi(&self, call: impl Fn(*mut sys::sm_tensor, i32, *mut i32) -> sys::sm_status) -> Result<Vec<Tensor>> {
        let mut n: i32 = 0;
        check(call(ptr::null_mut(), 0, &mut n))?;
        let cap = n.max(0);
        let mut raws: Vec<sys::sm_tensor> = vec![ptr::null_mut(); cap as usize];
        let mut written: i32 = 0;
        check(call(raws.as_mut_ptr(), cap, &mut written))?;
        raws.truncate(written.clamp(0, cap) as usize);
        wrap_all(raws)
    }

    /// Reverses the listed dims: a view with negative strides, as NumPy's
    /// flip (`sm_flip`).
    pub fn flip(&self, dims: &[i32]) -> Result<Tensor> {
        let n = count(dims.len(), "Tensor::flip")?;
        // SAFETY: dims holds n values.
        make(|out| unsafe { sys::sm_flip(self.as_raw(), opt_ptr(dims), n, out) })
    }

    // ------------------------------------------------------------------
    // Copies: the only calls that allocate tensor data
    // ------------------------------------------------------------------

    /// Would [`reshape`](Tensor::reshape) to `shape` have to copy?
    /// (`sm_reshape_would_copy`).
    pub fn reshape_would_copy(&self, shape: impl IntoShape) -> Result<bool> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        let n = count(shape.len(), "Tensor::reshape_would_copy")?;
        let mut v: c_int = 0;
        // SAFETY: shape holds n values; valid out-pointer.
        check(unsafe { sys::sm_reshape_would_copy(self.as_raw(), opt_ptr(shape), n, &mut v) })?;
        Ok(v != 0)
    }

    /// A view if the strides allow, else a row-major copy (`sm_reshape`);
    /// [`reshape_copied`](Tensor::reshape_copied) also says which.
    pub fn reshape(&self, shape: impl IntoShape) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        self.reshape_copied(shape).map(|(t, _)| t)
    }

    /// As [`reshape`](Tensor::reshape), and whether it copied.
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_slice(&[0i16, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
    /// let (_, copied) = t.reshape_copied(&[3, 2]).unwrap();
    /// assert!(!copied);
    /// let (r, copied) = t.transpose(0, 1).unwrap().reshape_copied(&[6]).unwrap();
    /// assert!(copied);
    /// assert_eq!(r.to_vec::<i16>().unwrap(), vec![0, 3, 1, 4, 2, 5]);
    /// ```
    pub fn reshape_copied(&self, shape: impl IntoShape) -> Result<(Tensor, bool)> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        let n = count(shape.len(), "Tensor::reshape")?;
        let mut copied: c_int = 0;
        // SAFETY: shape holds n values; valid out-pointers.
        let t = make(|out| unsafe { sys::sm_reshape(self.as_raw(), opt_ptr(shape), n, out, &mut copied) })?;
        Ok((t, copied != 0))
    }

    /// A row-major version: a new handle to the same data when already
    /// row-major, else a copy (`sm_contiguous`).
    pub fn contiguous(&self) -> Result<Tensor> {
        self.contiguous_in(MemoryFormat::Contiguous)
    }

    /// A version dense in `format` (Contiguous, ChannelsLast,
    /// ChannelsLast3d): the same data when already so, else a copy
    /// (`sm_contiguous`).
    pub fn contiguous_in(&self, format: MemoryFormat) -> Result<Tensor> {
        self.contiguous_copied(format).map(|(t, _)| t)
    }

    /// As [`contiguous_in`](Tensor::contiguous_in), and whether it copied
    /// (`false`: the result shares `self`'s data).
    ///
    /// ```
    /// use stridemem::{MemoryFormat, Tensor};
    /// let t = Tensor::from_slice(&[0i16, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
    /// let (_, copied) = t.contiguous_copied(MemoryFormat::Contiguous).unwrap();
    /// assert!(!copied);
    /// let (c, copied) = t.transpose(0, 1).unwrap().contiguous_copied(MemoryFormat::Contiguous).unwrap();
    /// assert!(copied);
    /// assert_eq!(c.to_vec::<i16>().unwrap(), vec![0, 3, 1, 4, 2, 5]);
    /// ```
    pub fn contiguous_copied(&self, format: MemoryFormat) -> Result<(Tensor, bool)> {
        let mut copied: c_int = 0;
        // SAFETY: value arguments; valid out-pointers.
        let t = make(|out| unsafe { sys::sm_contiguous(self.as_raw(), format.code(), out, &mut copied) })?;
        Ok((t, copied != 0))
    }

    /// Always a copy, laid out in `format` (Preserve keeps the dense order)
    /// (`sm_clone`). Named so because [`Clone::clone`] adds an owner of the
    /// same handle.
    pub fn clone_data(&self, format: MemoryFormat) -> Result<Tensor> {
        // SAFETY: value arguments.
        make(|out| unsafe { sys::sm_clone(self.as_raw(), format.code(), out) })
    }

    /// Device and/or dtype change: the same data when neither changes, else
    /// a copy (`sm_to`); [`to_copied`](Tensor::to_copied) also says which.
    pub fn to(&self, device: Device, dtype: DType) -> Result<Tensor> {
        self.to_copied(device, dtype).map(|(t, _)| t)
    }

    /// As [`to`](Tensor::to), and whether it copied (`false`: the result
    /// shares `self`'s data).
    ///
    /// ```
    /// use stridemem::{DType, Device, Tensor};
    /// let t = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    /// let (same, copied) = t.to_copied(Device::Cpu, DType::F32).unwrap();
    /// assert!(!copied && same.same_storage(&t).unwrap());
    /// let (wide, copied) = t.to_copied(Device::Cpu, DType::F64).unwrap();
    /// assert!(copied);
    /// assert_eq!(wide.to_vec::<f64>().unwrap(), vec![1.0, 2.0]);
    /// ```
    pub fn to_copied(&self, device: Device, dtype: DType) -> Result<(Tensor, bool)> {
        let mut copied: c_int = 0;
        // SAFETY: value arguments; valid out-pointers.
        let t = make(|out| unsafe { sys::sm_to(self.as_raw(), device.to_raw(), dtype.code(), out, &mut copied) })?;
        Ok((t, copied != 0))
    }

    /// [`to`](Tensor::to) another device, same dtype.
    pub fn to_device(&self, device: Device) -> Result<Tensor> {
        self.to(device, self.dtype())
    }

    /// [`to`](Tensor::to) another dtype, same device.
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        self.to(self.device(), dtype)
    }

    /// `self[...] = src`, broadcast to `self`'s shape and converted to its
    /// dtype, between any devices (`sm_copy_into(self, src)`).
    /// [`Status::Overlap`] when `self`'s elements overlap each other or
    /// `src` partially overlaps `self`. Bumps the version counter; every
    /// other view of `self`'s storage sees the write.
    pub fn copy_from(&mut self, src: &Tensor) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { sys::sm_copy_into(self.as_raw(), src.as_raw()) })
    }

    /// Gathers `index` (1-D, I32 or I64; negative wraps once) along `dim`
    /// into a new tensor: always a copy; an index outside `[-size, size)` is
    /// [`Status::OutOfBounds`] (`sm_index_select`).
    pub fn index_select(&self, dim: i32, index: &Tensor) -> Result<Tensor> {
        // SAFETY: two live handles.
        make(|out| unsafe { sys::sm_index_select(self.as_raw(), dim, index.as_raw(), out) })
    }

    // ------------------------------------------------------------------
    // In-place ops: write through views. Every one bumps the version
    // counter, and every other view of the same storage sees the write.
    // ------------------------------------------------------------------

    /// `self = op(self, a, b)` (`sm_inplace_scalar`). Dtype rules as
    /// PyTorch's in-place ops ([`Status::Dtype`] when the result cannot be
    /// represented; on complex dtypes Clamp, Relu and Abs); [`Status::Overlap`]
    /// when `self`'s elements overlap. Other views of the same storage see
    /// the write.
    ///
    /// The scalars are real (the C API's `double`): on a complex tensor `a`
    /// is `a + 0i`. For a complex scalar use a 0-d tensor and
    /// [`apply_tensor`](Tensor::apply_tensor):
    ///
    /// ```
    /// use stridemem::{Complex64, Op, Tensor};
    /// let mut t = Tensor::from_slice(&[Complex64::new(1.0, 1.0)], &[1]).unwrap();
    /// t.mul_scalar(2.0).unwrap();
    /// let i = Tensor::from_slice(&[Complex64::new(0.0, 1.0)], &[]).unwrap();
    /// t.apply_tensor(Op::Mul, &i, 1.0).unwrap();
    /// assert_eq!(t.to_vec::<Complex64>().unwrap(), vec![Complex64::new(-2.0, 2.0)]);
    /// ```
    pub fn apply_scalar(&mut self, op: Op, a: f64, b: f64) -> Result<()> {
        // SAFETY: value arguments.
        check(unsafe { sys::sm_inplace_scalar(self.as_raw(), op.code(), a, b) })
    }

    /// `self = op(self, other)` with `other` broadcast to `self`
    /// (`sm_inplace_tensor`; Fill, Add, Sub, Mul, Div; `alpha` scales
    /// `other` for Add and Sub). `other` may be `self` or an identical view;
    /// a partial overlap is [`Status::Overlap`]. Other views of the same
    /// storage see the write.
    pub fn apply_tensor(&mut self, op: Op, other: &Tensor, alpha: f64) -> Result<()> {
        // SAFETY: two live handles.
        check(unsafe { sys::sm_inplace_tensor(self.as_raw(), op.code(), other.as_raw(), alpha) })
    }

    /// Sets every element to `value`. Other views see the write.
    pub fn fill(&mut self, value: f64) -> Result<()> {
        self.apply_scalar(Op::Fill, value, 0.0)
    }

    /// Sets every element to 0. Other views see the write.
    pub fn zero(&mut self) -> Result<()> {
        self.apply_scalar(Op::Zero, 0.0, 0.0)
    }

    /// `self += a`. Other views see the write.
    pub fn add_scalar(&mut self, a: f64) -> Result<()> {
        self.apply_scalar(Op::Add, a, 0.0)
    }

    /// `self -= a`. Other views see the write.
    pub fn sub_scalar(&mut self, a: f64) -> Result<()> {
        self.apply_scalar(Op::Sub, a, 0.0)
    }

    /// `self *= a`. Other views see the write.
    pub fn mul_scalar(&mut self, a: f64) -> Result<()> {
        self.apply_scalar(Op::Mul, a, 0.0)
    }

    /// `self /= a` (floating dtypes). Other views see the write.
    pub fn div_scalar(&mut self, a: f64) -> Result<()> {
        self.apply_scalar(Op::Div, a, 0.0)
    }

    /// `self = min(max(self, min), max)`; `None` is no bound. Other views
    /// see the write.
    pub fn clamp(&mut self, min: Option<f64>, max: Option<f64>) -> Result<()> {
        self.apply_scalar(Op::Clamp, min.unwrap_or(f64::NAN), max.unwrap_or(f64::NAN))
    }

    /// `self = max(self, 0)`. Other views see the write.
    pub fn relu(&mut self) -> Result<()> {
        self.apply_scalar(Op::Relu, 0.0, 0.0)
    }

    /// `self = -self`. Other views see the write.
    pub fn neg(&mut self) -> Result<()> {
        self.apply_scalar(Op::Neg, 0.0, 0.0)
    }

    /// `self = |self|`. Other views see the write.
    pub fn abs(&mut self) -> Result<()> {
        self.apply_scalar(Op::Abs, 0.0, 0.0)
    }

    /// `self = sqrt(self)` (floating dtypes). Other views see the write.
    pub fn sqrt(&mut self) -> Result<()> {
        self.apply_scalar(Op::Sqrt, 0.0, 0.0)
    }

    /// `self = exp(self)` (floating dtypes). Other views see the write.
    pub fn exp(&mut self) -> Result<()> {
        self.apply_scalar(Op::Exp, 0.0, 0.0)
    }

    /// `self = sign(self)`: -1, 0 or +1 in self's dtype (PyTorch's `sign_`;
    /// NaN stays NaN, both zeros give `+0.0`, bool is unchanged; complex
    /// dtypes are refused with `Status::Dtype`). Other views see the write.
    pub fn sign(&mut self) -> Result<()> {
        self.apply_scalar(Op::Sign, 0.0, 0.0)
    }

    /// `self = other` (broadcast). Other views see the write.
    pub fn assign(&mut self, other: &Tensor) -> Result<()> {
        self.apply_tensor(Op::Fill, other, 1.0)
    }

    /// `self += other` (broadcast). Other views see the write.
    pub fn add(&mut self, other: &Tensor) -> Result<()> {
        self.apply_tensor(Op::Add, other, 1.0)
    }

    /// `self += alpha * other` (broadcast). Other views see the write.
    pub fn add_scaled(&mut self, other: &Tensor, alpha: f64) -> Result<()> {
        self.apply_tensor(Op::Add, other, alpha)
    }

    /// `self -= other` (broadcast). Other views see the write.
    pub fn sub(&mut self, other: &Tensor) -> Result<()> {
        self.apply_tensor(Op::Sub, other, 1.0)
    }

    /// `self -= alpha * other` (broadcast). Other views see the write.
    pub fn sub_scaled(&mut self, other: &Tensor, alpha: f64) -> Result<()> {
        self.apply_tensor(Op::Sub, other, alpha)
    }

    /// `self *= other` (broadcast). Other views see the write.
    pub fn mul(&mut self, other: &Tensor) -> Result<()> {
        self.apply_tensor(Op::Mul, other, 1.0)
    }

    /// `self /= other` (broadcast; floating dtypes). Other views see the
    /// write.
    pub fn div(&mut self, other: &Tensor) -> Result<()> {
        self.apply_tensor(Op::Div, other, 1.0)
    }

    // ------------------------------------------------------------------
    // Streams
    // ------------------------------------------------------------------

    /// Marks the storage as used on `stream`: its memory is not reused
    /// until the work queued there so far has finished
    /// (`sm_record_stream`).
    ///
    /// # Safety
    /// `stream` must be NULL or a valid `cudaStream_t` of the tensor's
    /// device.
    pub unsafe fn record_stream(&self, stream: *mut c_void) -> Result<()> {
        // SAFETY: the caller vouches for the stream.
        check(unsafe { sys::sm_record_stream(self.as_raw(), stream) })
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: we own one reference; release also works on a tensor
        // whose stack region was popped. Its status is nothing to act on.
        unsafe { sys::sm_tensor_release(self.raw.as_ptr()) };
    }
}

impl Clone for Tensor {
    /// Adds an owner of the same handle (`sm_tensor_retain`): no data is
    /// copied.
    ///
    /// # Panics
    /// When the library refuses the retain, i.e. the handle is no longer
    /// valid (its stack region was popped); use
    /// [`try_clone`](Tensor::try_clone) to get the error instead.
    fn clone(&self) -> Tensor {
        match self.try_clone() {
            Ok(t) => t,
            Err(e) => panic!("Tensor::clone: {e}"),
        }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("storage_offset", &self.meta.offset)
            .field("dtype", &self.meta.dtype)
            .field("device", &self.meta.device)
            .finish()
    }
}

/// An owned handle to a storage: a refcounted block of bytes on one device
/// that tensors view. `Drop` releases, `Clone` adds an owner.
pub struct Storage {
    raw: NonNull<sys::sm_storage_>,
}

// SAFETY: storage handles are thread-safe like tensor handles.
unsafe impl Send for Storage {}
// SAFETY: as above.
unsafe impl Sync for Storage {}

impl Storage {
    /// Wraps a handle a C call (`call`, for the message) just wrote, which
    /// the caller owns; NULL on success would be a library bug.
    pub(crate) fn from_owned(raw: sys::sm_storage, call: &str) -> Result<Storage> {
        NonNull::new(raw)
            .map(|raw| Storage { raw })
            .ok_or_else(|| Error::new(Status::Internal, format!("{call} returned NULL")))
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::sm_storage {
        self.raw.as_ptr()
    }

    /// A new owner of the same storage (`sm_storage_retain`).
    pub fn try_clone(&self) -> Result<Storage> {
        // SAFETY: a handle we own.
        check(unsafe { sys::sm_storage_retain(self.as_raw()) })?;
        Ok(Storage { raw: self.raw })
    }

    /// Size in bytes (`sm_storage_size`).
    pub fn nbytes(&self) -> Result<i64> {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_storage_size(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// Base address (`sm_storage_data_ptr`).
    pub fn data_ptr(&self) -> Result<*mut c_void> {
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_storage_data_ptr(self.as_raw(), &mut p) })?;
        Ok(p)
    }

    /// The device (`sm_storage_device`).
    pub fn device(&self) -> Result<Device> {
        let mut d = sys::sm_device::default();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_storage_device(self.as_raw(), &mut d) })?;
        Device::try_from_raw(d)
    }

    /// A number no other storage of this process has had, from 1
    /// (`sm_storage_id`): a memory snapshot names the storage holding each
    /// block by it ([`Block::storage`](crate::Block),
    /// [`SnapshotSummary::block_of_storage`](crate::SnapshotSummary::block_of_storage)).
    ///
    /// ```
    /// use stridemem::{DType, Device, Tensor};
    ///
    /// let a = Tensor::zeros(&[4, 4], DType::F32, Device::Cpu)?;
    /// let view = a.transpose(0, 1)?;
    /// assert_eq!(view.storage()?.id()?, a.storage()?.id()?);
    /// assert_ne!(a.clone_data(stridemem::MemoryFormat::Contiguous)?.storage()?.id()?, a.storage()?.id()?);
    /// # Ok::<(), stridemem::Error>(())
    /// ```
    pub fn id(&self) -> Result<u64> {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_storage_id(self.as_raw(), &mut v) })?;
        Ok(v)
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { sys::sm_storage_release(self.raw.as_ptr()) };
    }
}

impl Clone for Storage {
    /// Adds an owner (`sm_storage_retain`).
    ///
    /// # Panics
    /// When the library refuses the retain (an invalid handle).
    fn clone(&self) -> Storage {
        match self.try_clone() {
            Ok(s) => s,
            Err(e) => panic!("Storage::clone: {e}"),
        }
    }
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storage").field("raw", &self.raw).finish()
    }
}
