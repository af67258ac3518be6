//! Element types: [`DType`], the Rust types that map to them ([`Element`]),
//! the two 16-bit float formats ([`Float16`], [`BFloat16`]) and the two
//! complex formats ([`Complex32`], [`Complex64`]).

use std::fmt;

use crate::error::{Error, Result, Status};
use crate::sys;

/// The element type of a tensor (`sm_dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// `bool`, one byte holding 0 or 1.
    Bool,
    /// `u8`.
    U8,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// IEEE binary16 ([`Float16`]).
    F16,
    /// bfloat16 ([`BFloat16`]).
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// complex64: two `f32`, real part first ([`Complex32`]).
    C64,
    /// complex128: two `f64`, real part first ([`Complex64`]).
    C128,
}

impl DType {
    /// Every dtype, in code order.
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::C64,
        DType::C128,
    ];

    /// The C code (`SM_BOOL`, ..., `SM_COMPLEX128`).
    pub fn code(self) -> sys::sm_dtype {
        match self {
            DType::Bool => sys::SM_BOOL,
            DType::U8 => sys::SM_UINT8,
            DType::I8 => sys::SM_INT8,
            DType::I16 => sys::SM_INT16,
            DType::I32 => sys::SM_INT32,
            DType::I64 => sys::SM_INT64,
            DType::F16 => sys::SM_FLOAT16,
            DType::BF16 => sys::SM_BFLOAT16,
            DType::F32 => sys::SM_FLOAT32,
            DType::F64 => sys::SM_FLOAT64,
            DType::U16 => sys::SM_UINT16,
            DType::U32 => sys::SM_UINT32,
            DType::U64 => sys::SM_UINT64,
            DType::C64 => sys::SM_COMPLEX64,
            DType::C128 => sys::SM_COMPLEX128,
        }
    }

    /// The dtype for a C code, `None` for a code these bindings do not know.
    pub fn from_code(code: sys::sm_dtype) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.code() == code)
    }

    pub(crate) fn try_from_code(code: sys::sm_dtype) -> Result<DType> {
        DType::from_code(code).ok_or_else(|| {
            Error::new(
                Status::Dtype,
                format!("the library returned dtype code {code}, which these bindings do not know"),
            )
        })
    }

    /// Bytes per element (as `sm_dtype_size`).
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// The address alignment an element needs: its size, except for the
    /// complex dtypes, which are aligned as their component (4 and 8 bytes,
    /// as C's `_Complex` and NumPy's complex types).
    pub fn alignment(self) -> usize {
        match self {
            DType::C64 => 4,
            DType::C128 => 8,
            d => d.size(),
        }
    }

    /// The short name (as `sm_dtype_name`): "bool", "uint8", ..., "complex128".
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// True for F16, BF16, F32, F64 (real floating point; complex is not).
    pub fn is_floating_point(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// True for C64 and C128.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// True for U8, U16, U32, U64.
    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DType {
    type Err = Error;

    /// Parses a dtype name, ignoring case and a `torch.`/`np.`/`numpy.`
    /// prefix: the names [`Display`](fmt::Display) writes (`"float32"`,
    /// `"bfloat16"`, `"complex64"`, ...), the Rust element types (`"f32"`,
    /// `"i64"`, `"u8"`, `"bool"`, ...), the short forms `"bf16"`, `"c64"`,
    /// `"c128"`, and PyTorch's aliases (`"float"`, `"double"`, `"half"`,
    /// `"long"`, `"int"`, `"short"`, `"cfloat"`, `"cdouble"`).
    /// [`Status::Dtype`] for anything else.
    ///
    /// Note that `"complex64"` is two `f32` ([`DType::C64`], NumPy's and
    /// PyTorch's meaning), while the Rust type [`Complex64`] is two `f64`.
    ///
    /// ```
    /// use stridemem::DType;
    /// assert_eq!("f32".parse::<DType>().unwrap(), DType::F32);
    /// assert_eq!("torch.bfloat16".parse::<DType>().unwrap(), DType::BF16);
    /// for d in DType::ALL {
    ///     assert_eq!(d.to_string().parse::<DType>().unwrap(), d);
    /// }
    /// assert!("float8".parse::<DType>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<DType> {
        let lower = s.trim().to_ascii_lowercase();
        let name = ["torch.", "numpy.", "np."]
            .iter()
            .find_map(|p| lower.strip_prefix(p))
            .unwrap_or(&lower);
        if let Some(d) = DType::ALL.into_iter().find(|d| d.name() == name) {
            return Ok(d);
        }
        let d = match name {
            "u8" => DType::U8,
            "i8" => DType::I8,
            "i16" | "short" => DType::I16,
            "i32" | "int" => DType::I32,
            "i64" | "long" => DType::I64,
            "f16" | "half" => DType::F16,
            "bf16" => DType::BF16,
            "f32" | "float" => DType::F32,
            "f64" | "double" => DType::F64,
            "u16" => DType::U16,
            "u32" => DType::U32,
            "u64" => DType::U64,
            "c64" | "cfloat" => DType::C64,
            "c128" | "cdouble" => DType::C128,
            _ => {
                return Err(Error::new(
                    Status::Dtype,
                    format!(
                        "unknown dtype {s:?}: expected one of {} (or f32, i64, bf16, c64, ...)",
                        DType::ALL.map(DType::name).join(", ")
                    ),
                ));
            }
        };
        Ok(d)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values are a tensor element of [`Element::DTYPE`], bit
/// for bit: `bool`, `u8`, `i8`, `i16`, `i32`, `i64`, [`Float16`],
/// [`BFloat16`], `f32`, `f64`, `u16`, `u32`, `u64`, [`Complex32`],
/// [`Complex64`]. Sealed: the list is the library's.
pub trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The matching dtype.
    const DTYPE: DType;

    /// Converts one element read as raw bytes of the dtype. Only `bool`
    /// needs this (a byte other than 0 or 1 is not a valid `bool`).
    #[doc(hidden)]
    fn from_raw_bytes(bytes: &[u8]) -> Self;

    /// True when every bit pattern of the dtype is a valid `Self`.
    #[doc(hidden)]
    const ANY_BIT_PATTERN: bool = true;
}

macro_rules! element {
    ($t:ty, $d:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = $d;
            fn from_raw_bytes(bytes: &[u8]) -> Self {
                <$t>::from_ne_bytes(bytes.try_into().expect("element size"))
            }
        }
    };
}

element!(u8, DType::U8);
element!(i8, DType::I8);
element!(i16, DType::I16);
element!(i32, DType::I32);
element!(i64, DType::I64);
element!(f32, DType::F32);
element!(f64, DType::F64);
element!(u16, DType::U16);
element!(u32, DType::U32);
element!(u64, DType::U64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    const ANY_BIT_PATTERN: bool = false;
    fn from_raw_bytes(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

impl sealed::Sealed for Float16 {}
impl Element for Float16 {
    const DTYPE: DType = DType::F16;
    fn from_raw_bytes(bytes: &[u8]) -> Self {
        Float16(u16::from_ne_bytes([bytes[0], bytes[1]]))
    }
}

impl sealed::Sealed for BFloat16 {}
impl Element for BFloat16 {
    const DTYPE: DType = DType::BF16;
    fn from_raw_bytes(bytes: &[u8]) -> Self {
        BFloat16(u16::from_ne_bytes([bytes[0], bytes[1]]))
    }
}

impl sealed::Sealed for Complex32 {}
impl Element for Complex32 {
    const DTYPE: DType = DType::C64;
    fn from_raw_bytes(bytes: &[u8]) -> Self {
        let re = f32::from_ne_bytes(bytes[0..4].try_into().expect("element size"));
        let im = f32::from_ne_bytes(bytes[4..8].try_into().expect("element size"));
        Complex32 { re, im }
    }
}

impl sealed::Sealed for Complex64 {}
impl Element for Complex64 {
    const DTYPE: DType = DType::C128;
    fn from_raw_bytes(bytes: &[u8]) -> Self {
        let re = f64::from_ne_bytes(bytes[0..8].try_into().expect("element size"));
        let im = f64::from_ne_bytes(bytes[8..16].try_into().expect("element size"));
        Complex64 { re, im }
    }
}

// The two complex element types. One macro writes both, so that they cannot
// drift apart; each is the C layout of `float _Complex` / `double _Complex`
// (and NumPy's complex64 / complex128): the real part, then the imaginary
// part, aligned as one component.
macro_rules! complex_type {
    ($name:ident, $t:ty, $variant:ident, $dtype:literal, $doc_example:literal) => {
        #[doc = concat!("A complex number of two `", stringify!($t), "`, the element of ",
                        $dtype, " ([`DType::", stringify!($variant), "`]): `re` then `im`, ",
                        "`#[repr(C)]`, aligned as one `", stringify!($t), "`.")]
        ///
        /// Only storage and conversions live here: the arithmetic is the
        /// library's in-place ops. Their scalars are real `f64` (the C
        /// API's); for a complex scalar, pass a 0-d tensor to the tensor
        /// form of the op ([`crate::Tensor::apply_tensor`]).
        ///
        /// ```
        #[doc = $doc_example]
        /// ```
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #[repr(C)]
        pub struct $name {
            /// The real part.
            pub re: $t,
            /// The imaginary part.
            pub im: $t,
        }

        impl $name {
            /// `re + im i`.
            pub const fn new(re: $t, im: $t) -> $name {
                $name { re, im }
            }

            /// The complex conjugate `re - im i`.
            pub fn conj(self) -> $name {
                $name { re: self.re, im: -self.im }
            }
        }

        impl From<$t> for $name {
            /// A real number: imaginary part 0 (the library's real -> complex
            /// conversion).
            fn from(re: $t) -> $name {
                $name { re, im: 0.0 }
            }
        }

        impl From<($t, $t)> for $name {
            /// `(re, im)`.
            fn from((re, im): ($t, $t)) -> $name {
                $name { re, im }
            }
        }

        impl From<$name> for ($t, $t) {
            fn from(z: $name) -> ($t, $t) {
                (z.re, z.im)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                if self.im.is_sign_negative() {
                    write!(f, "{}-{}i", self.re, -self.im)
                } else {
                    write!(f, "{}+{}i", self.re, self.im)
                }
            }
        }
    };
}

complex_type!(
    Complex32,
    f32,
    C64,
    "complex64",
    "use stridemem::{Complex32, DType, Tensor};
let t = Tensor::from_slice(&[Complex32::new(1.0, -2.0), Complex32::from(3.0)], &[2]).unwrap();
assert_eq!(t.dtype(), DType::C64);
assert_eq!(t.to_vec::<Complex32>().unwrap()[1], Complex32::new(3.0, 0.0));"
);
complex_type!(
    Complex64,
    f64,
    C128,
    "complex128",
    "use stridemem::{Complex64, DType, Tensor};
let t = Tensor::from_slice(&[Complex64::new(0.5, 4.0)], &[]).unwrap();
assert_eq!(t.dtype(), DType::C128);
// complex -> real keeps the real part.
assert_eq!(t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(), vec![0.5]);"
);

impl From<Complex32> for Complex64 {
    /// Exact: each part widened.
    fn from(z: Complex32) -> Complex64 {
        Complex64 { re: z.re as f64, im: z.im as f64 }
    }
}

/// An IEEE 754 binary16 value, stored as its bits (the element of
/// [`DType::F16`]). Conversions from `f32` round to nearest even, as the
/// library's.
///
/// ```
/// use stridemem::Float16;
/// assert_eq!(Float16::from_f32(1.5).to_bits(), 0x3e00);
/// assert_eq!(Float16::from_bits(0xc000).to_f32(), -2.0);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Float16(pub u16);

impl Float16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> Float16 {
        Float16(bits)
    }

    /// The bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// Rounds `x` to the nearest binary16 (ties to even); overflow gives
    /// infinity, NaN stays NaN.
    pub fn from_f32(x: f32) -> Float16 {
        let b = x.to_bits();
        let sign = ((b >> 16) & 0x8000) as u16;
        let exp = ((b >> 23) & 0xff) as i32;
        let man = b & 0x7f_ffff;
        if exp == 0xff {
            let nan = if man != 0 { 0x0200 | (man >> 13) as u16 } else { 0 };
            return Float16(sign | 0x7c00 | nan);
        }
        let e = exp - 127 + 15;
        if e >= 0x1f {
            return Float16(sign | 0x7c00);
        }
        if e <= 0 {
            // Subnormal (or zero) in binary16: units of 2^-24.
            if e < -10 {
                return Float16(sign);
            }
            let m = man | 0x80_0000;
            let shift = (14 - e) as u32;
            let half = 1u32 << (shift - 1);
            let mut r = m >> shift;
            let rem = m & ((1u32 << shift) - 1);
            if rem > half || (rem == half && (r & 1) == 1) {
                r += 1;
            }
            return Float16(sign | r as u16);
        }
        let mut h = ((e as u32) << 10) | (man >> 13);
        let rem = man & 0x1fff;
        if rem > 0x1000 || (rem == 0x1000 && (h & 1) == 1) {
            h += 1; // a carry into the exponent is still correct (up to inf)
        }
        Float16(sign | h as u16)
    }

    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        let h = self.0 as u32;
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let man = h & 0x3ff;
        let bits = if exp == 0 {
            let magnitude = man as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -magnitude } else { magnitude };
        } else if exp == 0x1f {
            sign | 0x7f80_0000 | (man << 13)
        } else {
            sign | ((exp + 112) << 23) | (man << 13)
        };
        f32::from_bits(bits)
    }
}

impl From<Float16> for f32 {
    /// Exact.
    fn from(h: Float16) -> f32 {
        h.to_f32()
    }
}

impl From<Float16> for f64 {
    /// Exact.
    fn from(h: Float16) -> f64 {
        f64::from(h.to_f32())
    }
}

impl From<f32> for Float16 {
    /// [`Float16::from_f32`]: nearest, ties to even.
    ///
    /// ```
    /// use stridemem::Float16;
    /// let h: Float16 = 0.5f32.into();
    /// assert_eq!(f32::from(h), 0.5);
    /// ```
    fn from(x: f32) -> Float16 {
        Float16::from_f32(x)
    }
}

impl fmt::Display for Float16 {
    /// The value, as its `f32`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

impl fmt::Debug for Float16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}f16", self.to_f32())
    }
}

/// A bfloat16 value, stored as its bits (the element of [`DType::BF16`]).
/// Conversions from `f32` round to nearest even, as the library's.
///
/// ```
/// use stridemem::BFloat16;
/// assert_eq!(BFloat16::from_f32(1.0).to_bits(), 0x3f80);
/// assert_eq!(BFloat16::from_bits(0x4040).to_f32(), 3.0);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct BFloat16(pub u16);

impl BFloat16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> BFloat16 {
        BFloat16(bits)
    }

    /// The bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// Rounds `x` to the nearest bfloat16 (ties to even); NaN stays NaN.
    pub fn from_f32(x: f32) -> BFloat16 {
        let b = x.to_bits();
        if x.is_nan() {
            return BFloat16(((b >> 16) as u16) | 0x0040);
        }
        let rounding = 0x7fff + ((b >> 16) & 1);
        BFloat16((b.wrapping_add(rounding) >> 16) as u16)
    }

    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

impl From<BFloat16> for f32 {
    /// Exact.
    fn from(h: BFloat16) -> f32 {
        h.to_f32()
    }
}

impl From<BFloat16> for f64 {
    /// Exact.
    fn from(h: BFloat16) -> f64 {
        f64::from(h.to_f32())
    }
}

impl From<f32> for BFloat16 {
    /// [`BFloat16::from_f32`]: nearest, ties to even.
    ///
    /// ```
    /// use stridemem::BFloat16;
    /// let h = BFloat16::from(3.0f32);
    /// assert_eq!(h.to_bits(), 0x4040);
    /// ```
    fn from(x: f32) -> BFloat16 {
        BFloat16::from_f32(x)
    }
}

impl fmt::Display for BFloat16 {
    /// The value, as its `f32`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

impl fmt::Debug for BFloat16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}bf16", self.to_f32())
    }
}

/// Memory layouts (`sm_memory_format`) for [`crate::Tensor::is_contiguous`],
/// [`crate::Tensor::contiguous`] and [`crate::Tensor::clone_data`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryFormat {
    /// Row-major.
    Contiguous,
    /// 4-D tensors stored in NHWC order.
    ChannelsLast,
    /// 5-D tensors stored in NDHWC order.
    ChannelsLast3d,
    /// Keep the source's dense layout (clone only; for `is_contiguous`:
    /// dense in some order and non-overlapping).
    Preserve,
}

impl MemoryFormat {
    /// The C code (`SM_CONTIGUOUS`, ...).
    pub fn code(self) -> sys::sm_memory_format {
        match self {
            MemoryFormat::Contiguous => sys::SM_CONTIGUOUS,
            MemoryFormat::ChannelsLast => sys::SM_CHANNELS_LAST,
            MemoryFormat::ChannelsLast3d => sys::SM_CHANNELS_LAST_3D,
            MemoryFormat::Preserve => sys::SM_PRESERVE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float16_round_trips_every_finite_value() {
        for bits in 0..=u16::MAX {
            let h = Float16(bits);
            let f = h.to_f32();
            if f.is_nan() {
                assert!(Float16::from_f32(f).to_f32().is_nan());
            } else {
                assert_eq!(Float16::from_f32(f).to_bits(), bits, "bits {bits:#06x}");
            }
        }
    }

    #[test]
    fn float16_rounds_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
        assert_eq!(Float16::from_f32(1.0 + f32::powi(2.0, -11)).to_bits(), 0x3c00);
        // 1 + 3 * 2^-11 is halfway between odd and even: up to even.
        assert_eq!(Float16::from_f32(1.0 + 3.0 * f32::powi(2.0, -11)).to_bits(), 0x3c02);
        assert_eq!(Float16::from_f32(65504.0).to_bits(), 0x7bff);
        assert_eq!(Float16::from_f32(65520.0).to_bits(), 0x7c00); // rounds to inf
        assert_eq!(Float16::from_f32(f32::powi(2.0, -24)).to_bits(), 0x0001);
        assert_eq!(Float16::from_f32(f32::powi(2.0, -25)).to_bits(), 0x0000); // tie to even
        assert_eq!(Float16::from_f32(1.5 * f32::powi(2.0, -25)).to_bits(), 0x0001);
        assert_eq!(Float16::from_f32(-0.0).to_bits(), 0x8000);
        assert_eq!(Float16::from_f32(f32::NEG_INFINITY).to_bits(), 0xfc00);
    }

    #[test]
    fn bfloat16_rounds_to_nearest_even() {
        assert_eq!(BFloat16::from_f32(1.0).to_bits(), 0x3f80);
        // 1 + 2^-8 is a tie: to even (1.0); 1 + 3 * 2^-8 ties up.
        assert_eq!(BFloat16::from_f32(1.0 + f32::powi(2.0, -8)).to_bits(), 0x3f80);
        assert_eq!(BFloat16::from_f32(1.0 + 3.0 * f32::powi(2.0, -8)).to_bits(), 0x3f82);
        assert!(BFloat16::from_f32(f32::NAN).to_f32().is_nan());
        for bits in 0..=u16::MAX {
            let f = BFloat16(bits).to_f32();
            if !f.is_nan() {
                assert_eq!(BFloat16::from_f32(f).to_bits(), bits);
            }
        }
    }

    #[test]
    fn dtype_codes_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_code(d.code()), Some(d));
        }
        assert_eq!(DType::from_code(sys::SM_NUM_DTYPES), None);
        assert_eq!(DType::ALL.len(), sys::SM_NUM_DTYPES as usize);
        for (i, d) in DType::ALL.into_iter().enumerate() {
            assert_eq!(d.code(), i as sys::sm_dtype, "ALL is in code order");
        }
    }

    #[test]
    fn complex_layout_is_c_complex() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!((size_of::<Complex32>(), align_of::<Complex32>()), (8, 4));
        assert_eq!((size_of::<Complex64>(), align_of::<Complex64>()), (16, 8));
        assert_eq!((offset_of!(Complex32, im), offset_of!(Complex64, im)), (4, 8));
        assert_eq!((DType::C64.size(), DType::C64.alignment()), (8, 4));
        assert_eq!((DType::C128.size(), DType::C128.alignment()), (16, 8));
        let z = Complex64::new(1.5, -0.25);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&1.5f64.to_ne_bytes());
        bytes[8..].copy_from_slice(&(-0.25f64).to_ne_bytes());
        assert_eq!(Complex64::from_raw_bytes(&bytes), z);
        assert_eq!(Complex32::from_raw_bytes(&bytes[..8]), Complex32::new(0.0, 1.9375));
        assert_eq!(z.conj(), Complex64::new(1.5, 0.25));
        assert_eq!(Complex64::from(Complex32::new(0.1, 2.0)).re, 0.1f32 as f64);
        assert_eq!(<(f32, f32)>::from(Complex32::from((1.0, 2.0))), (1.0, 2.0));
        assert_eq!(Complex32::from(3.0).im, 0.0);
        assert_eq!(format!("{} {}", Complex32::new(1.0, -2.0), Complex64::new(0.5, 0.0)), "1-2i 0.5+0i");
    }
}
