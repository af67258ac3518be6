//! Error and Status: codes, messages, Display, std::error::Error, per-thread
//! messages, invalid handles.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::iota;
use stridemem::{DType, Device, Error, Stack, Status, Tensor, sys};

#[test]
fn status_codes_are_the_frozen_integers() {
    let all = [
        (Status::InvalidArgument, 1),
        (Status::InvalidHandle, 2),
        (Status::OutOfMemory, 3),
        (Status::Shape, 4),
        (Status::OutOfBounds, 5),
        (Status::Dtype, 6),
        (Status::Device, 7),
        (Status::Overlap, 8),
        (Status::Overflow, 9),
        (Status::Unsupported, 10),
        (Status::Cuda, 11),
        (Status::Internal, 12),
        (Status::ReadOnly, 13),
    ];
    let mut descriptions = std::collections::HashSet::new();
    for (status, code) in all {
        assert_eq!(status.code(), code);
        assert_eq!(Status::from_code(code), status);
        let d = status.description();
        assert!(!d.is_empty());
        assert!(descriptions.insert(d), "each code has its own description: {d}");
        assert_eq!(status.to_string(), d);
    }
    // Codes a later library adds are accepted.
    assert_eq!(Status::from_code(99), Status::Unknown(99));
    assert_eq!(Status::Unknown(99).code(), 99);
    assert!(!Status::Unknown(99).description().is_empty());
}

#[test]
fn errors_carry_status_and_the_library_message() {
    let (t, _) = iota(&[2, 3]);
    let err = t.transpose(0, 1).unwrap().view(&[6]).unwrap_err();
    assert_eq!(err.status(), Status::Shape);
    assert_eq!(err.code(), sys::SM_ERR_SHAPE);
    // The message names the call and the offending values.
    let msg = err.message();
    assert!(msg.contains("view"), "{msg}");
    assert!(msg.contains('6'), "{msg}");
    // Display: the status description, then the message.
    let shown = err.to_string();
    assert!(shown.starts_with(Status::Shape.description()), "{shown}");
    assert!(shown.ends_with(msg), "{shown}");
    let dbg = format!("{err:?}");
    assert!(dbg.contains("Shape") && dbg.contains("code: 4"), "{dbg}");
}

#[test]
fn messages_describe_the_arguments() {
    let (t, _) = iota(&[4]);
    let err = t.select(0, 7).unwrap_err();
    assert_eq!(err.status(), Status::OutOfBounds);
    assert!(err.message().contains('7'), "{err}");
    let err = t.narrow(0, 2, 5).unwrap_err();
    assert!(err.message().contains("narrow"), "{err}");
    let err = t.slice(0, None, None, 0).unwrap_err();
    assert!(err.message().contains("step"), "{err}");
}

#[test]
fn error_is_a_std_error() {
    fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (t, _) = iota(&[3]);
        t.select(0, 5)?;
        Ok(())
    }
    let e = run().unwrap_err();
    let e: &Error = e.downcast_ref::<Error>().expect("our Error");
    assert_eq!(e.status(), Status::OutOfBounds);
    assert!(std::error::Error::source(e).is_none());
    fn assert_traits<T: std::error::Error + Send + Sync + Clone + PartialEq + 'static>() {}
    assert_traits::<Error>();
}

#[test]
fn messages_are_per_thread() {
    // Two threads fail in different ways, over and over, at the same time:
    // each error carries its own call's message, never the other thread's.
    let threads: Vec<_> = (0..2)
        .map(|k| {
            std::thread::spawn(move || {
                let (t, _) = iota(&[4]);
                for _ in 0..500 {
                    if k == 0 {
                        let e = t.select(0, 9).unwrap_err();
                        assert_eq!(e.status(), Status::OutOfBounds);
                        assert!(e.message().contains("select"), "{e}");
                    } else {
                        let e = t.view(&[3]).unwrap_err();
                        assert_eq!(e.status(), Status::Shape);
                        assert!(e.message().contains("view"), "{e}");
                    }
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
}

#[test]
fn stale_handles_are_invalid_not_corrupt() {
    let stack = Stack::new(Device::Cpu, 4096).unwrap();
    let mark = stack.mark().unwrap();
    let mut a = stack.push(&[8], DType::I32).unwrap();
    a.fill(3.0).unwrap();
    let view = a.narrow(0, 2, 2).unwrap();
    stack.pop_to(mark).unwrap();
    // Metadata is cached per handle and still readable...
    assert_eq!(a.shape(), &[8]);
    // ...but every library call on the popped tensor or its views fails.
    assert_eq!(a.to_vec::<i32>().unwrap_err().status(), Status::InvalidHandle);
    assert_eq!(view.to_vec::<i32>().unwrap_err().status(), Status::InvalidHandle);
    assert_eq!(a.fill(1.0).unwrap_err().status(), Status::InvalidHandle);
    assert_eq!(a.narrow(0, 0, 1).unwrap_err().status(), Status::InvalidHandle);
    assert_eq!(a.data_ptr().unwrap_err().status(), Status::InvalidHandle);
    let ok = Tensor::zeros(&[8], DType::I32, Device::Cpu).unwrap();
    let mut ok2 = ok.clone();
    assert_eq!(ok2.copy_from(&a).unwrap_err().status(), Status::InvalidHandle);
    assert_eq!(a.same_storage(&ok).unwrap_err().status(), Status::InvalidHandle);
    // A new push over the same bytes is unaffected by the stale handles.
    let mut b = stack.push(&[8], DType::I32).unwrap();
    b.fill(5.0).unwrap();
    drop(a);
    drop(view);
    assert_eq!(b.to_vec::<i32>().unwrap(), vec![5; 8]);
}

/// stridemem.h: after sm_stack_pop_to, "any call but release returns
/// SM_ERR_INVALID_HANDLE" -- sm_tensor_retain included. Clone panics with
/// the error, try_clone returns it.
#[test]
fn retain_of_a_popped_tensor_is_refused() {
    let stack = Stack::new(Device::Cpu, 1024).unwrap();
    let mark = stack.mark().unwrap();
    let a = stack.push(&[8], DType::I32).unwrap();
    stack.pop_to(mark).unwrap();
    assert_eq!(a.try_clone().map(|_| ()).unwrap_err().status(), Status::InvalidHandle);
    let panic = catch_unwind(AssertUnwindSafe(|| a.clone())).unwrap_err();
    let text = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("Tensor::clone"), "{text}");
}

#[test]
fn handles_from_elsewhere_are_refused() {
    // A forged handle (an address that was never issued).
    let mut n = 0i32;
    let forged = 0x1000 as sys::sm_tensor;
    // SAFETY: the library checks handles before use: an error, never a crash.
    assert_eq!(unsafe { sys::sm_ndim(forged, &mut n) }, sys::SM_ERR_INVALID_HANDLE);
    // A released one.
    let t = Tensor::zeros(&[2], DType::F32, Device::Cpu).unwrap();
    let raw = t.into_raw();
    // SAFETY: we own this reference and release it once.
    assert_eq!(unsafe { sys::sm_tensor_release(raw) }, sys::SM_OK);
    // SAFETY: as above.
    assert_eq!(unsafe { sys::sm_ndim(raw, &mut n) }, sys::SM_ERR_INVALID_HANDLE);
    // SAFETY: from_raw checks the handle and gives the error back.
    let err = unsafe { Tensor::from_raw(raw) }.unwrap_err();
    assert_eq!(err.status(), Status::InvalidHandle);
    // NULL out-pointers are invalid arguments.
    let t = Tensor::zeros(&[2], DType::F32, Device::Cpu).unwrap();
    // SAFETY: the library checks out-pointers.
    assert_eq!(unsafe { sys::sm_ndim(t.as_raw(), std::ptr::null_mut()) }, sys::SM_ERR_INVALID_ARGUMENT);
}

#[test]
fn bad_arguments() {
    assert!(Tensor::zeros(&[-1], DType::F32, Device::Cpu).is_err());
    assert_eq!(
        Tensor::zeros(&[i64::MAX, i64::MAX], DType::F32, Device::Cpu).unwrap_err().status(),
        Status::Overflow
    );
    let huge = Tensor::empty(&[1 << 62], DType::F64, Device::Cpu).unwrap_err();
    assert!(matches!(huge.status(), Status::Overflow | Status::OutOfMemory), "{huge:?}");
    assert_eq!(
        Tensor::zeros(&[2], DType::F32, Device::Cuda(-1)).unwrap_err().status(),
        Status::Device
    );
    // A device type code the library does not know, through sys.
    let mut out: sys::sm_tensor = std::ptr::null_mut();
    let bogus = sys::sm_device { type_: 42, index: 0 };
    // SAFETY: valid pointers; the library checks the device.
    let code = unsafe { sys::sm_zeros([2i64].as_ptr(), 1, sys::SM_FLOAT32, bogus, &mut out) };
    assert_ne!(code, sys::SM_OK);
    assert!(out.is_null(), "nothing written on failure");
    // A dtype code the library does not know.
    // SAFETY: as above.
    let code = unsafe { sys::sm_zeros([2i64].as_ptr(), 1, 77, Device::Cpu.to_raw(), &mut out) };
    assert!(code == sys::SM_ERR_DTYPE || code == sys::SM_ERR_INVALID_ARGUMENT, "{code}");
    assert!(out.is_null());
}
