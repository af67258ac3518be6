//! `Display` for [`Tensor`]: the values, laid out as NumPy and PyTorch print
//! arrays, abbreviated with `...` for big tensors.

use std::fmt;

use crate::device::Device;
use crate::dtype::{BFloat16, Complex32, Complex64, DType, Element, Float16};
use crate::error::Result;
use crate::tensor::Tensor;

/// Tensors with more elements than this are printed abbreviated (NumPy's
/// default `threshold`).
pub const PRINT_THRESHOLD: i64 = 1000;

/// Leading and trailing items kept per dimension when abbreviated (NumPy's
/// default `edgeitems`).
pub const PRINT_EDGE_ITEMS: i64 = 3;

/// The elements to print: those of `t`, or for a big tensor only the edge
/// items of every long dim, gathered on `t`'s device and copied to the
/// host. Also says, per dim, whether it was cut.
fn printed_values(t: &Tensor) -> Result<(Tensor, Vec<bool>)> {
    let summarize = t.numel() > PRINT_THRESHOLD;
    let mut cut = vec![false; t.ndim()];
    let mut part = t.try_clone()?;
    if summarize {
        for (d, &size) in t.shape().iter().enumerate() {
            if size > 2 * PRINT_EDGE_ITEMS {
                // index_select copies only the kept rows: a huge tensor is
                // never copied whole (nor moved whole off a GPU).
                let keep: Vec<i64> = (0..PRINT_EDGE_ITEMS).chain(size - PRINT_EDGE_ITEMS..size).collect();
                let index = Tensor::from_slice(&keep, &[keep.len() as i64])?;
                part = part.index_select(d as i32, &index)?;
                cut[d] = true;
            }
        }
    }
    if part.device() != Device::Cpu {
        part = part.to_device(Device::Cpu)?;
    }
    Ok((part, cut))
}

/// Rust's shortest round-trip text of an `f32`/`f64` value, with NumPy's
/// names for the non-finite ones.
fn nonfinite(x: f64) -> Option<String> {
    if x.is_nan() {
        Some("nan".into())
    } else if x.is_infinite() {
        Some(if x > 0.0 { "inf".into() } else { "-inf".into() })
    } else {
        None
    }
}

/// The shortest decimal text of a half-precision value that reads back to
/// the same value (Rust's `{}` on the `f32` would print the f32 digits).
fn shortest_half(x: f32, sci: bool, back: impl Fn(f32) -> f32) -> String {
    for p in 0..12 {
        let s = if sci { format!("{x:.p$e}") } else { format!("{x:.p$}") };
        if s.parse::<f32>().is_ok_and(|y| back(y).to_bits() == x.to_bits()) {
            return s;
        }
    }
    if sci { format!("{x:e}") } else { format!("{x}") }
}

/// Formats real floating values: fixed notation (`1.`, `2.5`, as NumPy:
/// integral values keep their point) unless a value is >= 1e8 or a
/// non-zero one is < 1e-4, then scientific (`1e-5`); each value with the
/// fewest digits that read back exactly in its dtype.
fn format_floats(values: &[f64], text: impl Fn(f64, bool) -> String) -> (Vec<String>, bool) {
    let finite = values.iter().copied().filter(|x| x.is_finite()).map(f64::abs);
    let max = finite.clone().fold(0.0, f64::max);
    let min_nonzero = finite.filter(|&x| x > 0.0).fold(f64::INFINITY, f64::min);
    let sci = max >= 1e8 || min_nonzero < 1e-4;
    let out = values
        .iter()
        .map(|&x| {
            nonfinite(x).unwrap_or_else(|| {
                let s = text(x, sci);
                if !sci && !s.contains('.') { s + "." } else { s }
            })
        })
        .collect();
    (out, sci)
}

fn read<T: Element>(bytes: &[u8]) -> impl Iterator<Item = T> + '_ {
    bytes.chunks_exact(T::DTYPE.size()).map(T::from_raw_bytes)
}

/// Each element as text, and whether the texts are fixed-notation floats
/// (to be aligned on the decimal point).
fn element_texts(dtype: DType, bytes: &[u8]) -> (Vec<String>, bool) {
    fn plain<T: Element + fmt::Display>(bytes: &[u8]) -> Vec<String> {
        read::<T>(bytes).map(|x| x.to_string()).collect()
    }
    match dtype {
        DType::Bool => (plain::<bool>(bytes), false),
        DType::U8 => (plain::<u8>(bytes), false),
        DType::I8 => (plain::<i8>(bytes), false),
        DType::I16 => (plain::<i16>(bytes), false),
        DType::I32 => (plain::<i32>(bytes), false),
        DType::I64 => (plain::<i64>(bytes), false),
        DType::U16 => (plain::<u16>(bytes), false),
        DType::U32 => (plain::<u32>(bytes), false),
        DType::U64 => (plain::<u64>(bytes), false),
        DType::F32 => {
            let v: Vec<f64> = read::<f32>(bytes).map(f64::from).collect();
            let (s, sci) = format_floats(&v, |x, sci| if sci { format!("{:e}", x as f32) } else { format!("{}", x as f32) });
            (s, !sci)
        }
        DType::F64 => {
            let v: Vec<f64> = read::<f64>(bytes).collect();
            let (s, sci) = format_floats(&v, |x, sci| if sci { format!("{x:e}") } else { format!("{x}") });
            (s, !sci)
        }
        DType::F16 => {
            let v: Vec<f64> = read::<Float16>(bytes).map(|h| f64::from(h.to_f32())).collect();
            let back = |y: f32| Float16::from_f32(y).to_f32();
            let (s, sci) = format_floats(&v, |x, sci| shortest_half(x as f32, sci, back));
            (s, !sci)
        }
        DType::BF16 => {
            let v: Vec<f64> = read::<BFloat16>(bytes).map(|h| f64::from(h.to_f32())).collect();
            let back = |y: f32| BFloat16::from_f32(y).to_f32();
            let (s, sci) = format_floats(&v, |x, sci| shortest_half(x as f32, sci, back));
            (s, !sci)
        }
        // The crate's complex Display: `1.5-2i`.
        DType::C64 => (plain::<Complex32>(bytes), false),
        DType::C128 => (plain::<Complex64>(bytes), false),
    }
}

/// Pads every text to one width: fixed-notation floats aligned on the
/// decimal point (NumPy's `1. `, `2.5`), everything else right-aligned.
fn align(texts: &mut [String], on_point: bool) {
    if on_point {
        // Numbers have a point; nan and inf are right-aligned as a whole.
        let int_w = texts.iter().filter_map(|s| s.find('.')).max().unwrap_or(0);
        let frac_w = texts.iter().filter_map(|s| s.find('.').map(|p| s.len() - p)).max().unwrap_or(0);
        for s in texts.iter_mut() {
            if let Some(p) = s.find('.') {
                let (i, f) = s.split_at(p);
                *s = format!("{i:>int_w$}{f:<frac_w$}");
            }
        }
    }
    let w = texts.iter().map(String::len).max().unwrap_or(0);
    for s in texts.iter_mut() {
        *s = format!("{s:>w$}");
    }
}

/// Writes the nested lists for dims `dim..` of a row-major block of `texts`
/// starting at `start`; `col` is the column of this level's `[`.
fn nest(out: &mut String, texts: &[String], shape: &[usize], cut: &[bool], dim: usize, start: usize, col: usize) {
    let ndim = shape.len();
    let inner: usize = shape[dim + 1..].iter().product();
    let sep = if dim + 1 == ndim {
        ", ".to_string()
    } else {
        // One line per row; a blank line between 2-D blocks, two between
        // 3-D blocks, ... (as NumPy and PyTorch).
        format!(",{}{}", "\n".repeat(ndim - dim - 1), " ".repeat(col + 1))
    };
    out.push('[');
    for i in 0..shape[dim] {
        if i > 0 {
            out.push_str(&sep);
        }
        if cut[dim] && i == PRINT_EDGE_ITEMS as usize {
            out.push_str("...");
            out.push_str(&sep);
        }
        if dim + 1 == ndim {
            out.push_str(&texts[start + i]);
        } else {
            nest(out, texts, shape, cut, dim + 1, start + i * inner, col + 1);
        }
    }
    out.push(']');
}

/// The text `Display` writes, or the error that kept the values from
/// being read.
pub(crate) fn render(t: &Tensor) -> Result<String> {
    let mut out = String::from("tensor(");
    if t.is_empty() {
        out.push_str("[]");
        if t.ndim() != 1 {
            out.push_str(&format!(", shape={:?}", t.shape()));
        }
    } else {
        let (part, cut) = printed_values(t)?;
        let (mut texts, on_point) = element_texts(part.dtype(), &part.raw_bytes()?);
        align(&mut texts, on_point);
        if part.ndim() == 0 {
            out.push_str(texts[0].trim_start());
        } else {
            let shape: Vec<usize> = part.shape().iter().map(|&d| d as usize).collect();
            nest(&mut out, &texts, &shape, &cut, 0, 0, "tensor(".len());
        }
    }
    out.push_str(&format!(", dtype={}", t.dtype()));
    if t.device() != Device::Cpu {
        out.push_str(&format!(", device={}", t.device()));
    }
    out.push(')');
    Ok(out)
}

impl fmt::Display for Tensor {
    /// The values, as NumPy and PyTorch print arrays:
    /// `tensor([[1., 2.], [3., 4.]], dtype=float32)` with one row per
    /// line, and for more than [`PRINT_THRESHOLD`] elements only the first
    /// and last [`PRINT_EDGE_ITEMS`] of each dim, with `...` between. CUDA
    /// tensors are copied to the host for printing (only the printed
    /// elements). [`Debug`](fmt::Debug) shows the metadata instead.
    ///
    /// ```
    /// use stridemem::Tensor;
    /// let t = Tensor::from_slice(&[1.0f32, 2.5, -3.0, 4.0], &[2, 2]).unwrap();
    /// assert_eq!(t.to_string(), "tensor([[ 1. ,  2.5],\n        [-3. ,  4. ]], dtype=float32)");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match render(self) {
            Ok(s) => f.write_str(&s),
            // Display cannot fail with our error: say what happened instead.
            Err(e) => write!(f, "tensor(<values unreadable: {e}>, shape={:?}, dtype={})", self.shape(), self.dtype()),
        }
    }
}
