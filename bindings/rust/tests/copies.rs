//! The calls that copy: reshape (when it must), contiguous, clone_data, to,
//! copy_from, index_select.

mod common;

use common::{gather, iota};
use stridemem::{BFloat16, Complex32, Complex64, DType, Device, Float16, MemoryFormat, Status, Tensor};

#[test]
fn reshape_is_a_view_when_it_can_be_and_says_so() {
    let (t, data) = iota(&[2, 3, 4]);
    assert!(!t.reshape_would_copy(&[6, 4]).unwrap());
    let (r, copied) = t.reshape_copied(&[6, 4]).unwrap();
    assert!(!copied);
    assert!(r.same_storage(&t).unwrap());
    assert_eq!(r.to_vec::<f32>().unwrap(), data);

    let tt = t.transpose(1, 2).unwrap();
    assert!(tt.reshape_would_copy(&[2, 12]).unwrap());
    let (c, copied) = tt.reshape_copied(&[2, 12]).unwrap();
    assert!(copied);
    assert!(!c.same_storage(&t).unwrap());
    assert_eq!(c.strides(), &[12, 1]);
    assert_eq!(c.to_vec::<f32>().unwrap(), tt.to_vec::<f32>().unwrap());
    let plain = tt.reshape(&[-1]).unwrap();
    assert_eq!(plain.shape(), &[24]);
    assert_eq!(plain.to_vec::<f32>().unwrap(), tt.to_vec::<f32>().unwrap());
    assert_eq!(t.reshape(&[5, 5]).unwrap_err().status(), Status::Shape);
    assert!(t.reshape_would_copy(&[7]).is_err());
}

#[test]
fn contiguous_copies_only_when_needed() {
    let (t, data) = iota(&[3, 4]);
    let same = t.contiguous().unwrap();
    assert_eq!(same.data_ptr().unwrap(), t.data_ptr().unwrap());
    let tt = t.transpose(0, 1).unwrap();
    let c = tt.contiguous().unwrap();
    assert!(!c.same_storage(&t).unwrap());
    assert_eq!(c.strides(), &[3, 1]);
    assert!(c.is_contiguous().unwrap());
    assert_eq!(c.to_vec::<f32>().unwrap(), gather(&data, &[4, 3], &[1, 4], 0));
    // Negative strides are materialized in order.
    let f = t.flip(&[0, 1]).unwrap().contiguous().unwrap();
    assert_eq!(f.strides(), &[4, 1]);
    assert_eq!(f.to_vec::<f32>().unwrap(), data.iter().rev().copied().collect::<Vec<_>>());
}

#[test]
fn contiguous_in_channels_last() {
    let (t, data) = iota(&[2, 3, 4, 5]); // NCHW
    let cl = t.contiguous_in(MemoryFormat::ChannelsLast).unwrap();
    assert_eq!(cl.shape(), &[2, 3, 4, 5]);
    assert_eq!(cl.strides(), &[60, 1, 15, 3]);
    assert!(cl.is_contiguous_in(MemoryFormat::ChannelsLast).unwrap());
    assert!(!cl.same_storage(&t).unwrap());
    assert_eq!(cl.to_vec::<f32>().unwrap(), data, "same logical values");
    // Already channels-last: the same data.
    let again = cl.contiguous_in(MemoryFormat::ChannelsLast).unwrap();
    assert_eq!(again.data_ptr().unwrap(), cl.data_ptr().unwrap());
    // And back.
    assert_eq!(cl.contiguous().unwrap().strides(), &[60, 20, 5, 1]);
    let (t5, _) = iota(&[1, 2, 3, 4, 5]);
    let cl3 = t5.contiguous_in(MemoryFormat::ChannelsLast3d).unwrap();
    assert_eq!(cl3.strides(), &[120, 1, 40, 10, 2]);
    assert!(t.contiguous_in(MemoryFormat::ChannelsLast3d).is_err());
}

#[test]
fn contiguous_copied_says_whether_it_copied() {
    let (t, data) = iota(&[2, 3, 4]);
    let (same, copied) = t.contiguous_copied(MemoryFormat::Contiguous).unwrap();
    assert!(!copied);
    assert!(same.same_storage(&t).unwrap());
    assert_eq!(same.data_ptr().unwrap(), t.data_ptr().unwrap());

    let tt = t.transpose(0, 2).unwrap();
    let (c, copied) = tt.contiguous_copied(MemoryFormat::Contiguous).unwrap();
    assert!(copied);
    assert!(!c.same_storage(&t).unwrap());
    assert_eq!(c.to_vec::<f32>().unwrap(), gather(&data, &[4, 3, 2], &[1, 4, 12], 0));

    // channels_last: a copy the first time, the same data the second.
    let x = t.view(&[1, 2, 3, 4]).unwrap();
    let (cl, copied) = x.contiguous_copied(MemoryFormat::ChannelsLast).unwrap();
    assert!(copied && cl.is_contiguous_in(MemoryFormat::ChannelsLast).unwrap());
    let (again, copied) = cl.contiguous_copied(MemoryFormat::ChannelsLast).unwrap();
    assert!(!copied && again.same_storage(&cl).unwrap());
    // The simple forms agree.
    assert!(t.contiguous().unwrap().same_storage(&t).unwrap());
    assert!(!tt.contiguous().unwrap().same_storage(&t).unwrap());
    // Refused formats are errors, not a guess.
    assert!(t.contiguous_copied(MemoryFormat::ChannelsLast3d).is_err());
}

#[test]
fn to_copied_says_whether_it_copied() {
    let (t, data) = iota(&[2, 3]);
    for (device, dtype, want) in [
        (Device::Cpu, DType::F32, false),
        (Device::Cpu, DType::F64, true),
        (Device::Cpu, DType::I32, true),
    ] {
        let (u, copied) = t.to_copied(device, dtype).unwrap();
        assert_eq!(copied, want, "{device} {dtype:?}");
        assert_eq!(u.same_storage(&t).unwrap(), !want, "{device} {dtype:?}");
        assert_eq!(u.dtype(), dtype);
        assert_eq!(u.to(Device::Cpu, DType::F32).unwrap().to_vec::<f32>().unwrap(), data);
    }
    // A strided source with no change is still the same data, not a copy.
    let v = t.transpose(0, 1).unwrap();
    let (u, copied) = v.to_copied(Device::Cpu, DType::F32).unwrap();
    assert!(!copied);
    assert_eq!((u.strides(), u.data_ptr().unwrap()), (v.strides(), v.data_ptr().unwrap()));
}

#[test]
fn clone_data_always_copies() {
    let (t, data) = iota(&[2, 3]);
    let c = t.clone_data(MemoryFormat::Contiguous).unwrap();
    assert!(!c.same_storage(&t).unwrap());
    assert_eq!(c.to_vec::<f32>().unwrap(), data);
    // Preserve keeps a permuted dense order.
    let p = t.transpose(0, 1).unwrap();
    let pc = p.clone_data(MemoryFormat::Preserve).unwrap();
    assert_eq!(pc.strides(), p.strides());
    assert!(!pc.same_storage(&t).unwrap());
    assert_eq!(pc.to_vec::<f32>().unwrap(), p.to_vec::<f32>().unwrap());
    // A write to the copy does not reach the original.
    let mut c = c;
    c.fill(-1.0).unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), data);
    // Preserve of a non-dense view gives a dense result.
    let (big, _) = iota(&[4, 4]);
    let sparse = big.slice(1, None, None, 2).unwrap();
    let sc = sparse.clone_data(MemoryFormat::Preserve).unwrap();
    assert!(sc.is_contiguous_in(MemoryFormat::Preserve).unwrap());
    assert_eq!(sc.storage_nbytes().unwrap(), 8 * 4);
}

#[test]
fn to_converts_dtypes() {
    let t = Tensor::from_slice(&[-1.75f32, -0.5, 0.0, 0.5, 2.9, 300.0], &[6]).unwrap();
    let same = t.to(Device::Cpu, DType::F32).unwrap();
    assert_eq!(same.data_ptr().unwrap(), t.data_ptr().unwrap());
    let d = t.to_dtype(DType::F64).unwrap();
    assert_eq!(d.to_vec::<f64>().unwrap(), vec![-1.75, -0.5, 0.0, 0.5, 2.9f32 as f64, 300.0]);
    // Float to int truncates toward zero, as C and PyTorch.
    let i = t.to_dtype(DType::I32).unwrap();
    assert_eq!(i.to_vec::<i32>().unwrap(), vec![-1, 0, 0, 0, 2, 300]);
    let b = t.to_dtype(DType::Bool).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), vec![true, true, false, true, true, true]);
    let back = Tensor::from_slice(&[true, false], &[2]).unwrap().to_dtype(DType::F32).unwrap();
    assert_eq!(back.to_vec::<f32>().unwrap(), vec![1.0, 0.0]);
    assert_eq!(t.to_device(Device::Cpu).unwrap().data_ptr().unwrap(), t.data_ptr().unwrap());
    // Layout is preserved when dense.
    let (m, _) = iota(&[2, 3]);
    let mt = m.transpose(0, 1).unwrap().to_dtype(DType::F64).unwrap();
    assert_eq!(mt.to_vec::<f64>().unwrap(), vec![0., 3., 1., 4., 2., 5.]);
}

#[test]
fn new_dtype_conversions() {
    // uint64 past INT64_MAX converts by value, not as a negative int64.
    let big = Tensor::from_slice(&[u64::MAX, 1 << 63, 12345], &[3]).unwrap();
    assert_eq!(big.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(), vec![u64::MAX as f64, (1u64 << 63) as f64, 12345.0]);
    assert_eq!(big.to_dtype(DType::C128).unwrap().to_vec::<Complex64>().unwrap()[1], Complex64::new((1u64 << 63) as f64, 0.0));
    assert_eq!(big.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap(), vec![-1, i64::MIN, 12345], "wraps as C casts");
    assert_eq!(big.to_dtype(DType::U16).unwrap().to_vec::<u16>().unwrap(), vec![u16::MAX, 0, 12345]);
    // Signed to unsigned wraps (NumPy's astype, C's conversion).
    let neg = Tensor::from_slice(&[-1i32, -2, 70000], &[3]).unwrap();
    assert_eq!(neg.to_dtype(DType::U16).unwrap().to_vec::<u16>().unwrap(), vec![u16::MAX, u16::MAX - 1, 4464], "70000 mod 2^16");
    assert_eq!(neg.to_dtype(DType::U64).unwrap().to_vec::<u64>().unwrap(), vec![u64::MAX, u64::MAX - 1, 70000]);
    assert_eq!(neg.to_dtype(DType::U32).unwrap().to_vec::<u32>().unwrap(), vec![u32::MAX, u32::MAX - 1, 70000]);
    // Real -> complex: imaginary part 0.
    let r = Tensor::from_slice(&[1.5f32, -2.0, 0.0], &[3]).unwrap();
    let c = r.to_dtype(DType::C64).unwrap();
    assert_eq!(c.to_vec::<Complex32>().unwrap(), vec![Complex32::new(1.5, 0.0), Complex32::new(-2.0, 0.0), Complex32::new(0.0, 0.0)]);
    let u = Tensor::from_slice(&[7u32], &[1]).unwrap();
    assert_eq!(u.to_dtype(DType::C128).unwrap().to_vec::<Complex64>().unwrap(), vec![Complex64::new(7.0, 0.0)]);
    // Complex -> real keeps the real part; -> bool: either part nonzero.
    let z = Tensor::from_slice(
        &[Complex64::new(2.75, -1.0), Complex64::new(0.0, 3.0), Complex64::new(0.0, 0.0), Complex64::new(-1.5, 0.0)],
        &[4],
    )
    .unwrap();
    assert_eq!(z.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap(), vec![2.75, 0.0, 0.0, -1.5]);
    assert_eq!(z.to_dtype(DType::I32).unwrap().to_vec::<i32>().unwrap(), vec![2, 0, 0, -1]);
    assert_eq!(z.to_dtype(DType::Bool).unwrap().to_vec::<bool>().unwrap(), vec![true, true, false, true]);
    assert_eq!(z.to_dtype(DType::BF16).unwrap().to_vec::<BFloat16>().unwrap()[0], BFloat16::from_f32(2.75));
    // complex128 -> complex64 rounds each part once; back is exact.
    let third = Tensor::from_slice(&[Complex64::new(1.0 / 3.0, -2.0 / 3.0)], &[1]).unwrap();
    let narrow = third.to_dtype(DType::C64).unwrap().to_vec::<Complex32>().unwrap();
    assert_eq!(narrow, vec![Complex32::new((1.0f64 / 3.0) as f32, (-2.0f64 / 3.0) as f32)]);
    let wide = third.to_dtype(DType::C64).unwrap().to_dtype(DType::C128).unwrap().to_vec::<Complex64>().unwrap();
    assert_eq!(wide, vec![Complex64::from(narrow[0])]);
    // copy_from converts through strided views too.
    let mut dst = Tensor::zeros(&[2, 2], DType::C64, Device::Cpu).unwrap();
    let src = Tensor::from_slice(&[1u16, 2, 3, 4], &[2, 2]).unwrap();
    dst.copy_from(&src.transpose(0, 1).unwrap()).unwrap();
    let got: Vec<f32> = dst.to_vec::<Complex32>().unwrap().iter().map(|z| z.re).collect();
    assert_eq!(got, vec![1.0, 3.0, 2.0, 4.0]);
}

/// The library's f32 -> f16 / bf16 conversion against the bindings' own
/// round-to-nearest-even, over values that exercise every rounding case.
#[test]
fn half_conversions_round_to_nearest_even() {
    let mut values: Vec<f32> = Vec::new();
    for bits in (0u32..0x8000).step_by(7) {
        // Points near f16 values and exact halfway points.
        let h = Float16(bits as u16).to_f32();
        let next = Float16(bits as u16 + 1).to_f32();
        if h.is_finite() && next.is_finite() {
            values.extend([h, (h + next) / 2.0, -(h + next) / 2.0, h + (next - h) * 0.25]);
        }
    }
    values.extend([65504.0, 65519.0, 65520.0, 1e9, -1e9, 5.96e-8, 2.98e-8, 1e-10, f32::INFINITY]);
    let t = Tensor::from_slice(&values, &[values.len() as i64]).unwrap();
    let h = t.to_dtype(DType::F16).unwrap().to_vec::<Float16>().unwrap();
    for (x, got) in values.iter().zip(&h) {
        assert_eq!(got.to_bits(), Float16::from_f32(*x).to_bits(), "f16 of {x:e}");
    }
    let b = t.to_dtype(DType::BF16).unwrap().to_vec::<BFloat16>().unwrap();
    for (x, got) in values.iter().zip(&b) {
        assert_eq!(got.to_bits(), BFloat16::from_f32(*x).to_bits(), "bf16 of {x:e}");
    }
    // And back exactly.
    let up = t.to_dtype(DType::F16).unwrap().to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap();
    for (got, hh) in up.iter().zip(&h) {
        assert_eq!(got.to_bits(), hh.to_f32().to_bits());
    }
}

#[test]
fn to_cuda_without_a_gpu_is_a_device_error() {
    // The first index past the last GPU (cuda:0 without one): runs on every machine.
    let absent = Device::Cuda(stridemem::cuda_device_count().unwrap());
    let (t, _) = iota(&[4]);
    let err = t.to_device(absent).unwrap_err();
    assert_eq!(err.status(), Status::Device);
    assert!(!err.message().is_empty());
    // The CPU path keeps working.
    assert_eq!(t.to_dtype(DType::F64).unwrap().numel(), 4);
}

#[test]
fn copy_from_broadcasts_and_converts() {
    let mut dst = Tensor::zeros(&[2, 3], DType::F64, Device::Cpu).unwrap();
    let src = Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    let v0 = dst.version_counter().unwrap();
    dst.copy_from(&src).unwrap();
    assert_eq!(dst.to_vec::<f64>().unwrap(), vec![1., 2., 3., 1., 2., 3.]);
    assert!(dst.version_counter().unwrap() > v0);
    let col = Tensor::from_slice(&[10.0f32, 20.0], &[2, 1]).unwrap();
    dst.copy_from(&col).unwrap();
    assert_eq!(dst.to_vec::<f64>().unwrap(), vec![10., 10., 10., 20., 20., 20.]);
    let bad = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    assert_eq!(dst.copy_from(&bad).unwrap_err().status(), Status::Shape);
}

#[test]
fn copy_from_writes_through_strided_views() {
    let (base, data) = iota(&[4, 4]);
    // Copy the transpose of the top-left 2x2 into the bottom-right 2x2.
    let mut dst = base.narrow(0, 2, 2).unwrap().narrow(1, 2, 2).unwrap();
    let src = base.narrow(0, 0, 2).unwrap().narrow(1, 0, 2).unwrap().transpose(0, 1).unwrap();
    dst.copy_from(&src).unwrap();
    let mut expected = data.clone();
    expected[10] = 0.0;
    expected[11] = 4.0;
    expected[14] = 1.0;
    expected[15] = 5.0;
    assert_eq!(base.to_vec::<f32>().unwrap(), expected);
    // Into a negative-stride view: reversed.
    let mut row = base.select(0, 0).unwrap().flip(&[0]).unwrap();
    row.copy_from(&Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap()).unwrap();
    assert_eq!(base.select(0, 0).unwrap().to_vec::<f32>().unwrap(), vec![4., 3., 2., 1.]);
}

#[test]
fn copy_from_refuses_overlaps() {
    let (base, data) = iota(&[8]);
    // Destination whose elements overlap each other.
    let mut expanded = base.narrow(0, 0, 1).unwrap().expand(&[4]).unwrap();
    let src = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    assert_eq!(expanded.copy_from(&src).unwrap_err().status(), Status::Overlap);
    let mut windows = base.unfold(0, 4, 2).unwrap();
    let w = Tensor::zeros(&[3, 4], DType::F32, Device::Cpu).unwrap();
    assert_eq!(windows.copy_from(&w).unwrap_err().status(), Status::Overlap);
    // Source partially overlapping the destination.
    let mut dst = base.narrow(0, 0, 4).unwrap();
    let shifted = base.narrow(0, 2, 4).unwrap();
    assert_eq!(dst.copy_from(&shifted).unwrap_err().status(), Status::Overlap);
    // Nothing was written by the refused calls.
    assert_eq!(base.to_vec::<f32>().unwrap(), data);
    // Identical source and destination: allowed.
    let same = dst.clone();
    dst.copy_from(&same).unwrap();
    // Disjoint regions of one storage: allowed.
    let other = base.narrow(0, 4, 4).unwrap();
    dst.copy_from(&other).unwrap();
    assert_eq!(base.to_vec::<f32>().unwrap(), vec![4., 5., 6., 7., 4., 5., 6., 7.]);
}

#[test]
fn index_select_gathers_a_copy() {
    let (t, _) = iota(&[4, 3]);
    let idx = Tensor::from_slice(&[3i64, 0, -1, 1], &[4]).unwrap();
    let rows = t.index_select(0, &idx).unwrap();
    assert_eq!(rows.shape(), &[4, 3]);
    assert_eq!(
        rows.to_vec::<f32>().unwrap(),
        vec![9., 10., 11., 0., 1., 2., 9., 10., 11., 3., 4., 5.]
    );
    assert!(!rows.same_storage(&t).unwrap());
    let idx32 = Tensor::from_slice(&[2i32, 2], &[2]).unwrap();
    let cols = t.index_select(1, &idx32).unwrap();
    assert_eq!(cols.to_vec::<f32>().unwrap(), vec![2., 2., 5., 5., 8., 8., 11., 11.]);
    let cols_neg = t.index_select(-1, &Tensor::from_slice(&[-3i32], &[1]).unwrap()).unwrap();
    assert_eq!(cols_neg.to_vec::<f32>().unwrap(), vec![0., 3., 6., 9.]);
    // Out of range is an error, not a wrap.
    let oob = Tensor::from_slice(&[4i64], &[1]).unwrap();
    assert_eq!(t.index_select(0, &oob).unwrap_err().status(), Status::OutOfBounds);
    let oob_neg = Tensor::from_slice(&[-5i64], &[1]).unwrap();
    assert_eq!(t.index_select(0, &oob_neg).unwrap_err().status(), Status::OutOfBounds);
    let float_idx = Tensor::from_slice(&[0.0f32], &[1]).unwrap();
    assert_eq!(t.index_select(0, &float_idx).unwrap_err().status(), Status::Dtype);
    let idx2d = Tensor::from_slice(&[0i64, 1], &[1, 2]).unwrap();
    assert!(t.index_select(0, &idx2d).is_err());
    // Of a strided view.
    let tt = t.transpose(0, 1).unwrap();
    let g = tt.index_select(1, &Tensor::from_slice(&[1i64], &[1]).unwrap()).unwrap();
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![3., 4., 5.]);
}

#[test]
fn empty_tensors_copy_and_gather() {
    let (t, _) = iota(&[3, 4]);
    let empty = t.slice(0, Some(2), Some(0), 1).unwrap(); // t[2:0]
    assert_eq!(empty.shape(), &[0, 4]);
    assert!(empty.to_vec::<f32>().unwrap().is_empty());
    assert!(empty.contiguous().unwrap().is_empty());
    let mut dst = Tensor::zeros(&[0, 4], DType::F64, Device::Cpu).unwrap();
    dst.copy_from(&empty).unwrap();
    let none = Tensor::from_slice::<i64>(&[], &[0]).unwrap();
    let g = t.index_select(0, &none).unwrap();
    assert_eq!(g.shape(), &[0, 4]);
    let reversed_empty = t.slice(1, Some(0), Some(3), -1).unwrap();
    assert_eq!(reversed_empty.shape(), &[3, 0]);
    assert!(reversed_empty.storage_offset() >= 0);
    assert!(reversed_empty.clone_data(MemoryFormat::Contiguous).unwrap().is_empty());
}
