//! The three seed scenarios of the "stack of views" article, end to end:
//! each checks the numbers against a plain Rust computation and that the
//! allocator's peak never goes past what was preallocated.
//!
//! They read process-wide memory statistics, so each holds `serial()`.

mod common;

use common::serial;
use stridemem::{DType, Device, MemoryStats, Stack, Status, Tensor};

fn stats() -> MemoryStats {
    stridemem::memory_stats(Device::Cpu).unwrap()
}

fn rounded(nbytes: i64) -> i64 {
    let r = stridemem::sys::SM_ALLOC_ROUND;
    (nbytes + r - 1) / r * r
}

/// Starts a measurement after the preallocation: peaks restart here.
fn start_measuring() -> MemoryStats {
    stridemem::reset_peak_stats(Device::Cpu).unwrap();
    stats()
}

/// The processing allocated nothing: the peak is the preallocated size.
fn assert_no_allocation_since(pre: &MemoryStats, preallocated: i64, baseline: &MemoryStats) {
    let post = stats();
    assert_eq!(pre.allocated_bytes - baseline.allocated_bytes, preallocated, "preallocated bytes");
    assert_eq!(post.peak_allocated_bytes, pre.allocated_bytes, "the peak stayed at the preallocated size");
    assert_eq!(post.num_allocs, pre.num_allocs, "no storage allocation while processing");
    assert_eq!(post.allocated_bytes, pre.allocated_bytes);
}

/// Seed 1: a large image processed tile by tile through one reused tile
/// buffer from a stack: push a tile, copy a window of the image into it,
/// process it in place, copy it back, pop.
#[test]
fn seed_1_tiles_through_one_reused_buffer() {
    let _g = serial();
    let (c, h, w) = (3i64, 70i64, 100i64);
    let (th, tw) = (16i64, 32i64);
    let data: Vec<f32> = (0..c * h * w).map(|i| ((i * 37) % 101) as f32 - 20.0).collect();
    let expected: Vec<f32> = data.iter().map(|v| (v * 0.5 - 10.0).max(0.0)).collect();

    stridemem::empty_cache(Device::Cpu).unwrap(); // a clean start (blocks are split to size)
    let baseline = stats();
    let image = Tensor::from_slice(&data, &[c, h, w]).unwrap();
    let tile_bytes = c * th * tw * 4;
    let stack = Stack::new(Device::Cpu, tile_bytes).unwrap();
    let pre = start_measuring();

    let mut tiles = 0;
    let mut stale = Vec::new();
    for y in (0..h).step_by(th as usize) {
        for x in (0..w).step_by(tw as usize) {
            let (hh, ww) = ((h - y).min(th), (w - x).min(tw));
            let mark = stack.mark().unwrap();
            let buffer = stack.push(&[c, th, tw], DType::F32).unwrap();
            // Edge tiles use the top-left corner of the same buffer.
            let mut tile = buffer.narrow(1, 0, hh).unwrap().narrow(2, 0, ww).unwrap();
            let mut window = image.narrow(1, y, hh).unwrap().narrow(2, x, ww).unwrap();
            assert!(window.same_storage(&image).unwrap());
            tile.copy_from(&window).unwrap();
            tile.mul_scalar(0.5).unwrap();
            tile.add_scalar(-10.0).unwrap();
            tile.relu().unwrap();
            window.copy_from(&tile).unwrap();
            assert_eq!(stack.used().unwrap().0, tile_bytes);
            stack.pop_to(mark).unwrap();
            assert_eq!(stack.used().unwrap().0, 0);
            stale.push(tile);
            tiles += 1;
        }
    }
    assert_eq!(tiles, 5 * 4);
    assert_eq!(image.to_vec::<f32>().unwrap(), expected);
    // Tiles kept past their pop are refused, not silently reused.
    for t in &stale {
        assert_eq!(t.to_vec::<f32>().unwrap_err().status(), Status::InvalidHandle);
    }
    // One tile more than the capacity is refused.
    assert_eq!(stack.push(&[c, th, tw + 1], DType::F32).unwrap_err().status(), Status::OutOfMemory);
    assert_no_allocation_since(&pre, rounded(c * h * w * 4) + rounded(tile_bytes), &baseline);
}

/// Seed 2: overlapping tiles taken with unfold (a view: no copy) and written
/// into one preallocated output, then overlap-added back into an
/// image-sized accumulator through narrow views.
#[test]
fn seed_2_overlapping_tiles_with_unfold() {
    let _g = serial();
    let (h, w) = (20i64, 24i64);
    let (k, s) = (8i64, 4i64);
    let (nh, nw) = ((h - k) / s + 1, (w - k) / s + 1);
    let data: Vec<f32> = (0..h * w).map(|i| (i % 17) as f32).collect();

    stridemem::empty_cache(Device::Cpu).unwrap(); // a clean start (blocks are split to size)
    let baseline = stats();
    let image = Tensor::from_slice(&data, &[h, w]).unwrap();
    let mut out = Tensor::zeros(&[nh, nw, k, k], DType::F32, Device::Cpu).unwrap();
    let acc = Tensor::zeros(&[h, w], DType::F32, Device::Cpu).unwrap();
    let pre = start_measuring();

    let windows = image.unfold(0, k, s).unwrap().unfold(1, k, s).unwrap();
    assert_eq!(windows.shape(), &[nh, nw, k, k]);
    assert_eq!(windows.strides(), &[s * w, s, w, 1]);
    assert!(windows.same_storage(&image).unwrap());
    // All overlapping tiles in one copy.
    out.copy_from(&windows).unwrap();
    // Writing into the overlapping windows themselves is refused.
    let mut w_mut = windows.clone();
    assert_eq!(w_mut.mul_scalar(2.0).unwrap_err().status(), Status::Overlap);
    // Each tile scaled by its own factor, then overlap-added.
    for i in 0..nh {
        for j in 0..nw {
            let mut tile = out.select(0, i).unwrap().select(0, j).unwrap();
            tile.mul_scalar((i * nw + j + 1) as f64).unwrap();
            let mut dst = acc.narrow(0, i * s, k).unwrap().narrow(1, j * s, k).unwrap();
            dst.add(&tile).unwrap();
        }
    }

    let got = out.to_vec::<f32>().unwrap();
    let mut expected_acc = vec![0f32; (h * w) as usize];
    for i in 0..nh {
        for j in 0..nw {
            let f = (i * nw + j + 1) as f32;
            for a in 0..k {
                for b in 0..k {
                    let (y, x) = (i * s + a, j * s + b);
                    let v = data[(y * w + x) as usize] * f;
                    let o = (((i * nw + j) * k + a) * k + b) as usize;
                    assert_eq!(got[o], v, "tile ({i}, {j}) element ({a}, {b})");
                    expected_acc[(y * w + x) as usize] += v;
                }
            }
        }
    }
    assert_eq!(acc.to_vec::<f32>().unwrap(), expected_acc);
    assert_eq!(image.to_vec::<f32>().unwrap(), data, "the input was only read");
    let bytes = rounded(h * w * 4) + rounded(nh * nw * k * k * 4) + rounded(h * w * 4);
    assert_no_allocation_since(&pre, bytes, &baseline);
}

/// Seed 3: a sequence of hidden states kept in one preallocated buffer:
/// step t writes `states[t]` (a select view) from `states[t - 1]` and the
/// input, instead of allocating a fresh tensor per step; the history so
/// far is a narrow view of the same buffer.
#[test]
fn seed_3_hidden_states_in_one_buffer() {
    let _g = serial();
    let (steps, batch, hidden) = (12i64, 4i64, 8i64);
    let n = (batch * hidden) as usize;
    let xs: Vec<f32> = (0..steps * batch * hidden).map(|i| ((i % 7) - 3) as f32 * 0.5).collect();
    let bias_data: Vec<f32> = (0..hidden).map(|i| i as f32 - 4.0).collect();

    // Reference: h_t = relu(0.5 * h_{t-1} + x_t + 0.25 * bias).
    let mut reference = vec![0f32; (steps as usize + 1) * n];
    for t in 1..=steps as usize {
        for e in 0..n {
            let v = reference[(t - 1) * n + e] * 0.5 + xs[(t - 1) * n + e] + 0.25 * bias_data[e % hidden as usize];
            reference[t * n + e] = v.max(0.0);
        }
    }

    stridemem::empty_cache(Device::Cpu).unwrap(); // a clean start (blocks are split to size)
    let baseline = stats();
    let inputs = Tensor::from_slice(&xs, &[steps, batch, hidden]).unwrap();
    let bias = Tensor::from_slice(&bias_data, &[hidden]).unwrap();
    let states = Tensor::zeros(&[steps + 1, batch, hidden], DType::F32, Device::Cpu).unwrap();
    let pre = start_measuring();

    for t in 1..=steps {
        let prev = states.select(0, t - 1).unwrap();
        let mut cur = states.select(0, t).unwrap();
        cur.copy_from(&prev).unwrap();
        cur.mul_scalar(0.5).unwrap();
        cur.add(&inputs.select(0, t - 1).unwrap()).unwrap();
        cur.add_scaled(&bias, 0.25).unwrap(); // broadcast over the batch
        cur.relu().unwrap();
        // Everything so far, without a copy.
        let history = states.narrow(0, 0, t + 1).unwrap();
        assert_eq!(history.shape(), &[t + 1, batch, hidden]);
        assert!(history.same_storage(&states).unwrap());
        assert_eq!(history.storage_nbytes().unwrap(), (steps + 1) * batch * hidden * 4);
    }
    assert_eq!(states.to_vec::<f32>().unwrap(), reference);
    // The last state of batch row 2 through a strided view.
    let last_row = states.select(0, -1).unwrap().select(0, 2).unwrap();
    assert_eq!(
        last_row.to_vec::<f32>().unwrap(),
        reference[steps as usize * n + 2 * hidden as usize..][..hidden as usize].to_vec()
    );
    let bytes = rounded(steps * batch * hidden * 4) + rounded(hidden * 4) + rounded((steps + 1) * batch * hidden * 4);
    assert_no_allocation_since(&pre, bytes, &baseline);
}
