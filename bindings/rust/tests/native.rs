//! The std-trait side of the crate: Display, element access, iterators,
//! conversions, DType parsing and shapes given as usize or i64.

use stridemem::{
    BFloat16, Complex32, Complex64, DType, Device, Float16, PRINT_EDGE_ITEMS, PRINT_THRESHOLD, Status, Tensor,
};

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

// ---------------------------------------------------------------- Display

#[test]
fn display_small_tensors_exactly() {
    let t = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(t.to_string(), "tensor([[1., 2., 3.],\n        [4., 5., 6.]], dtype=float32)");
    // A non-contiguous view prints its logical order.
    assert_eq!(
        t.transpose(0, 1).unwrap().to_string(),
        "tensor([[1., 4.],\n        [2., 5.],\n        [3., 6.]], dtype=float32)"
    );
    // Negative strides and broadcast (stride 0) views.
    assert_eq!(f32s(&[1.0, 2.5, -3.0], &[3]).flip(&[0]).unwrap().to_string(), "tensor([-3. ,  2.5,  1. ], dtype=float32)");
    assert_eq!(
        Tensor::from_slice(&[7i32, 8], &[2]).unwrap().expand(&[2, 2]).unwrap().to_string(),
        "tensor([[7, 8],\n        [7, 8]], dtype=int32)"
    );
    // 3-D: a blank line between the 2-D blocks.
    let t3 = Tensor::arange(0.0, 1.0, 8, DType::I64, Device::Cpu).unwrap().view(&[2, 2, 2]).unwrap();
    assert_eq!(
        t3.to_string(),
        "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]], dtype=int64)"
    );
    assert_eq!(Tensor::from_slice(&[7.5f64], &[]).unwrap().to_string(), "tensor(7.5, dtype=float64)");
    assert_eq!(Tensor::zeros(&[0], DType::F32, Device::Cpu).unwrap().to_string(), "tensor([], dtype=float32)");
    assert_eq!(
        Tensor::zeros(&[0, 3], DType::U8, Device::Cpu).unwrap().to_string(),
        "tensor([], shape=[0, 3], dtype=uint8)"
    );
}

#[test]
fn display_every_dtype() {
    let base = f32s(&[0.1, -2.0, 3.0], &[3]);
    let cases = [
        (DType::F16, "tensor([ 0.1, -2. ,  3. ], dtype=float16)"),
        (DType::BF16, "tensor([ 0.1, -2. ,  3. ], dtype=bfloat16)"),
        (DType::F32, "tensor([ 0.1, -2. ,  3. ], dtype=float32)"),
        (DType::F64, "tensor([ 0.10000000149011612, -2.                 ,  3.                 ], dtype=float64)"),
        (DType::I8, "tensor([ 0, -2,  3], dtype=int8)"),
        (DType::I16, "tensor([ 0, -2,  3], dtype=int16)"),
        (DType::I32, "tensor([ 0, -2,  3], dtype=int32)"),
        (DType::I64, "tensor([ 0, -2,  3], dtype=int64)"),
        (DType::C64, "tensor([0.1+0i,  -2+0i,   3+0i], dtype=complex64)"),
        (DType::C128, "tensor([0.10000000149011612+0i,                  -2+0i,                   3+0i], dtype=complex128)"),
    ];
    for (dtype, want) in cases {
        assert_eq!(base.to_dtype(dtype).unwrap().to_string(), want, "{dtype}");
    }
    let unsigned = Tensor::from_slice(&[0u8, 200, 3], &[3]).unwrap();
    for (dtype, name) in [(DType::U8, "uint8"), (DType::U16, "uint16"), (DType::U32, "uint32"), (DType::U64, "uint64")] {
        assert_eq!(unsigned.to_dtype(dtype).unwrap().to_string(), format!("tensor([  0, 200,   3], dtype={name})"));
    }
    assert_eq!(Tensor::from_slice(&[true, false], &[2]).unwrap().to_string(), "tensor([ true, false], dtype=bool)");
    assert_eq!(
        Tensor::from_slice(&[Complex32::new(1.0, -2.0), Complex32::new(0.5, 3.0)], &[2]).unwrap().to_string(),
        "tensor([  1-2i, 0.5+3i], dtype=complex64)"
    );
    // Non-finite values as NumPy names them; tiny or huge values in
    // scientific notation.
    assert_eq!(
        f32s(&[0.5, f32::NAN, f32::NEG_INFINITY], &[3]).to_string(),
        "tensor([ 0.5,  nan, -inf], dtype=float32)"
    );
    assert_eq!(f32s(&[1e-5, 2.0], &[2]).to_string(), "tensor([1e-5,  2e0], dtype=float32)");
    assert_eq!(f32s(&[1.5e9, 2.0], &[2]).to_string(), "tensor([1.5e9,   2e0], dtype=float32)");
}

#[test]
fn display_abbreviates_big_tensors() {
    assert_eq!((PRINT_THRESHOLD, PRINT_EDGE_ITEMS), (1000, 3));
    // Exactly the threshold: everything printed.
    let full = Tensor::arange(0.0, 1.0, 1000, DType::I32, Device::Cpu).unwrap();
    let s = full.to_string();
    assert!(!s.contains("..."));
    assert_eq!(s.matches(", ").count(), 1000, "999 separators + the dtype's");
    // One more: three items each side.
    let big = Tensor::arange(0.0, 1.0, 1001, DType::I32, Device::Cpu).unwrap();
    assert_eq!(big.to_string(), "tensor([   0,    1,    2, ...,  998,  999, 1000], dtype=int32)");
    // 2-D: rows and columns cut, a "...," line between the row groups.
    let m = Tensor::arange(0.0, 1.0, 10_000, DType::I64, Device::Cpu).unwrap().view(&[100, 100]).unwrap();
    let want = "tensor([[   0,    1,    2, ...,   97,   98,   99],\n\
                \x20       [ 100,  101,  102, ...,  197,  198,  199],\n\
                \x20       [ 200,  201,  202, ...,  297,  298,  299],\n\
                \x20       ...,\n\
                \x20       [9700, 9701, 9702, ..., 9797, 9798, 9799],\n\
                \x20       [9800, 9801, 9802, ..., 9897, 9898, 9899],\n\
                \x20       [9900, 9901, 9902, ..., 9997, 9998, 9999]], dtype=int64)";
    assert_eq!(m.to_string(), want);
    // A transposed big view: the edges of the logical order.
    let mt = m.transpose(0, 1).unwrap().to_string();
    assert!(mt.starts_with("tensor([[   0,  100,  200, ..., 9700, 9800, 9900],\n"), "{mt}");
    // Short dims of a big tensor are not cut.
    let tall = Tensor::zeros(&[2000, 2], DType::F32, Device::Cpu).unwrap().to_string();
    assert_eq!(tall.lines().count(), 7, "3 rows, ..., 3 rows: {tall}");
    assert!(tall.contains("[0., 0.]"));
}

#[test]
fn debug_shows_metadata() {
    let t = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]).transpose(0, 1).unwrap();
    assert_eq!(
        format!("{t:?}"),
        "Tensor { shape: [2, 2], strides: [1, 2], storage_offset: 0, dtype: F32, device: Cpu }"
    );
}

// ---------------------------------------------------------- element access

#[test]
fn get_reads_elements_of_views_with_python_indices() {
    let t = Tensor::arange(0.0, 1.0, 12, DType::I32, Device::Cpu).unwrap().view(&[3, 4]).unwrap();
    assert_eq!(t.get::<i32>(&[0, 0]).unwrap(), 0);
    assert_eq!(t.get::<i32>(&[2, 3]).unwrap(), 11);
    assert_eq!(t.get::<i32>(&[-1, -4]).unwrap(), 8);
    assert_eq!(t.get::<i32>([1usize, 2]).unwrap(), 6);
    // Views: transposed, negative strides, offset.
    let v = t.transpose(0, 1).unwrap().flip(&[0]).unwrap().narrow(1, 1, 2).unwrap();
    assert_eq!(v.to_vec::<i32>().unwrap(), vec![7, 11, 6, 10, 5, 9, 4, 8]);
    for i in 0..4 {
        for j in 0..2 {
            assert_eq!(v.get::<i32>(&[i, j]).unwrap(), v.to_vec::<i32>().unwrap()[(i * 2 + j) as usize]);
        }
    }
    // 0-d and bool.
    assert_eq!(Tensor::from_slice(&[2.5f64], &[]).unwrap().get::<f64>(&[]).unwrap(), 2.5);
    assert!(Tensor::from_slice(&[false, true], &[2]).unwrap().get::<bool>(&[1]).unwrap());
}

#[test]
fn get_errors() {
    let t = Tensor::zeros(&[2, 3], DType::F32, Device::Cpu).unwrap();
    let e = t.get::<f32>(&[2, 0]).unwrap_err();
    assert_eq!(e.status(), Status::OutOfBounds);
    assert!(e.message().contains("index 2 is out of bounds for dim 0 of size 2"), "{e}");
    assert_eq!(t.get::<f32>(&[0, -4]).unwrap_err().status(), Status::OutOfBounds);
    assert_eq!(t.get::<f64>(&[0, 0]).unwrap_err().status(), Status::Dtype);
    assert_eq!(t.get::<f32>(&[0]).unwrap_err().status(), Status::InvalidArgument);
    assert_eq!(t.at(&[0, 0, 0]).unwrap_err().status(), Status::InvalidArgument);
    assert_eq!(t.at(&[-3]).unwrap_err().status(), Status::OutOfBounds);
    // set checks as get does, and then changes nothing.
    let mut w = Tensor::zeros(&[2, 3], DType::F32, Device::Cpu).unwrap();
    let e = w.set(&[1], 5.0f32).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("Tensor::set: 1 indices for a 2-d tensor"), "{e}");
    assert_eq!(w.set(&[0, 3], 5.0f32).unwrap_err().status(), Status::OutOfBounds);
    assert_eq!(w.set(&[0, 0], 5.0f64).unwrap_err().status(), Status::Dtype);
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![0.0; 6]);
}

#[test]
fn at_is_a_view_and_set_writes_through() {
    let mut t = Tensor::arange(0.0, 1.0, 6, DType::F32, Device::Cpu).unwrap().view(&[2, 3]).unwrap();
    let row = t.at(&[1]).unwrap();
    assert_eq!((row.shape(), row.to_vec::<f32>().unwrap()), (&[3i64][..], vec![3.0, 4.0, 5.0]));
    assert!(row.same_storage(&t).unwrap());
    let before = t.version_counter().unwrap();
    t.set(&[1, -1], 50.0f32).unwrap();
    assert!(t.version_counter().unwrap() > before);
    assert_eq!(row.to_vec::<f32>().unwrap(), vec![3.0, 4.0, 50.0], "the row view sees the write");
    assert_eq!(t.set(&[0, 0], 1i32).unwrap_err().status(), Status::Dtype);
    assert_eq!(t.set(&[5, 0], 1.0f32).unwrap_err().status(), Status::OutOfBounds);
    // Half types through their From<f32>.
    let mut h = Tensor::zeros(&[2], DType::F16, Device::Cpu).unwrap();
    h.set(&[1], Float16::from(1.5f32)).unwrap();
    assert_eq!(f32::from(h.get::<Float16>(&[1]).unwrap()), 1.5);
}

// ------------------------------------------------- iterators, conversions

#[test]
fn iter_is_row_major_over_views() {
    let t = Tensor::arange(0.0, 1.0, 6, DType::I16, Device::Cpu).unwrap().view(&[2, 3]).unwrap();
    let tt = t.transpose(0, 1).unwrap();
    assert_eq!(tt.iter::<i16>().unwrap().collect::<Vec<_>>(), vec![0, 3, 1, 4, 2, 5]);
    let it = tt.iter::<i16>().unwrap();
    assert_eq!(it.len(), 6);
    assert_eq!(it.rev().take(2).collect::<Vec<_>>(), vec![5, 2]);
    let expanded = Tensor::from_slice(&[1i16, 2], &[2, 1]).unwrap().expand(&[2, 3]).unwrap();
    assert_eq!(expanded.iter::<i16>().unwrap().collect::<Vec<_>>(), vec![1, 1, 1, 2, 2, 2]);
    assert_eq!(t.iter::<i32>().unwrap_err().status(), Status::Dtype);
}

#[test]
fn vec_conversions() {
    let t = Tensor::from(vec![1u32, 2, 3]);
    assert_eq!((t.shape(), t.dtype()), (&[3i64][..], DType::U32));
    let back: Vec<u32> = Vec::try_from(&t).unwrap();
    assert_eq!(back, vec![1, 2, 3]);
    let flipped: Vec<u32> = t.flip(&[0]).unwrap().try_into().unwrap();
    assert_eq!(flipped, vec![3, 2, 1]);
    let wrong: Result<Vec<f32>, _> = Vec::try_from(&t);
    assert_eq!(wrong.unwrap_err().status(), Status::Dtype);
    let c = Tensor::from(vec![Complex64::new(1.0, 2.0)]);
    assert_eq!(c.dtype(), DType::C128);
    assert_eq!(Tensor::from(Vec::<f32>::new()).shape(), &[0]);
}

// ------------------------------------------------------ dtypes and halves

#[test]
fn dtype_from_str() {
    let cases = [
        ("f32", DType::F32),
        ("float32", DType::F32),
        ("float", DType::F32),
        ("Float32", DType::F32),
        ("torch.float64", DType::F64),
        ("np.uint8", DType::U8),
        ("double", DType::F64),
        ("half", DType::F16),
        ("f16", DType::F16),
        ("bf16", DType::BF16),
        ("bfloat16", DType::BF16),
        ("bool", DType::Bool),
        ("i64", DType::I64),
        ("long", DType::I64),
        ("int", DType::I32),
        ("u16", DType::U16),
        ("complex64", DType::C64),
        ("c64", DType::C64),
        ("cdouble", DType::C128),
        (" complex128 ", DType::C128),
    ];
    for (s, d) in cases {
        assert_eq!(s.parse::<DType>().unwrap(), d, "{s}");
    }
    for d in DType::ALL {
        assert_eq!(d.to_string().parse::<DType>().unwrap(), d);
    }
    for bad in ["", "float8", "complex32", "f128", "torch."] {
        let e = bad.parse::<DType>().unwrap_err();
        assert_eq!(e.status(), Status::Dtype, "{bad}");
        assert!(e.message().contains("bfloat16"), "the message lists the names: {e}");
    }
}

#[test]
fn half_float_traits() {
    assert_eq!(Float16::from(1.5f32).to_bits(), 0x3e00);
    assert_eq!(BFloat16::from(1.0f32).to_bits(), 0x3f80);
    let h: Float16 = 65520.0f32.into(); // rounds to infinity, as from_f32
    assert_eq!(h.to_bits(), 0x7c00);
    assert_eq!(f32::from(Float16::from_bits(0xc000)), -2.0);
    assert_eq!(f64::from(BFloat16::from_bits(0x4040)), 3.0);
    assert_eq!(f64::from(Float16::from_bits(0x3c00)), 1.0);
    assert_eq!(format!("{} {}", Float16::from(0.5f32), BFloat16::from(-3.0f32)), "0.5 -3");
}

// ----------------------------------------------------------------- shapes

#[test]
fn shapes_as_usize_or_i64() {
    let dims: Vec<usize> = vec![2, 3];
    let a = Tensor::zeros(&dims, DType::F32, Device::Cpu).unwrap();
    let b = Tensor::zeros([2, 3], DType::F32, Device::Cpu).unwrap();
    let c = Tensor::zeros(&dims[..], DType::F32, Device::Cpu).unwrap();
    let d = Tensor::zeros(dims.clone(), DType::F32, Device::Cpu).unwrap();
    let i64s: Vec<i64> = vec![2, 3];
    let e = Tensor::full(&i64s, 1.0, DType::F32, Device::Cpu).unwrap();
    for t in [&a, &b, &c, &d, &e] {
        assert_eq!(t.shape(), &[2, 3]);
    }
    let data: Vec<f32> = (0..6).map(|x| x as f32).collect();
    let f = Tensor::from_slice(&data, [3usize, 2]).unwrap();
    assert_eq!(f.reshape([6]).unwrap().shape(), &[6]);
    assert_eq!(f.view(&[-1]).unwrap().shape(), &[6]);
    assert_eq!(f.view(vec![2usize, 3]).unwrap().shape(), &[2, 3]);
    assert_eq!(f.unsqueeze(0).unwrap().expand([4, 3, 2]).unwrap().shape(), &[4, 3, 2]);
    assert_eq!(f.unflatten(0, [3, 1]).unwrap().shape(), &[3, 1, 2]);
    assert!(!f.reshape_would_copy([2usize, 3]).unwrap());
    assert_eq!(Tensor::empty([2usize], DType::U8, Device::Cpu).unwrap().shape(), &[2]);
    // A usize dim beyond i64 is an overflow, not a wrapped negative size.
    let e = Tensor::zeros([usize::MAX], DType::U8, Device::Cpu).unwrap_err();
    assert_eq!(e.status(), Status::Overflow);
}
