//! [`IntoShape`]: the shape arguments of the constructors and of `view`,
//! `reshape`, `expand`, ... accept `i64` dims (the C API's, where `-1`
//! means "infer") and `usize` dims (what Rust lengths are).

use std::borrow::Cow;

use crate::error::{Error, Result, Status};

mod sealed {
    pub trait Sealed {}
}

/// A shape argument: `&[i64]`, `&[i64; N]`, `&Vec<i64>`, or with `usize`
/// dims `&[usize]`, `&Vec<usize>`, and by value `[usize; N]`, `Vec<usize>`.
///
/// Array literals by reference (`&[2, 3]`, `&[]`, `&[3, -1]`) are `i64`, as
/// before this trait existed (negative dims such as `-1` keep their
/// meaning); arrays and vectors by value (`[2, 3]`, `vec![2, 3]`) are
/// `usize`. Each form has a single impl so that literals need no type
/// annotation. A `usize` dim above `i64::MAX` is [`Status::Overflow`].
///
/// ```
/// use stridemem::{DType, Device, Tensor};
/// let dims: Vec<usize> = vec![2, 3];
/// let a = Tensor::zeros(&dims, DType::F32, Device::Cpu).unwrap();
/// let b = Tensor::zeros([2, 3], DType::F32, Device::Cpu).unwrap();
/// let c = Tensor::zeros(&[2, 3], DType::F32, Device::Cpu).unwrap();
/// assert!(a.shape() == b.shape() && b.shape() == c.shape());
/// assert_eq!(c.view(&[3, -1]).unwrap().shape(), &[3, 2]);
/// assert_eq!(c.view([6]).unwrap().shape(), &[6]);
/// ```
pub trait IntoShape: sealed::Sealed {
    /// The dims as the C API's `int64_t`s (borrowed when they already are).
    fn dims(&self) -> Result<Cow<'_, [i64]>>;
}

fn from_usize(dims: &[usize]) -> Result<Cow<'_, [i64]>> {
    dims.iter()
        .map(|&d| {
            i64::try_from(d).map_err(|_| Error::new(Status::Overflow, format!("shape {dims:?}: dim {d} exceeds i64")))
        })
        .collect::<Result<Vec<i64>>>()
        .map(Cow::Owned)
}

// Only one impl for arrays by reference, so that `&[2, 3]` and `&[]` infer
// `i64` (the element type of the only candidate) and existing callers keep
// compiling.
impl<const N: usize> sealed::Sealed for &[i64; N] {}
impl<const N: usize> IntoShape for &[i64; N] {
    fn dims(&self) -> Result<Cow<'_, [i64]>> {
        Ok(Cow::Borrowed(&self[..]))
    }
}

// Likewise a single impl for arrays (and vectors) by value: `[2, 3]` and
// `vec![2, 3]` infer `usize`.
impl<const N: usize> sealed::Sealed for [usize; N] {}
impl<const N: usize> IntoShape for [usize; N] {
    fn dims(&self) -> Result<Cow<'_, [i64]>> {
        from_usize(self)
    }
}

impl sealed::Sealed for &[i64] {}
impl IntoShape for &[i64] {
    fn dims(&self) -> Result<Cow<'_, [i64]>> {
        Ok(Cow::Borrowed(self))
    }
}

impl sealed::Sealed for &[usize] {}
impl IntoShape for &[usize] {
    fn dims(&self) -> Result<Cow<'_, [i64]>> {
        from_usize(self)
    }
}

impl sealed::Sealed for &Vec<i64> {}
impl IntoShape for &Vec<i64> {
    fn dims(&self) -> Result<Cow<'_, [i64]>> {
        Ok(Cow::Borrowed(self.as_slice()))
    }
}

impl sealed::Sealed for &Vec<usize> {}
impl IntoShape for &Vec<usize> {
    fn dims(&self) -> Result<Cow<'_, [i64]>> {
        from_usize(self)
    }
}

impl sealed::Sealed for Vec<usize> {}
impl IntoShape for Vec<usize> {
    fn dims(&self) -> Result<Cow<'_, [i64]>> {
        from_usize(self)
    }
}
