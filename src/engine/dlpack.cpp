// DLPack export/import, zero copy. Layouts from include/stridemem_dlpack.h
// (checked against Debian's dlpack.h in tests/unit/test_dlpack_layout.cpp).
#include "engine/dlpack.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/error.hpp"
#include "engine/ops.hpp"
#include "stridemem_dlpack.h"

namespace sm {

namespace {

sm_DLDataType to_dl_dtype(DType d) {
  sm_DLDataType t;
  t.lanes = 1;
  t.bits = static_cast<uint8_t>(dtype_size(d) * 8);
  switch (d) {
    case DType::Bool: t.code = sm_kDLBool; break;
    case DType::U8:
    case DType::U16:
    case DType::U32:
    case DType::U64: t.code = sm_kDLUInt; break;
    case DType::C64:
    case DType::C128: t.code = sm_kDLComplex; break;
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64: t.code = sm_kDLInt; break;
    case DType::BF16: t.code = sm_kDLBfloat; break;
    default: t.code = sm_kDLFloat; break;
  }
  return t;
}

// The inverse of to_dl_dtype: one mapping serves both directions, so an
// exported dtype always imports as itself.
DType from_dl_dtype(sm_DLDataType t) {
  if (t.lanes != 1)
    fail(SM_ERR_DTYPE, "DLPack dtype with %u lanes is not supported (only 1)", t.lanes);
  for (int i = 0; i < kNumDTypes; ++i) {
    const sm_DLDataType c = to_dl_dtype(static_cast<DType>(i));
    if (c.code == t.code && c.bits == t.bits) return static_cast<DType>(i);
  }
  fail(SM_ERR_DTYPE, "DLPack dtype (code %u, bits %u) has no stridemem dtype", t.code, t.bits);
}

sm_DLDevice to_dl_device(Device d) {
  sm_DLDevice out;
  out.device_type = static_cast<sm_DLDeviceType>(d.type);  // our codes are DLPack's
  out.device_id = d.index;
  return out;
}

Device from_dl_device(const sm_DLDevice& d) {
  // Read the enum field as the int32 a C producer wrote: any value may arrive.
  int32_t type;
  static_assert(sizeof(d.device_type) == sizeof(int32_t), "DLDeviceType is int-sized");
  std::memcpy(&type, &d.device_type, sizeof type);
  if (type != SM_DEVICE_CPU && type != SM_DEVICE_CUDA && type != SM_DEVICE_CUDA_HOST)
    fail(SM_ERR_DEVICE, "DLPack device type %d is not supported (CPU=1, CUDA=2, CUDAHost=3)", type);
  Device dev{type, d.device_id};
  backend_for(dev);  // exists and usable
  return dev;
}

// Owns what an exported managed tensor points to. Its consumer holds the
// data address, so the storage is pinned (share_memory_ will not move it)
// until the deleter runs.
struct ExportContext {
  explicit ExportContext(TensorPtr t) : keep(std::move(t)) { keep->storage()->pin_address(); }
  ~ExportContext() { keep->storage()->unpin_address(); }
  ExportContext(const ExportContext&) = delete;
  ExportContext& operator=(const ExportContext&) = delete;
  TensorPtr keep;  // holds the storage alive
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
  sm_DLManagedTensor legacy;
  sm_DLManagedTensorVersioned versioned;
};

bool is_empty(const Layout& l) {
  for (int i = 0; i < l.ndim; ++i)
    if (l.sizes[i] == 0) return true;
  return false;
}

void fill_dl_tensor(sm_DLTensor& dl, ExportContext& ctx, bool normalize) {
  const TensorImpl& t = *ctx.keep;
  const Layout& l = t.layout();
  const bool empty = is_empty(l);
  for (int i = 0; i < l.ndim; ++i) {
    ctx.shape[i] = l.sizes[i];
    ctx.strides[i] = l.strides[i];
    // A dim of size <= 1 never steps, and no stride of an empty tensor is
    // ever used, so such a stride is free: consumers that refuse negative
    // strides get a harmless 1.
    if (normalize && (l.sizes[i] <= 1 || empty) && l.strides[i] < 0) ctx.strides[i] = 1;
  }
  dl.data = t.data();
  dl.device = to_dl_device(t.device());
  dl.ndim = l.ndim;
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = ctx.shape;
  dl.strides = ctx.strides;
  dl.byte_offset = 0;
}

void delete_legacy(sm_DLManagedTensor* self) {
  if (self) delete static_cast<ExportContext*>(self->manager_ctx);
}
void delete_versioned(sm_DLManagedTensorVersioned* self) {
  if (self) delete static_cast<ExportContext*>(self->manager_ctx);
}

// A negative stride that moves between elements (fill_dl_tensor rewrites the others).
bool has_negative_stride(const Layout& l) {
  if (is_empty(l)) return false;
  for (int i = 0; i < l.ndim; ++i)
    if (l.strides[i] < 0 && l.sizes[i] > 1) return true;
  return false;
}

}  // namespace

void* to_dlpack(const TensorPtr& t, const DLPackExport& how, bool* copied) {
  const bool never = how.copy == DLPackExport::Copy::Never;
  TensorPtr src = t;
  *copied = false;
  if (how.device && *how.device != t->device()) {
    if (never)
      fail(SM_ERR_UNSUPPORTED,
           "the consumer asked for another device than the tensor's and for no copy "
           "(SM_DLPACK_NO_COPY): drop one of the two");
    bool c = false;
    src = to(t, *how.device, t->dtype(), &c);
    *copied = true;
  } else if (how.copy == DLPackExport::Copy::Always) {
    src = clone(t, SM_CONTIGUOUS);
    *copied = true;
  }
  if (how.normalize && has_negative_stride(src->layout())) {
    if (never)
      fail(SM_ERR_UNSUPPORTED,
           "the tensor has negative strides: SM_DLPACK_NORMALIZE needs a copy, which "
           "SM_DLPACK_NO_COPY forbids");
    src = clone(src, SM_PRESERVE);  // dense, positive strides
    *copied = true;
  }
  if (src->lease())
    fail(SM_ERR_UNSUPPORTED,
         "t was carved from a stack of views, whose regions are reused after sm_stack_pop_to "
         "while a consumer could still read them: export a copy (SM_DLPACK_COPY) or a clone");
  if (!how.versioned && src->storage()->read_only())
    fail(SM_ERR_READ_ONLY,
         "t is read-only and a legacy DLManagedTensor cannot say so (a consumer could write into "
         "it): export it versioned, which carries the READ_ONLY flag, or export a copy");
  auto ctx = std::make_unique<ExportContext>(src);
  void* result;
  if (how.versioned) {
    sm_DLManagedTensorVersioned& m = ctx->versioned;
    m.version.major = SM_DLPACK_MAJOR_VERSION;
    m.version.minor = SM_DLPACK_MINOR_VERSION;
    m.manager_ctx = ctx.get();
    m.deleter = delete_versioned;
    m.flags = 0;
    if (src->storage()->read_only()) m.flags |= SM_DLPACK_FLAG_BITMASK_READ_ONLY;
    if (*copied) m.flags |= SM_DLPACK_FLAG_BITMASK_IS_COPIED;
    fill_dl_tensor(m.dl_tensor, *ctx, how.normalize);
    result = &m;
  } else {
    sm_DLManagedTensor& m = ctx->legacy;
    m.manager_ctx = ctx.get();
    m.deleter = delete_legacy;
    fill_dl_tensor(m.dl_tensor, *ctx, how.normalize);
    result = &m;
  }
  ctx.release();  // owned by the consumer now, until it calls the deleter
  return result;
}

namespace {

// One of this library's own exports coming back: a view of the exporting
// storage itself, so writes through it bump the same version counter and
// sm_same_storage sees one storage, as for any other view. The export is
// consumed (its deleter runs now: the view holds the storage).
//
// A consumer owns the managed tensor and may slice its DLTensor in place
// before handing it back (another data pointer or byte_offset, shape,
// strides, dtype), so one rule places every import: its first element is the
// export's own first element, at the offset the exported tensor holds, moved
// by as many bytes as the consumer moved the data address (none for an
// untouched export). Addresses alone cannot give that offset: an empty view
// may sit at any offset, where base + offset * itemsize wraps around the
// address space. The sum is exact (128-bit), so no offset wraps. Everything
// an own export describes lies in its storage: metadata that lands before
// it, between its elements, past the offsets a view can have or on another
// device is refused (the caller keeps the export), never wrapped as a second
// storage over the same bytes with a second version counter. Shape, bounds
// and alignment are checked as for sm_tensor_from_storage.
TensorPtr view_of_own_export(const ExportContext& ctx, const void* first, const int64_t* shape,
                             const int64_t* strides, int ndim, DType dtype, Device dev) {
  const TensorImpl& exported = *ctx.keep;
  const StoragePtr& s = exported.storage();
  if (dev != s->device())
    fail(SM_ERR_DEVICE,
         "this library's own DLPack export came back on device (%d, %d), its storage is on "
         "(%d, %d): the consumer changed the device it lives on",
         dev.type, dev.index, s->device().type, s->device().index);
  // Modular difference read as signed: the move between two addresses, even
  // when the export's own address wrapped.
  const uint64_t moved_bits =
      reinterpret_cast<uintptr_t>(first) - reinterpret_cast<uintptr_t>(exported.data());
  int64_t moved;
  std::memcpy(&moved, &moved_bits, sizeof moved);
  using Wide = __int128;
  const Wide itemsize = static_cast<Wide>(dtype_size(dtype));
  // Bytes from the storage's base to the import's first element.
  const Wide at =
      static_cast<Wide>(exported.layout().offset) * static_cast<Wide>(exported.itemsize()) + moved;
  const char* where = at < 0 ? "before its storage's first byte"
                      : at % itemsize != 0 ? "between two elements of its dtype"
                      : at / itemsize > INT64_MAX ? "past the largest offset a view can have"
                      : nullptr;
  if (where)
    fail(SM_ERR_OUT_OF_BOUNDS,
         "this library's own DLPack export came back with its first element (%s) moved %lld "
         "bytes from the export's, %s: the consumer moved it out of the memory it was given",
         dtype_name(dtype), (long long)moved, where);
  return tensor_from_storage(s, shape, strides, ndim, static_cast<int64_t>(at / itemsize), dtype);
}

}  // namespace

TensorPtr from_dlpack(void* managed, bool versioned) {
  sm_DLTensor* dl;
  bool read_only = false;
  std::function<void()> on_free;
  const ExportContext* own = nullptr;
  if (versioned) {
    auto* m = static_cast<sm_DLManagedTensorVersioned*>(managed);
    if (m->version.major != SM_DLPACK_MAJOR_VERSION)
      fail(SM_ERR_UNSUPPORTED, "DLPack major version %u is not supported (this build reads %d.x)",
           m->version.major, SM_DLPACK_MAJOR_VERSION);
    dl = &m->dl_tensor;
    read_only = (m->flags & SM_DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    if (m->deleter) on_free = [m] { m->deleter(m); };
    if (m->deleter == delete_versioned) own = static_cast<const ExportContext*>(m->manager_ctx);
  } else {
    auto* m = static_cast<sm_DLManagedTensor*>(managed);
    dl = &m->dl_tensor;
    if (m->deleter) on_free = [m] { m->deleter(m); };
    if (m->deleter == delete_legacy) own = static_cast<const ExportContext*>(m->manager_ctx);
  }
  if (dl->ndim < 0 || dl->ndim > kMaxDims)
    fail(SM_ERR_INVALID_ARGUMENT, "DLPack tensor has ndim %d (supported: 0..%d)", dl->ndim, kMaxDims);
  if (dl->ndim > 0 && !dl->shape) fail(SM_ERR_INVALID_ARGUMENT, "DLPack tensor has a NULL shape");
  const DType dtype = from_dl_dtype(dl->dtype);
  const Device dev = from_dl_device(dl->device);
  // data + byte_offset in unsigned arithmetic with explicit checks: no C
  // object is larger than PTRDIFF_MAX bytes, so a larger offset is no offset
  // into the producer's buffer (2^64 - 4 would put element 0 before it), and
  // the sum must not wrap past the top of the address space. NULL data has
  // no offset to add.
  const uintptr_t data = reinterpret_cast<uintptr_t>(dl->data);
  const uint64_t byte_offset = dl->byte_offset;
  if (!dl->data && byte_offset != 0)
    fail(SM_ERR_INVALID_ARGUMENT,
         "DLPack tensor has NULL data with byte_offset %llu: NULL data takes byte_offset 0",
         (unsigned long long)byte_offset);
  if (byte_offset > static_cast<uint64_t>(PTRDIFF_MAX))
    fail(SM_ERR_OUT_OF_BOUNDS,
         "DLPack tensor's byte_offset %llu is larger than any buffer can be (PTRDIFF_MAX)",
         (unsigned long long)byte_offset);
  if (byte_offset > UINTPTR_MAX - data)
    fail(SM_ERR_OUT_OF_BOUNDS,
         "DLPack tensor's data (%p) + byte_offset %llu wraps past the top of the address space",
         dl->data, (unsigned long long)byte_offset);
  void* first = reinterpret_cast<void*>(data + byte_offset);
  if (own) {
    TensorPtr v = view_of_own_export(*own, first, dl->shape, dl->strides, dl->ndim, dtype, dev);
    on_free();  // the export is consumed; v holds the storage
    return v;
  }
  return wrap_foreign(first, dl->shape, dl->strides, dl->ndim, dtype, dev, std::move(on_free),
                      read_only, "DLPack tensor's data + byte_offset");
}

}  // namespace sm
