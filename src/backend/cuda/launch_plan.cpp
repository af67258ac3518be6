#include "backend/cuda/launch_plan.hpp"

#include <climits>

namespace sm {

namespace {

int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// A single element (every dim of size 1) still needs one dim for the kernels.
void ensure_one_dim(IterPlan& it) {
  if (it.empty || it.ndim > 0) return;
  it.ndim = 1;
  it.sizes[0] = 1;
  for (int k = 0; k < it.nops; ++k) it.strides[k][0] = 1;
}

// Every index (plus one tile of slack for transposes) and every offset reached
// by any operand fits in int32.
bool fits_index32(const IterPlan& it) {
  constexpr int64_t kLimit = INT32_MAX - 1024;
  int64_t n = 1;
  for (int d = 0; d < it.ndim; ++d) {
    if (__builtin_mul_overflow(n, it.sizes[d], &n) || n > kLimit) return false;
  }
  for (int k = 0; k < it.nops; ++k) {
    int64_t reach = 0, term;
    for (int d = 0; d < it.ndim; ++d) {
      if (__builtin_mul_overflow(it.sizes[d] - 1, abs64(it.strides[k][d]), &term) ||
          __builtin_add_overflow(reach, term, &reach) || reach > kLimit)
        return false;
    }
  }
  return true;
}

uintptr_t address(const void* data, int64_t byte_offset) {
  return reinterpret_cast<uintptr_t>(data) + static_cast<uintptr_t>(byte_offset);
}

// The widest unit (bytes, a multiple of elem) that operands [0, nops) can
// move along their shared stride-1 innermost dim: the row length, each base
// address, every outer stride and `extra_stride` (in bytes) must be multiples
// of it. Operands past nops (a gather's index) are not moved in units.
int vector_width(const IterPlan& it, int elem, const uintptr_t* addrs, int nops,
                 int64_t extra_stride = 0) {
  const int inner = it.ndim - 1;
  for (int w = 16; w > elem; w /= 2) {
    bool ok = (it.sizes[inner] * elem) % w == 0 && (extra_stride * elem) % w == 0;
    for (int k = 0; ok && k < nops; ++k) {
      ok = addrs[k] % static_cast<uintptr_t>(w) == 0;
      for (int d = 0; ok && d < inner; ++d) ok = (it.strides[k][d] * elem) % w == 0;
    }
    if (ok) return w;
  }
  return elem;
}

// Rescales the plan's dims from elements of `elem` bytes to units of w bytes
// for operands [0, nops) (the innermost dim has stride 1 or 0 for every
// operand; the others keep their element strides).
void to_units(IterPlan& it, int elem, int w, int nops) {
  const int inner = it.ndim - 1;
  const int64_t f = w / elem;
  it.sizes[inner] /= f;
  for (int k = 0; k < nops; ++k)
    for (int d = 0; d < inner; ++d) it.strides[k][d] = it.strides[k][d] * elem / w;
}

// The widest unit every operand can move along the shared stride-1
// innermost dim (vector_width), the plan rescaled to it; returns its bytes.
int to_vector_units(IterPlan& it, int elem, const uintptr_t* addrs) {
  const int w = vector_width(it, elem, addrs, it.nops);
  to_units(it, elem, w, it.nops);
  return w;
}

// Units of 16 bytes are 16-byte elements here (vector_width checks the
// alignment of every wider unit it picks): their strides are multiples of 16
// bytes, so only the operands' first addresses can break the alignment.
void mark_split16(KernelPlan& p, const uintptr_t* addrs, int n) {
  if (p.unit_bytes != 16) return;
  for (int k = 0; k < n; ++k)
    if (addrs[k] % 16 != 0) p.split16 = true;
}

void finish_elementwise(KernelPlan& p, const DeviceProps& props) {
  p.kind = KernelKind::Elementwise;
  p.numel = p.it.numel();
  p.index32 = fits_index32(p.it);
  bool contiguous = p.it.ndim == 1;
  for (int k = 0; contiguous && k < p.it.nops; ++k) contiguous = p.it.strides[k][0] == 1;
  p.contiguous = contiguous;
  p.launch = plan_elementwise_launch(p.numel, props);
}

// The tile kernel moves an element of 8 or 16 bytes as 8-byte words: a
// complex64 operand (aligned as its 4-byte parts) that starts off an 8-byte
// boundary cannot be tiled.
bool tile_words_aligned(const KernelPlan& p, int k, const void* data, int esize) {
  const uintptr_t need = esize < 8 ? static_cast<uintptr_t>(esize) : 8;
  return address(data, p.byte_offset[k]) % need == 0;
}

// Same-dtype units of w bytes (w = the element size unless vectorized): the
// unit width, the split16 mark and the Elementwise launch.
void finish_units(KernelPlan& p, int w, const uintptr_t* addrs, int naddrs,
                  const DeviceProps& props) {
  p.unit_bytes = w;
  mark_split16(p, addrs, naddrs);
  finish_elementwise(p, props);
}

// Fills the Transpose fields for the operation plan's pair and sides, of a
// copy or binary op whose destination has dsize-byte elements and whose
// source has ssize-byte ones. Elements per thread come from the larger
// element (transpose_elems_*), as the plan's sides do: the shared tile then
// fits as it does for a same-dtype copy of that size, and each side packs
// its own elements into 4-byte accesses where they make 4 bytes.
void plan_transpose(KernelPlan& p, const OpPlan& op, int dsize, int ssize, const void* dst_data,
                    const void* src_data, const DeviceProps& props) {
  IterPlan& it = p.it;
  const int i = op.tiling.dim_i, j = op.tiling.dim_j;
  const int esize[2] = {dsize, ssize};
  if (it.strides[1][i] < 0) {
    // Walk i backwards for both operands so the source reads forwards.
    for (int k = 0; k < 2; ++k) {
      p.byte_offset[k] += (it.sizes[i] - 1) * it.strides[k][i] * esize[k];
      it.strides[k][i] = -it.strides[k][i];
    }
  }
  p.kind = KernelKind::Transpose;
  p.dim_i = i;
  p.dim_j = j;
  const int wide = dsize > ssize ? dsize : ssize;
  // The kernels are compiled with these sides; a plan with others (made for
  // another target) cannot be launched as tiles.
  if (op.tiling.side_i != transpose_tile_i(wide) || op.tiling.side_j != transpose_tile_j(wide))
    fail(SM_ERR_INTERNAL, "transpose plan with tile sides %lldx%lld, not the kernel's %dx%d",
         static_cast<long long>(op.tiling.side_i), static_cast<long long>(op.tiling.side_j),
         transpose_tile_i(wide), transpose_tile_j(wide));
  p.tile_i = transpose_tile_i(wide);
  p.tile_j = transpose_tile_j(wide);
  const int per_i = transpose_elems_i(wide), per_j = transpose_elems_j(wide);
  const uintptr_t dst_addr = address(dst_data, p.byte_offset[0]);
  const uintptr_t src_addr = address(src_data, p.byte_offset[1]);
  if (per_i > 1 && per_i * ssize == 4) {
    bool ok = it.sizes[i] % per_i == 0 && src_addr % 4 == 0;
    for (int d = 0; ok && d < it.ndim; ++d) ok = d == i || (it.strides[1][d] * ssize) % 4 == 0;
    p.pack_src = ok;
  }
  if (per_j > 1 && per_j * dsize == 4) {
    bool ok = it.sizes[j] % per_j == 0 && dst_addr % 4 == 0;
    for (int d = 0; ok && d < it.ndim; ++d) ok = d == j || (it.strides[0][d] * dsize) % 4 == 0;
    p.pack_dst = ok;
  }
  p.numel = it.numel();
  p.index32 = fits_index32(it);
  p.tiles_i = (it.sizes[i] + p.tile_i - 1) / p.tile_i;
  p.tiles_j = (it.sizes[j] + p.tile_j - 1) / p.tile_j;
  p.total_tiles = p.tiles_i * p.tiles_j * (p.numel / (it.sizes[i] * it.sizes[j]));
  p.launch.block = kTransposeBlockX * kTransposeBlockY;
  p.launch.items = 1;
  p.launch.grid = p.total_tiles < props.max_grid_x ? p.total_tiles : props.max_grid_x;
}

// The operation plan's coalesced operands, the first nops of them (a fill's
// and a scalar op's operand 1, a stride-0 element or dst itself, changed
// neither the order nor the merges of dst's dims, so dst alone is walked),
// with element sizes esize[k]. Empty for a plan of kind Nothing.
KernelPlan start_plan(const OpPlan& op, int nops, const int* esize) {
  if (op.target != PlanTarget::Cuda)
    fail(SM_ERR_INTERNAL, "a CUDA launch planned from an operation plan made for another target");
  KernelPlan p;
  if (op.kind == PlanKind::Nothing) {
    p.it.empty = true;
    return p;
  }
  p.it = op.iter;
  p.it.nops = nops;
  for (int k = nops; k < kMaxOperands; ++k) {
    p.it.offsets[k] = 0;
    for (int d = 0; d < kMaxDims; ++d) p.it.strides[k][d] = 0;
  }
  ensure_one_dim(p.it);
  for (int k = 0; k < nops; ++k) p.byte_offset[k] = p.it.offsets[k] * esize[k];
  return p;
}

int elem_size(const TensorDesc& t) { return static_cast<int>(dtype_size(t.dtype)); }

// The plan's Transpose pair, when it has one.
int planned_tile_dim(const OpPlan& op) {
  return op.tiling.shape == IterShape::Transpose ? op.tiling.dim_i : -1;
}

}  // namespace

Launch plan_elementwise_launch(int64_t units, const DeviceProps& props) {
  Launch l;
  l.block = kElementwiseBlock < props.max_threads_per_block ? kElementwiseBlock
                                                           : props.max_threads_per_block;
  if (units <= 0) return l;
  const int64_t wave = static_cast<int64_t>(props.sm_count) * props.max_threads_per_sm;
  l.items = units >= 4 * wave ? 4 : 1;
  const int64_t per_block = static_cast<int64_t>(l.block) * l.items;
  const int64_t blocks = (units + per_block - 1) / per_block;
  l.grid = blocks < props.max_grid_x ? blocks : props.max_grid_x;
  return l;
}

KernelPlan plan_copy(const OpPlan& op, const DeviceProps& props) {
  const TensorDesc& dst = op.dst;
  const TensorDesc& src = op.src;
  const int dsize = elem_size(dst), ssize = elem_size(src);
  const int esize[2] = {dsize, ssize};
  KernelPlan p = start_plan(op, 2, esize);
  if (p.it.empty) return p;
  const int tile_dim = planned_tile_dim(op);
  if (dst.dtype != src.dtype) {  // conversion: element units, each its own size
    if (tile_dim >= 0 && tile_words_aligned(p, 0, dst.data, dsize) &&
        tile_words_aligned(p, 1, src.data, ssize))
      plan_transpose(p, op, dsize, ssize, dst.data, src.data, props);
    else
      finish_elementwise(p, props);
    return p;
  }
  const int elem = dsize;
  IterPlan& it = p.it;
  const int inner = it.ndim - 1;
  const bool shared_inner = it.strides[0][inner] == 1 && it.strides[1][inner] == 1;
  if (shared_inner && it.ndim == 1) {
    p.kind = KernelKind::Memcpy;
    p.memcpy_bytes = it.sizes[0] * elem;
    p.numel = it.sizes[0];
    return p;
  }
  if (!shared_inner && tile_dim >= 0) {
    plan_transpose(p, op, elem, elem, dst.data, src.data, props);
    return p;
  }
  const uintptr_t addrs[2] = {address(dst.data, p.byte_offset[0]),
                              address(src.data, p.byte_offset[1])};
  const int w = shared_inner ? to_vector_units(it, elem, addrs) : elem;
  finish_units(p, w, addrs, 2, props);
  return p;
}

namespace {

// dst alone, moved in vector units where its inner run allows: a fill's
// walk, and a scalar op's where the units come out 16 bytes wide.
void finish_dst_units(KernelPlan& p, const TensorDesc& dst, int elem, const DeviceProps& props) {
  const uintptr_t addrs[1] = {address(dst.data, p.byte_offset[0])};
  const int w = p.it.strides[0][p.it.ndim - 1] == 1 ? to_vector_units(p.it, elem, addrs) : elem;
  finish_units(p, w, addrs, 1, props);
}

}  // namespace

KernelPlan plan_fill(const OpPlan& op, const DeviceProps& props) {
  const int elem = elem_size(op.dst);
  KernelPlan p = start_plan(op, 1, &elem);
  if (p.it.empty) return p;
  finish_dst_units(p, op.dst, elem, props);
  return p;
}

// The scalar ops read and write dst alone, so a run contiguous in dst moves
// in 16-byte units as a fill's does, the kernel applying the op to every
// element of its unit: one 2-byte element per thread left an f16 `t += 1.5`
// at 0.30 of a copy on an H200. Narrower units (a start off 16 bytes, short
// rows) stay element by element: each width would be one more kernel per
// dtype, for little.
KernelPlan plan_unary(const OpPlan& op, const DeviceProps& props) {
  const int elem = elem_size(op.dst);
  KernelPlan p = start_plan(op, 1, &elem);
  if (p.it.empty) return p;
  if (elem < 16) {
    KernelPlan units = p;
    finish_dst_units(units, op.dst, elem, props);
    if (units.unit_bytes == 16 && !units.split16) return units;
  }
  finish_elementwise(p, props);
  return p;
}

KernelPlan plan_binary(const OpPlan& op, bool allow_transpose, const DeviceProps& props) {
  const TensorDesc& dst = op.dst;
  const TensorDesc& other = op.src;
  const int esize[2] = {elem_size(dst), elem_size(other)};
  KernelPlan p = start_plan(op, 2, esize);
  if (p.it.empty) return p;
  const int tile_dim = allow_transpose && dst.dtype == other.dtype ? planned_tile_dim(op) : -1;
  if (tile_dim >= 0) {
    plan_transpose(p, op, esize[0], esize[0], dst.data, other.data, props);
  } else {
    finish_elementwise(p, props);
  }
  return p;
}

KernelPlan plan_gather(const OpPlan& op, const DeviceProps& props) {
  // The plan's three operands: dst, the source without the gathered dim
  // and the index along it only, all over dst's sizes (op_plan.hpp).
  const TensorDesc& dst = op.dst;
  const TensorDesc& src = op.src;
  const int elem = elem_size(dst);
  const int esize[3] = {elem, elem_size(src), elem_size(op.index)};
  KernelPlan p = start_plan(op, 3, esize);
  if (p.it.empty) return p;
  p.gather_size = op.gather_size;
  p.gather_stride = op.gather_stride;
  const uintptr_t addrs[2] = {address(dst.data, p.byte_offset[0]),
                              address(src.data, p.byte_offset[1])};
  // Rows: along the innermost dim the index is constant (it is not the
  // selected dim) and both dst and src have stride 1, so each selected slice
  // is a run of contiguous elements in both: it moves in vector units (up to
  // 16 bytes) when the run length, both addresses, the outer strides and the
  // source's stride along dim allow. The index keeps its element strides.
  IterPlan& it = p.it;
  const int inner = it.ndim - 1;
  int w = elem;
  if (it.strides[0][inner] == 1 && it.strides[1][inner] == 1 && it.strides[2][inner] == 0) {
    p.gather = GatherKind::Rows;
    w = vector_width(it, elem, addrs, 2, p.gather_stride);
    if (w > elem) {
      to_units(it, elem, w, 2);
      p.gather_stride = p.gather_stride * elem / w;
    }
  } else {
    p.gather = GatherKind::Elements;
  }
  finish_units(p, w, addrs, 2, props);
  if (p.index32) {
    // The source's offsets (units) reach sum (size - 1) * |stride| over the
    // plan's dims (operand 1, dim excluded) plus (size - 1) * |stride| along
    // dim: the index may name any position there, whatever the result's size.
    constexpr int64_t kLimit = INT32_MAX - 1024;
    int64_t reach = 0, term;
    bool ok = !__builtin_mul_overflow(p.gather_size - 1, abs64(p.gather_stride), &reach);
    for (int d = 0; ok && d < it.ndim; ++d)
      ok = !__builtin_mul_overflow(it.sizes[d] - 1, abs64(it.strides[1][d]), &term) &&
           !__builtin_add_overflow(reach, term, &reach);
    p.index32 = ok && reach <= kLimit;
  }
  return p;
}

IndexCheckPlan plan_index_check(const TensorDesc& index, const DeviceProps& props) {
  IndexCheckPlan p;
  p.count = index_scan_length(index);
  p.stride = index.strides[0];
  if (p.count > 1) p.launch = plan_elementwise_launch(p.count, props);
  return p;
}

}  // namespace sm
