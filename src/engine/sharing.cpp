#include "engine/sharing.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <mutex>
#include <set>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "engine/ops.hpp"
#include "layout/contiguity.hpp"

namespace sm {

// ---- the descriptor ---------------------------------------------------------------------

static_assert(sizeof(sm_share_desc) == SM_SHARE_DESC_SIZE, "sm_share_desc has no padding");
static_assert(offsetof(sm_share_desc, checksum) == SM_SHARE_DESC_SIZE - 8,
              "the checksum is the last field");

uint64_t share_checksum(const sm_share_desc& d) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&d);
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (size_t i = 0; i < offsetof(sm_share_desc, checksum); ++i) {
    h ^= p[i];
    h *= 1099511628211ull;  // FNV prime
  }
  return h;
}

void seal_share_desc(sm_share_desc& d) {
  d.magic = SM_SHARE_MAGIC;
  d.format = SM_SHARE_FORMAT;
  d.struct_size = SM_SHARE_DESC_SIZE;
  d.library_version = SM_VERSION_NUMBER;
  d.checksum = share_checksum(d);
}

namespace {

std::string version_text(uint32_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

void check_share_desc(const sm_share_desc& d) {
  if (d.magic != SM_SHARE_MAGIC)
    fail(SM_ERR_INVALID_ARGUMENT,
         "desc is not a stridemem share descriptor (magic 0x%08x, expected 0x%08x): pass the "
         "bytes sm_storage_export wrote, unchanged",
         d.magic, SM_SHARE_MAGIC);
  if (d.format != SM_SHARE_FORMAT)
    fail(SM_ERR_UNSUPPORTED,
         "desc has descriptor format %u, written by stridemem %s; this library (%s) reads format "
         "%d: export and import with the same stridemem release",
         d.format, version_text(d.library_version).c_str(), SM_VERSION_STRING, SM_SHARE_FORMAT);
  if (d.struct_size != SM_SHARE_DESC_SIZE)
    fail(SM_ERR_INVALID_ARGUMENT, "desc says it is %u bytes, but format %d is %d bytes: corrupted",
         d.struct_size, SM_SHARE_FORMAT, SM_SHARE_DESC_SIZE);
  const uint64_t sum = share_checksum(d);
  if (sum != d.checksum)
    fail(SM_ERR_INVALID_ARGUMENT,
         "desc is corrupted: its checksum is 0x%016llx, its bytes give 0x%016llx (changed in "
         "transit, or not the bytes sm_storage_export wrote)",
         (unsigned long long)d.checksum, (unsigned long long)sum);
  if (d.library_version / 10000 != SM_VERSION_MAJOR)
    fail(SM_ERR_UNSUPPORTED,
         "desc was written by stridemem %s; this library is %s, another major version: share "
         "between processes that load the same major version",
         version_text(d.library_version).c_str(), SM_VERSION_STRING);
  switch (d.kind) {
    case SM_SHARE_MEMFD:
      if (d.device.type != SM_DEVICE_CPU || d.device.index != 0)
        fail(SM_ERR_INVALID_ARGUMENT,
             "desc describes shared host memory (SM_SHARE_MEMFD) on device (type %d, index %d); "
             "it can only be the CPU",
             d.device.type, d.device.index);
      break;
    case SM_SHARE_CUDA_IPC:
      if (d.device.type != SM_DEVICE_CUDA || d.device.index < 0 ||
          d.device.index >= kMaxCudaDevices)
        fail(SM_ERR_INVALID_ARGUMENT,
             "desc describes CUDA IPC memory on device (type %d, index %d); it can only be a "
             "CUDA device",
             d.device.type, d.device.index);
      break;
    default:
      fail(SM_ERR_INVALID_ARGUMENT,
           "desc has kind %d (known: SM_SHARE_MEMFD = 1, SM_SHARE_CUDA_IPC = 2)", d.kind);
  }
  if (d.nbytes < 0 || d.offset < 0 || d.object_bytes < 0 || d.offset > d.object_bytes ||
      d.nbytes > d.object_bytes - d.offset)
    fail(SM_ERR_OUT_OF_BOUNDS,
         "desc's storage (%lld bytes at offset %lld) does not lie inside its shared object "
         "(%lld bytes)",
         (long long)d.nbytes, (long long)d.offset, (long long)d.object_bytes);
}

// ---- CUDA IPC bookkeeping ------------------------------------------------------------------

namespace {

// The backend's calls, for the mapping cache.
class BackendIpcOps final : public IpcOps {
 public:
  void* open(int device, const IpcHandle& h) override {
    return backend_for(Device{SM_DEVICE_CUDA, device}).ipc_open(h);
  }
  void close(int device, void* base) noexcept override {
    try {
      backend_for(Device{SM_DEVICE_CUDA, device}).ipc_close(base);
    } catch (...) {
      // The device is gone: nothing is left to close.
    }
  }
};

// Leaked on purpose: imported storages may die during static destruction.
IpcMappingCache& ipc_cache() {
  static BackendIpcOps* ops = new BackendIpcOps();
  static IpcMappingCache* cache = new IpcMappingCache(ops);
  return *cache;
}

// Handles this process exported: CUDA refuses to open them here, so an
// import of one is told apart from a broken handle.
struct ExportedHandles {
  std::mutex mu;
  std::set<std::pair<int, IpcHandle>> handles;
};
ExportedHandles& exported_handles() {
  static ExportedHandles* e = new ExportedHandles();
  return *e;
}

sm_share_desc blank_desc() {
  sm_share_desc d;
  std::memset(&d, 0, sizeof d);
  d.exporter_pid = static_cast<int64_t>(::getpid());
  return d;
}

}  // namespace

// ---- the operations ------------------------------------------------------------------------

StoragePtr new_shared_storage(int64_t nbytes) {
  if (nbytes < 0)
    fail(SM_ERR_INVALID_ARGUMENT, "shared memory of %lld bytes: the size must be >= 0",
         (long long)nbytes);
  auto origin = std::make_shared<ShareOrigin>();
  origin->host = SharedHostMemory::create(nbytes);
  void* data = origin->host->data();
  return std::make_shared<Storage>(Device{SM_DEVICE_CPU, 0}, data, nbytes, std::move(origin));
}

TensorPtr empty_shared(const int64_t* shape, int ndim, DType dtype) {
  const int64_t itemsize = static_cast<int64_t>(dtype_size(dtype));
  const int64_t nbytes = checked_numel(shape, ndim, itemsize) * itemsize;
  return std::make_shared<const TensorImpl>(new_shared_storage(nbytes),
                                            dense_layout(shape, ndim, SM_CONTIGUOUS), dtype);
}

bool is_shared(const Storage& s) {
  if (s.share_origin()) return true;
  // An empty CUDA storage has no device allocation, so no IPC handle.
  return s.device().type == SM_DEVICE_CUDA && s.owns_bytes() && s.nbytes() > 0;
}

void share_memory(const TensorPtr& t) {
  if (t->lease())
    fail(SM_ERR_UNSUPPORTED,
         "t was carved from a stack of views, whose buffer the stack owns: create the stack in "
         "shared memory (sm_stack_create_shared)");
  const StoragePtr& s = t->storage();
  switch (s->device().type) {
    case SM_DEVICE_CUDA:
      if (is_shared(*s)) return;  // CUDA IPC shares the caching allocator's blocks as they are
      if (s->owns_bytes() && s->nbytes() == 0)
        fail(SM_ERR_UNSUPPORTED,
             "t's CUDA storage is empty: there is no device memory to share (send its shape)");
      fail(SM_ERR_UNSUPPORTED,
           "t's CUDA memory was not allocated by stridemem (from_blob, DLPack), so it cannot be "
           "exported through CUDA IPC: sm_clone it first");
    case SM_DEVICE_CPU: break;
    default:
      fail(SM_ERR_UNSUPPORTED,
           "t lives in %s memory; only CPU storages move into shared memory (sm_to it to the CPU)",
           device_type_name(s->device().type));
  }
  std::lock_guard<std::mutex> lock(s->move_mutex());
  if (s->share_origin()) return;  // already shared: PyTorch's no-op
  if (!s->owns_bytes())
    fail(SM_ERR_UNSUPPORTED,
         "t's memory belongs to someone else (from_blob or a DLPack import): moving it would "
         "silently part it from its owner's copy. sm_copy_into a tensor from sm_empty_shared "
         "instead");
  if (s->address_pins() > 0)
    fail(SM_ERR_UNSUPPORTED,
         "t's storage has %lld live DLPack export(s) whose consumers hold its current address: "
         "release them (or move it before exporting)",
         (long long)s->address_pins());
  auto origin = std::make_shared<ShareOrigin>();
  origin->host = SharedHostMemory::create(s->nbytes(), /*populate=*/true);
  void* data = origin->host->data();
  if (s->nbytes() > 0) std::memcpy(data, s->data(), static_cast<size_t>(s->nbytes()));
  s->move_to(data, std::move(origin));
}

void export_storage(const StoragePtr& s, sm_share_desc* desc, int* fd) {
  sm_share_desc d = blank_desc();
  d.device = sm_device{s->device().type, s->device().index};
  d.nbytes = s->nbytes();
  int out_fd = -1;
  const std::shared_ptr<const ShareOrigin> origin = s->share_origin();
  if (origin && origin->host) {
    const SharedHostMemory& m = *origin->host;
    d.kind = SM_SHARE_MEMFD;
    d.offset = m.offset();
    d.object_bytes = m.object_bytes();
    d.object_id = m.inode();
    d.object_dev = m.dev();
    out_fd = m.dup_fd();
  } else if (origin && origin->ipc_segment) {
    // An import going on to a third process: the same segment and offset.
    d.kind = SM_SHARE_CUDA_IPC;
    d.offset = origin->ipc_offset;
    d.object_bytes = origin->ipc_object_bytes;
    std::memcpy(d.cuda_ipc_handle, origin->ipc_handle.data(), sizeof d.cuda_ipc_handle);
  } else if (s->device().type == SM_DEVICE_CUDA && s->owns_bytes() && s->nbytes() > 0) {
    void* base = nullptr;
    size_t size = 0;
    if (!s->allocator()->segment_of(s->allocation(), &base, &size))
      fail(SM_ERR_INTERNAL, "the CUDA allocator did not name the segment of a live block");
    Backend& b = backend_for(s->device());
    const IpcHandle h = b.ipc_handle(base);
    {
      ExportedHandles& e = exported_handles();
      std::lock_guard<std::mutex> lock(e.mu);
      e.handles.insert({s->device().index, h});
    }
    // Work queued on the device so far is visible to the importer.
    b.synchronize();
    d.kind = SM_SHARE_CUDA_IPC;
    d.offset = static_cast<int64_t>(static_cast<char*>(s->data()) - static_cast<char*>(base));
    d.object_bytes = static_cast<int64_t>(size);
    std::memcpy(d.cuda_ipc_handle, h.data(), sizeof d.cuda_ipc_handle);
  } else if (s->device().type == SM_DEVICE_CPU) {
    fail(SM_ERR_UNSUPPORTED,
         "s is not in shared memory: move it there once with sm_share_memory (one copy; every "
         "view follows), or create it with sm_empty_shared / sm_stack_create_shared");
  } else if (s->device().type == SM_DEVICE_CUDA && s->nbytes() == 0) {
    fail(SM_ERR_UNSUPPORTED, "s is an empty CUDA storage: there is no device memory to share");
  } else {
    fail(SM_ERR_UNSUPPORTED,
         "s (%s memory%s) cannot be shared with another process: only CPU storages in shared "
         "memory and CUDA storages from stridemem's allocator can; sm_clone it into one",
         device_name(s->device()).c_str(),
         s->owns_bytes() ? "" : " that stridemem does not own");
  }
  seal_share_desc(d);
  *desc = d;
  *fd = out_fd;
}

StoragePtr import_storage(const sm_share_desc& desc, int fd) {
  // A copy: the caller's bytes may change under us (another thread, a
  // shared page); every check and use reads the same bytes.
  sm_share_desc d;
  std::memcpy(&d, &desc, sizeof d);
  check_share_desc(d);
  const Device dev{d.device.type, d.device.index};
  if (d.kind == SM_SHARE_MEMFD) {
    auto origin = std::make_shared<ShareOrigin>();
    origin->host = SharedHostMemory::open(fd, d.object_id, d.object_dev, d.offset, d.nbytes);
    void* data = origin->host->data();
    return std::make_shared<Storage>(dev, data, d.nbytes, std::move(origin));
  }
  // SM_SHARE_CUDA_IPC
  if (fd != -1)
    fail(SM_ERR_INVALID_ARGUMENT,
         "fd must be -1 for a CUDA IPC descriptor (got %d): its handle travels inside the "
         "descriptor",
         fd);
  backend_for(dev);  // SM_ERR_DEVICE with the reason when this build or machine has no GPU
  IpcHandle h;
  std::memcpy(h.data(), d.cuda_ipc_handle, h.size());
  {
    ExportedHandles& e = exported_handles();
    std::lock_guard<std::mutex> lock(e.mu);
    if (e.handles.count({dev.index, h}))
      fail(SM_ERR_UNSUPPORTED,
           "desc was exported by this process (pid %lld): CUDA IPC opens a handle only in other "
           "processes; use the exported storage itself here",
           (long long)d.exporter_pid);
  }
  auto origin = std::make_shared<ShareOrigin>();
  origin->ipc_segment = ipc_cache().acquire(dev.index, h);
  origin->ipc_handle = h;
  origin->ipc_offset = d.offset;
  origin->ipc_object_bytes = d.object_bytes;
  void* data = static_cast<char*>(origin->ipc_segment.get()) + d.offset;
  return std::make_shared<Storage>(dev, data, d.nbytes, std::move(origin));
}

}  // namespace sm
