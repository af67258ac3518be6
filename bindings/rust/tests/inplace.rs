//! In-place ops: values, dtype rules, overlap rules, and that every view of
//! the storage sees the write.

mod common;

use common::iota;
use stridemem::{Complex32, Complex64, DType, Device, Float16, Op, Status, Tensor};

fn f32s(v: &[f32]) -> Tensor {
    Tensor::from_slice(v, &[v.len() as i64]).unwrap()
}

fn vals(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

#[test]
fn scalar_ops_on_floats() {
    let mut t = f32s(&[-2.0, -0.5, 0.0, 1.0, 4.0]);
    t.add_scalar(1.0).unwrap();
    assert_eq!(vals(&t), vec![-1.0, 0.5, 1.0, 2.0, 5.0]);
    t.sub_scalar(0.5).unwrap();
    assert_eq!(vals(&t), vec![-1.5, 0.0, 0.5, 1.5, 4.5]);
    t.mul_scalar(2.0).unwrap();
    assert_eq!(vals(&t), vec![-3.0, 0.0, 1.0, 3.0, 9.0]);
    t.div_scalar(4.0).unwrap();
    assert_eq!(vals(&t), vec![-0.75, 0.0, 0.25, 0.75, 2.25]);
    t.clamp(Some(-0.5), Some(1.0)).unwrap();
    assert_eq!(vals(&t), vec![-0.5, 0.0, 0.25, 0.75, 1.0]);
    t.neg().unwrap();
    assert_eq!(vals(&t), vec![0.5, 0.0, -0.25, -0.75, -1.0]);
    t.relu().unwrap();
    assert_eq!(vals(&t), vec![0.5, 0.0, 0.0, 0.0, 0.0]);
    t.fill(-9.0).unwrap();
    t.abs().unwrap();
    assert_eq!(vals(&t), vec![9.0; 5]);
    t.sqrt().unwrap();
    assert_eq!(vals(&t), vec![3.0; 5]);
    t.zero().unwrap();
    t.exp().unwrap();
    assert_eq!(vals(&t), vec![1.0; 5]);
}

#[test]
fn clamp_with_one_bound() {
    let mut t = f32s(&[-5.0, 0.0, 5.0]);
    t.clamp(None, Some(1.0)).unwrap();
    assert_eq!(vals(&t), vec![-5.0, 0.0, 1.0]);
    t.clamp(Some(-1.0), None).unwrap();
    assert_eq!(vals(&t), vec![-1.0, 0.0, 1.0]);
    t.apply_scalar(Op::Clamp, f64::NAN, f64::NAN).unwrap();
    assert_eq!(vals(&t), vec![-1.0, 0.0, 1.0]);
}

#[test]
fn apply_scalar_is_the_general_form() {
    let mut t = f32s(&[1.0, 2.0]);
    t.apply_scalar(Op::Mul, 3.0, 0.0).unwrap();
    t.apply_scalar(Op::Add, 0.5, 0.0).unwrap();
    assert_eq!(vals(&t), vec![3.5, 6.5]);
    t.apply_scalar(Op::Fill, 7.0, 0.0).unwrap();
    assert_eq!(vals(&t), vec![7.0, 7.0]);
    t.apply_scalar(Op::Zero, 0.0, 0.0).unwrap();
    assert_eq!(vals(&t), vec![0.0, 0.0]);
}

#[test]
fn integer_dtype_rules() {
    let mut t = Tensor::from_slice(&[1i32, -2, 3], &[3]).unwrap();
    t.mul_scalar(-2.0).unwrap();
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![-2, 4, -6]);
    t.abs().unwrap();
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![2, 4, 6]);
    // A fractional scalar, DIV, SQRT and EXP cannot be represented.
    assert_eq!(t.add_scalar(0.5).unwrap_err().status(), Status::Dtype);
    assert_eq!(t.div_scalar(2.0).unwrap_err().status(), Status::Dtype);
    assert_eq!(t.sqrt().unwrap_err().status(), Status::Dtype);
    assert_eq!(t.exp().unwrap_err().status(), Status::Dtype);
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![2, 4, 6], "refused ops write nothing");
    // Integer arithmetic wraps.
    let mut b = Tensor::from_slice(&[127i8, -128], &[2]).unwrap();
    b.add_scalar(1.0).unwrap();
    assert_eq!(b.to_vec::<i8>().unwrap(), vec![-128, -127]);
    let mut u = Tensor::from_slice(&[0u8, 255], &[2]).unwrap();
    u.sub_scalar(1.0).unwrap();
    assert_eq!(u.to_vec::<u8>().unwrap(), vec![255, 254]);
    // Arithmetic on bool is refused; fill and zero are fine.
    let mut flags = Tensor::from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(flags.add_scalar(1.0).unwrap_err().status(), Status::Dtype);
    flags.fill(1.0).unwrap();
    assert_eq!(flags.to_vec::<bool>().unwrap(), vec![true, true]);
    flags.zero().unwrap();
    assert_eq!(flags.to_vec::<bool>().unwrap(), vec![false, false]);
}

#[test]
fn half_precision_computes_in_f32() {
    let ulp = f32::powi(2.0, -10); // 1 ulp of binary16 at 1.0
    let mut h = Tensor::full(&[3], 1.0, DType::F16, Device::Cpu).unwrap();
    h.add_scalar(ulp as f64).unwrap();
    assert_eq!(h.to_vec::<Float16>().unwrap(), vec![Float16(0x3c01); 3]);
    h.mul_scalar(1000.0).unwrap();
    // (1 + 2^-10) * 1000 = 1000.977 in f32, rounded once to binary16: 1001.
    assert_eq!(h.to_vec::<Float16>().unwrap()[0], Float16::from_f32((1.0 + ulp) * 1000.0));
    assert_eq!(h.to_vec::<Float16>().unwrap()[0].to_f32(), 1001.0);
}

#[test]
fn tensor_ops_broadcast() {
    let (mut t, _) = iota(&[2, 3]);
    let row = f32s(&[1.0, 2.0, 3.0]);
    t.add(&row).unwrap();
    assert_eq!(vals(&t), vec![1., 3., 5., 4., 6., 8.]);
    t.sub(&row).unwrap();
    assert_eq!(vals(&t), vec![0., 1., 2., 3., 4., 5.]);
    t.mul(&row).unwrap();
    assert_eq!(vals(&t), vec![0., 2., 6., 3., 8., 15.]);
    t.div(&row).unwrap();
    assert_eq!(vals(&t), vec![0., 1., 2., 3., 4., 5.]);
    let col = Tensor::from_slice(&[10.0f32, 20.0], &[2, 1]).unwrap();
    t.add_scaled(&col, 0.5).unwrap();
    assert_eq!(vals(&t), vec![5., 6., 7., 13., 14., 15.]);
    t.sub_scaled(&col, 0.1).unwrap();
    assert_eq!(vals(&t), vec![4., 5., 6., 11., 12., 13.]);
    t.assign(&row).unwrap();
    assert_eq!(vals(&t), vec![1., 2., 3., 1., 2., 3.]);
    t.apply_tensor(Op::Add, &row, -1.0).unwrap();
    assert_eq!(vals(&t), vec![0.; 6]);
    // A 0-d other broadcasts everywhere.
    let s = Tensor::from_slice(&[2.5f32], &[]).unwrap();
    t.add(&s).unwrap();
    assert_eq!(vals(&t), vec![2.5; 6]);
    // Other dtypes convert.
    let ints = Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap();
    t.mul(&ints).unwrap();
    assert_eq!(vals(&t), vec![2.5, 5.0, 7.5, 2.5, 5.0, 7.5]);
    // Shapes that do not broadcast.
    assert_eq!(t.add(&f32s(&[1.0, 2.0])).unwrap_err().status(), Status::Shape);
    // Unsupported tensor ops.
    assert!(t.apply_tensor(Op::Sqrt, &row, 1.0).is_err());
}

#[test]
fn integer_tensor_div_is_refused() {
    let mut t = Tensor::from_slice(&[4i32, 8], &[2]).unwrap();
    let o = Tensor::from_slice(&[2i32, 2], &[2]).unwrap();
    assert_eq!(t.div(&o).unwrap_err().status(), Status::Dtype);
    t.add(&o).unwrap();
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![6, 10]);
    // A float other into an int tensor cannot be represented.
    assert_eq!(t.add(&f32s(&[0.5, 0.5])).unwrap_err().status(), Status::Dtype);
}

#[test]
fn writes_through_a_view_are_seen_by_every_view() {
    let (base, _) = iota(&[3, 4]);
    let mut col = base.select(1, 2).unwrap();
    let row = base.select(0, 1).unwrap();
    let diag = base.diagonal(0, 0, 1).unwrap();
    col.fill(-1.0).unwrap();
    assert_eq!(vals(&base), vec![0., 1., -1., 3., 4., 5., -1., 7., 8., 9., -1., 11.]);
    assert_eq!(vals(&row), vec![4., 5., -1., 7.]);
    assert_eq!(vals(&diag), vec![0., 5., -1.]);
    // A clone is the same handle: the write is visible through it too.
    let mut alias = base.clone();
    alias.zero().unwrap();
    assert_eq!(vals(&row), vec![0.; 4]);
    // Negative strides and transposes are written correctly.
    let mut flipped = base.flip(&[0, 1]).unwrap().transpose(0, 1).unwrap();
    flipped.copy_from(&Tensor::arange(0.0, 1.0, 12, DType::F32, Device::Cpu).unwrap().view(&[4, 3]).unwrap()).unwrap();
    // flipped[i][j] = base[2 - j][3 - i] = 3 * i + j
    let b = vals(&base);
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(b[(2 - j) * 4 + (3 - i)], (3 * i + j) as f32);
        }
    }
}

#[test]
fn overlapping_destinations_are_refused() {
    let (base, data) = iota(&[6]);
    let mut e = base.narrow(0, 0, 1).unwrap().expand(&[3]).unwrap();
    assert_eq!(e.add_scalar(1.0).unwrap_err().status(), Status::Overlap);
    assert_eq!(e.fill(0.0).unwrap_err().status(), Status::Overlap);
    let mut w = base.unfold(0, 3, 1).unwrap();
    assert_eq!(w.mul_scalar(2.0).unwrap_err().status(), Status::Overlap);
    assert_eq!(vals(&base), data, "nothing written");
}

#[test]
fn partially_overlapping_sources_are_refused() {
    let (base, data) = iota(&[8]);
    let mut a = base.narrow(0, 0, 4).unwrap();
    let shifted = base.narrow(0, 1, 4).unwrap();
    assert_eq!(a.add(&shifted).unwrap_err().status(), Status::Overlap);
    assert_eq!(vals(&base), data);
    // The identical view is allowed: t += t.
    let same = a.clone();
    a.add(&same).unwrap();
    assert_eq!(vals(&a), vec![0., 2., 4., 6.]);
    let identical = base.narrow(0, 0, 4).unwrap();
    a.mul(&identical).unwrap();
    assert_eq!(vals(&a), vec![0., 4., 16., 36.]);
    // Disjoint halves of one storage: allowed.
    let other = base.narrow(0, 4, 4).unwrap();
    a.sub(&other).unwrap();
    assert_eq!(vals(&a), vec![-4., -1., 10., 29.]);
}

#[test]
fn version_counter_bumps_on_every_write() {
    let (mut t, _) = iota(&[4]);
    let view = t.narrow(0, 1, 2).unwrap();
    let mut last = t.version_counter().unwrap();
    let mut step = |t: &mut Tensor, f: &dyn Fn(&mut Tensor) -> stridemem::Result<()>| {
        f(t).unwrap();
        let v = view.version_counter().unwrap();
        assert!(v > last, "{v} > {last}");
        last = v;
    };
    step(&mut t, &|t| t.fill(1.0));
    step(&mut t, &|t| t.add_scalar(1.0));
    step(&mut t, &|t| t.relu());
    step(&mut t, &|t| t.add(&f32s(&[1.0])));
    step(&mut t, &|t| t.copy_from(&f32s(&[3.0])));
    // A refused write does not bump it.
    let before = t.version_counter().unwrap();
    let mut e = t.narrow(0, 0, 1).unwrap().expand(&[2]).unwrap();
    assert!(e.fill(0.0).is_err());
    assert_eq!(t.version_counter().unwrap(), before);
}

#[test]
fn unsigned_integers_wrap() {
    let mut t = Tensor::from_slice(&[0u16, 1, u16::MAX, 0x8000], &[4]).unwrap();
    t.add_scalar(2.0).unwrap();
    assert_eq!(t.to_vec::<u16>().unwrap(), vec![2, 3, 1, 0x8002]);
    t.sub_scalar(3.0).unwrap();
    assert_eq!(t.to_vec::<u16>().unwrap(), vec![u16::MAX, 0, u16::MAX - 1, 0x7fff]);
    t.mul_scalar(2.0).unwrap();
    assert_eq!(t.to_vec::<u16>().unwrap(), vec![u16::MAX - 1, 0, u16::MAX - 3, 0xfffe]);
    t.neg().unwrap();
    assert_eq!(t.to_vec::<u16>().unwrap(), vec![2, 0, 4, 2]);
    // ABS and RELU leave unsigned values as they are.
    let mut u = Tensor::from_slice(&[u64::MAX, 1 << 63, 0, 5], &[4]).unwrap();
    u.abs().unwrap();
    u.relu().unwrap();
    assert_eq!(u.to_vec::<u64>().unwrap(), vec![u64::MAX, 1 << 63, 0, 5]);
    // CLAMP compares as unsigned: 2^63 and up are large, not negative.
    u.clamp(Some(1.0), Some((1u64 << 63) as f64)).unwrap(); // bounds 1 and 2^63
    assert_eq!(u.to_vec::<u64>().unwrap(), vec![1 << 63, 1 << 63, 1, 5]);
    u.clamp(Some(6.0), None).unwrap();
    assert_eq!(u.to_vec::<u64>().unwrap(), vec![1 << 63, 1 << 63, 6, 6]);
    // Tensor ops wrap too, and broadcast through views.
    let mut w = Tensor::from_slice(&[u32::MAX, 1, 2, 3], &[2, 2]).unwrap();
    let one = Tensor::from_slice(&[1u32, 2], &[2]).unwrap();
    w.add_scaled(&one, 3.0).unwrap();
    assert_eq!(w.to_vec::<u32>().unwrap(), vec![2, 7, 5, 9]);
    let mut col = w.select(1, 0).unwrap();
    col.sub(&Tensor::from_slice(&[10u32], &[1]).unwrap()).unwrap();
    assert_eq!(w.to_vec::<u32>().unwrap(), vec![u32::MAX - 7, 7, u32::MAX - 4, 9]);
    // Integer rules: no DIV, SQRT, EXP or fractional scalar.
    let before = w.to_vec::<u32>().unwrap();
    assert_eq!(w.div_scalar(2.0).unwrap_err().status(), Status::Dtype);
    assert_eq!(w.sqrt().unwrap_err().status(), Status::Dtype);
    assert_eq!(w.exp().unwrap_err().status(), Status::Dtype);
    assert_eq!(w.add_scalar(0.5).unwrap_err().status(), Status::Dtype);
    assert_eq!(w.div(&one).unwrap_err().status(), Status::Dtype);
    assert_eq!(w.to_vec::<u32>().unwrap(), before, "refused ops write nothing");
}

fn c64s(v: &[(f64, f64)]) -> Tensor {
    let z: Vec<Complex64> = v.iter().map(|&p| Complex64::from(p)).collect();
    Tensor::from_slice(&z, &[z.len() as i64]).unwrap()
}

fn pairs(t: &Tensor) -> Vec<(f64, f64)> {
    t.to_vec::<Complex64>().unwrap().into_iter().map(<(f64, f64)>::from).collect()
}

fn close(got: &[(f64, f64)], want: &[(f64, f64)], tol: f64) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| (g.0 - w.0).abs() <= tol && (g.1 - w.1).abs() <= tol)
}

#[test]
fn complex_ops() {
    // Real scalars act as re + 0i.
    let mut t = c64s(&[(1.0, 2.0), (-3.0, 0.5), (0.0, -1.0)]);
    t.add_scalar(1.5).unwrap();
    assert_eq!(pairs(&t), vec![(2.5, 2.0), (-1.5, 0.5), (1.5, -1.0)]);
    t.sub_scalar(0.5).unwrap();
    t.mul_scalar(-2.0).unwrap();
    assert_eq!(pairs(&t), vec![(-4.0, -4.0), (4.0, -1.0), (-2.0, 2.0)]);
    t.div_scalar(4.0).unwrap();
    assert_eq!(pairs(&t), vec![(-1.0, -1.0), (1.0, -0.25), (-0.5, 0.5)]);
    t.neg().unwrap();
    assert_eq!(pairs(&t), vec![(1.0, 1.0), (-1.0, 0.25), (0.5, -0.5)]);
    // A complex scalar: a 0-d tensor through the tensor form.
    let i = Tensor::from_slice(&[Complex64::new(0.0, 1.0)], &[]).unwrap();
    t.apply_tensor(Op::Mul, &i, 1.0).unwrap();
    assert_eq!(pairs(&t), vec![(-1.0, 1.0), (-0.25, -1.0), (0.5, 0.5)]);
    t.add_scaled(&i, 2.0).unwrap();
    assert_eq!(pairs(&t), vec![(-1.0, 3.0), (-0.25, 1.0), (0.5, 2.5)]);
    // (1 + 2i)(3 - i) = 5 + 5i, and back by division.
    let mut m = c64s(&[(1.0, 2.0), (2.0, -1.0)]);
    let f = c64s(&[(3.0, -1.0), (0.0, 2.0)]);
    m.mul(&f).unwrap();
    assert_eq!(pairs(&m), vec![(5.0, 5.0), (2.0, 4.0)]);
    m.div(&f).unwrap();
    assert!(close(&pairs(&m), &[(1.0, 2.0), (2.0, -1.0)], 1e-14), "{:?}", pairs(&m));
    // sqrt and exp.
    let mut s = c64s(&[(-4.0, 0.0), (3.0, 4.0), (0.0, 2.0)]);
    s.sqrt().unwrap();
    assert!(close(&pairs(&s), &[(0.0, 2.0), (2.0, 1.0), (1.0, 1.0)], 1e-14), "{:?}", pairs(&s));
    let mut e = c64s(&[(0.0, 0.0), (0.0, std::f64::consts::PI), (1.0, std::f64::consts::FRAC_PI_2)]);
    e.exp().unwrap();
    assert!(close(&pairs(&e), &[(1.0, 0.0), (-1.0, 0.0), (0.0, std::f64::consts::E)], 1e-14), "{:?}", pairs(&e));
    // complex64 computes in single precision.
    let mut h = Tensor::from_slice(&[Complex32::new(1.0, 1.0), Complex32::new(0.5, -2.0)], &[2]).unwrap();
    h.mul_scalar(3.0).unwrap();
    h.fill(2.0).unwrap();
    assert_eq!(h.to_vec::<Complex32>().unwrap(), vec![Complex32::new(2.0, 0.0); 2]);
    h.zero().unwrap();
    assert_eq!(h.to_vec::<Complex32>().unwrap(), vec![Complex32::default(); 2]);
    // FILL from a tensor, through a view, broadcast.
    let mut g = c64s(&[(9.0, 9.0); 4]);
    let mut odd = g.slice(0, Some(1), None, 2).unwrap();
    odd.assign(&Tensor::from_slice(&[Complex64::new(1.0, -1.0)], &[1]).unwrap()).unwrap();
    assert_eq!(pairs(&g), vec![(9.0, 9.0), (1.0, -1.0), (9.0, 9.0), (1.0, -1.0)]);
    // A real tensor operand converts (imag 0).
    g.add(&Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap()).unwrap();
    assert_eq!(pairs(&g), vec![(10.0, 9.0), (3.0, -1.0), (12.0, 9.0), (5.0, -1.0)]);
}

#[test]
fn complex_refusals_change_nothing() {
    let mut t = c64s(&[(1.0, 2.0), (-3.0, 0.5)]);
    let v0 = t.version_counter().unwrap();
    for (what, status) in [
        ("clamp", t.clamp(Some(0.0), Some(1.0)).map_err(|e| e.status())),
        ("clamp max", t.clamp(None, Some(1.0)).map_err(|e| e.status())),
        ("relu", t.relu().map_err(|e| e.status())),
        ("abs", t.abs().map_err(|e| e.status())),
    ] {
        assert_eq!(status, Err(Status::Dtype), "{what}");
    }
    assert_eq!(pairs(&t), vec![(1.0, 2.0), (-3.0, 0.5)]);
    assert_eq!(t.version_counter().unwrap(), v0);
    // A complex operand into a real tensor: refused, except FILL, which
    // converts as a copy does (the real part).
    let mut r = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    for op in [Op::Add, Op::Sub, Op::Mul, Op::Div] {
        assert_eq!(r.apply_tensor(op, &t, 1.0).unwrap_err().status(), Status::Dtype, "{op:?}");
    }
    assert_eq!(vals(&r), vec![1.0, 2.0]);
    r.assign(&t).unwrap();
    assert_eq!(vals(&r), vec![1.0, -3.0]);
}

#[test]
fn sign_on_every_kind_of_dtype() {
    // Floats: -1/+1, both zeros give +0.0, NaN stays NaN (with its sign).
    let mut t = f32s(&[-2.5, -0.0, 0.0, 3.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN]);
    t.sign().unwrap();
    let v = vals(&t);
    assert_eq!(&v[..6], &[-1.0, 0.0, 0.0, 1.0, 1.0, -1.0]);
    assert!(!v[1].is_sign_negative(), "-0.0 gives +0.0");
    assert!(v[6].is_nan() && !v[6].is_sign_negative());
    assert!(v[7].is_nan() && v[7].is_sign_negative());
    let mut h = Tensor::from_slice(&[Float16::from_bits(0x8000), Float16::from_bits(0xc000)], &[2]).unwrap();
    h.apply_scalar(Op::Sign, 0.0, 0.0).unwrap();
    let hv: Vec<u16> = h.to_vec::<Float16>().unwrap().into_iter().map(|x| x.to_bits()).collect();
    assert_eq!(hv, vec![0x0000, 0xbc00]);
    // Integers (the minimum included), unsigned (top bit set is positive), bool (identity).
    let mut i = Tensor::from_slice(&[i64::MIN, -7, 0, 7, i64::MAX], &[5]).unwrap();
    i.sign().unwrap();
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![-1, -1, 0, 1, 1]);
    let mut u = Tensor::from_slice(&[0u64, 1, 1 << 63, u64::MAX], &[4]).unwrap();
    u.sign().unwrap();
    assert_eq!(u.to_vec::<u64>().unwrap(), vec![0, 1, 1, 1]);
    let mut b = Tensor::from_slice(&[true, false], &[2]).unwrap();
    b.sign().unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), vec![true, false]);
    // Complex: refused naming sgn, nothing written.
    let mut z = c64s(&[(1.0, 2.0)]);
    let err = z.sign().unwrap_err();
    assert_eq!(err.status(), Status::Dtype);
    assert!(err.message().contains("sgn"), "{}", err.message());
    assert_eq!(pairs(&z), vec![(1.0, 2.0)]);
}

#[test]
fn sign_through_transposed_and_reversed_views() {
    let base = Tensor::from_slice(&[-3i32, 0, 5, -1, 2, -8], &[2, 3]).unwrap();
    let mut v = base.transpose(0, 1).unwrap().flip(&[0]).unwrap();
    v.sign().unwrap();
    assert_eq!(base.to_vec::<i32>().unwrap(), vec![-1, 0, 1, -1, 1, -1]);
    let mut row = base.select(0, 0).unwrap();
    row.fill(-4.0).unwrap();
    let mut rev = row.flip(&[0]).unwrap();
    rev.sign().unwrap();
    assert_eq!(base.to_vec::<i32>().unwrap(), vec![-1, -1, -1, -1, 1, -1]);
}
