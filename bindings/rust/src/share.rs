//! Storages shared with other processes (Linux): [`ShareDescriptor`] and
//! the sharing methods of [`Tensor`], [`Storage`] and [`Stack`](crate::Stack)
//! (`stridemem.h`, "Processes").
//!
//! A storage leaves its process as two things: an open file descriptor (a
//! memfd; none for CUDA, whose IPC handle is inside the descriptor) and the
//! 144 plain bytes of an `sm_share_desc`. The bytes travel by any means
//! ([`ShareDescriptor::as_bytes`], [`ShareDescriptor::to_hex`]); the fd by the
//! operating system's: inherited by a child process, or sent over a Unix
//! socket as `SCM_RIGHTS` (`examples/share_over_socket.rs` shows how with
//! `sendmsg`/`recvmsg`, which std does not expose on stable Rust yet).

use std::ffi::c_int;
use std::fmt;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr;

use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result, Status, check};
use crate::shape::IntoShape;
use crate::sys;
use crate::tensor::{Storage, Tensor, count, make, opt_ptr};

/// How a [`ShareDescriptor`]'s bytes reach the other process
/// (`sm_share_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShareKind {
    /// CPU memory in a memfd (`SM_SHARE_MEMFD`): the fd must travel with
    /// the descriptor.
    Memfd,
    /// A CUDA caching-allocator segment (`SM_SHARE_CUDA_IPC`): its IPC
    /// handle is in the descriptor; there is no fd.
    CudaIpc,
    /// A code these bindings do not know (a forged or later descriptor;
    /// [`Storage::import`] refuses it).
    Unknown(i32),
}

impl ShareKind {
    fn from_code(code: sys::sm_share_kind) -> ShareKind {
        match code {
            sys::SM_SHARE_MEMFD => ShareKind::Memfd,
            sys::SM_SHARE_CUDA_IPC => ShareKind::CudaIpc,
            other => ShareKind::Unknown(other),
        }
    }
}

// The descriptor is reinterpreted as bytes below: that is sound only when it
// has no padding (every byte initialized), i.e. when its size is exactly the
// sum of its fields' sizes. Both are fixed at compile time here.
const _: () = {
    use std::mem::size_of;
    let fields = 4 + 2 + 2 + 4 + 4 + size_of::<sys::sm_device>() + 6 * 8 + 64 + 8;
    assert!(fields == sys::SM_SHARE_DESC_SIZE);
    assert!(size_of::<sys::sm_share_desc>() == sys::SM_SHARE_DESC_SIZE);
};

/// All zeros: what an export overwrites, and a descriptor the library
/// refuses (no magic).
const ZERO_DESC: sys::sm_share_desc = sys::sm_share_desc {
    magic: 0,
    format: 0,
    struct_size: 0,
    kind: 0,
    library_version: 0,
    device: sys::sm_device { type_: 0, index: 0 },
    nbytes: 0,
    offset: 0,
    object_bytes: 0,
    object_id: 0,
    object_dev: 0,
    exporter_pid: 0,
    cuda_ipc_handle: [0; 64],
    checksum: 0,
};

/// The descriptor of an exported storage (`sm_share_desc`): 144 plain bytes
/// ([`SIZE`](ShareDescriptor::SIZE)) to send to the other process with the
/// fd, and to give to [`Storage::import`] there.
///
/// Treat it as opaque: it is checked (magic, format, size, checksum, the
/// library's major version, the fd's identity) by the import, in the process
/// that receives it, which is where a corrupted or forged one must be
/// refused. [`from_bytes`](ShareDescriptor::from_bytes) only checks the
/// length. The accessors are for messages and logs.
///
/// ```
/// use std::os::fd::AsFd;
/// use stridemem::{DType, ShareDescriptor, Storage, Tensor};
///
/// let mut t = Tensor::empty_shared(&[2, 3], DType::F32)?;
/// let (desc, fd) = t.export_shared()?;
/// let bytes: Vec<u8> = desc.as_bytes().to_vec(); // what goes over a pipe or socket
///
/// // ... in the other process, with the bytes and the fd received:
/// let desc = ShareDescriptor::from_bytes(&bytes)?;
/// let storage = Storage::import(&desc, fd.as_ref().map(AsFd::as_fd))?;
/// let row = Tensor::from_storage(&storage, &[3], &[1], 3, DType::F32)?;
/// t.fill(7.0)?;
/// assert_eq!(row.to_vec::<f32>()?, vec![7.0; 3]); // the same pages
/// # Ok::<(), stridemem::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShareDescriptor(sys::sm_share_desc);

impl ShareDescriptor {
    /// The descriptor's size in bytes (`SM_SHARE_DESC_SIZE`).
    pub const SIZE: usize = sys::SM_SHARE_DESC_SIZE;

    /// The bytes to send, exactly as the library wrote them.
    pub fn as_bytes(&self) -> &[u8; sys::SM_SHARE_DESC_SIZE] {
        // SAFETY: sm_share_desc is repr(C), SIZE bytes with no padding (the
        // const assertion above), all of it plain integers, so every byte is
        // initialized; u8 has alignment 1; the borrow is tied to self.
        unsafe { &*(&self.0 as *const sys::sm_share_desc as *const [u8; sys::SM_SHARE_DESC_SIZE]) }
    }

    /// A descriptor from received bytes. Only the length is checked here
    /// (anything else would be a second, weaker copy of the import's checks):
    /// a slice of another length is [`Status::InvalidArgument`].
    pub fn from_bytes(bytes: &[u8]) -> Result<ShareDescriptor> {
        if bytes.len() != Self::SIZE {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("ShareDescriptor::from_bytes: a share descriptor is {} bytes, got {}", Self::SIZE, bytes.len()),
            ));
        }
        let mut d = ZERO_DESC;
        // SAFETY: d is SIZE bytes of plain integers (no padding, any bit
        // pattern valid), bytes holds SIZE bytes, and they do not overlap.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), &mut d as *mut sys::sm_share_desc as *mut u8, Self::SIZE) };
        Ok(ShareDescriptor(d))
    }

    /// The bytes as 288 lowercase hex digits, for a command line or an
    /// environment variable (a child that inherits the fd needs both).
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(2 * Self::SIZE);
        for &b in self.as_bytes() {
            s.push(DIGITS[usize::from(b >> 4)] as char);
            s.push(DIGITS[usize::from(b & 15)] as char);
        }
        s
    }

    /// The inverse of [`to_hex`](ShareDescriptor::to_hex) (either case):
    /// another length or a character that is not a hex digit is
    /// [`Status::InvalidArgument`].
    pub fn from_hex(hex: &str) -> Result<ShareDescriptor> {
        let bad = |what: String| Error::new(Status::InvalidArgument, format!("ShareDescriptor::from_hex: {what}"));
        let digits = hex.as_bytes();
        if digits.len() != 2 * Self::SIZE {
            return Err(bad(format!("{} hex digits, expected {}", digits.len(), 2 * Self::SIZE)));
        }
        let nibble = |c: u8, at: usize| -> Result<u8> {
            match c {
                b'0'..=b'9' => Ok(c - b'0'),
                b'a'..=b'f' => Ok(c - b'a' + 10),
                b'A'..=b'F' => Ok(c - b'A' + 10),
                _ => Err(bad(format!("{:?} at {at} is not a hex digit", c as char))),
            }
        };
        let mut bytes = [0u8; sys::SM_SHARE_DESC_SIZE];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (nibble(digits[2 * i], 2 * i)? << 4) | nibble(digits[2 * i + 1], 2 * i + 1)?;
        }
        ShareDescriptor::from_bytes(&bytes)
    }

    /// The C struct, as received (unchecked until imported).
    pub fn as_raw(&self) -> &sys::sm_share_desc {
        &self.0
    }

    /// Wraps a C struct (from C code that exported it).
    pub fn from_raw(raw: sys::sm_share_desc) -> ShareDescriptor {
        ShareDescriptor(raw)
    }

    /// Memfd (an fd travels with it) or CUDA IPC (no fd).
    pub fn kind(&self) -> ShareKind {
        ShareKind::from_code(self.0.kind)
    }

    /// Where the bytes live; `None` for a device code these bindings do not
    /// know.
    pub fn device(&self) -> Option<Device> {
        Device::from_raw(self.0.device)
    }

    /// The storage's size in bytes.
    pub fn nbytes(&self) -> i64 {
        self.0.nbytes
    }

    /// Where the storage starts in the shared object (memfd or CUDA
    /// segment), in bytes.
    pub fn offset(&self) -> i64 {
        self.0.offset
    }

    /// The exporting process's id, as it wrote it.
    pub fn exporter_pid(&self) -> i64 {
        self.0.exporter_pid
    }

    /// The exporter's library version, `(major, minor, patch)` from its
    /// `SM_VERSION_NUMBER`.
    pub fn library_version(&self) -> (i32, i32, i32) {
        let v = self.0.library_version;
        ((v / 10000) as i32, (v / 100 % 100) as i32, (v % 100) as i32)
    }
}

impl From<sys::sm_share_desc> for ShareDescriptor {
    fn from(raw: sys::sm_share_desc) -> ShareDescriptor {
        ShareDescriptor(raw)
    }
}

impl fmt::Debug for ShareDescriptor {
    /// The fields a person wants in a log; not the 64 bytes of CUDA handle.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShareDescriptor")
            .field("kind", &self.kind())
            .field("device", &self.0.device)
            .field("nbytes", &self.0.nbytes)
            .field("offset", &self.0.offset)
            .field("object_bytes", &self.0.object_bytes)
            .field("exporter_pid", &self.0.exporter_pid)
            .finish()
    }
}

/// Runs an export call and takes what it wrote: the descriptor and, for a
/// memfd, the new fd (close-on-exec) that is now ours to close.
fn export_with(
    call: impl FnOnce(*mut sys::sm_share_desc, *mut c_int) -> sys::sm_status,
) -> Result<(ShareDescriptor, Option<OwnedFd>)> {
    let mut desc = ZERO_DESC;
    let mut fd: c_int = -1;
    check(call(&mut desc, &mut fd))?;
    // SAFETY: on SM_OK a non-negative fd is a new descriptor the caller
    // owns (stridemem.h); -1 means none (CUDA IPC).
    let fd = (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
    Ok((ShareDescriptor(desc), fd))
}

impl Tensor {
    /// A zero-filled row-major CPU tensor in a fresh shared-memory storage
    /// (`sm_empty_shared`): ready for [`export_shared`](Tensor::export_shared).
    pub fn empty_shared(shape: impl IntoShape, dtype: DType) -> Result<Tensor> {
        let shape_dims = shape.dims()?;
        let shape: &[i64] = &shape_dims;
        crate::ensure_compatible()?;
        let n = count(shape.len(), "Tensor::empty_shared")?;
        // SAFETY: shape holds n values; make passes a valid out-pointer.
        make(|out| unsafe { sys::sm_empty_shared(opt_ptr(shape), n, dtype.code(), out) })
    }

    /// PyTorch's `share_memory_()` (`sm_share_memory`): moves this tensor's
    /// CPU storage into shared memory, in place and once (one copy); every
    /// view of it, in any handle, then reads and writes the shared pages. A
    /// no-op when the storage is already shared and for CUDA memory (CUDA IPC
    /// shares it as it is).
    ///
    /// Refused with [`Status::Unsupported`], changing nothing: a tensor
    /// carved from a [`Stack`](crate::Stack) (use
    /// [`Stack::new_shared`](crate::Stack::new_shared)), memory the library
    /// does not own ([`Tensor::from_vec`], [`Tensor::from_blob`], DLPack
    /// imports: copy into [`Tensor::empty_shared`] instead), pinned memory,
    /// and a storage with a live DLPack export.
    ///
    /// The bytes move: an address taken before ([`data_ptr`](Tensor::data_ptr),
    /// [`Storage::data_ptr`]) points to freed memory afterwards, so share
    /// first, then hand addresses out.
    ///
    /// # Safety
    ///
    /// No other thread may be inside a call on any view of this storage
    /// while it moves (tensors are `Sync`, so safe code could otherwise read
    /// the freed block from another thread: the library documents that as a
    /// data race, as freeing memory another thread reads), and no address
    /// taken from the storage before the call may be used after it.
    pub unsafe fn share_memory(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::sm_share_memory(self.as_raw()) })
    }

    /// Can the storage be exported as it is (shared CPU memory, a CUDA
    /// caching-allocator block, an imported storage)? (`sm_is_shared`).
    pub fn is_shared(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_is_shared(self.as_raw(), &mut v) })?;
        Ok(v != 0)
    }

    /// Exports this tensor's storage (`sm_tensor_export`): the descriptor and
    /// the fd to send (`None` for CUDA). For a tensor carved from a shared
    /// stack the whole stack buffer is exported: the importer rebuilds the
    /// tensor from [`storage_offset`](Tensor::storage_offset),
    /// [`shape`](Tensor::shape) and [`strides`](Tensor::strides) with
    /// [`Tensor::from_storage`]. Memory that is not shared is
    /// [`Status::Unsupported`] ([`share_memory`](Tensor::share_memory)
    /// first). The fd is close-on-exec; it closes when dropped.
    pub fn export_shared(&self) -> Result<(ShareDescriptor, Option<OwnedFd>)> {
        // SAFETY: a live handle and two valid out-pointers.
        export_with(|desc, fd| unsafe { sys::sm_tensor_export(self.as_raw(), desc, fd) })
    }
}

impl Storage {
    /// Exports the storage (`sm_storage_export`), as
    /// [`Tensor::export_shared`].
    pub fn export(&self) -> Result<(ShareDescriptor, Option<OwnedFd>)> {
        // SAFETY: a live handle and two valid out-pointers.
        export_with(|desc, fd| unsafe { sys::sm_storage_export(self.as_raw(), desc, fd) })
    }

    /// A storage over an export of this or another process
    /// (`sm_storage_import`): the same pages, so writes show on both sides
    /// (version counters stay per process). `fd` is borrowed: the library
    /// takes its own duplicate, and the caller closes its fd when it likes.
    /// Pass `None` for a CUDA IPC descriptor.
    ///
    /// Everything is checked before anything is mapped, and a refusal leaves
    /// no mapping and no fd behind: a descriptor that is not one, or is
    /// corrupted, or whose fd is of another object, a regular file, a pipe or
    /// missing, is [`Status::InvalidArgument`]; another format or library
    /// major version [`Status::Unsupported`]; a range beyond the object
    /// [`Status::OutOfBounds`]; CUDA without a usable GPU [`Status::Device`]
    /// (and a CUDA export of this very process [`Status::Unsupported`]).
    pub fn import(desc: &ShareDescriptor, fd: Option<BorrowedFd<'_>>) -> Result<Storage> {
        crate::ensure_compatible()?;
        let raw_fd = fd.map_or(-1, |f| f.as_raw_fd());
        let mut out: sys::sm_storage = ptr::null_mut();
        // SAFETY: desc is a whole sm_share_desc; the fd (if any) stays open
        // for the call, borrowed; valid out-pointer.
        check(unsafe { sys::sm_storage_import(&desc.0, raw_fd, &mut out) })?;
        Storage::from_owned(out, "sm_storage_import")
    }

    /// Does it live in memory another process can map (as
    /// [`Tensor::is_shared`])? (`sm_storage_is_shared`).
    pub fn is_shared(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::sm_storage_is_shared(self.as_raw(), &mut v) })?;
        Ok(v != 0)
    }
}
