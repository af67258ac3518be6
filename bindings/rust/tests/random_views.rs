//! Random chains of view ops (deterministic seed), checked against a model
//! of strided views kept in this file: each op's shape, strides and offset
//! are computed here from the op's definition (PyTorch's, and Python's for
//! `slice`), never read back from the library. After every op the library's
//! layout must equal the model's, and what it reads must equal what the
//! model gathers from the base buffer; at the end of each chain copies and
//! writes through the view must land where the model says.
//!
//! An expectation built from the library's own shape/strides/offset would
//! agree with any wrong layout (a `flip` that does nothing, a `narrow` that
//! ignores `start`), which is why the model computes its own.

mod common;

use common::gather;
use stridemem::{DType, Device, MemoryFormat, Tensor};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: i64) -> i64 {
        (self.next() % n.max(1) as u64) as i64
    }
    fn coin(&mut self) -> bool {
        self.below(2) == 0
    }
}

/// One view op, with its arguments as passed to the library (dims and
/// indices may be negative: they count from the end).
#[derive(Clone, Debug)]
enum Op {
    Narrow { dim: i32, start: i64, length: i64 },
    Slice { dim: i32, start: Option<i64>, stop: Option<i64>, step: i64 },
    Transpose(i32, i32),
    Flip(Vec<i32>),
    Unsqueeze(i32),
    Select { dim: i32, index: i64 },
    Permute(Vec<i32>),
    Unfold { dim: i32, size: i64, step: i64 },
    SqueezeAll,
}

impl Op {
    const KINDS: usize = 9;

    fn kind(&self) -> usize {
        match self {
            Op::Narrow { .. } => 0,
            Op::Slice { .. } => 1,
            Op::Transpose(..) => 2,
            Op::Flip(_) => 3,
            Op::Unsqueeze(_) => 4,
            Op::Select { .. } => 5,
            Op::Permute(_) => 6,
            Op::Unfold { .. } => 7,
            Op::SqueezeAll => 8,
        }
    }

    /// The library's view.
    fn apply(&self, t: &Tensor) -> stridemem::Result<Tensor> {
        match self {
            Op::Narrow { dim, start, length } => t.narrow(*dim, *start, *length),
            Op::Slice { dim, start, stop, step } => t.slice(*dim, *start, *stop, *step),
            Op::Transpose(a, b) => t.transpose(*a, *b),
            Op::Flip(dims) => t.flip(dims),
            Op::Unsqueeze(d) => t.unsqueeze(*d),
            Op::Select { dim, index } => t.select(*dim, *index),
            Op::Permute(perm) => t.permute(perm),
            Op::Unfold { dim, size, step } => t.unfold(*dim, *size, *step),
            Op::SqueezeAll => t.squeeze_all(),
        }
    }
}

/// A strided view over the row-major base: element `i` (a multi-index) sits
/// at `offset + sum(i[d] * strides[d])`.
#[derive(Clone, Debug, PartialEq)]
struct Layout {
    shape: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
}

impl Layout {
    fn row_major(shape: &[i64]) -> Layout {
        let mut strides = vec![1i64; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        Layout { shape: shape.to_vec(), strides, offset: 0 }
    }

    fn ndim(&self) -> i64 {
        self.shape.len() as i64
    }

    fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    /// A dim as the ops take it: negative counts from the end.
    fn wrap(&self, dim: i32) -> usize {
        let d = if dim < 0 { dim as i64 + self.ndim() } else { dim as i64 };
        assert!((0..self.ndim()).contains(&d), "model: dim {dim} of {self:?}");
        d as usize
    }

    /// The layout the op's definition gives.
    fn apply(&self, op: &Op) -> Layout {
        let mut m = self.clone();
        match *op {
            // narrow(dim, start, length): elements start .. start + length.
            Op::Narrow { dim, start, length } => {
                let d = self.wrap(dim);
                let start = if start < 0 { start + self.shape[d] } else { start };
                m.offset += start * self.strides[d];
                m.shape[d] = length;
            }
            // Python's slice.indices(n), then every step-th element from start.
            Op::Slice { dim, start, stop, step } => {
                let d = self.wrap(dim);
                let (first, count) = python_slice(self.shape[d], start, stop, step);
                m.offset += first * self.strides[d];
                m.shape[d] = count;
                m.strides[d] = self.strides[d] * step;
            }
            Op::Transpose(a, b) => {
                let (a, b) = (self.wrap(a), self.wrap(b));
                m.shape.swap(a, b);
                m.strides.swap(a, b);
            }
            // Index i of a flipped dim reads index n - 1 - i.
            Op::Flip(ref dims) => {
                for &dim in dims {
                    let d = self.wrap(dim);
                    m.offset += (self.shape[d] - 1) * self.strides[d];
                    m.strides[d] = -self.strides[d];
                }
            }
            // PyTorch's stride for the new size-1 dim: that of the dim it
            // lands before times its size, 1 at the end.
            Op::Unsqueeze(dim) => {
                let d = if dim < 0 { dim as i64 + self.ndim() + 1 } else { dim as i64 } as usize;
                let stride = if d < self.shape.len() { self.shape[d] * self.strides[d] } else { 1 };
                m.shape.insert(d, 1);
                m.strides.insert(d, stride);
            }
            Op::Select { dim, index } => {
                let d = self.wrap(dim);
                let index = if index < 0 { index + self.shape[d] } else { index };
                m.offset += index * self.strides[d];
                m.shape.remove(d);
                m.strides.remove(d);
            }
            Op::Permute(ref perm) => {
                let perm: Vec<usize> = perm.iter().map(|&p| self.wrap(p)).collect();
                m.shape = perm.iter().map(|&p| self.shape[p]).collect();
                m.strides = perm.iter().map(|&p| self.strides[p]).collect();
            }
            // Window w starts at element w * step; a new last dim walks it.
            Op::Unfold { dim, size, step } => {
                let d = self.wrap(dim);
                m.shape[d] = (self.shape[d] - size) / step + 1;
                m.strides[d] = self.strides[d] * step;
                m.shape.push(size);
                m.strides.push(self.strides[d]);
            }
            Op::SqueezeAll => {
                let keep: Vec<usize> = (0..self.shape.len()).filter(|&d| self.shape[d] != 1).collect();
                m.shape = keep.iter().map(|&d| self.shape[d]).collect();
                m.strides = keep.iter().map(|&d| self.strides[d]).collect();
            }
        }
        m
    }
}

/// Python's `slice(start, stop, step).indices(n)`: the first index and the
/// number of elements taken.
fn python_slice(n: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> (i64, i64) {
    assert_ne!(step, 0);
    // Negative bounds count from the end; out-of-range ones clamp to
    // [0, n] for a forward step, [-1, n - 1] for a backward one.
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let bound = |b: Option<i64>, default: i64| match b {
        None => default,
        Some(b) => {
            let b = if b < 0 { b + n } else { b };
            b.clamp(lo, hi)
        }
    };
    let (first, stop) = if step > 0 {
        (bound(start, 0), bound(stop, n))
    } else {
        (bound(start, n - 1), bound(stop, -1))
    };
    let count = if step > 0 {
        if stop > first { (stop - first + step - 1) / step } else { 0 }
    } else if first > stop {
        (first - stop - step - 1) / -step
    } else {
        0
    };
    (first, count)
}

/// A random op that applies to `m` (chosen from the model's shape), or
/// `None` for a draw that does not apply.
fn random_op(rng: &mut Rng, m: &Layout) -> Option<Op> {
    let nd = m.ndim();
    // A dim, sometimes spelled from the end.
    let dim = |rng: &mut Rng| {
        let d = rng.below(nd);
        (if rng.below(4) == 0 { d - nd } else { d }) as i32
    };
    let op = match rng.below(Op::KINDS as i64) {
        0 if nd > 0 => {
            let d = dim(rng);
            let size = m.shape[m.wrap(d)];
            let start = rng.below(size + 1);
            let length = rng.below(size - start + 1);
            // A negative start counts from the end (never past the front).
            let start = if start < size && rng.below(4) == 0 { start - size } else { start };
            Op::Narrow { dim: d, start, length }
        }
        1 if nd > 0 => {
            let d = dim(rng);
            let size = m.shape[m.wrap(d)];
            let step = (rng.below(3) + 1) * if rng.coin() { 1 } else { -1 };
            let mut bound = || if rng.below(3) == 0 { None } else { Some(rng.below(2 * size + 3) - size - 1) };
            let (start, stop) = (bound(), bound());
            Op::Slice { dim: d, start, stop, step }
        }
        2 if nd > 1 => Op::Transpose(dim(rng), dim(rng)),
        3 if nd > 0 => {
            let a = dim(rng);
            let b = dim(rng);
            // One dim, or two different ones.
            if rng.coin() && m.wrap(a) != m.wrap(b) { Op::Flip(vec![a, b]) } else { Op::Flip(vec![a]) }
        }
        4 if nd < 6 => {
            let d = rng.below(nd + 1);
            Op::Unsqueeze((if rng.below(4) == 0 { d - nd - 1 } else { d }) as i32)
        }
        5 if nd > 1 && m.numel() > 0 => {
            let d = dim(rng);
            let size = m.shape[m.wrap(d)];
            let index = rng.below(size);
            Op::Select { dim: d, index: if rng.below(4) == 0 { index - size } else { index } }
        }
        6 if nd > 0 => {
            let mut perm: Vec<i32> = (0..nd as i32).collect();
            for i in (1..perm.len()).rev() {
                perm.swap(i, rng.below(i as i64 + 1) as usize);
            }
            Op::Permute(perm)
        }
        7 if nd > 0 => {
            let d = dim(rng);
            let size = m.shape[m.wrap(d)];
            if size == 0 {
                return None;
            }
            Op::Unfold { dim: d, size: rng.below(size) + 1, step: rng.below(3) + 1 }
        }
        8 => Op::SqueezeAll,
        _ => return None,
    };
    Some(op)
}

/// The library's layout equals the model's. An empty view reads nothing,
/// so its offset is not compared.
#[track_caller]
fn assert_layout(v: &Tensor, m: &Layout, what: &str) {
    assert_eq!(v.shape(), &m.shape[..], "{what}: shape; model {m:?}, library {v:?}");
    assert_eq!(v.strides(), &m.strides[..], "{what}: strides; model {m:?}, library {v:?}");
    if m.numel() > 0 {
        assert_eq!(v.storage_offset(), m.offset, "{what}: storage offset; model {m:?}, library {v:?}");
    }
}

#[test]
fn random_view_chains_match_a_model_of_strided_views() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let shape = [4i64, 5, 6];
    let n = 120usize;
    let (mut written, mut refused, mut negative) = (0, 0, 0);
    // Ops applied, by kind, that moved the view (a non-empty result whose
    // offset, strides or shape differ from its input's): a no-op
    // implementation of any kind would show up in these.
    let mut moved = [0usize; Op::KINDS];
    for case in 0..300 {
        let data: Vec<f64> = (0..n).map(|i| i as f64 + case as f64 * 1000.0).collect();
        let base = Tensor::from_slice(&data, &shape).unwrap();
        let mut v = base.clone();
        let mut m = Layout::row_major(&shape);
        assert_layout(&v, &m, &format!("case {case}: the base"));
        let mut chain = Vec::new();
        for _ in 0..rng.below(6) + 1 {
            let Some(op) = random_op(&mut rng, &m) else { continue };
            chain.push(op.clone());
            let what = format!("case {case}: {chain:?}");
            let next = op.apply(&v).unwrap_or_else(|e| panic!("{what}: the library refused: {e}"));
            let next_m = m.apply(&op);
            assert_layout(&next, &next_m, &what);
            let expect = gather(&data, &next_m.shape, &next_m.strides, next_m.offset);
            assert_eq!(next.to_vec::<f64>().unwrap(), expect, "{what}: values read");
            if next_m.numel() > 0 && next_m != m {
                moved[op.kind()] += 1;
            }
            v = next;
            m = next_m;
        }
        let what = format!("case {case}: {chain:?}");
        assert!(v.same_storage(&base).unwrap(), "{what}");
        let expect = gather(&data, &m.shape, &m.strides, m.offset);
        // Reads through copies.
        let c = v.contiguous().unwrap();
        assert_eq!(c.to_vec::<f64>().unwrap(), expect, "{what}: contiguous");
        let f = v.to_dtype(DType::F32).unwrap();
        assert_eq!(f.to_vec::<f32>().unwrap(), expect.iter().map(|&x| x as f32).collect::<Vec<_>>(), "{what}: to f32");
        let p = v.clone_data(MemoryFormat::Preserve).unwrap();
        assert_eq!(p.to_vec::<f64>().unwrap(), expect, "{what}: clone");

        // Writes, where the view's elements do not overlap each other.
        // Storage positions the view reaches, in its row-major order.
        let positions = gather(&(0..n).collect::<Vec<_>>(), &m.shape, &m.strides, m.offset);
        let mut sorted = positions.clone();
        sorted.sort_unstable();
        let overlapping = sorted.windows(2).any(|w| w[0] == w[1]);
        let src = Tensor::arange(-1.0, -1.0, m.numel(), DType::F64, Device::Cpu)
            .unwrap()
            .view(&m.shape[..])
            .unwrap();
        let mut w = v.clone();
        let r = w.copy_from(&src);
        if overlapping {
            assert!(r.is_err(), "{what}: a write into overlapping elements must be refused");
            refused += 1;
            continue;
        }
        r.unwrap_or_else(|e| panic!("{what}: write: {e}"));
        written += 1;
        if m.strides.iter().zip(&m.shape).any(|(&st, &n)| st < 0 && n > 1) {
            negative += 1;
        }
        let mut reference = data.clone();
        for (k, &pos) in positions.iter().enumerate() {
            reference[pos] = -1.0 - k as f64;
        }
        assert_eq!(base.to_vec::<f64>().unwrap(), reference, "{what}: write");
        // And an in-place op through the same view.
        w.mul_scalar(-2.0).unwrap();
        for &pos in &positions {
            reference[pos] *= -2.0;
        }
        assert_eq!(base.to_vec::<f64>().unwrap(), reference, "{what}: mul");
    }
    // The chains reached every interesting case, not only the easy ones.
    assert!(written > 100 && refused >= 5 && negative > 30, "{written} {refused} {negative}");
    assert!(moved.iter().all(|&k| k >= 20), "ops that moved the view, by kind: {moved:?}");
}
