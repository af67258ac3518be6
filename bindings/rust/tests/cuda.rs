//! The CUDA path through the bindings. These tests need a usable GPU, so
//! each is `#[ignore]`d: a plain `cargo test` lists them as ignored, which a
//! reader can tell from a pass, and `cargo test -- --ignored` on a GPU
//! machine runs them (scripts/gpu-check.sh does, and checks that every one
//! ran and passed). Run without a usable GPU, each fails: a test that
//! returned early there would be counted as passed.

mod common;

use common::serial;
use stridemem::{DType, Device, MemoryFormat, Stack, Status, Tensor, sys};

const GPU: Device = Device::Cuda(0);

/// The lock that serializes the tests of this binary (the seed test reads
/// the device's memory statistics); panics, with the library's reason,
/// when it sees no usable GPU.
fn gpu() -> std::sync::MutexGuard<'static, ()> {
    let n = stridemem::cuda_device_count().unwrap();
    if n == 0 {
        let why = match Tensor::zeros(&[1], DType::F32, GPU) {
            Err(e) => e.to_string(),
            Ok(_) => "the library reports 0 CUDA devices yet allocated on cuda:0".to_string(),
        };
        panic!(
            "no usable GPU: {why}. These tests need one: run them on a GPU machine \
             (scripts/gpu-check.sh), or leave out --ignored to list them as ignored"
        );
    }
    serial()
}

#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh runs these with --ignored"]
fn host_device_round_trips() {
    let _g = gpu();
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let g = Tensor::from_slice_on(&data, &[10, 100], GPU).unwrap();
    assert_eq!(g.device(), GPU);
    assert_eq!(g.to_vec::<f32>().unwrap(), data);
    let back = g.to_device(Device::Cpu).unwrap();
    assert_eq!(back.device(), Device::Cpu);
    assert_eq!(back.to_vec::<f32>().unwrap(), data);
    let up = back.to(GPU, DType::F64).unwrap();
    assert_eq!((up.device(), up.dtype()), (GPU, DType::F64));
    assert_eq!(up.to_vec::<f64>().unwrap()[999], 499.5);
    // Strided views read back in row-major order.
    let t = g.transpose(0, 1).unwrap().narrow(0, 3, 2).unwrap();
    let expect: Vec<f32> = (3..5).flat_map(|c| (0..10).map(move |r| (r * 100 + c) as f32 * 0.5)).collect();
    assert_eq!(t.to_vec::<f32>().unwrap(), expect);
    let bad = Tensor::zeros(&[2], DType::F32, Device::Cuda(stridemem::cuda_device_count().unwrap()));
    assert_eq!(bad.unwrap_err().status(), Status::Device);
}

#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh runs these with --ignored"]
fn kernels_on_the_gpu() {
    let _g = gpu();
    let mut g = Tensor::arange(0.0, 1.0, 12, DType::F32, GPU).unwrap().view(&[3, 4]).unwrap();
    let row = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap().to_device(GPU).unwrap();
    g.mul(&row).unwrap();
    g.sub_scalar(1.0).unwrap();
    g.relu().unwrap();
    let expect: Vec<f32> = (0..12).map(|i| ((i as f32) * ((i % 4 + 1) as f32) - 1.0).max(0.0)).collect();
    assert_eq!(g.to_vec::<f32>().unwrap(), expect);
    // Cross-device copy_from with broadcast and conversion.
    let mut dst = Tensor::zeros(&[2, 3], DType::F64, GPU).unwrap();
    dst.copy_from(&Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap()).unwrap();
    assert_eq!(dst.to_vec::<f64>().unwrap(), vec![1., 2., 3., 1., 2., 3.]);
    let mut host = Tensor::zeros(&[3, 2], DType::F64, Device::Cpu).unwrap();
    host.copy_from(&dst.transpose(0, 1).unwrap()).unwrap();
    assert_eq!(host.to_vec::<f64>().unwrap(), vec![1., 1., 2., 2., 3., 3.]);
    // Negative strides and a channels-last copy.
    let f = g.flip(&[0, 1]).unwrap().contiguous().unwrap();
    assert_eq!(f.to_vec::<f32>().unwrap(), expect.iter().rev().copied().collect::<Vec<_>>());
    let x = Tensor::arange(0.0, 1.0, 120, DType::F32, GPU).unwrap().view(&[2, 3, 4, 5]).unwrap();
    let cl = x.contiguous_in(MemoryFormat::ChannelsLast).unwrap();
    assert_eq!(cl.strides(), &[60, 1, 15, 3]);
    assert_eq!(cl.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    // The overlap rules hold on the device too.
    let mut e = g.narrow(0, 0, 1).unwrap().expand(&[3, 4]).unwrap();
    assert_eq!(e.fill(0.0).unwrap_err().status(), Status::Overlap);
    GPU.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh runs these with --ignored"]
fn pinned_host_memory() {
    let _g = gpu();
    let mut p = Tensor::zeros(&[256], DType::F32, Device::CudaHost).unwrap();
    assert_eq!(p.device(), Device::CudaHost);
    p.fill(3.0).unwrap();
    let g = p.to_device(GPU).unwrap();
    GPU.synchronize().unwrap();
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![3.0; 256]);
}

#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh runs these with --ignored"]
fn streams() {
    let _g = gpu();
    assert!(GPU.stream().unwrap().is_null(), "the default stream");
    // SAFETY: NULL selects the default stream.
    unsafe { GPU.set_stream(std::ptr::null_mut()) }.unwrap();
    let t = Tensor::zeros(&[16], DType::F32, GPU).unwrap();
    // SAFETY: NULL is the default stream, valid for this device.
    unsafe { t.record_stream(std::ptr::null_mut()) }.unwrap();
    GPU.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh runs these with --ignored"]
fn dlpack_on_the_gpu() {
    let _g = gpu();
    let t = Tensor::zeros(&[4, 4], DType::F32, GPU).unwrap();
    let m = t.to_dlpack(true).unwrap();
    assert_eq!(m.dl_tensor().device, sys::sm_DLDevice { device_type: sys::sm_kDLCUDA, device_id: 0 });
    assert_eq!(m.dl_tensor().data, t.data_ptr().unwrap());
    let back = Tensor::from_dlpack(m).unwrap();
    assert_eq!(back.device(), GPU);
    assert!(back.same_storage(&t).unwrap());
}

/// Seed 1 on the GPU: tiles of a device image through one stack buffer;
/// the device allocator's peak stays at the preallocated size.
#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh runs these with --ignored"]
fn seed_1_on_the_gpu() {
    let _g = gpu();
    let (h, w, th, tw) = (64i64, 96i64, 16i64, 32i64);
    let data: Vec<f32> = (0..h * w).map(|i| (i % 13) as f32 - 6.0).collect();
    let image = Tensor::from_slice_on(&data, &[h, w], GPU).unwrap();
    let stack = Stack::new(GPU, th * tw * 4).unwrap();
    GPU.synchronize().unwrap();
    stridemem::reset_peak_stats(GPU).unwrap();
    let pre = stridemem::memory_stats(GPU).unwrap();
    for y in (0..h).step_by(th as usize) {
        for x in (0..w).step_by(tw as usize) {
            stack
                .scope(|s| -> stridemem::Result<()> {
                    let mut window = image.narrow(0, y, th)?.narrow(1, x, tw)?;
                    let mut tile = s.push(&[th, tw], DType::F32)?;
                    tile.copy_from(&window)?;
                    tile.abs()?;
                    tile.mul_scalar(2.0)?;
                    window.copy_from(&tile)
                })
                .unwrap()
                .unwrap();
        }
    }
    GPU.synchronize().unwrap();
    let expected: Vec<f32> = data.iter().map(|v| v.abs() * 2.0).collect();
    assert_eq!(image.to_vec::<f32>().unwrap(), expected);
    let post = stridemem::memory_stats(GPU).unwrap();
    assert_eq!(post.peak_allocated_bytes, pre.allocated_bytes);
    assert_eq!(post.num_allocs, pre.num_allocs);
}
