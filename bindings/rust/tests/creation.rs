//! Creation, host I/O, metadata, storages and raw handles.

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{iota, numel};
use stridemem::{BFloat16, Complex32, Complex64, DType, Device, Element, Float16, MemoryFormat, Status, Tensor, sys};

fn round_trip<T: Element + PartialEq + std::fmt::Debug>(data: &[T], shape: &[i64]) {
    let t = Tensor::from_slice(data, shape).unwrap();
    assert_eq!(t.dtype(), T::DTYPE);
    assert_eq!(t.device(), Device::Cpu);
    assert_eq!(t.shape(), shape);
    assert_eq!(t.numel() as usize, data.len());
    assert_eq!(t.nbytes() as usize, data.len() * T::DTYPE.size());
    assert_eq!(t.to_vec::<T>().unwrap(), data);
    let mut out = vec![data[0]; data.len()];
    t.copy_to_slice(&mut out).unwrap();
    assert_eq!(out, data);
    // The bytes are the host representation, bit for bit.
    let bytes = t.raw_bytes().unwrap();
    assert_eq!(bytes.len(), data.len() * T::DTYPE.size());
}

#[test]
fn from_slice_round_trips_every_element_type() {
    round_trip(&[true, false, true, true, false, false], &[2, 3]);
    round_trip(&[0u8, 1, 127, 128, 254, 255], &[3, 2]);
    round_trip(&[i8::MIN, -1, 0, 1, i8::MAX, 5], &[6]);
    round_trip(&[i16::MIN, -300, 0, 300, i16::MAX, 7], &[1, 6]);
    round_trip(&[i32::MIN, -70000, 0, 70000, i32::MAX, 9], &[2, 1, 3]);
    round_trip(&[i64::MIN, -(1 << 40), 0, 1 << 40, i64::MAX, 11], &[6, 1]);
    round_trip(&[-1.5f32, 0.0, 1e-30, 3.25, f32::MAX, f32::MIN_POSITIVE], &[2, 3]);
    round_trip(&[-1.5f64, 0.0, 1e-300, 3.25, f64::MAX, f64::MIN_POSITIVE], &[3, 2]);
    let halves: Vec<Float16> = [0.5f32, -2.0, 65504.0, 1e-7, 0.0, 3.0].iter().map(|&x| Float16::from_f32(x)).collect();
    round_trip(&halves, &[6]);
    let bhalves: Vec<BFloat16> = [0.5f32, -2.0, 1e30, 1e-30, 0.0, 3.0].iter().map(|&x| BFloat16::from_f32(x)).collect();
    round_trip(&bhalves, &[2, 3]);
    round_trip(&[0u16, 1, 0x7fff, 0x8000, u16::MAX, 300], &[3, 2]);
    round_trip(&[0u32, 1, 0x7fff_ffff, 0x8000_0000, u32::MAX, 70000], &[6]);
    round_trip(&[0u64, 1, i64::MAX as u64, 1 << 63, u64::MAX, 1 << 40], &[2, 3]);
    let c32 = [(1.5f32, -2.0f32), (0.0, 0.0), (-0.0, 1e-30), (f32::MAX, f32::MIN_POSITIVE), (3.0, 4.0), (-1.0, -1.0)];
    round_trip(&c32.map(Complex32::from), &[6]);
    let c64 = [(1.5f64, -2.0f64), (0.0, 0.0), (-0.0, 1e-300), (f64::MAX, f64::MIN_POSITIVE), (3.0, 4.0), (-1.0, -1.0)];
    round_trip(&c64.map(Complex64::from), &[1, 6]);
}

#[test]
fn new_dtypes_creation_and_zero_copy() {
    // zeros / full / arange for the unsigned and complex dtypes.
    for dtype in [DType::U16, DType::U32, DType::U64, DType::C64, DType::C128] {
        let z = Tensor::zeros(&[2, 2], dtype, Device::Cpu).unwrap();
        assert_eq!((z.dtype(), z.nbytes() as usize), (dtype, 4 * dtype.size()));
        assert!(z.raw_bytes().unwrap().iter().all(|&b| b == 0), "{dtype}");
        let f = Tensor::full(&[3], 7.0, dtype, Device::Cpu).unwrap();
        let back = f.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
        assert_eq!(back, vec![7.0; 3], "{dtype}");
    }
    let a = Tensor::arange(1.0, 3.0, 4, DType::U64, Device::Cpu).unwrap();
    assert_eq!(a.to_vec::<u64>().unwrap(), vec![1, 4, 7, 10]);
    let f = Tensor::full(&[2], -1.5, DType::C128, Device::Cpu).unwrap();
    assert_eq!(f.to_vec::<Complex64>().unwrap(), vec![Complex64::new(-1.5, 0.0); 2], "a real value: imag 0");
    // from_vec wraps the vector in place; a complex element is aligned as
    // its component, and writes through the tensor land in the vector.
    let data = vec![Complex64::new(1.0, 2.0), Complex64::new(3.0, 4.0), Complex64::new(5.0, 6.0)];
    let ptr = data.as_ptr() as usize;
    let t = Tensor::from_vec(data, &[3]).unwrap();
    assert_eq!(t.data_ptr().unwrap() as usize, ptr, "zero copy");
    let mut tail = t.narrow(0, 1, 2).unwrap();
    tail.mul_scalar(2.0).unwrap();
    assert_eq!(t.to_vec::<Complex64>().unwrap(),
               vec![Complex64::new(1.0, 2.0), Complex64::new(6.0, 8.0), Complex64::new(10.0, 12.0)]);
    // A complex128 element 8 (not 16) bytes aligned is fine: wrap the
    // doubles of a Vec<f64> starting at the second one.
    let doubles: Vec<f64> = (0..7).map(f64::from).collect();
    let base = doubles.as_ptr() as usize;
    let start = if base % 16 == 0 { 1 } else { 0 }; // 8 past a 16-byte boundary
    // SAFETY: 3 complex128 elements = 6 doubles from `start`, alive and
    // untouched while `w` lives; no deleter.
    let w = unsafe {
        Tensor::from_blob(doubles.as_ptr().add(start) as *mut c_void, &[3], None, DType::C128, Device::Cpu, None,
                          std::ptr::null_mut())
    }
    .unwrap();
    assert_eq!(w.data_ptr().unwrap() as usize % 16, 8);
    let s = start as f64;
    assert_eq!(w.to_vec::<Complex64>().unwrap()[2], Complex64::new(s + 4.0, s + 5.0));
    drop(w);
    // Four-byte alignment is not enough for complex128 (nor for uint64).
    // SAFETY: refused before anything is read.
    let bad = unsafe {
        Tensor::from_blob((doubles.as_ptr() as *mut u8).add(4) as *mut c_void, &[2], None, DType::C128, Device::Cpu,
                          None, std::ptr::null_mut())
    };
    assert!(bad.is_err());
    // The wrong element type for the dtype is refused.
    let u = Tensor::from_slice(&[1u32, 2], &[2]).unwrap();
    assert_eq!(u.to_vec::<i32>().unwrap_err().status(), Status::Dtype);
    assert_eq!(u.to_vec::<u32>().unwrap(), vec![1, 2]);
    let c = Tensor::from_slice(&[Complex32::new(1.0, 2.0)], &[1]).unwrap();
    assert_eq!(c.to_vec::<Complex64>().unwrap_err().status(), Status::Dtype);
    assert_eq!(c.to_vec::<u64>().unwrap_err().status(), Status::Dtype);
}

#[test]
fn bool_bytes_other_than_one_read_as_true() {
    // A u8 tensor reinterpreted as bool through a shared storage: 2 is
    // "true" for to_vec::<bool> (never an invalid Rust bool).
    let bytes = Tensor::from_slice(&[0u8, 1, 2, 255], &[4]).unwrap();
    let storage = bytes.storage().unwrap();
    let b = Tensor::from_storage(&storage, &[4], &[1], 0, DType::Bool).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), vec![false, true, true, true]);
    let mut out = [false; 4];
    b.copy_to_slice(&mut out).unwrap();
    assert_eq!(out, [false, true, true, true]);
}

#[test]
fn zero_dim_tensors() {
    let t = Tensor::from_slice(&[42i32], &[]).unwrap();
    assert_eq!(t.ndim(), 0);
    assert_eq!(t.shape(), &[] as &[i64]);
    assert_eq!(t.strides(), &[] as &[i64]);
    assert_eq!(t.numel(), 1);
    assert!(!t.is_empty());
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![42]);
    let e = Tensor::empty(&[], DType::F64, Device::Cpu).unwrap();
    assert_eq!((e.ndim(), e.numel(), e.nbytes()), (0, 1, 8));
}

#[test]
fn empty_tensors_have_no_elements() {
    let t = Tensor::zeros(&[3, 0, 2], DType::F32, Device::Cpu).unwrap();
    assert!(t.is_empty());
    assert_eq!(t.numel(), 0);
    assert_eq!(t.to_vec::<f32>().unwrap(), Vec::<f32>::new());
    let s = Tensor::from_slice::<f32>(&[], &[0]).unwrap();
    assert_eq!(s.shape(), &[0]);
}

#[test]
fn empty_is_row_major_with_the_asked_dtype() {
    for dtype in DType::ALL {
        let t = Tensor::empty(&[2, 3, 4], dtype, Device::Cpu).unwrap();
        assert_eq!(t.dtype(), dtype);
        assert_eq!(t.shape(), &[2, 3, 4]);
        assert_eq!(t.strides(), &[12, 4, 1]);
        assert_eq!(t.storage_offset(), 0);
        assert_eq!(t.nbytes(), 24 * dtype.size() as i64);
        assert!(t.storage_nbytes().unwrap() >= t.nbytes());
        assert!(t.is_contiguous().unwrap());
    }
}

#[test]
fn empty_strided_keeps_strides_and_sizes_the_storage_exactly() {
    let t = Tensor::empty_strided(&[2, 3], &[1, 2], DType::F32, Device::Cpu).unwrap();
    assert_eq!(t.strides(), &[1, 2]);
    assert_eq!(t.storage_nbytes().unwrap(), 6 * 4);
    assert!(!t.is_contiguous().unwrap());
    assert!(t.is_contiguous_in(MemoryFormat::Preserve).unwrap());
    // Gaps: the storage holds the elements the strides reach (max offset + 1).
    let g = Tensor::empty_strided(&[2, 2], &[10, 1], DType::I16, Device::Cpu).unwrap();
    assert_eq!(g.storage_nbytes().unwrap(), 12 * 2);
    // Negative strides are allowed.
    let n = Tensor::empty_strided(&[3, 2], &[-2, 1], DType::F64, Device::Cpu).unwrap();
    assert_eq!(n.strides(), &[-2, 1]);
    assert_eq!(n.storage_nbytes().unwrap(), 6 * 8);
    let err = Tensor::empty_strided(&[2, 3], &[1], DType::F32, Device::Cpu).unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument);
}

#[test]
fn zeros_and_full_for_every_dtype() {
    let z = Tensor::zeros(&[5], DType::I64, Device::Cpu).unwrap();
    assert_eq!(z.to_vec::<i64>().unwrap(), vec![0; 5]);
    assert_eq!(Tensor::zeros(&[3], DType::Bool, Device::Cpu).unwrap().to_vec::<bool>().unwrap(), vec![false; 3]);
    assert_eq!(Tensor::zeros(&[2], DType::F16, Device::Cpu).unwrap().to_vec::<Float16>().unwrap(), vec![Float16(0); 2]);

    assert_eq!(Tensor::full(&[2, 2], 2.5, DType::F32, Device::Cpu).unwrap().to_vec::<f32>().unwrap(), vec![2.5; 4]);
    assert_eq!(Tensor::full(&[3], 7.0, DType::I32, Device::Cpu).unwrap().to_vec::<i32>().unwrap(), vec![7; 3]);
    assert_eq!(Tensor::full(&[3], -3.0, DType::I8, Device::Cpu).unwrap().to_vec::<i8>().unwrap(), vec![-3; 3]);
    assert_eq!(Tensor::full(&[2], 1.0, DType::Bool, Device::Cpu).unwrap().to_vec::<bool>().unwrap(), vec![true; 2]);
    assert_eq!(
        Tensor::full(&[2], 1.5, DType::F16, Device::Cpu).unwrap().to_vec::<Float16>().unwrap(),
        vec![Float16(0x3e00); 2]
    );
    assert_eq!(
        Tensor::full(&[2], -2.0, DType::BF16, Device::Cpu).unwrap().to_vec::<BFloat16>().unwrap(),
        vec![BFloat16(0xc000); 2]
    );
    assert_eq!(Tensor::full(&[1], 0.1, DType::F64, Device::Cpu).unwrap().to_vec::<f64>().unwrap(), vec![0.1]);
}

#[test]
fn arange_counts_in_f64() {
    let t = Tensor::arange(1.0, 0.5, 5, DType::F32, Device::Cpu).unwrap();
    assert_eq!(t.shape(), &[5]);
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 1.5, 2.0, 2.5, 3.0]);
    let d = Tensor::arange(10.0, -3.0, 4, DType::I64, Device::Cpu).unwrap();
    assert_eq!(d.to_vec::<i64>().unwrap(), vec![10, 7, 4, 1]);
    let e = Tensor::arange(0.0, 1.0, 0, DType::F64, Device::Cpu).unwrap();
    assert!(e.is_empty());
    assert!(Tensor::arange(0.0, 1.0, -1, DType::F64, Device::Cpu).is_err());
}

#[test]
fn from_slice_checks_the_length_and_the_shape() {
    let err = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert_eq!(err.status(), Status::Shape);
    assert!(err.message().contains('4') && err.message().contains('3'), "{err}");
    // Negative sizes never reach the library as a byte count.
    let err = Tensor::from_slice(&[1.0f32, 2.0], &[-1, -2]).unwrap_err();
    assert_eq!(err.status(), Status::Shape);
    let err = Tensor::from_slice(&[0u8; 4], &[i64::MAX, 4]).unwrap_err();
    assert_eq!(err.status(), Status::Overflow);
}

#[test]
fn to_vec_checks_the_element_type() {
    let t = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
    let err = t.to_vec::<i64>().unwrap_err();
    assert_eq!(err.status(), Status::Dtype);
    assert!(err.message().contains("int32") && err.message().contains("int64"), "{err}");
    assert_eq!(t.to_vec::<u8>().unwrap_err().status(), Status::Dtype);
    let mut wrong_len = [0i32; 3];
    assert_eq!(t.copy_to_slice(&mut wrong_len).unwrap_err().status(), Status::Shape);
    let mut wrong_type = [0f32; 2];
    assert_eq!(t.copy_to_slice(&mut wrong_type).unwrap_err().status(), Status::Dtype);
}

#[test]
fn to_vec_of_a_strided_view_is_row_major() {
    let (t, _) = iota(&[2, 3]);
    let tt = t.transpose(0, 1).unwrap();
    assert_eq!(tt.to_vec::<f32>().unwrap(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(tt.raw_bytes().unwrap()[4..8], 3.0f32.to_ne_bytes());
}

#[test]
fn from_vec_is_zero_copy() {
    let v: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let ptr = v.as_ptr() as *mut c_void;
    let mut t = Tensor::from_vec(v, &[3, 4]).unwrap();
    assert_eq!(t.data_ptr().unwrap(), ptr);
    assert_eq!(t.to_vec::<f32>().unwrap()[11], 11.0);
    let view = t.select(0, 2).unwrap();
    t.add_scalar(1.0).unwrap();
    drop(t); // the view keeps the vector alive
    assert_eq!(view.to_vec::<f32>().unwrap(), vec![9.0, 10.0, 11.0, 12.0]);
    assert_eq!(
        Tensor::from_vec(vec![1u8, 2, 3], &[2]).unwrap_err().status(),
        Status::Shape
    );
    let empty = Tensor::from_vec(Vec::<i64>::new(), &[0, 5]).unwrap();
    assert!(empty.is_empty());
}

static BLOB_DELETES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_blob_delete(data: *mut c_void, ctx: *mut c_void) {
    assert_eq!(data, ctx, "the deleter gets the data pointer and the context given");
    // SAFETY: ctx is the Box<[f64; 6]> leaked by the test.
    drop(unsafe { Box::from_raw(ctx as *mut [f64; 6]) });
    BLOB_DELETES.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn from_blob_calls_the_deleter_once_when_the_last_view_dies() {
    let boxed = Box::new([0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let p = Box::into_raw(boxed) as *mut c_void;
    let before = BLOB_DELETES.load(Ordering::SeqCst);
    // Column-major 2 x 3 over the 6 values.
    // SAFETY: p addresses 6 f64 until the deleter frees it.
    let t = unsafe {
        Tensor::from_blob(p, &[2, 3], Some(&[1, 2]), DType::F64, Device::Cpu, Some(count_blob_delete), p)
    }
    .unwrap();
    assert_eq!(t.strides(), &[1, 2]);
    assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
    assert_eq!(t.data_ptr().unwrap(), p);
    let view = t.select(1, 2).unwrap();
    let clone = t.clone();
    drop(t);
    drop(clone);
    assert_eq!(BLOB_DELETES.load(Ordering::SeqCst), before, "a view is still alive");
    assert_eq!(view.to_vec::<f64>().unwrap(), vec![4.0, 5.0]);
    drop(view);
    assert_eq!(BLOB_DELETES.load(Ordering::SeqCst), before + 1);
}

static FAILED_BLOB_DELETES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_failed_blob_delete(_data: *mut c_void, _ctx: *mut c_void) {
    FAILED_BLOB_DELETES.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn from_blob_failure_leaves_the_memory_to_the_caller() {
    let mut data = [0u8; 16];
    let p = data.as_mut_ptr() as *mut c_void;
    let too_many = [1i64; stridemem::MAX_DIMS + 1];
    // SAFETY: data outlives the (failed) call.
    let err = unsafe {
        Tensor::from_blob(p, &too_many, None, DType::U8, Device::Cpu, Some(count_failed_blob_delete), p)
    }
    .unwrap_err();
    assert!(matches!(err.status(), Status::InvalidArgument | Status::Shape), "{err:?}");
    // SAFETY: as above; shape/strides length mismatch is caught before the call.
    let err2 = unsafe { Tensor::from_blob(p, &[4, 4], Some(&[4]), DType::U8, Device::Cpu, None, p) }.unwrap_err();
    assert_eq!(err2.status(), Status::InvalidArgument);
    assert_eq!(FAILED_BLOB_DELETES.load(Ordering::SeqCst), 0);
    assert_eq!(data[0], 0); // still ours, untouched
}

#[test]
fn metadata_of_views() {
    let (t, _) = iota(&[4, 5]);
    let v = t.narrow(0, 1, 2).unwrap().narrow(1, 2, 3).unwrap();
    assert_eq!(v.shape(), &[2, 3]);
    assert_eq!(v.strides(), &[5, 1]);
    assert_eq!(v.storage_offset(), 7);
    assert_eq!(v.numel(), 6);
    assert_eq!(v.nbytes(), 24);
    assert_eq!(v.storage_nbytes().unwrap(), t.storage_nbytes().unwrap());
    assert_eq!(v.dtype(), DType::F32);
    assert_eq!(v.device(), Device::Cpu);
    let base = t.data_ptr().unwrap() as usize;
    assert_eq!(v.data_ptr().unwrap() as usize, base + 7 * 4);
    assert!(v.same_storage(&t).unwrap());
    assert!(!v.is_contiguous().unwrap());
    assert!(!v.is_read_only().unwrap());
    let other = Tensor::zeros(&[4, 5], DType::F32, Device::Cpu).unwrap();
    assert!(!other.same_storage(&t).unwrap());
    assert_eq!(t.ndim(), 2);
}

#[test]
fn is_contiguous_in_memory_formats() {
    let (t, _) = iota(&[2, 3, 4, 5]);
    assert!(t.is_contiguous().unwrap());
    assert!(!t.is_contiguous_in(MemoryFormat::ChannelsLast).unwrap());
    // NCHW viewed from an NHWC buffer.
    let (nhwc, _) = iota(&[2, 4, 5, 3]);
    let nchw = nhwc.permute(&[0, 3, 1, 2]).unwrap();
    assert_eq!(nchw.shape(), &[2, 3, 4, 5]);
    assert!(nchw.is_contiguous_in(MemoryFormat::ChannelsLast).unwrap());
    assert!(!nchw.is_contiguous().unwrap());
    assert!(nchw.is_contiguous_in(MemoryFormat::Preserve).unwrap());
    let (t5, _) = iota(&[1, 2, 3, 4, 5]);
    assert!(!t5.is_contiguous_in(MemoryFormat::ChannelsLast3d).unwrap());
    assert!(!t5.permute(&[0, 1, 2, 4, 3]).unwrap().is_contiguous_in(MemoryFormat::ChannelsLast3d).unwrap());
    let (ndhwc, _) = iota(&[1, 3, 4, 5, 2]);
    let ncdhw = ndhwc.permute(&[0, 4, 1, 2, 3]).unwrap();
    assert!(ncdhw.is_contiguous_in(MemoryFormat::ChannelsLast3d).unwrap());
}

#[test]
fn version_counter_is_shared_by_views() {
    let (mut t, _) = iota(&[3, 3]);
    let row = t.select(0, 1).unwrap();
    let v0 = t.version_counter().unwrap();
    assert_eq!(row.version_counter().unwrap(), v0);
    t.add_scalar(1.0).unwrap();
    let v1 = row.version_counter().unwrap();
    assert!(v1 > v0);
    let mut row = row;
    row.zero().unwrap();
    assert!(t.version_counter().unwrap() > v1);
    // Reading does not bump it.
    let v2 = t.version_counter().unwrap();
    let _ = t.to_vec::<f32>().unwrap();
    let _ = t.transpose(0, 1).unwrap();
    assert_eq!(t.version_counter().unwrap(), v2);
}

#[test]
fn storages() {
    let (t, data) = iota(&[2, 6]);
    let s = t.storage().unwrap();
    assert_eq!(s.nbytes().unwrap(), 48);
    assert_eq!(s.device().unwrap(), Device::Cpu);
    assert_eq!(s.data_ptr().unwrap(), t.data_ptr().unwrap());
    let s2 = s.clone();
    let s3 = s.try_clone().unwrap();
    drop(s);
    // A tensor over the storage: 3 x 2, column stride 3, from element 3.
    let u = Tensor::from_storage(&s2, &[3, 2], &[1, 3], 3, DType::F32).unwrap();
    assert!(u.same_storage(&t).unwrap());
    assert_eq!(u.to_vec::<f32>().unwrap(), vec![3.0, 6.0, 4.0, 7.0, 5.0, 8.0]);
    // Another dtype over the same bytes.
    let raw = Tensor::from_storage(&s3, &[48], &[1], 0, DType::U8).unwrap();
    assert_eq!(raw.to_vec::<u8>().unwrap()[4..8], data[1].to_ne_bytes());
    // Bounds-checked.
    let err = Tensor::from_storage(&s2, &[13], &[1], 0, DType::F32).unwrap_err();
    assert_eq!(err.status(), Status::OutOfBounds);
    let err = Tensor::from_storage(&s2, &[2], &[1], 11, DType::F32).unwrap_err();
    assert_eq!(err.status(), Status::OutOfBounds);
    assert_eq!(
        Tensor::from_storage(&s2, &[2], &[], 0, DType::F32).unwrap_err().status(),
        Status::InvalidArgument
    );
    assert!(format!("{s2:?}").starts_with("Storage"));
}

#[test]
fn raw_handles_round_trip() {
    let (t, _) = iota(&[2, 2]);
    let raw = t.as_raw();
    let t2 = t.clone();
    let owned = t.into_raw();
    assert_eq!(owned, raw);
    // SAFETY: `owned` is the reference given up by into_raw.
    let back = unsafe { Tensor::from_raw(owned) }.unwrap();
    assert_eq!(back.shape(), &[2, 2]);
    assert_eq!(back.as_raw(), t2.as_raw());
    // SAFETY: NULL is refused before any use.
    let err = unsafe { Tensor::from_raw(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(err.status(), Status::InvalidHandle);
    // sys directly: the C contract for a NULL handle.
    let mut n = 0i32;
    // SAFETY: the library checks handles; NULL is an error, not a crash.
    assert_eq!(unsafe { sys::sm_ndim(std::ptr::null_mut(), &mut n) }, sys::SM_ERR_INVALID_HANDLE);
    // SAFETY: releasing NULL is a no-op.
    assert_eq!(unsafe { sys::sm_tensor_release(std::ptr::null_mut()) }, sys::SM_OK);
}

#[test]
fn clone_shares_the_handle_and_drop_order_does_not_matter() {
    let (t, _) = iota(&[3]);
    let c = t.clone();
    assert_eq!(c.as_raw(), t.as_raw());
    drop(t);
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0]);
    let d = c.try_clone().unwrap();
    drop(c);
    assert_eq!(d.numel(), 3);
    let dbg = format!("{d:?}");
    assert!(dbg.contains("shape: [3]") && dbg.contains("F32"), "{dbg}");
}

#[test]
fn shape_is_cached_per_handle() {
    let shape = [2i64, 3, 4, 5, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2];
    assert_eq!(shape.len(), stridemem::MAX_DIMS);
    let t = Tensor::zeros(&shape, DType::U8, Device::Cpu).unwrap();
    assert_eq!(t.shape(), &shape);
    assert_eq!(t.numel() as usize, numel(&shape));
    let too_many = [1i64; stridemem::MAX_DIMS + 1];
    assert!(Tensor::zeros(&too_many, DType::U8, Device::Cpu).is_err());
}
