// Host memory another process can map: an anonymous memfd (Linux), sized,
// sealed against shrinking and growing, and mapped MAP_SHARED. What the
// engine's shared CPU storages stand on (engine/sharing.*); no device API.
//
// Why a memfd: it has no name, so a crash leaves nothing behind in /dev/shm,
// and the pages live exactly as long as some fd or mapping in some process.
// Why the seals: a shared object that another process could shrink would
// turn every access past its new end into SIGBUS in every mapper; the seals
// make the size a promise, and their presence tells our objects apart from
// /dev/shm files and regular files on import.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace sm {

class SharedHostMemory {
 public:
  // A fresh object of nbytes (>= 0; zero-filled pages), mapped read-write.
  // populate: every page is about to be written (a move into shared
  // memory), so the kernel backs them all in the one mmap call instead of
  // taking one page fault per 4 KiB page during the copy (mapping + copying
  // 1 GiB: 0.72-0.76 s against 0.77-0.88 s here); otherwise pages are
  // backed as they are first touched.
  // Refused with SM_ERR_OUT_OF_MEMORY past the host memory limit (RAM +
  // swap, memory/host_memory_limit.hpp), under fault injection, or when the
  // system refuses the fd or the mapping; SM_ERR_UNSUPPORTED where memfds do
  // not exist.
  static std::shared_ptr<SharedHostMemory> create(int64_t nbytes, bool populate = false);

  // Maps an object another process (or this one) created, given its fd, the
  // identity the exporter wrote (inode, st_dev) and the byte range a storage
  // needs. Checks, in order, before anything is mapped: fd open
  // (SM_ERR_INVALID_ARGUMENT), a sealed memfd (a regular file, a pipe or an
  // unsealed object: SM_ERR_INVALID_ARGUMENT), the identity
  // (SM_ERR_INVALID_ARGUMENT), the range inside the object's real size
  // (SM_ERR_OUT_OF_BOUNDS). Keeps its own duplicate of fd: the caller's fd is
  // never kept or closed. A failure leaves no mapping and no fd.
  static std::shared_ptr<SharedHostMemory> open(int fd, uint64_t inode, uint64_t dev,
                                                int64_t offset, int64_t nbytes);

  ~SharedHostMemory();  // munmap + close
  SharedHostMemory(const SharedHostMemory&) = delete;
  SharedHostMemory& operator=(const SharedHostMemory&) = delete;

  // The storage's bytes: base of the mapping + offset (nullptr when empty).
  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  int64_t offset() const { return offset_; }
  // The whole object's size.
  int64_t object_bytes() const { return object_bytes_; }
  uint64_t inode() const { return inode_; }
  uint64_t dev() const { return dev_; }
  // A new close-on-exec duplicate of the object's fd, owned by the caller
  // (SM_ERR_INVALID_ARGUMENT with the reason when the process is out of fds).
  int dup_fd() const;

  // Bytes of every SharedHostMemory mapping alive in this process (exported
  // and imported alike), for statistics and leak tests.
  static int64_t live_bytes();
  static int64_t live_count();

 private:
  SharedHostMemory() = default;
  int fd_ = -1;
  void* map_ = nullptr;  // the mapping's base (nullptr for an empty object)
  size_t map_bytes_ = 0;
  void* data_ = nullptr;
  int64_t nbytes_ = 0;
  int64_t offset_ = 0;
  int64_t object_bytes_ = 0;
  uint64_t inode_ = 0;
  uint64_t dev_ = 0;
};

}  // namespace sm
