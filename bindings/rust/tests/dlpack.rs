//! DLPack: zero-copy export and import, legacy and versioned, deleters,
//! read-only imports, negative strides; exports with options (copy modes,
//! the consumer's device, stack tensors).

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{gather, iota};
use stridemem::{Complex32, DType, Device, DlpackCopy, DlpackExport, DlpackTensor, Status, Tensor, sys};

/// What a test-made managed tensor owns; freed by its deleter.
struct Owned {
    data: Vec<f32>,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    deletes: &'static AtomicUsize,
}

unsafe extern "C" fn delete_legacy(m: *mut sys::sm_DLManagedTensor) {
    // SAFETY: m and its ctx were leaked by `foreign` below; called once.
    unsafe {
        let owned = Box::from_raw((*m).manager_ctx as *mut Owned);
        owned.deletes.fetch_add(1, Ordering::SeqCst);
        drop(Box::from_raw(m));
    }
}

unsafe extern "C" fn delete_versioned(m: *mut sys::sm_DLManagedTensorVersioned) {
    // SAFETY: as above.
    unsafe {
        let owned = Box::from_raw((*m).manager_ctx as *mut Owned);
        owned.deletes.fetch_add(1, Ordering::SeqCst);
        drop(Box::from_raw(m));
    }
}

struct Spec {
    dtype: sys::sm_DLDataType,
    device: sys::sm_DLDevice,
    flags: u64,
    byte_offset: u64,
}

const F32: sys::sm_DLDataType = sys::sm_DLDataType { code: sys::sm_kDLFloat, bits: 32, lanes: 1 };
const CPU: sys::sm_DLDevice = sys::sm_DLDevice { device_type: sys::sm_kDLCPU, device_id: 0 };

fn plain() -> Spec {
    Spec { dtype: F32, device: CPU, flags: 0, byte_offset: 0 }
}

/// A managed tensor made here (as another framework would), over `data`.
fn foreign(
    data: Vec<f32>,
    shape: &[i64],
    strides: Option<&[i64]>,
    versioned: bool,
    spec: Spec,
    deletes: &'static AtomicUsize,
) -> DlpackTensor {
    let mut owned = Box::new(Owned {
        data,
        shape: shape.to_vec(),
        strides: strides.map(|s| s.to_vec()),
        deletes,
    });
    let dl = sys::sm_DLTensor {
        data: owned.data.as_mut_ptr() as *mut c_void,
        device: spec.device,
        ndim: shape.len() as i32,
        dtype: spec.dtype,
        shape: owned.shape.as_mut_ptr(),
        strides: owned.strides.as_mut().map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: spec.byte_offset,
    };
    let ctx = Box::into_raw(owned) as *mut c_void;
    let ptr = if versioned {
        Box::into_raw(Box::new(sys::sm_DLManagedTensorVersioned {
            version: sys::sm_DLPackVersion { major: 1, minor: 0 },
            manager_ctx: ctx,
            deleter: Some(delete_versioned),
            flags: spec.flags,
            dl_tensor: dl,
        })) as *mut c_void
    } else {
        Box::into_raw(Box::new(sys::sm_DLManagedTensor { dl_tensor: dl, manager_ctx: ctx, deleter: Some(delete_legacy) }))
            as *mut c_void
    };
    // SAFETY: a valid managed tensor of the stated kind, given up here.
    unsafe { DlpackTensor::from_raw(ptr, versioned) }.unwrap()
}

#[test]
fn export_describes_the_tensor_zero_copy() {
    let (t, _) = iota(&[2, 3]);
    let tt = t.transpose(0, 1).unwrap().narrow(0, 1, 2).unwrap(); // [2, 2] strides [1, 3] offset 1
    for versioned in [false, true] {
        let m = tt.to_dlpack(versioned).unwrap();
        assert_eq!(m.is_versioned(), versioned);
        let dl = m.dl_tensor();
        assert_eq!(m.shape(), &[2, 2]);
        assert_eq!(m.strides(), Some(&[1i64, 3][..]));
        assert_eq!(dl.dtype, F32);
        assert_eq!(dl.device, CPU);
        assert_eq!(dl.ndim, 2);
        // As PyTorch exports: data at element [0, 0], byte_offset 0.
        assert_eq!(dl.data, tt.data_ptr().unwrap());
        assert_eq!(dl.byte_offset, 0);
        if versioned {
            let (major, _minor) = m.version().unwrap();
            assert_eq!(major, sys::SM_DLPACK_MAJOR_VERSION);
            assert_eq!(m.flags() & sys::SM_DLPACK_FLAG_BITMASK_READ_ONLY, 0);
            assert_eq!(m.flags() & sys::SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0);
        } else {
            assert_eq!(m.version(), None);
            assert_eq!(m.flags(), 0);
        }
        assert!(format!("{m:?}").contains("DlpackTensor"));
    }
}

#[test]
fn export_dtype_codes() {
    let expect = [
        (DType::Bool, sys::sm_kDLBool, 8),
        (DType::U8, sys::sm_kDLUInt, 8),
        (DType::I8, sys::sm_kDLInt, 8),
        (DType::I16, sys::sm_kDLInt, 16),
        (DType::I32, sys::sm_kDLInt, 32),
        (DType::I64, sys::sm_kDLInt, 64),
        (DType::F16, sys::sm_kDLFloat, 16),
        (DType::BF16, sys::sm_kDLBfloat, 16),
        (DType::F32, sys::sm_kDLFloat, 32),
        (DType::F64, sys::sm_kDLFloat, 64),
        (DType::U16, sys::sm_kDLUInt, 16),
        (DType::U32, sys::sm_kDLUInt, 32),
        (DType::U64, sys::sm_kDLUInt, 64),
        (DType::C64, sys::sm_kDLComplex, 64),
        (DType::C128, sys::sm_kDLComplex, 128),
    ];
    assert_eq!(expect.len(), DType::ALL.len(), "every dtype");
    for (dtype, code, bits) in expect {
        let t = Tensor::zeros(&[3], dtype, Device::Cpu).unwrap();
        let m = t.to_dlpack(true).unwrap();
        assert_eq!(m.dl_tensor().dtype, sys::sm_DLDataType { code, bits, lanes: 1 }, "{dtype}");
        // And it comes back as the same dtype.
        let back = Tensor::from_dlpack(m).unwrap();
        assert_eq!(back.dtype(), dtype);
    }
}

#[test]
fn round_trip_shares_memory() {
    let (t, _) = iota(&[3, 4]);
    for versioned in [false, true] {
        let mut back = Tensor::from_dlpack(t.to_dlpack(versioned).unwrap()).unwrap();
        assert_eq!(back.data_ptr().unwrap(), t.data_ptr().unwrap());
        assert_eq!(back.shape(), t.shape());
        assert_eq!(back.strides(), t.strides());
        back.add_scalar(1.0).unwrap();
    }
    assert_eq!(t.to_vec::<f32>().unwrap()[0], 2.0, "both imports wrote to t's memory");
    // The export keeps the storage alive after the tensor is gone.
    let m = t.to_dlpack(true).unwrap();
    let ptr = t.data_ptr().unwrap();
    drop(t);
    let back = Tensor::from_dlpack(m).unwrap();
    assert_eq!(back.data_ptr().unwrap(), ptr);
    assert_eq!(back.to_vec::<f32>().unwrap()[11], 13.0);
}

#[test]
fn import_calls_the_deleter_once_when_the_last_view_dies() {
    static LEGACY: AtomicUsize = AtomicUsize::new(0);
    static VERSIONED: AtomicUsize = AtomicUsize::new(0);
    for (versioned, counter) in [(false, &LEGACY), (true, &VERSIONED)] {
        let data: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let ptr = data.as_ptr() as usize;
        let m = foreign(data, &[2, 3], None, versioned, plain(), counter);
        let t = Tensor::from_dlpack(m).unwrap();
        assert_eq!(t.data_ptr().unwrap() as usize, ptr, "zero copy");
        assert_eq!(t.strides(), &[3, 1], "NULL strides are row-major");
        assert!(!t.is_read_only().unwrap());
        let col = t.select(1, 2).unwrap();
        let clone = t.clone();
        drop(t);
        drop(clone);
        assert_eq!(counter.load(Ordering::SeqCst), 0, "a view is alive");
        assert_eq!(col.to_vec::<f32>().unwrap(), vec![2.0, 5.0]);
        let mut col = col;
        col.fill(9.0).unwrap();
        drop(col);
        assert_eq!(counter.load(Ordering::SeqCst), 1, "deleted exactly once");
    }
}

#[test]
fn import_honours_strides_and_byte_offset() {
    static DELETES: AtomicUsize = AtomicUsize::new(0);
    let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let spec = Spec { byte_offset: 8, ..plain() };
    let m = foreign(data, &[3, 2], Some(&[1, 3]), true, spec, &DELETES);
    let base = m.dl_tensor().data as usize;
    let t = Tensor::from_dlpack(m).unwrap();
    assert_eq!(t.data_ptr().unwrap() as usize, base + 8);
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![2., 5., 3., 6., 4., 7.]);
    drop(t);
    assert_eq!(DELETES.load(Ordering::SeqCst), 1);
}

#[test]
fn read_only_imports_refuse_writes() {
    static DELETES: AtomicUsize = AtomicUsize::new(0);
    let spec = Spec { flags: sys::SM_DLPACK_FLAG_BITMASK_READ_ONLY, ..plain() };
    let m = foreign(vec![1.0, 2.0, 3.0], &[3], None, true, spec, &DELETES);
    let mut t = Tensor::from_dlpack(m).unwrap();
    assert!(t.is_read_only().unwrap());
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(t.fill(0.0).unwrap_err().status(), Status::ReadOnly);
    assert_eq!(t.copy_from(&Tensor::zeros(&[3], DType::F32, Device::Cpu).unwrap()).unwrap_err().status(), Status::ReadOnly);
    let mut view = t.narrow(0, 1, 2).unwrap();
    assert!(view.is_read_only().unwrap());
    assert_eq!(view.neg().unwrap_err().status(), Status::ReadOnly);
    // A copy is writable.
    let mut copy = t.clone_data(stridemem::MemoryFormat::Contiguous).unwrap();
    assert!(!copy.is_read_only().unwrap());
    copy.fill(5.0).unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    drop((t, view));
    assert_eq!(DELETES.load(Ordering::SeqCst), 1);
}

#[test]
fn refused_imports_stay_with_the_caller() {
    static DELETES: AtomicUsize = AtomicUsize::new(0);
    // complex32 (two halves) has no stridemem dtype.
    let complex = Spec { dtype: sys::sm_DLDataType { code: sys::sm_kDLComplex, bits: 32, lanes: 1 }, ..plain() };
    let lanes = Spec { dtype: sys::sm_DLDataType { code: sys::sm_kDLFloat, bits: 32, lanes: 4 }, ..plain() };
    let odd_bits = Spec { dtype: sys::sm_DLDataType { code: sys::sm_kDLFloat, bits: 24, lanes: 1 }, ..plain() };
    let opencl = Spec { device: sys::sm_DLDevice { device_type: 4, device_id: 0 }, ..plain() };
    let mut refused = 0;
    for spec in [complex, lanes, odd_bits, opencl] {
        let m = foreign(vec![0.0; 4], &[4], None, true, spec, &DELETES);
        // Through sys: on failure the caller still owns it.
        let mut out: sys::sm_tensor = std::ptr::null_mut();
        // SAFETY: a valid versioned managed tensor.
        let code = unsafe { sys::sm_from_dlpack(m.as_ptr(), 1, &mut out) };
        assert_ne!(code, sys::SM_OK);
        assert!(out.is_null());
        assert_eq!(DELETES.load(Ordering::SeqCst), refused, "not deleted by a refused import");
        // Through the safe API: the error, and the deleter runs as it drops.
        let err = Tensor::from_dlpack(m).unwrap_err();
        assert!(!err.message().is_empty());
        refused += 1;
        assert_eq!(DELETES.load(Ordering::SeqCst), refused);
    }
    // A major version from the future is refused too.
    let m = foreign(vec![0.0; 2], &[2], None, true, plain(), &DELETES);
    // SAFETY: we own m's pointee and may edit it.
    unsafe { (*(m.as_ptr() as *mut sys::sm_DLManagedTensorVersioned)).version.major = 99 };
    assert!(Tensor::from_dlpack(m).is_err());
    assert_eq!(DELETES.load(Ordering::SeqCst), refused + 1);
}

#[test]
fn imports_of_the_new_dtypes_read_the_foreign_memory() {
    static DELETES: AtomicUsize = AtomicUsize::new(0);
    // Four f32 seen as two complex64 elements (re, im pairs), zero copy.
    let spec = Spec { dtype: sys::sm_DLDataType { code: sys::sm_kDLComplex, bits: 64, lanes: 1 }, ..plain() };
    let m = foreign(vec![1.0, 2.0, 3.0, -4.0], &[2], None, true, spec, &DELETES);
    let ptr = m.dl_tensor().data;
    let mut t = Tensor::from_dlpack(m).unwrap();
    assert_eq!((t.dtype(), t.data_ptr().unwrap()), (DType::C64, ptr));
    assert_eq!(t.to_vec::<Complex32>().unwrap(), vec![Complex32::new(1.0, 2.0), Complex32::new(3.0, -4.0)]);
    t.neg().unwrap();
    let back = t.to_dlpack(true).unwrap();
    assert_eq!(back.dl_tensor().dtype, sys::sm_DLDataType { code: sys::sm_kDLComplex, bits: 64, lanes: 1 });
    // SAFETY: the export points at two complex64 = four f32 of live memory.
    let floats = unsafe { std::slice::from_raw_parts(back.dl_tensor().data as *const f32, 4) };
    assert_eq!(floats, &[-1.0, -2.0, -3.0, 4.0]);
    drop((t, back));
    assert_eq!(DELETES.load(Ordering::SeqCst), 1);
    // The same bits as uint32 (kDLUInt 32), through a byte offset.
    let spec = Spec { dtype: sys::sm_DLDataType { code: sys::sm_kDLUInt, bits: 32, lanes: 1 }, byte_offset: 4, ..plain() };
    let m = foreign(vec![0.0, 1.0, -2.0], &[2], None, false, spec, &DELETES);
    let u = Tensor::from_dlpack(m).unwrap();
    assert_eq!(u.to_vec::<u32>().unwrap(), vec![1.0f32.to_bits(), (-2.0f32).to_bits()]);
    drop(u);
    assert_eq!(DELETES.load(Ordering::SeqCst), 2);
}

#[test]
fn dropping_an_unconsumed_export_frees_it() {
    static DELETES: AtomicUsize = AtomicUsize::new(0);
    let m = foreign(vec![1.0; 2], &[2], None, false, plain(), &DELETES);
    drop(m);
    assert_eq!(DELETES.load(Ordering::SeqCst), 1);
    // into_raw hands ownership over: nothing runs until the consumer does.
    static LATER: AtomicUsize = AtomicUsize::new(0);
    let m = foreign(vec![1.0; 2], &[2], None, false, plain(), &LATER);
    let raw = m.into_raw() as *mut sys::sm_DLManagedTensor;
    assert_eq!(LATER.load(Ordering::SeqCst), 0);
    // SAFETY: we are the consumer now: call the deleter once.
    unsafe { ((*raw).deleter.unwrap())(raw) };
    assert_eq!(LATER.load(Ordering::SeqCst), 1);
}

#[test]
fn negative_strides_export_as_is_or_normalized() {
    let (t, data) = iota(&[2, 3]);
    let f = t.flip(&[1]).unwrap();
    // Zero copy, negative strides kept.
    let m = f.to_dlpack(true).unwrap();
    assert_eq!(m.strides(), Some(&[3i64, -1][..]));
    assert_eq!(m.dl_tensor().data, f.data_ptr().unwrap());
    assert_eq!(m.flags() & sys::SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0);
    let back = Tensor::from_dlpack(m).unwrap();
    assert_eq!(back.to_vec::<f32>().unwrap(), vec![2., 1., 0., 5., 4., 3.]);
    // Normalized for consumers that cannot take them: a dense copy, flagged.
    for versioned in [false, true] {
        let (n, copied) = f.to_dlpack_normalized(versioned).unwrap();
        assert!(copied);
        if versioned {
            assert_ne!(n.flags() & sys::SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0);
        }
        assert!(n.strides().is_none_or(|s| s.iter().all(|&x| x >= 0)), "{n:?}");
        assert_ne!(n.dl_tensor().data, f.data_ptr().unwrap());
        let nb = Tensor::from_dlpack(n).unwrap();
        assert_eq!(nb.to_vec::<f32>().unwrap(), vec![2., 1., 0., 5., 4., 3.]);
        assert!(!nb.same_storage(&t).unwrap());
    }
    // Positive strides stay zero-copy even when normalizing.
    let (n, copied) = t.to_dlpack_normalized(true).unwrap();
    assert!(!copied);
    assert_eq!(n.flags() & sys::SM_DLPACK_FLAG_BITMASK_IS_COPIED, 0);
    assert_eq!(n.dl_tensor().data, t.data_ptr().unwrap());
    assert_eq!(Tensor::from_dlpack(n).unwrap().to_vec::<f32>().unwrap(), data);
}

#[test]
fn export_of_a_popped_stack_tensor_is_refused() {
    let stack = stridemem::Stack::new(Device::Cpu, 1024).unwrap();
    let mark = stack.mark().unwrap();
    let t = stack.push(&[4], DType::F32).unwrap();
    stack.pop_to(mark).unwrap();
    assert_eq!(t.to_dlpack(true).unwrap_err().status(), Status::InvalidHandle);
}

fn versioned() -> DlpackExport {
    DlpackExport::new(true)
}

#[test]
fn export_options_map_to_the_c_flags() {
    assert_eq!(DlpackExport::new(false).flags(), 0);
    assert_eq!(versioned().flags(), sys::SM_DLPACK_VERSIONED);
    let all = DlpackExport { normalize: true, copy: DlpackCopy::Always, ..versioned() };
    assert_eq!(all.flags(), sys::SM_DLPACK_VERSIONED | sys::SM_DLPACK_NORMALIZE | sys::SM_DLPACK_COPY);
    let never = DlpackExport { copy: DlpackCopy::Never, ..DlpackExport::new(false) };
    assert_eq!(never.flags(), sys::SM_DLPACK_NO_COPY);
    assert_eq!(DlpackCopy::default(), DlpackCopy::IfNeeded);
}

#[test]
fn copy_always_exports_a_fresh_row_major_copy() {
    let (t, data) = iota(&[2, 3]);
    let tt = t.transpose(0, 1).unwrap();
    for v in [false, true] {
        let (m, copied) = tt.to_dlpack_with(DlpackExport { copy: DlpackCopy::Always, ..DlpackExport::new(v) }).unwrap();
        assert!(copied);
        assert_eq!(m.is_copied(), v, "only a versioned export can carry IS_COPIED");
        assert_ne!(m.dl_tensor().data, t.data_ptr().unwrap());
        assert_eq!(m.shape(), &[3, 2]);
        assert!(m.strides().is_none_or(|s| s == [2, 1]), "{m:?}");
        let back = Tensor::from_dlpack(m).unwrap();
        assert!(!back.same_storage(&t).unwrap());
        assert_eq!(back.to_vec::<f32>().unwrap(), gather(&data, &[3, 2], &[1, 3], 0));
    }
    // Writes to the copy stay there.
    let (m, _) = t.to_dlpack_with(DlpackExport { copy: DlpackCopy::Always, ..versioned() }).unwrap();
    let mut back = Tensor::from_dlpack(m).unwrap();
    back.fill(-1.0).unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), data);
}

#[test]
fn copy_if_needed_and_never_share_memory_when_they_can() {
    let (t, _) = iota(&[2, 3]);
    for copy in [DlpackCopy::IfNeeded, DlpackCopy::Never] {
        for device in [None, Some(Device::Cpu)] {
            let (m, copied) = t.to_dlpack_with(DlpackExport { copy, device, ..versioned() }).unwrap();
            assert!(!copied, "{copy:?} {device:?}");
            assert!(!m.is_copied());
            assert_eq!(m.dl_tensor().data, t.data_ptr().unwrap());
        }
    }
}

#[test]
fn copy_never_refuses_an_export_that_needs_a_copy() {
    let (t, _) = iota(&[2, 3]);
    let f = t.flip(&[1]).unwrap();
    let how = DlpackExport { normalize: true, copy: DlpackCopy::Never, ..versioned() };
    let err = f.to_dlpack_with(how).unwrap_err();
    assert_eq!(err.status(), Status::Unsupported);
    assert!(err.message().contains("negative"), "{err}");
    // The same options on positive strides: nothing to copy, so fine.
    let (m, copied) = t.to_dlpack_with(how).unwrap();
    assert!(!copied);
    assert_eq!(m.dl_tensor().data, t.data_ptr().unwrap());
    // Another device with no copy allowed: refused (Device without a GPU,
    // Unsupported with one).
    let err = t.to_dlpack_with(DlpackExport { copy: DlpackCopy::Never, device: Some(Device::Cuda(0)), ..versioned() })
        .unwrap_err();
    assert!(matches!(err.status(), Status::Unsupported | Status::Device), "{err}");
}

#[test]
fn export_to_another_device_copies_there() {
    let (t, data) = iota(&[2, 3]);
    let how = DlpackExport { device: Some(Device::Cuda(0)), ..versioned() };
    if stridemem::cuda_device_count().unwrap() == 0 {
        assert_eq!(t.to_dlpack_with(how).unwrap_err().status(), Status::Device);
        return;
    }
    let (m, copied) = t.to_dlpack_with(how).unwrap();
    assert!(copied && m.is_copied());
    assert_eq!(m.dl_tensor().device.device_type, sys::sm_kDLCUDA);
    let back = Tensor::from_dlpack(m).unwrap();
    assert_eq!(back.device(), Device::Cuda(0));
    assert_eq!(back.to_device(Device::Cpu).unwrap().to_vec::<f32>().unwrap(), data);
}

#[test]
fn stack_tensors_export_only_as_a_copy() {
    let stack = stridemem::Stack::new(Device::Cpu, 1024).unwrap();
    let mut t = stack.push(&[4], DType::F32).unwrap();
    t.copy_from(&Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap()).unwrap();
    for copy in [DlpackCopy::IfNeeded, DlpackCopy::Never] {
        let err = t.to_dlpack_with(DlpackExport { copy, ..versioned() }).unwrap_err();
        assert_eq!(err.status(), Status::Unsupported, "{copy:?}");
    }
    let (m, copied) = t.to_dlpack_with(DlpackExport { copy: DlpackCopy::Always, ..versioned() }).unwrap();
    assert!(copied && m.is_copied());
    drop(t);
    drop(stack);
    // The copy outlives the stack.
    assert_eq!(Tensor::from_dlpack(m).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
}
