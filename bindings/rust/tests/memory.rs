//! Memory statistics, the stack of views, fault injection and leak checks.
//! These read process-wide state, so every test here holds `serial()`.

mod common;

use common::serial;
use stridemem::{DType, Device, Stack, Status, Tensor, debug, memory_stats};

fn stats() -> stridemem::MemoryStats {
    memory_stats(Device::Cpu).unwrap()
}

fn round_up(n: i64) -> i64 {
    let r = stridemem::sys::SM_ALLOC_ROUND;
    (n + r - 1) / r * r
}

#[test]
fn allocation_statistics_follow_tensors() {
    let _g = serial();
    stridemem::empty_cache(Device::Cpu).unwrap();
    let s0 = stats();
    let t = Tensor::zeros(&[1000], DType::F32, Device::Cpu).unwrap();
    let s1 = stats();
    assert_eq!(s1.num_allocs, s0.num_allocs + 1);
    assert_eq!(s1.allocated_bytes - s0.allocated_bytes, round_up(4000));
    assert_eq!(s1.requested_bytes - s0.requested_bytes, 4000);
    assert_eq!(s1.active_storages, s0.active_storages + 1);
    assert_eq!(s1.active_views, s0.active_views + 1);
    assert!(s1.reserved_bytes >= s1.allocated_bytes);
    assert!(s1.peak_allocated_bytes >= s1.allocated_bytes);

    // Views allocate no data: only the view count moves.
    let views: Vec<Tensor> = (0..10).map(|i| t.narrow(0, i, 10).unwrap()).collect();
    let s2 = stats();
    assert_eq!(s2.num_allocs, s1.num_allocs);
    assert_eq!(s2.allocated_bytes, s1.allocated_bytes);
    assert_eq!(s2.active_views, s1.active_views + 10);
    drop(views);
    assert_eq!(stats().active_views, s1.active_views);

    drop(t);
    let s3 = stats();
    assert_eq!(s3.allocated_bytes, s0.allocated_bytes);
    assert_eq!(s3.num_frees, s0.num_frees + 1);
    assert_eq!(s3.active_storages, s0.active_storages);
    // The freed block is cached, not returned.
    assert!(s3.reserved_bytes >= s3.allocated_bytes + round_up(4000));

    // The same size again is a cache hit.
    let again = Tensor::empty(&[1000], DType::F32, Device::Cpu).unwrap();
    let s4 = stats();
    assert_eq!(s4.cache_hits, s3.cache_hits + 1);
    assert_eq!(s4.device_allocs, s3.device_allocs);
    drop(again);

    // empty_cache gives back every segment without a live block, never a live
    // block; the free rest of a segment that holds one stays reserved.
    let big = Tensor::zeros(&[3 << 20], DType::F64, Device::Cpu).unwrap(); // 24 MiB: its own segment
    drop(big);
    let live = Tensor::zeros(&[300], DType::F64, Device::Cpu).unwrap();
    let before = stats();
    stridemem::empty_cache(Device::Cpu).unwrap();
    let s5 = stats();
    assert!(s5.reserved_bytes <= before.reserved_bytes - (24 << 20), "the free segment went back");
    assert_eq!(s5.allocated_bytes, before.allocated_bytes);
    assert!(s5.reserved_bytes >= s5.allocated_bytes);
    assert!(s5.device_frees > s4.device_frees);
    let snap = stridemem::memory_snapshot_summary(Device::Cpu).unwrap();
    for g in &snap.segments {
        assert!(
            g.blocks.iter().any(|b| b.state == stridemem::BlockState::Allocated),
            "segment {:#x} has no live block yet survived empty_cache",
            g.address
        );
    }
    assert_eq!(live.to_vec::<f64>().unwrap(), vec![0.0; 300]);
}

#[test]
fn peaks_reset_to_the_current_values() {
    let _g = serial();
    let big = Tensor::zeros(&[1 << 16], DType::F64, Device::Cpu).unwrap();
    let high = stats().peak_allocated_bytes;
    drop(big);
    assert_eq!(stats().peak_allocated_bytes, high, "a free does not lower the peak");
    stridemem::reset_peak_stats(Device::Cpu).unwrap();
    let s = stats();
    assert_eq!(s.peak_allocated_bytes, s.allocated_bytes);
    assert_eq!(s.peak_reserved_bytes, s.reserved_bytes);
}

#[test]
fn memory_summary_is_a_readable_table() {
    let _g = serial();
    let _t = Tensor::zeros(&[10], DType::F32, Device::Cpu).unwrap();
    let text = stridemem::memory_summary(Device::Cpu).unwrap();
    assert!(text.lines().count() > 2, "{text}");
    assert!(text.to_lowercase().contains("alloc"), "{text}");
    assert!(!text.contains('\0'));
}

#[test]
fn stack_pushes_are_aligned_views_of_one_buffer() {
    let _g = serial();
    let before = stats();
    let stack = Stack::new(Device::Cpu, 4096).unwrap();
    let after_create = stats();
    assert_eq!(stack.used().unwrap(), (0, 4096));
    let (mut used, mut cap) = (-1i64, -1i64);
    // SAFETY: a live stack handle and two valid out-pointers.
    let code = unsafe { stridemem::sys::sm_stack_used(stack.as_raw(), &mut used, &mut cap) };
    assert_eq!((code, used, cap), (0, 0, 4096));
    let a = stack.push(&[3], DType::U8).unwrap();
    let b = stack.push(&[10], DType::F64).unwrap();
    let c = stack.push(&[], DType::I16).unwrap();
    for t in [&a, &b, &c] {
        assert_eq!(t.storage_offset() * t.dtype().size() as i64 % Stack::ALIGNMENT, 0);
        assert!(t.is_contiguous().unwrap());
    }
    assert!(a.same_storage(&b).unwrap() && b.same_storage(&c).unwrap());
    assert_eq!(b.data_ptr().unwrap() as usize - a.data_ptr().unwrap() as usize, 256);
    assert_eq!(c.data_ptr().unwrap() as usize - b.data_ptr().unwrap() as usize, 256);
    assert_eq!(a.storage_nbytes().unwrap(), 4096);
    // The top is past c's 2 bytes at 512 (possibly rounded up to the alignment).
    let top = stack.used().unwrap().0;
    assert!((512 + 2..=768).contains(&top), "{top}");
    // Pushes allocate nothing.
    let s = stats();
    assert_eq!(s.num_allocs, after_create.num_allocs);
    assert!(after_create.num_allocs <= before.num_allocs + 1);
    // Past capacity: OutOfMemory, nothing changes.
    let used = stack.used().unwrap();
    let err = stack.push(&[4096], DType::U8).unwrap_err();
    assert_eq!(err.status(), Status::OutOfMemory);
    assert_eq!(stack.used().unwrap(), used);
    let mark = stack.mark().unwrap();
    let d = stack.push(&[100], DType::F32).unwrap();
    assert!(stack.used().unwrap().0 > used.0);
    stack.pop_to(mark).unwrap();
    assert_eq!(stack.used().unwrap(), used);
    assert_eq!(d.numel(), 100);
    assert_eq!(d.to_vec::<f32>().unwrap_err().status(), Status::InvalidHandle);
    // Everything back.
    stack.pop_to(stridemem::Mark(0)).unwrap();
    assert_eq!(stack.used().unwrap().0, 0);
    assert_eq!(b.data_ptr().unwrap_err().status(), Status::InvalidHandle);
    assert!(format!("{stack:?}").contains("capacity"));
}

/// stridemem.h: "Every pushed tensor starts at a multiple of
/// SM_STACK_ALIGNMENT bytes": the address itself, as a user of the pointer
/// (SIMD, DMA, a GPU kernel) reads it, not only the offset in the buffer.
#[test]
fn stack_pushes_are_aligned_in_memory() {
    let _g = serial();
    let stack = Stack::new(Device::Cpu, 4096).unwrap();
    let a = stack.push(&[3], DType::U8).unwrap();
    let b = stack.push(&[10], DType::F64).unwrap();
    for t in [&a, &b] {
        let addr = t.data_ptr().unwrap() as usize;
        assert_eq!(addr % Stack::ALIGNMENT as usize, 0, "address {addr:#x} of a pushed tensor");
    }
}

#[test]
fn stack_mark_beyond_the_top_is_refused() {
    let _g = serial();
    let stack = Stack::new(Device::Cpu, 1024).unwrap();
    let _a = stack.push(&[10], DType::U8).unwrap();
    let top = stack.mark().unwrap();
    assert!(stack.pop_to(stridemem::Mark(top.0 + 1)).is_err());
    assert!(stack.pop_to(stridemem::Mark(-1)).is_err());
    assert!(Stack::new(Device::Cpu, -5).is_err());
}

#[test]
fn stack_tensors_outlive_the_stack() {
    let _g = serial();
    let base = stats();
    let stack = Stack::new(Device::Cpu, 2048).unwrap();
    let mut t = stack.push(&[4], DType::F32).unwrap();
    t.fill(2.0).unwrap();
    drop(stack);
    // Pinned by the tensor: still readable.
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![2.0; 4]);
    assert!(stats().allocated_bytes >= base.allocated_bytes + 2048);
    drop(t);
    assert_eq!(stats().allocated_bytes, base.allocated_bytes);
}

#[test]
fn stack_scope_pops_even_on_error_and_panic() {
    let _g = serial();
    let stack = Stack::new(Device::Cpu, 2048).unwrap();
    let r: Result<(), Status> = stack
        .scope(|s| {
            let _t = s.push(&[16], DType::F32).map_err(|e| e.status())?;
            Err(Status::Internal)
        })
        .unwrap();
    assert_eq!(r, Err(Status::Internal));
    assert_eq!(stack.used().unwrap().0, 0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stack.scope(|s| {
            let _t = s.push(&[16], DType::F32).unwrap();
            panic!("inside the scope");
        })
    }));
    assert!(caught.is_err());
    assert_eq!(stack.used().unwrap().0, 0);
}

#[test]
fn fault_injection_fails_the_nth_allocation() {
    let _g = serial();
    stridemem::empty_cache(Device::Cpu).unwrap();
    debug::fail_alloc(2).unwrap();
    let first = Tensor::zeros(&[64], DType::F32, Device::Cpu);
    let second = Tensor::zeros(&[64], DType::F32, Device::Cpu);
    let third = Tensor::zeros(&[64], DType::F32, Device::Cpu);
    debug::fail_alloc(0).unwrap();
    assert!(first.is_ok());
    let err = second.unwrap_err();
    assert_eq!(err.status(), Status::OutOfMemory);
    assert!(!err.message().is_empty());
    assert!(third.is_ok());

    // Walk N over a sequence of allocating calls: each failure is clean
    // (an error, no leak), and the sequence succeeds once N is past it.
    let handles_before = debug::live_handles().unwrap();
    for n in 1..=5 {
        debug::fail_alloc(n).unwrap();
        let run = || -> stridemem::Result<Vec<f32>> {
            let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
            let b = a.transpose(0, 1)?.contiguous()?;
            let c = b.to_dtype(DType::F64)?.to_dtype(DType::F32)?;
            c.to_vec::<f32>()
        };
        let r = run();
        debug::fail_alloc(0).unwrap();
        match r {
            Ok(v) => {
                assert_eq!(v, vec![1.0, 3.0, 2.0, 4.0]);
                assert!(n >= 5, "succeeded while allocation {n} should fail");
            }
            Err(e) => assert_eq!(e.status(), Status::OutOfMemory, "{e}"),
        }
        assert_eq!(debug::live_handles().unwrap(), handles_before, "no handle leaked at n = {n}");
    }
}

#[test]
fn the_bindings_leak_no_handles() {
    let _g = serial();
    let before = debug::live_handles().unwrap();
    {
        let (t, _) = common::iota(&[4, 4]);
        let c = t.clone();
        let parts = t.split(2, 0).unwrap();
        let s = t.storage().unwrap();
        let s2 = s.clone();
        let stack = Stack::new(Device::Cpu, 1024).unwrap();
        let p = stack.push(&[2], DType::F32).unwrap();
        let during = debug::live_handles().unwrap();
        assert_eq!(during.tensors, before.tensors + 1 + 2 + 1, "t (+clone: same handle), 2 parts, p");
        assert_eq!(during.storages, before.storages + 1, "s and s2 are one handle");
        assert_eq!(during.stacks, before.stacks + 1);
        let _ = t.view(&[5]).unwrap_err();
        let _ = (c, parts, s2, p);
    }
    assert_eq!(debug::live_handles().unwrap(), before);
}

#[test]
fn dlpack_exports_release_their_storage() {
    let _g = serial();
    let base = stats();
    let t = Tensor::zeros(&[256], DType::F32, Device::Cpu).unwrap();
    let legacy = t.to_dlpack(false).unwrap();
    let versioned = t.to_dlpack(true).unwrap();
    drop(t);
    assert!(stats().allocated_bytes > base.allocated_bytes, "the exports keep it alive");
    drop(legacy);
    assert!(stats().allocated_bytes > base.allocated_bytes);
    drop(versioned);
    assert_eq!(stats().allocated_bytes, base.allocated_bytes);
}
