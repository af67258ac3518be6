//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard};

use stridemem::{Element, Tensor};

/// Serializes the tests of one binary that read process-wide state (memory
/// statistics, fault injection, live-handle counts). A test that failed
/// while holding it does not poison the others.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Row-major element count of a shape.
pub fn numel(shape: &[i64]) -> usize {
    shape.iter().product::<i64>() as usize
}

/// What a view with `shape`, `strides` and `offset` over the row-major
/// storage `base` must read, in row-major order (the reference model of a
/// strided view, independent of the library).
pub fn gather<T: Copy>(base: &[T], shape: &[i64], strides: &[i64], offset: i64) -> Vec<T> {
    let n = numel(shape);
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0i64; shape.len()];
    for _ in 0..n {
        let pos: i64 = offset + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>();
        out.push(base[pos as usize]);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// Checks that `view` reads exactly what its own shape/strides/offset say
/// it should over `base` (the storage's row-major contents).
pub fn assert_reads<T: Element + PartialEq + std::fmt::Debug>(view: &Tensor, base: &[T]) {
    let expected = gather(base, view.shape(), view.strides(), view.storage_offset());
    assert_eq!(view.to_vec::<T>().unwrap(), expected, "view {view:?}");
}

/// 0, 1, 2, ... as f32.
pub fn iota_f32(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

/// A CPU f32 tensor holding 0, 1, 2, ... in `shape`.
pub fn iota(shape: &[i64]) -> (Tensor, Vec<f32>) {
    let data = iota_f32(numel(shape));
    (Tensor::from_slice(&data, shape).unwrap(), data)
}
