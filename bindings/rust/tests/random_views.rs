//! Random chains of view ops (deterministic seed): whatever layout results
//! (negative strides, size-1 and empty dims, permutations), reading,
//! copying and writing through it must agree with the reference model of a
//! strided view over the row-major base.

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
}

/// One random view op on `t`, or `None` when the op does not apply.
fn random_view(rng: &mut Rng, t: &Tensor) -> Option<Tensor> {
    let nd = t.ndim() as i64;
    let dim = |rng: &mut Rng| rng.below(nd) as i32;
    let r = match rng.below(9) {
        0 if nd > 0 => {
            let d = dim(rng);
            let size = t.shape()[d as usize];
            let start = rng.below(size + 1);
            t.narrow(d, start, rng.below(size - start + 1))
        }
        1 if nd > 0 => {
            let d = dim(rng);
            let size = t.shape()[d as usize];
            let step = (rng.below(3) + 1) * if rng.below(2) == 0 { 1 } else { -1 };
            let start = if rng.below(3) == 0 { None } else { Some(rng.below(2 * size + 1) - size) };
            let stop = if rng.below(3) == 0 { None } else { Some(rng.below(2 * size + 1) - size) };
            t.slice(d, start, stop, step)
        }
        2 if nd > 1 => t.transpose(dim(rng), dim(rng)),
        3 if nd > 0 => t.flip(&[dim(rng)]),
        4 if nd < 6 => t.unsqueeze(rng.below(nd + 1) as i32),
        5 if nd > 1 && t.shape().iter().all(|&s| s > 0) => {
            let d = dim(rng);
            let size = t.shape()[d as usize];
            t.select(d, rng.below(size))
        }
        6 if nd > 0 => {
            let mut perm: Vec<i32> = (0..nd as i32).collect();
            for i in (1..perm.len()).rev() {
                perm.swap(i, rng.below(i as i64 + 1) as usize);
            }
            t.permute(&perm)
        }
        7 if nd > 0 => {
            let d = dim(rng);
            let size = t.shape()[d as usize];
            if size == 0 {
                return None;
            }
            let window = rng.below(size) + 1;
            t.unfold(d, window, rng.below(3) + 1)
        }
        8 => t.squeeze_all(),
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| panic!("view op on {t:?} failed: {e}")))
}

#[test]
fn random_view_chains_read_copy_and_write_consistently() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let shape = [4i64, 5, 6];
    let n = 120usize;
    let (mut written, mut refused, mut negative) = (0, 0, 0);
    for case in 0..300 {
        let data: Vec<f64> = (0..n).map(|i| i as f64 + case as f64 * 1000.0).collect();
        let base = Tensor::from_slice(&data, &shape).unwrap();
        let mut v = base.clone();
        for _ in 0..rng.below(6) + 1 {
            if let Some(next) = random_view(&mut rng, &v) {
                v = next;
            }
        }
        assert!(v.same_storage(&base).unwrap());
        let expect = gather(&data, v.shape(), v.strides(), v.storage_offset());
        // Reads.
        assert_eq!(v.to_vec::<f64>().unwrap(), expect, "case {case}: {v:?}");
        let c = v.contiguous().unwrap();
        assert_eq!(c.to_vec::<f64>().unwrap(), expect, "case {case}: contiguous of {v:?}");
        let f = v.to_dtype(DType::F32).unwrap();
        assert_eq!(f.to_vec::<f32>().unwrap(), expect.iter().map(|&x| x as f32).collect::<Vec<_>>());
        let p = v.clone_data(MemoryFormat::Preserve).unwrap();
        assert_eq!(p.to_vec::<f64>().unwrap(), expect, "case {case}: clone of {v:?}");

        // Writes, where the view's elements do not overlap each other.
        // Storage positions the view reaches, in row-major order of the view.
        let positions = gather(&(0..n).collect::<Vec<_>>(), v.shape(), v.strides(), v.storage_offset());
        let mut sorted = positions.clone();
        sorted.sort_unstable();
        let overlapping = sorted.windows(2).any(|w| w[0] == w[1]);
        let src = Tensor::arange(-1.0, -1.0, v.numel(), DType::F64, Device::Cpu)
            .unwrap()
            .view(v.shape())
            .unwrap();
        let mut w = v.clone();
        let r = w.copy_from(&src);
        if overlapping {
            assert!(r.is_err(), "case {case}: a write into overlapping {v:?} must be refused");
            refused += 1;
            continue;
        }
        r.unwrap_or_else(|e| panic!("case {case}: write into {v:?}: {e}"));
        written += 1;
        if v.strides().iter().any(|&st| st < 0) {
            negative += 1;
        }
        let mut reference = data.clone();
        for (k, &pos) in positions.iter().enumerate() {
            reference[pos] = -1.0 - k as f64;
        }
        assert_eq!(base.to_vec::<f64>().unwrap(), reference, "case {case}: write through {v:?}");
        // And an in-place op through the same view.
        w.mul_scalar(-2.0).unwrap();
        for &pos in &positions {
            reference[pos] *= -2.0;
        }
        assert_eq!(base.to_vec::<f64>().unwrap(), reference, "case {case}: mul through {v:?}");
    }
    // The chains reached every interesting case, not only the easy ones.
    assert!(written > 100 && refused >= 5 && negative > 30, "{written} {refused} {negative}");
}
