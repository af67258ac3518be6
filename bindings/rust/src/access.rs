//! Element access ([`Tensor::get`], [`Tensor::at`], [`Tensor::set`]),
//! element iterators ([`Tensor::iter`]) and the `Vec` conversions.

use std::iter::FusedIterator;
use std::ptr;

use crate::device::Device;
use crate::dtype::Element;
use crate::error::{Error, Result, Status};
use crate::shape::IntoShape;
use crate::tensor::Tensor;

impl Tensor {
    /// The storage offset (in elements) of `index`: one index per dim when
    /// `whole` (an element), else a prefix of the dims (a sub-tensor);
    /// negative indices count from the end, as Python's.
    fn locate(&self, index: &[i64], whole: bool, call: &str) -> Result<i64> {
        if index.len() > self.ndim() || (whole && index.len() != self.ndim()) {
            let hint = if whole { "; use at() for a sub-tensor" } else { "" };
            return Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "Tensor::{call}: {} indices for a {}-d tensor (shape {:?}){hint}",
                    index.len(),
                    self.ndim(),
                    self.shape()
                ),
            ));
        }
        let mut offset = self.storage_offset();
        for (d, ((&i, &size), &stride)) in index.iter().zip(self.shape()).zip(self.strides()).enumerate() {
            if i < -size || i >= size {
                return Err(Error::new(
                    Status::OutOfBounds,
                    format!(
                        "Tensor::{call}: index {i} is out of bounds for dim {d} of size {size} (shape {:?}; valid: [{}, {size}))",
                        self.shape(),
                        -size
                    ),
                ));
            }
            let i = if i < 0 { i + size } else { i };
            offset += i * stride;
        }
        Ok(offset)
    }

    /// PyTorch's `t[i, j, ...]`: the view at `index` (one index per leading
    /// dim, fewer than [`ndim`](Tensor::ndim) allowed), sharing the
    /// storage; with one index per dim, a 0-d view of one element that can
    /// be written through. Negative indices count from the end (`-1` is the
    /// last), as Python's and as [`select`](Tensor::select).
    /// [`Status::OutOfBounds`] outside `[-size, size)`,
    /// [`Status::InvalidArgument`] for more indices than dims.
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    /// assert_eq!(t.at(&[1]).unwrap().to_vec::<i32>().unwrap(), vec![4, 5, 6]);
    /// let mut e = t.at(&[-1, -1]).unwrap();
    /// e.fill(60.0).unwrap(); // writes through to t
    /// assert_eq!(t.get::<i32>(&[1, 2]).unwrap(), 60);
    /// ```
    pub fn at(&self, index: impl IntoShape) -> Result<Tensor> {
        let index = index.dims()?;
        let offset = self.locate(&index, false, "at")?;
        let k = index.len();
        self.as_strided(&self.shape()[k..], &self.strides()[k..], offset)
    }

    /// The element at `index` (one index per dim; negative counts from the
    /// end). `T` must be the tensor's element type ([`Status::Dtype`]);
    /// [`Status::OutOfBounds`] outside `[-size, size)`;
    /// [`Status::InvalidArgument`] when the index does not have one entry
    /// per dim. A host tensor is read in place; a CUDA one copies the one
    /// element to the host.
    ///
    /// ```
    /// use stridemem::{Status, Tensor};
    /// let t = Tensor::from_slice(&[1.5f32, 2.5, 3.5, 4.5], &[2, 2]).unwrap();
    /// assert_eq!(t.get::<f32>(&[0, 1]).unwrap(), 2.5);
    /// assert_eq!(t.get::<f32>(&[-1, 0]).unwrap(), 3.5);
    /// let (i, j): (usize, usize) = (1, 1);
    /// assert_eq!(t.get::<f32>([i, j]).unwrap(), 4.5);
    /// assert_eq!(t.get::<f32>(&[2, 0]).unwrap_err().status(), Status::OutOfBounds);
    /// assert_eq!(t.get::<f64>(&[0, 0]).unwrap_err().status(), Status::Dtype);
    /// ```
    pub fn get<T: Element>(&self, index: impl IntoShape) -> Result<T> {
        self.check_element::<T>("get")?;
        let index = index.dims()?;
        let offset = self.locate(&index, true, "get")?;
        match self.device() {
            Device::Cpu | Device::CudaHost => {
                let size = T::DTYPE.size();
                // data_ptr is element [0, ..., 0]; the element's distance
                // from it in bytes (negative strides allowed).
                let delta = (offset - self.storage_offset()) * size as i64;
                let base = self.data_ptr()? as *const u8;
                let mut bytes = [0u8; 16];
                // SAFETY: every index is in range, so the element lies inside
                // the view's storage, which self keeps alive; it is host
                // memory (CPU or pinned). Bytes are copied, not typed reads, so
                // alignment and invalid bool bytes are no concern.
                unsafe { ptr::copy_nonoverlapping(base.offset(delta as isize), bytes.as_mut_ptr(), size) };
                Ok(T::from_raw_bytes(&bytes[..size]))
            }
            Device::Cuda(_) => {
                let one = self.as_strided(&[], &[], offset)?.to_vec::<T>()?;
                Ok(one[0])
            }
        }
    }

    /// Writes `value` at `index` (one index per dim; negative counts from
    /// the end), through the library like any in-place op: read-only
    /// imports refuse it ([`Status::ReadOnly`]), the version counter moves,
    /// every other view of the storage sees it. `T` must be the tensor's
    /// element type ([`Status::Dtype`]). Each call makes a 0-d host tensor
    /// for the value; for many elements use [`copy_from`](Tensor::copy_from).
    ///
    /// ```
    /// use stridemem::{DType, Device, Tensor};
    /// let mut t = Tensor::zeros(&[2, 2], DType::I64, Device::Cpu).unwrap();
    /// t.set(&[0, -1], 7i64).unwrap();
    /// assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 7, 0, 0]);
    /// ```
    pub fn set<T: Element>(&mut self, index: impl IntoShape, value: T) -> Result<()> {
        self.check_element::<T>("set")?;
        let index = index.dims()?;
        let offset = self.locate(&index, true, "set")?;
        let mut element = self.as_strided(&[], &[], offset)?;
        let value = Tensor::from_slice_on(&[value], &[], Device::Cpu)?;
        element.copy_from(&value)
    }

    /// The elements in logical row-major order (the order of
    /// [`to_vec`](Tensor::to_vec), for views too: strides, negative strides,
    /// broadcast dims), from one copy to the host taken now: later writes
    /// to the tensor are not seen. `T` must be the element type
    /// ([`Status::Dtype`]).
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_slice(&[1u8, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    /// let cols: Vec<u8> = t.transpose(0, 1).unwrap().iter::<u8>().unwrap().collect();
    /// assert_eq!(cols, vec![1, 4, 2, 5, 3, 6]);
    /// let sum: u32 = t.iter::<u8>().unwrap().map(u32::from).sum();
    /// assert_eq!(sum, 21);
    /// ```
    pub fn iter<T: Element>(&self) -> Result<Elements<T>> {
        Ok(Elements { inner: self.to_vec::<T>()?.into_iter() })
    }
}

/// The iterator of [`Tensor::iter`]: the elements of a snapshot, row-major.
#[derive(Clone, Debug)]
pub struct Elements<T> {
    inner: std::vec::IntoIter<T>,
}

impl<T> Iterator for Elements<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T> DoubleEndedIterator for Elements<T> {
    fn next_back(&mut self) -> Option<T> {
        self.inner.next_back()
    }
}

impl<T> ExactSizeIterator for Elements<T> {}

impl<T> FusedIterator for Elements<T> {}

impl<T: Element> From<Vec<T>> for Tensor {
    /// A 1-D CPU tensor over the vector's buffer, zero copy
    /// ([`Tensor::from_vec`]).
    ///
    /// # Panics
    /// Where `from_vec` fails: the loaded library is incompatible with
    /// these bindings, or the length exceeds `i64` (use `from_vec` to get
    /// the error instead).
    ///
    /// ```
    /// use stridemem::{DType, Tensor};
    /// let t = Tensor::from(vec![1.0f64, 2.0, 3.0]);
    /// assert_eq!((t.shape(), t.dtype()), (&[3i64][..], DType::F64));
    /// ```
    fn from(data: Vec<T>) -> Tensor {
        let len = data.len();
        let shape = [i64::try_from(len).unwrap_or(i64::MAX)];
        match Tensor::from_vec(data, &shape) {
            Ok(t) => t,
            Err(e) => panic!("Tensor::from(Vec) of {len} elements: {e}"),
        }
    }
}

impl<T: Element> TryFrom<&Tensor> for Vec<T> {
    type Error = Error;

    /// [`Tensor::to_vec`]: the elements in row-major order;
    /// [`Status::Dtype`] when `T` is not the element type.
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_slice(&[1i16, 2, 3, 4], &[2, 2]).unwrap();
    /// let v: Vec<i16> = Vec::try_from(&t.transpose(0, 1).unwrap()).unwrap();
    /// assert_eq!(v, vec![1, 3, 2, 4]);
    /// ```
    fn try_from(t: &Tensor) -> Result<Vec<T>> {
        t.to_vec::<T>()
    }
}

impl<T: Element> TryFrom<Tensor> for Vec<T> {
    type Error = Error;

    /// As `TryFrom<&Tensor>`.
    fn try_from(t: Tensor) -> Result<Vec<T>> {
        t.to_vec::<T>()
    }
}
