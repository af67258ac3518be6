#include "memory/shared_host_memory.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "core/error.hpp"
#include "memory/byte_units.hpp"
#include "memory/fault_injection.hpp"
#include "memory/host_memory_limit.hpp"

namespace sm {

namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_live_count{0};

}  // namespace

int64_t SharedHostMemory::live_bytes() { return g_live_bytes.load(std::memory_order_relaxed); }
int64_t SharedHostMemory::live_count() { return g_live_count.load(std::memory_order_relaxed); }

#if defined(__linux__) && defined(MFD_ALLOW_SEALING)

namespace {

// The name shows in /proc/<pid>/maps ("/memfd:stridemem (deleted)"), so a
// user looking at a process sees whose mappings these are.
constexpr const char* kMemfdName = "stridemem";
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

// Closes an fd on every path out of a scope unless released.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

}  // namespace

std::shared_ptr<SharedHostMemory> SharedHostMemory::create(int64_t nbytes, bool populate) {
  if (nbytes < 0) fail(SM_ERR_INVALID_ARGUMENT, "shared memory of %lld bytes", (long long)nbytes);
  const size_t limit = host_memory_limit();
  if (static_cast<uint64_t>(nbytes) > limit)
    fail(SM_ERR_OUT_OF_MEMORY, "shared memory of %s: %s", human_bytes(static_cast<uint64_t>(nbytes)).c_str(),
         over_host_memory_limit(limit).c_str());
  if (fault_injection_should_fail())
    fail(SM_ERR_OUT_OF_MEMORY,
         "shared memory of %s: refused by fault injection (sm_debug_fail_alloc)",
         human_bytes(static_cast<uint64_t>(nbytes)).c_str());
  std::shared_ptr<SharedHostMemory> m(new SharedHostMemory());
  FdGuard fd{static_cast<int>(::memfd_create(kMemfdName, MFD_CLOEXEC | MFD_ALLOW_SEALING))};
  if (fd.fd < 0) {
    const int e = errno;
    fail(e == ENOSYS ? SM_ERR_UNSUPPORTED : SM_ERR_OUT_OF_MEMORY,
         "memfd_create failed (%s): the process may be out of file descriptors (ulimit -n)",
         std::strerror(e));
  }
  if (::ftruncate(fd.fd, static_cast<off_t>(nbytes)) != 0)
    fail(SM_ERR_OUT_OF_MEMORY, "sizing shared memory to %s failed (%s)",
         human_bytes(static_cast<uint64_t>(nbytes)).c_str(), std::strerror(errno));
  if (::fcntl(fd.fd, F_ADD_SEALS, kSeals) != 0)
    fail(SM_ERR_INTERNAL, "sealing the memfd failed (%s)", std::strerror(errno));
  struct stat st;
  if (::fstat(fd.fd, &st) != 0)
    fail(SM_ERR_INTERNAL, "fstat of a fresh memfd failed (%s)", std::strerror(errno));
  if (nbytes > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(nbytes), PROT_READ | PROT_WRITE,
                     MAP_SHARED | (populate ? MAP_POPULATE : 0), fd.fd, 0);
    if (p == MAP_FAILED)
      fail(SM_ERR_OUT_OF_MEMORY, "mapping %s of shared memory failed (%s)",
           human_bytes(static_cast<uint64_t>(nbytes)).c_str(), std::strerror(errno));
    m->map_ = p;
    m->map_bytes_ = static_cast<size_t>(nbytes);
    m->data_ = p;
  }
  m->nbytes_ = nbytes;
  m->object_bytes_ = nbytes;
  m->inode_ = static_cast<uint64_t>(st.st_ino);
  m->dev_ = static_cast<uint64_t>(st.st_dev);
  m->fd_ = fd.release();
  g_live_bytes.fetch_add(nbytes, std::memory_order_relaxed);
  g_live_count.fetch_add(1, std::memory_order_relaxed);
  return m;
}

std::shared_ptr<SharedHostMemory> SharedHostMemory::open(int fd, uint64_t inode, uint64_t dev,
                                                         int64_t offset, int64_t nbytes) {
  if (offset < 0 || nbytes < 0)
    fail(SM_ERR_OUT_OF_BOUNDS, "offset %lld and size %lld must both be >= 0", (long long)offset,
         (long long)nbytes);
  if (fd < 0) fail(SM_ERR_INVALID_ARGUMENT, "fd %d is not a file descriptor", fd);
  struct stat st;
  if (::fstat(fd, &st) != 0)
    fail(SM_ERR_INVALID_ARGUMENT, "fd %d is not an open file descriptor (%s)", fd,
         std::strerror(errno));
  // Only a memfd (shmem) answers F_GET_SEALS; regular files, pipes and
  // sockets fail with EINVAL. A /dev/shm file answers but never has
  // F_SEAL_SHRINK; ours always does.
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || !S_ISREG(st.st_mode))
    fail(SM_ERR_INVALID_ARGUMENT,
         "fd %d is not shared memory from stridemem (it is %s): pass the fd that came with the "
         "descriptor",
         fd,
         S_ISREG(st.st_mode)   ? "a regular file"
         : S_ISFIFO(st.st_mode) ? "a pipe"
         : S_ISSOCK(st.st_mode) ? "a socket"
         : S_ISDIR(st.st_mode)  ? "a directory"
                                : "not a memfd");
  if (!(seals & F_SEAL_SHRINK))
    fail(SM_ERR_INVALID_ARGUMENT,
         "fd %d is a shared-memory object that can shrink under its mappings (not sealed with "
         "F_SEAL_SHRINK): only stridemem's sealed memfds are imported",
         fd);
  if (static_cast<uint64_t>(st.st_ino) != inode || static_cast<uint64_t>(st.st_dev) != dev)
    fail(SM_ERR_INVALID_ARGUMENT,
         "fd %d is another shared object (inode %llu) than the descriptor names (inode %llu): "
         "pass the fd that came with this descriptor",
         fd, (unsigned long long)st.st_ino, (unsigned long long)inode);
  const int64_t size = static_cast<int64_t>(st.st_size);
  if (offset > size || nbytes > size - offset)
    fail(SM_ERR_OUT_OF_BOUNDS,
         "bytes [%lld, %lld + %lld) reach past the end of the shared object behind fd %d (%lld "
         "bytes)",
         (long long)offset, (long long)offset, (long long)nbytes, fd, (long long)size);
  std::shared_ptr<SharedHostMemory> m(new SharedHostMemory());
  FdGuard own{::fcntl(fd, F_DUPFD_CLOEXEC, 0)};
  if (own.fd < 0)
    fail(SM_ERR_INVALID_ARGUMENT, "duplicating fd %d failed (%s): the process may be out of file "
         "descriptors (ulimit -n)", fd, std::strerror(errno));
  if (nbytes > 0) {
    // Mapped from the object's start (mmap offsets are page multiples); the
    // mapping covers what the storage needs and nothing past it.
    const size_t len = static_cast<size_t>(offset + nbytes);
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, own.fd, 0);
    if (p == MAP_FAILED)
      fail(SM_ERR_OUT_OF_MEMORY, "mapping %s of shared memory failed (%s)",
           human_bytes(len).c_str(), std::strerror(errno));
    m->map_ = p;
    m->map_bytes_ = len;
    m->data_ = static_cast<char*>(p) + offset;
  }
  m->nbytes_ = nbytes;
  m->offset_ = offset;
  m->object_bytes_ = size;
  m->inode_ = inode;
  m->dev_ = dev;
  m->fd_ = own.release();
  g_live_bytes.fetch_add(nbytes, std::memory_order_relaxed);
  g_live_count.fetch_add(1, std::memory_order_relaxed);
  return m;
}

SharedHostMemory::~SharedHostMemory() {
  if (fd_ < 0) return;  // never finished construction: nothing counted
  if (map_) ::munmap(map_, map_bytes_);
  ::close(fd_);
  g_live_bytes.fetch_sub(nbytes_, std::memory_order_relaxed);
  g_live_count.fetch_sub(1, std::memory_order_relaxed);
}

int SharedHostMemory::dup_fd() const {
  const int f = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (f < 0)
    fail(SM_ERR_INVALID_ARGUMENT, "duplicating the shared memory's fd failed (%s): the process "
         "may be out of file descriptors (ulimit -n)", std::strerror(errno));
  return f;
}

#else  // no memfd

std::shared_ptr<SharedHostMemory> SharedHostMemory::create(int64_t, bool) {
  fail(SM_ERR_UNSUPPORTED, "shared memory needs Linux memfds; this build has none");
}
std::shared_ptr<SharedHostMemory> SharedHostMemory::open(int, uint64_t, uint64_t, int64_t,
                                                         int64_t) {
  fail(SM_ERR_UNSUPPORTED, "shared memory needs Linux memfds; this build has none");
}
SharedHostMemory::~SharedHostMemory() = default;
int SharedHostMemory::dup_fd() const { return -1; }

#endif

}  // namespace sm
