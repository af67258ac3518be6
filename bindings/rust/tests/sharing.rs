//! Storages shared with other processes (stridemem.h, "Processes"): the
//! descriptor's bytes, imports in this process, share_memory moving a
//! storage under its views, shared stacks, every refusal with its status,
//! no fd or mapping leaked, and two real second processes (this very test
//! binary run again): one inherits the fd, one receives it over a Unix
//! socket as SCM_RIGHTS.
//!
//! Every test takes `serial()`: they count this process's fds and mappings,
//! and the cross-process tests leave a non-close-on-exec fd open while a
//! child starts, which another test's child must not inherit.
#![cfg(target_os = "linux")]

mod common;

// The SCM_RIGHTS recipe of the example, run here across two processes.
#[path = "../examples/share_over_socket.rs"]
#[allow(dead_code)]
mod share_over_socket;

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::serial;
use stridemem::{DType, Device, ShareDescriptor, ShareKind, Stack, Status, Storage, Tensor, sys};

unsafe extern "C" {
    fn dup(fd: c_int) -> c_int;
    fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
}
const F_GETFD: c_int = 1;
const FD_CLOEXEC: c_int = 1;

// ---- helpers --------------------------------------------------------------

/// Open fds of this process (the directory listing's own fd is in every
/// count alike).
fn count_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Mappings of the library's shared memory in this process (its memfds are
/// named "stridemem"). Not every mapping: Rust's allocator maps and unmaps
/// memory of its own while a test runs, which says nothing about imports.
fn count_maps() -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines().filter(|l| l.contains("memfd:stridemem")).count()
}

fn is_cloexec(fd: &OwnedFd) -> bool {
    // SAFETY: F_GETFD on an open fd takes no third argument.
    let flags = unsafe { fcntl(fd.as_raw_fd(), F_GETFD) };
    assert!(flags >= 0, "fcntl: {}", io::Error::last_os_error());
    flags & FD_CLOEXEC != 0
}

fn export(t: &Tensor) -> (ShareDescriptor, OwnedFd) {
    let (desc, fd) = t.export_shared().unwrap();
    (desc, fd.expect("a CPU export comes with an fd"))
}

fn import(desc: &ShareDescriptor, fd: &OwnedFd) -> stridemem::Result<Storage> {
    Storage::import(desc, Some(fd.as_fd()))
}

/// What sm_storage_export seals (stridemem.h: FNV-1a 64 over every byte
/// before the checksum), so that a test can forge descriptors the library
/// then refuses for what they say, not for a bad checksum.
fn reseal(mut d: sys::sm_share_desc) -> ShareDescriptor {
    let bytes = ShareDescriptor::from_raw(d).as_bytes().to_owned();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &bytes[..std::mem::offset_of!(sys::sm_share_desc, checksum)] {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    d.checksum = h;
    ShareDescriptor::from_raw(d)
}

fn assert_refused<T: std::fmt::Debug>(r: stridemem::Result<T>, status: Status, needle: &str) {
    let err = r.expect_err("refused");
    assert_eq!(err.status(), status, "{err}");
    assert!(err.message().contains(needle), "{needle:?} not in {:?}", err.message());
}

// ---- the descriptor -----------------------------------------------------------

#[test]
fn descriptor_bytes_round_trip_and_describe_the_export() {
    let _g = serial();
    let t = Tensor::empty_shared(&[3, 5], DType::F64).unwrap();
    assert!(t.is_shared().unwrap());
    assert_eq!((t.shape(), t.strides(), t.storage_offset()), (&[3i64, 5][..], &[5i64, 1][..], 0));
    assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0; 15], "zero-filled, as fresh pages are");
    let (desc, fd) = export(&t);
    assert!(is_cloexec(&fd), "the exported fd must not leak into children by accident");
    assert_eq!(desc.kind(), ShareKind::Memfd);
    assert_eq!(desc.device(), Some(Device::Cpu));
    assert_eq!((desc.nbytes(), desc.offset()), (15 * 8, 0));
    assert_eq!(desc.exporter_pid(), i64::from(std::process::id()));
    assert_eq!(desc.library_version(), stridemem::header_version());
    let raw = desc.as_raw();
    assert_eq!((raw.magic, raw.format, raw.struct_size), (sys::SM_SHARE_MAGIC, sys::SM_SHARE_FORMAT, 144));
    // The bytes are the C struct's, in memory order ("SMSH" on little-endian).
    let bytes = desc.as_bytes();
    assert_eq!(bytes.len(), ShareDescriptor::SIZE);
    assert_eq!(bytes[..4], sys::SM_SHARE_MAGIC.to_ne_bytes());
    assert_eq!(ShareDescriptor::from_bytes(bytes).unwrap(), desc);
    let hex = desc.to_hex();
    assert_eq!(hex.len(), 288);
    assert!(hex.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
    assert_eq!(ShareDescriptor::from_hex(&hex).unwrap(), desc);
    assert_eq!(ShareDescriptor::from_hex(&hex.to_uppercase()).unwrap(), desc);
    assert!(format!("{desc:?}").contains("Memfd"));
    // A received descriptor of the wrong size or text is refused before any
    // call.
    assert_refused(ShareDescriptor::from_bytes(&bytes[..143]), Status::InvalidArgument, "144 bytes, got 143");
    assert_refused(ShareDescriptor::from_bytes(&[bytes.as_slice(), &[0]].concat()), Status::InvalidArgument, "got 145");
    assert_refused(ShareDescriptor::from_hex(&hex[..286]), Status::InvalidArgument, "286 hex digits");
    let mut bad = hex.clone();
    bad.replace_range(10..11, "g");
    assert_refused(ShareDescriptor::from_hex(&bad), Status::InvalidArgument, "'g' at 10");
    // The import of the round-tripped bytes is the same memory.
    let s = import(&ShareDescriptor::from_hex(&hex).unwrap(), &fd).unwrap();
    assert_eq!(s.nbytes().unwrap(), 120);
}

// ---- in one process ---------------------------------------------------------

#[test]
fn an_import_in_the_same_process_sees_the_same_pages() {
    let _g = serial();
    let mut t = Tensor::empty_shared(&[4, 6], DType::I32).unwrap();
    let (desc, fd) = export(&t);
    let maps = count_maps();
    let imported = import(&desc, &fd).unwrap();
    assert_eq!(count_maps(), maps + 1, "an import is one more mapping of the memfd");
    assert!(imported.is_shared().unwrap(), "an import exports again as it is");
    assert_eq!(imported.nbytes().unwrap(), 4 * 6 * 4);
    assert_eq!(imported.device().unwrap(), Device::Cpu);
    // Column 2 rebuilt over the import, and the same column of t.
    let mut col = Tensor::from_storage(&imported, &[4], &[6], 2, DType::I32).unwrap();
    let mine = t.select(1, 2).unwrap();
    assert_ne!(col.data_ptr().unwrap(), mine.data_ptr().unwrap(), "a second mapping, not the same address");
    col.fill(7.0).unwrap();
    assert_eq!(mine.to_vec::<i32>().unwrap(), vec![7; 4]);
    let all = t.to_vec::<i32>().unwrap();
    assert_eq!(all, (0..24).map(|i| if i % 6 == 2 { 7 } else { 0 }).collect::<Vec<_>>());
    // Version counters belong to each storage object, so stay per process.
    assert_eq!(col.version_counter().unwrap(), 1);
    assert_eq!(t.version_counter().unwrap(), 0);
    t.add_scalar(1.0).unwrap();
    assert_eq!(col.to_vec::<i32>().unwrap(), vec![8; 4]);
    // The import exports again: the same object, the same bytes.
    let (again, again_fd) = imported.export().unwrap();
    assert!(again_fd.is_some());
    assert_eq!(again.as_raw().object_id, desc.as_raw().object_id);
    assert_eq!(again.nbytes(), desc.nbytes());
}

#[test]
fn an_import_keeps_the_pages_after_the_exporter_lets_go() {
    let _g = serial();
    let mut t = Tensor::empty_shared(&[256], DType::F32).unwrap();
    t.fill(4.25).unwrap();
    let (desc, fd) = export(&t);
    let imported = import(&desc, &fd).unwrap();
    drop(fd);
    drop(t);
    // The memory lives until the last mapping and fd are gone.
    let v = Tensor::from_storage(&imported, &[256], &[1], 0, DType::F32).unwrap();
    assert_eq!(v.to_vec::<f32>().unwrap(), vec![4.25; 256]);
}

#[test]
fn share_memory_moves_the_storage_and_every_view_follows() {
    let _g = serial();
    let t = Tensor::arange(0.0, 1.0, 48, DType::F32, Device::Cpu).unwrap().view(&[6, 8]).unwrap();
    let tt = t.transpose(0, 1).unwrap();
    let mut row = t.select(0, 3).unwrap();
    let before = tt.to_vec::<f32>().unwrap();
    let old = t.data_ptr().unwrap();
    assert!(!row.is_shared().unwrap());
    assert!(!t.storage().unwrap().is_shared().unwrap());
    // Not shared yet: an export is refused and says what to do.
    assert_refused(t.storage().unwrap().export(), Status::Unsupported, "sm_share_memory");
    assert_refused(t.export_shared(), Status::Unsupported, "sm_share_memory");
    unsafe { row.share_memory() }.unwrap();
    for v in [&t, &tt, &row] {
        assert!(v.is_shared().unwrap(), "every view follows the move");
    }
    assert_ne!(t.data_ptr().unwrap(), old, "the bytes moved");
    assert_eq!(tt.to_vec::<f32>().unwrap(), before, "one copy, the same values");
    // Twice: PyTorch's no-op.
    let moved = t.data_ptr().unwrap();
    unsafe { tt.share_memory() }.unwrap();
    assert_eq!(t.data_ptr().unwrap(), moved);
    // Writes through any old view land in the pages another mapping sees.
    let (desc, fd) = export(&t);
    let imported = import(&desc, &fd).unwrap();
    row.fill(-1.0).unwrap();
    let flat = Tensor::from_storage(&imported, &[48], &[1], 0, DType::F32).unwrap();
    let expect: Vec<f32> = (0..48).map(|i| if i / 8 == 3 { -1.0 } else { i as f32 }).collect();
    assert_eq!(flat.to_vec::<f32>().unwrap(), expect);
}

#[test]
fn share_memory_refuses_what_it_cannot_move_and_changes_nothing() {
    let _g = serial();
    // A stack tensor: the stack owns its buffer.
    let stack = Stack::new(Device::Cpu, 4096).unwrap();
    let pushed = stack.push(&[4], DType::F32).unwrap();
    assert_refused(unsafe { pushed.share_memory() }, Status::Unsupported, "sm_stack_create_shared");
    assert!(!pushed.is_shared().unwrap());
    // Memory the library does not own (a Rust Vec, zero copy).
    let wrapped = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let at = wrapped.data_ptr().unwrap();
    assert_refused(unsafe { wrapped.share_memory() }, Status::Unsupported, "sm_empty_shared");
    assert_eq!(wrapped.data_ptr().unwrap(), at);
    assert_eq!(wrapped.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    assert!(!wrapped.is_shared().unwrap());
    // A live DLPack export pins the address; once it is gone the move works.
    let t = Tensor::arange(0.0, 1.0, 4, DType::F32, Device::Cpu).unwrap();
    let old = t.data_ptr().unwrap();
    let exported = t.to_dlpack(true).unwrap();
    assert_refused(unsafe { t.share_memory() }, Status::Unsupported, "DLPack");
    assert_eq!(t.data_ptr().unwrap(), old);
    assert!(!t.is_shared().unwrap());
    drop(exported);
    unsafe { t.share_memory() }.unwrap();
    assert!(t.is_shared().unwrap());
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0, 3.0]);
}

#[test]
fn memory_that_is_not_shared_does_not_export() {
    let _g = serial();
    let fds = count_fds();
    let t = Tensor::zeros(&[8], DType::U8, Device::Cpu).unwrap();
    assert_refused(t.export_shared(), Status::Unsupported, "sm_share_memory");
    assert_refused(t.storage().unwrap().export(), Status::Unsupported, "sm_share_memory");
    let plain = Stack::new(Device::Cpu, 1024).unwrap();
    let whole = plain.storage().unwrap();
    assert!(!whole.is_shared().unwrap());
    assert_eq!(whole.export().unwrap_err().status(), Status::Unsupported);
    let pushed = plain.push(&[2], DType::F32).unwrap();
    assert_eq!(pushed.export_shared().unwrap_err().status(), Status::Unsupported);
    assert_eq!(count_fds(), fds, "a refused export hands out no fd");
}

#[test]
fn a_shared_stack_exports_its_whole_buffer() {
    let _g = serial();
    let stack = Stack::new_shared(8192).unwrap();
    let a = stack.push(&[10], DType::U8).unwrap();
    let b = stack.push(&[2, 3], DType::F64).unwrap();
    assert!(a.is_shared().unwrap() && b.is_shared().unwrap());
    let whole = stack.storage().unwrap();
    assert_eq!(whole.nbytes().unwrap(), 8192);
    assert!(whole.is_shared().unwrap());
    let (desc, fd) = whole.export().unwrap();
    let fd = fd.unwrap();
    let imported = import(&desc, &fd).unwrap();
    let mut b2 = Tensor::from_storage(&imported, b.shape(), b.strides(), b.storage_offset(), DType::F64).unwrap();
    assert_eq!(b.storage_offset() * 8 % Stack::ALIGNMENT, 0);
    b2.fill(2.5).unwrap();
    assert_eq!(b.to_vec::<f64>().unwrap(), vec![2.5; 6]);
    // A pushed tensor exports the whole buffer too (stack tensors have no
    // storage handle of their own).
    let (via_tensor, _fd2) = b.export_shared().unwrap();
    assert_eq!(via_tensor.as_raw().object_id, desc.as_raw().object_id);
    assert_eq!(via_tensor.nbytes(), 8192);
    assert_eq!(b.storage().unwrap_err().status(), Status::Unsupported);
    // Bad capacity: a clear error, no stack.
    assert!(Stack::new_shared(-1).is_err());
}

#[test]
fn empty_shared_tensors_of_no_elements_share_too_and_bad_shapes_are_refused() {
    let _g = serial();
    let t = Tensor::empty_shared(&[0, 3], DType::F32).unwrap();
    let (desc, fd) = export(&t);
    assert_eq!(desc.nbytes(), 0);
    let imported = import(&desc, &fd).unwrap();
    let v = Tensor::from_storage(&imported, &[0, 3], &[3, 1], 0, DType::F32).unwrap();
    assert_eq!(v.numel(), 0);
    let err = Tensor::empty_shared(&[2, -3], DType::F32).unwrap_err();
    assert_eq!(err.status(), Status::Shape, "{err}");
    assert!(!err.message().is_empty());
}

// ---- bad input: a clear status, nothing mapped, no fd kept ---------------------

#[test]
fn corrupted_and_foreign_descriptors_are_refused() {
    let _g = serial();
    let t = Tensor::empty_shared(&[1024], DType::F32).unwrap();
    let (good, fd) = export(&t);
    let (fds, maps) = (count_fds(), count_maps());
    // One byte flipped anywhere the checksum covers, as a receiver would see
    // it after a bad transport.
    // (The format and size fields, bytes 4..8, are read before the checksum:
    // a changed format is a version question, below.)
    for at in [0usize, 8, 16, 30, 50, 80, 135, 140] {
        let mut bytes = *good.as_bytes();
        bytes[at] ^= 0x01;
        let desc = ShareDescriptor::from_bytes(&bytes).unwrap();
        let needle = if at < 4 { "not a stridemem share descriptor" } else { "checksum" };
        assert_refused(import(&desc, &fd), Status::InvalidArgument, needle);
    }
    let mut bytes = *good.as_bytes();
    bytes[5] ^= 0x01;
    assert_refused(import(&ShareDescriptor::from_bytes(&bytes).unwrap(), &fd), Status::Unsupported, "format 257");
    assert_refused(import(&ShareDescriptor::from_bytes(&[0; 144]).unwrap(), &fd), Status::InvalidArgument, "magic");
    // Self-consistent lies.
    let mut d = *good.as_raw();
    d.library_version = 10000 * (sys::SM_VERSION_MAJOR as u32 + 1);
    assert_refused(import(&reseal(d), &fd), Status::Unsupported, "another major version");
    let mut d = *good.as_raw();
    d.kind = 7;
    assert_refused(import(&reseal(d), &fd), Status::InvalidArgument, "kind 7");
    assert_eq!(reseal(d).kind(), ShareKind::Unknown(7));
    let mut d = *good.as_raw();
    d.nbytes = d.object_bytes + 1;
    assert_refused(import(&reseal(d), &fd), Status::OutOfBounds, "inside");
    let mut d = *good.as_raw();
    d.nbytes *= 4;
    d.object_bytes *= 4;
    assert_refused(import(&reseal(d), &fd), Status::OutOfBounds, "past the end");
    assert_eq!((count_fds(), count_maps()), (fds, maps), "a refusal leaves no fd and no mapping");
    // The good one still imports.
    assert_eq!(import(&good, &fd).unwrap().nbytes().unwrap(), 4096);
}

#[test]
fn wrong_fds_are_refused() {
    let _g = serial();
    let t = Tensor::empty_shared(&[256], DType::F32).unwrap();
    let other = Tensor::empty_shared(&[256], DType::F32).unwrap();
    let (desc, fd) = export(&t);
    let (_, other_fd) = export(&other);
    let path = std::env::temp_dir().join(format!("stridemem-share-test-{}", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    file.set_len(1024).unwrap();
    let (sock, _peer) = UnixStream::pair().unwrap();
    let (fds, maps) = (count_fds(), count_maps());
    // A regular file of the right size.
    assert_refused(Storage::import(&desc, Some(file.as_fd())), Status::InvalidArgument, "regular file");
    // Another storage's memfd.
    assert_refused(import(&desc, &other_fd), Status::InvalidArgument, "another shared object");
    // A socket, and no fd at all for a memfd descriptor.
    assert_eq!(Storage::import(&desc, Some(sock.as_fd())).unwrap_err().status(), Status::InvalidArgument);
    assert_refused(Storage::import(&desc, None), Status::InvalidArgument, "not a file descriptor");
    assert_eq!((count_fds(), count_maps()), (fds, maps), "a refusal leaves no fd and no mapping");
    assert!(import(&desc, &fd).is_ok());
}

#[test]
fn cuda_descriptors_need_a_gpu_and_another_process() {
    let _g = serial();
    // A CUDA IPC descriptor for a GPU no machine has: refused on any machine
    // before CUDA is asked to open anything.
    let mut d = *Tensor::empty_shared(&[1], DType::U8).unwrap().export_shared().unwrap().0.as_raw();
    d.kind = sys::SM_SHARE_CUDA_IPC;
    d.device = Device::Cuda(63).to_raw();
    d.nbytes = 4096;
    d.offset = 0;
    d.object_bytes = 2 << 20;
    let forged = reseal(d);
    assert_eq!(forged.kind(), ShareKind::CudaIpc);
    assert_refused(Storage::import(&forged, None), Status::Device, "cuda");
    // CUDA handles carry no fd.
    let memfd = Tensor::empty_shared(&[1], DType::U8).unwrap();
    let (_, fd) = export(&memfd);
    assert_refused(Storage::import(&forged, Some(fd.as_fd())), Status::InvalidArgument, "fd must be -1");
    if stridemem::cuda_device_count().unwrap() == 0 {
        // No GPU: every CUDA descriptor is a device error.
        d.device = Device::Cuda(0).to_raw();
        assert_refused(Storage::import(&reseal(d), None), Status::Device, "cuda");
        assert_eq!(Tensor::zeros(&[4], DType::F32, Device::Cuda(0)).unwrap_err().status(), Status::Device);
    } else {
        // A caching-allocator block shares as it is: an fd-less export whose
        // handle this very process may not open (CUDA IPC is for others).
        let g = Tensor::arange(0.0, 1.0, 1000, DType::F32, Device::Cuda(0)).unwrap();
        assert!(g.is_shared().unwrap());
        let before = g.data_ptr().unwrap();
        unsafe { g.share_memory() }.unwrap();
        assert_eq!(g.data_ptr().unwrap(), before, "a no-op on CUDA");
        let (desc, fd) = g.export_shared().unwrap();
        assert!(fd.is_none());
        assert_eq!((desc.kind(), desc.device(), desc.nbytes()), (ShareKind::CudaIpc, Some(Device::Cuda(0)), 4000));
        assert_refused(Storage::import(&desc, None), Status::Unsupported, "this process");
    }
}

// ---- resources ----------------------------------------------------------------

#[test]
fn a_thousand_export_import_cycles_leak_no_fd_no_mapping_no_handle() {
    let _g = serial();
    let mut t = Tensor::empty_shared(&[4096], DType::F32).unwrap();
    t.fill(1.5).unwrap();
    let s = t.storage().unwrap();
    let cycle = |k: usize| {
        let (desc, fd) = s.export().unwrap();
        let fd = fd.unwrap();
        let i = import(&desc, &fd).unwrap();
        drop(fd); // the import keeps its own duplicate
        let v = Tensor::from_storage(&i, &[1], &[1], (k % 4096) as i64, DType::F32).unwrap();
        assert_eq!(v.get::<f32>(&[0]).unwrap(), 1.5);
    };
    cycle(0); // warm-up: lazily created library state is not a leak
    let (fds, maps) = (count_fds(), count_maps());
    let handles = stridemem::debug::live_handles().unwrap();
    for k in 0..1000 {
        cycle(k);
    }
    assert_eq!(count_fds(), fds, "fds leaked over 1000 cycles");
    assert_eq!(count_maps(), maps, "mappings leaked over 1000 cycles");
    assert_eq!(stridemem::debug::live_handles().unwrap(), handles, "handles leaked");
}

// ---- a second process -----------------------------------------------------------

/// Runs this test binary again with only the test `name` (`--exact`), with
/// `env` set, and returns what it printed. The child role of that test reads
/// the variable; it exits non-zero when it panics.
fn run_child(name: &str, env: (&str, String)) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .output()
        .unwrap()
}

/// The child's libtest report must show that the test really ran there (a
/// filter that matched nothing would exit 0 too).
fn assert_child_passed(out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {}\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("1 passed"), "the child ran no test:\n{stdout}\n{stderr}");
}

const INHERIT_VAR: &str = "STRIDEMEM_RUST_TEST_SHARE_INHERITED";

#[test]
fn a_child_process_imports_an_inherited_fd_and_writes_back() {
    if let Ok(spec) = std::env::var(INHERIT_VAR) {
        // The child: "<fd>:<descriptor hex>".
        let (fd, hex) = spec.split_once(':').expect("fd:hex");
        let desc = ShareDescriptor::from_hex(hex).unwrap();
        assert_ne!(desc.exporter_pid(), i64::from(std::process::id()), "another process exported it");
        // SAFETY: the parent left this fd open across exec for this process
        // alone; nothing else here owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd.parse().unwrap()) };
        let s = Storage::import(&desc, Some(fd.as_fd())).unwrap();
        drop(fd);
        // Column 4 of the parent's 5 x 7 matrix, flipped: a negative stride.
        let mut col = Tensor::from_storage(&s, &[5], &[-7], 4 * 7 + 4, DType::I64).unwrap();
        assert_eq!(col.to_vec::<i64>().unwrap(), vec![3; 5], "the parent's values");
        col.copy_from(&Tensor::from_slice(&[10i64, 11, 12, 13, 14], &[5]).unwrap()).unwrap();
        return;
    }
    let _g = serial();
    let mut t = Tensor::empty_shared(&[5, 7], DType::I64).unwrap();
    t.fill(3.0).unwrap();
    let (desc, fd) = export(&t);
    // The exported fd is close-on-exec; a duplicate without the flag is
    // what the child inherits (dup never sets it).
    // SAFETY: dup of an open fd; on success the new fd is ours.
    let raw = unsafe { dup(fd.as_raw_fd()) };
    assert!(raw >= 0, "dup: {}", io::Error::last_os_error());
    // SAFETY: a new fd nobody else owns.
    let inherited = unsafe { OwnedFd::from_raw_fd(raw) };
    assert!(!is_cloexec(&inherited));
    let out = run_child(
        "a_child_process_imports_an_inherited_fd_and_writes_back",
        (INHERIT_VAR, format!("{}:{}", inherited.as_raw_fd(), desc.to_hex())),
    );
    drop(inherited);
    assert_child_passed(&out);
    let got = t.to_vec::<i64>().unwrap();
    let expect: Vec<i64> = (0..35).map(|i| if i % 7 == 4 { 14 - i / 7 } else { 3 }).collect();
    assert_eq!(got, expect, "the child's writes, through its flipped view");
}

const SOCKET_VAR: &str = "STRIDEMEM_RUST_TEST_SHARE_SOCKET";

#[test]
fn a_child_process_receives_the_fd_over_a_unix_socket() {
    if let Ok(spec) = std::env::var(SOCKET_VAR) {
        // The child: "<storage offset of the batch>:<socket path>". It fills
        // the batch the parent pushed on its shared stack.
        let (offset, path) = spec.split_once(':').expect("offset:path");
        let sock = UnixStream::connect(path).unwrap();
        let (desc, fd) = share_over_socket::recv_share(&sock).unwrap();
        let fd = fd.expect("SCM_RIGHTS brought the memfd");
        let whole = Storage::import(&desc, Some(fd.as_fd())).unwrap();
        assert_eq!(whole.nbytes().unwrap(), 1 << 16, "the whole stack buffer");
        let mut batch = Tensor::from_storage(&whole, &[4, 8], &[8, 1], offset.parse().unwrap(), DType::F32).unwrap();
        let values = Tensor::arange(100.0, 1.0, 32, DType::F32, Device::Cpu).unwrap();
        batch.copy_from(&values.view(&[4, 8]).unwrap()).unwrap();
        return;
    }
    let _g = serial();
    let stack = Stack::new_shared(1 << 16).unwrap();
    let _pad = stack.push(&[3], DType::U8).unwrap();
    let batch = stack.push(&[4, 8], DType::F32).unwrap();
    assert!(batch.storage_offset() > 0);
    let dir = std::env::temp_dir().join(format!("stridemem-sock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s");
    let listener = UnixListener::bind(&path).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["a_child_process_receives_the_fd_over_a_unix_socket", "--exact", "--nocapture", "--test-threads=1"])
        .env(SOCKET_VAR, format!("{}:{}", batch.storage_offset(), path.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Accept without waiting forever for a child that failed to connect.
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let sock = loop {
        match listener.accept() {
            Ok((s, _)) => break Some(s),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("accept: {e}"),
        }
    };
    if let Some(sock) = sock {
        sock.set_nonblocking(false).unwrap();
        let (desc, fd) = batch.export_shared().unwrap();
        share_over_socket::send_share(&sock, &desc, fd.as_ref().map(AsFd::as_fd)).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_child_passed(&out);
    let expect: Vec<f32> = (0..32).map(|i| 100.0 + i as f32).collect();
    assert_eq!(batch.to_vec::<f32>().unwrap(), expect, "the child filled the batch in place");
}

#[test]
fn the_socket_recipe_refuses_a_message_with_extra_fds_and_closes_them() {
    let _g = serial();
    let t = Tensor::empty_shared(&[4], DType::F32).unwrap();
    let (desc, fd) = export(&t);
    let (a, b) = UnixStream::pair().unwrap();
    let fds = count_fds();
    share_over_socket::send_with_fds(&a, desc.as_bytes(), &[fd.as_fd(), fd.as_fd()]).unwrap();
    let err = share_over_socket::recv_share(&b).unwrap_err();
    assert!(err.to_string().contains("2 fds arrived"), "{err}");
    assert_eq!(count_fds(), fds, "both received fds were closed");
    // And the ordinary message goes through.
    share_over_socket::send_share(&a, &desc, Some(fd.as_fd())).unwrap();
    let (got, got_fd) = share_over_socket::recv_share(&b).unwrap();
    assert_eq!(got, desc);
    let got_fd = got_fd.unwrap();
    assert!(is_cloexec(&got_fd), "received with MSG_CMSG_CLOEXEC");
    assert_eq!(import(&got, &got_fd).unwrap().nbytes().unwrap(), 16);
}
