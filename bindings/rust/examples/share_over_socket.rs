//! A shared tensor sent to another process over a Unix socket: the
//! descriptor's 144 bytes as data, the memfd beside them as `SCM_RIGHTS`
//! ancillary data. The other process maps the same pages and writes into
//! them; this one sees the writes.
//!
//! ```sh
//! cargo run --example share_over_socket
//! ```
//!
//! std has no stable API for `SCM_RIGHTS` yet (`send_vectored_with_ancillary`
//! is unstable), so [`send_share`] and [`recv_share`] declare `sendmsg` and
//! `recvmsg` themselves; `struct msghdr` and `struct cmsghdr` are written out
//! as Linux lays them out on 64-bit targets (glibc and musl agree on
//! little-endian ones). `tests/sharing.rs` uses these two functions for its
//! cross-process socket test, so this recipe is run by `cargo test`.
//!
//! The program runs itself a second time as the receiving process
//! (`--receive <socket path>`). A child can also simply inherit the fd: see
//! `tests/sharing.rs`, `a_child_process_imports_an_inherited_fd_and_writes_back`.

use std::ffi::{c_int, c_void};
use std::io::{self, Read, Write};
use std::mem::size_of;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use stridemem::{DType, Device, ShareDescriptor, Storage, Tensor};

// ---- sendmsg / recvmsg with SCM_RIGHTS (Linux, 64-bit) ----------------------

#[repr(C)]
struct IoVec {
    base: *mut c_void,
    len: usize,
}

/// `struct msghdr`.
#[repr(C)]
struct MsgHdr {
    name: *mut c_void,
    namelen: u32,
    iov: *mut IoVec,
    iovlen: usize,
    control: *mut c_void,
    controllen: usize,
    flags: c_int,
}

/// `struct cmsghdr`; the fds follow it at `CMSG_ALIGN(sizeof(cmsghdr))`.
#[repr(C)]
struct CmsgHdr {
    len: usize,
    level: c_int,
    kind: c_int,
}

const SOL_SOCKET: c_int = 1;
const SCM_RIGHTS: c_int = 1;
const MSG_NOSIGNAL: c_int = 0x4000;
const MSG_CTRUNC: c_int = 0x8;
/// The received fds are close-on-exec from the start (no window in which a
/// fork of another thread could inherit them).
const MSG_CMSG_CLOEXEC: c_int = 0x4000_0000;
/// `CMSG_LEN(0)`: the header, already a multiple of `size_t`.
const CMSG_HDR: usize = size_of::<CmsgHdr>();

/// Room for the header and up to 4 fds (`CMSG_SPACE(4 * sizeof(int))`),
/// aligned as a `cmsghdr`. A receiver makes room for more fds than it
/// expects so that extra ones arrive (and get closed) instead of being
/// dropped by the kernel with only a flag to say so.
#[repr(C, align(8))]
struct Control([u8; CMSG_HDR + 16]);

unsafe extern "C" {
    fn sendmsg(sockfd: c_int, msg: *const MsgHdr, flags: c_int) -> isize;
    fn recvmsg(sockfd: c_int, msg: *mut MsgHdr, flags: c_int) -> isize;
}

/// Sends `bytes` with `fds` attached to the first byte (`SCM_RIGHTS`).
/// The fds stay the caller's: the receiver gets its own.
pub fn send_with_fds(sock: &UnixStream, bytes: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut control = Control([0; CMSG_HDR + 16]);
    if fds.len() > 4 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "at most 4 fds"));
    }
    let mut iov = IoVec { base: bytes.as_ptr() as *mut c_void, len: bytes.len() };
    let mut msg = MsgHdr {
        name: std::ptr::null_mut(),
        namelen: 0,
        iov: &mut iov,
        iovlen: 1,
        control: std::ptr::null_mut(),
        controllen: 0,
        flags: 0,
    };
    if !fds.is_empty() {
        let data_len = fds.len() * size_of::<c_int>();
        let header = CmsgHdr { len: CMSG_HDR + data_len, level: SOL_SOCKET, kind: SCM_RIGHTS };
        let base = control.0.as_mut_ptr();
        // SAFETY: control is aligned for a cmsghdr and has room for the
        // header plus 4 ints; the fd slots follow the header unaligned.
        unsafe {
            std::ptr::write(base as *mut CmsgHdr, header);
            for (i, fd) in fds.iter().enumerate() {
                std::ptr::write_unaligned(base.add(CMSG_HDR + 4 * i) as *mut c_int, fd.as_raw_fd());
            }
        }
        msg.control = base as *mut c_void;
        // CMSG_SPACE: the data rounded up to a size_t.
        msg.controllen = CMSG_HDR + data_len.div_ceil(size_of::<usize>()) * size_of::<usize>();
    }
    let sent = loop {
        // SAFETY: msg points to live buffers for the call.
        let n = unsafe { sendmsg(sock.as_raw_fd(), &msg, MSG_NOSIGNAL) };
        if n >= 0 {
            break n as usize;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    };
    // A stream socket may take fewer bytes at once; the fds went with the
    // first one, the rest is plain data.
    let mut stream = sock;
    stream.write_all(&bytes[sent..])
}

/// Sends an export: the descriptor's bytes and its fd (`None` for CUDA).
pub fn send_share(sock: &UnixStream, desc: &ShareDescriptor, fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
    let fds: Vec<BorrowedFd<'_>> = fd.into_iter().collect();
    send_with_fds(sock, desc.as_bytes(), &fds)
}

/// Receives what [`send_share`] sent. A message that carries more than one
/// fd is refused, and every fd it carried is closed.
pub fn recv_share(sock: &UnixStream) -> io::Result<(ShareDescriptor, Option<OwnedFd>)> {
    let mut bytes = [0u8; ShareDescriptor::SIZE];
    let mut control = Control([0; CMSG_HDR + 16]);
    let mut iov = IoVec { base: bytes.as_mut_ptr() as *mut c_void, len: bytes.len() };
    let mut msg = MsgHdr {
        name: std::ptr::null_mut(),
        namelen: 0,
        iov: &mut iov,
        iovlen: 1,
        control: control.0.as_mut_ptr() as *mut c_void,
        controllen: control.0.len(),
        flags: 0,
    };
    let got = loop {
        // SAFETY: msg points to live buffers for the call.
        let n = unsafe { recvmsg(sock.as_raw_fd(), &mut msg, MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    };
    // Own every fd that arrived before anything can fail, so each one is
    // closed on every path.
    let mut fds: Vec<OwnedFd> = Vec::new();
    if msg.controllen >= CMSG_HDR {
        // SAFETY: the kernel wrote a cmsghdr at the start of the aligned
        // buffer.
        let header = unsafe { std::ptr::read(control.0.as_ptr() as *const CmsgHdr) };
        if header.level == SOL_SOCKET && header.kind == SCM_RIGHTS {
            let n = header.len.saturating_sub(CMSG_HDR).min(16) / size_of::<c_int>();
            for i in 0..n {
                // SAFETY: the kernel wrote n ints after the header; each is a
                // new fd of this process that nobody else owns.
                let raw = unsafe { std::ptr::read_unaligned(control.0.as_ptr().add(CMSG_HDR + 4 * i) as *const c_int) };
                fds.push(unsafe { OwnedFd::from_raw_fd(raw) });
            }
        }
    }
    if msg.flags & MSG_CTRUNC != 0 {
        return Err(io::Error::other("more than 4 fds arrived with the descriptor; refused"));
    }
    if fds.len() > 1 {
        let n = fds.len();
        return Err(io::Error::other(format!("{n} fds arrived with the descriptor, expected at most 1; all closed")));
    }
    if got == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the socket closed before a descriptor arrived"));
    }
    let mut stream = sock;
    stream.read_exact(&mut bytes[got..])?;
    let desc = ShareDescriptor::from_bytes(&bytes).map_err(io::Error::other)?;
    Ok((desc, fds.pop()))
}

// ---- the program ----------------------------------------------------------

type BoxError = Box<dyn std::error::Error>;

/// The layout both sides agree on: a 3 x 4 f32 matrix; the receiver doubles
/// column 1 through a strided view of its own mapping.
const ROWS: i64 = 3;
const COLS: i64 = 4;

fn receive(path: &str) -> Result<(), BoxError> {
    let sock = UnixStream::connect(path)?;
    let (desc, fd) = recv_share(&sock)?;
    let storage = Storage::import(&desc, fd.as_ref().map(AsFd::as_fd))?;
    drop(fd); // the import holds its own duplicate
    let mut column = Tensor::from_storage(&storage, &[ROWS], &[COLS], 1, DType::F32)?;
    println!("receiver (pid {}): column 1 is {:?}", std::process::id(), column.to_vec::<f32>()?);
    column.mul_scalar(2.0)?;
    Ok(())
}

/// Accepts the child's connection, or fails if the child exits first (so a
/// child that could not connect never leaves the parent waiting forever).
fn accept_from(listener: &UnixListener, child: &mut std::process::Child) -> Result<UnixStream, BoxError> {
    listener.set_nonblocking(true)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match listener.accept() {
            Ok((sock, _)) => {
                sock.set_nonblocking(false)?;
                return Ok(sock);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Some(status) = child.try_wait()? {
                    return Err(format!("the receiver exited ({status}) without connecting").into());
                }
                if Instant::now() > deadline {
                    return Err("the receiver did not connect within 60 s".into());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn send(dir: &std::path::Path) -> Result<ExitStatus, BoxError> {
    let path = dir.join("socket");
    let listener = UnixListener::bind(&path)?;
    let t = Tensor::arange(0.0, 1.0, ROWS * COLS, DType::F32, Device::Cpu)?.view(&[ROWS, COLS])?;
    // SAFETY: no other thread uses t's storage, and no address of it was taken.
    unsafe { t.share_memory()? }; // into a memfd, once; every view follows
    let mut child = Command::new(std::env::current_exe()?).arg("--receive").arg(&path).spawn()?;
    let sock = accept_from(&listener, &mut child)?;
    let (desc, fd) = t.export_shared()?;
    send_share(&sock, &desc, fd.as_ref().map(AsFd::as_fd))?;
    drop(fd); // sent: the receiver has its own
    let status = child.wait()?;
    println!("sender: after the receiver ran\n{t}");
    let expect: Vec<f32> = (0..ROWS * COLS).map(|i| if i % COLS == 1 { 2.0 * i as f32 } else { i as f32 }).collect();
    if status.success() && t.to_vec::<f32>()? != expect {
        return Err(format!("expected {expect:?}").into());
    }
    Ok(status)
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--receive" {
        return receive(&args[2]);
    }
    let dir = std::env::temp_dir().join(format!("stridemem-share-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = send(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let status = result?;
    if !status.success() {
        return Err(format!("the receiver failed: {status}").into());
    }
    Ok(())
}
