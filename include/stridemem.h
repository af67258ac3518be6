/*
 * stridemem.h - strided tensor memory for any language that can call C.
 *
 * One storage (a refcounted block of bytes on one device), many tensors over
 * it (shape + strides + storage_offset + dtype + device). Views cost metadata
 * only; the calls under "Copies" are the only ones that allocate tensor data.
 *
 * Conventions (they hold for every function below unless it says otherwise):
 *  - Thread rule: every call is thread-safe. Handles may be shared between
 *    threads; refcounts are atomic. Writes to the same elements from several
 *    threads at once are the caller's race, as with any memory. Process-wide
 *    settings (sm_set_num_threads, sm_set_oom_observer,
 *    sm_memory_record_history, sm_debug_fail_alloc) may be changed from any
 *    thread, the last call wins; the last error, the tag stack and the
 *    current CUDA stream are per thread. Two calls whose overlap is a race:
 *    sm_stack_pop_to and sm_share_memory with a call on a tensor they
 *    invalidate or move (see each).
 *  - Every fallible call returns sm_status (SM_OK == 0) and writes results
 *    through out-parameters; on failure it writes nothing to them and changes
 *    no state. sm_last_error() then describes the failure.
 *  - Every handle written to an out-parameter is owned by the caller and must
 *    be dropped with the matching *_release. Releasing NULL is a no-op.
 *  - Shapes, strides and offsets are int64_t and counted in elements (not
 *    bytes), as in PyTorch. Dimension arguments are int32_t and may be
 *    negative (counted from the end, Python style).
 *  - At most SM_MAX_DIMS dimensions.
 *
 * This header is hand-written C99 and also compiles as C++.
 */
#ifndef STRIDEMEM_H
#define STRIDEMEM_H

#include <stddef.h>
#include <stdint.h>

#include "stridemem_version.h" /* SM_VERSION_MAJOR/MINOR/PATCH, SM_VERSION_STRING and
                                  SM_VERSION_NUMBER (MAJOR*10000 + MINOR*100 + PATCH),
                                  generated from VERSION */

#if defined(_WIN32)
#define SM_API __declspec(dllimport)
#elif defined(__GNUC__)
#define SM_API __attribute__((visibility("default")))
#else
#define SM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

/* Opaque, generation-checked handles. A released, never-issued or forged
 * handle passed to any call yields SM_ERR_INVALID_HANDLE, never a crash.
 * Always, not probably: a handle value is never issued twice in a process
 * (a handle slot that has been reused 2^28 - 1 times is retired, not
 * wrapped), so a stale handle can never name a live object. */
typedef struct sm_tensor_* sm_tensor;
typedef struct sm_storage_* sm_storage;
typedef struct sm_stack_* sm_stack;

#define SM_MAX_DIMS 16

/* ------------------------------------------------------------------------ */
/* Status codes: frozen integers. Callers must accept codes added later.     */
/* ------------------------------------------------------------------------ */

typedef int32_t sm_status;
enum {
    SM_OK = 0,
    SM_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, bad enum, bad count      */
    SM_ERR_INVALID_HANDLE = 2,   /* NULL, released, forged or stale handle */
    SM_ERR_OUT_OF_MEMORY = 3,    /* allocation could not be satisfied      */
    SM_ERR_SHAPE = 4,            /* shapes/strides incompatible            */
    SM_ERR_OUT_OF_BOUNDS = 5,    /* index/dim out of range, view escapes storage */
    SM_ERR_DTYPE = 6,            /* dtype not allowed here or not castable */
    SM_ERR_DEVICE = 7,           /* no such / no usable device             */
    SM_ERR_OVERLAP = 8,          /* written elements overlap               */
    SM_ERR_OVERFLOW = 9,         /* int64 overflow in sizes/strides/bytes  */
    SM_ERR_UNSUPPORTED = 10,     /* valid request this build cannot do     */
    SM_ERR_CUDA = 11,            /* the CUDA runtime reported an error     */
    SM_ERR_INTERNAL = 12,        /* a bug in stridemem: please report      */
    SM_ERR_READ_ONLY = 13        /* write to a read-only (imported) tensor */
};

/* Static description of a status code; never NULL, never needs freeing. */
SM_API const char* sm_status_string(sm_status status);

/* Human-readable message for the calling thread's last failure (which call,
 * which argument, the offending values). Borrowed: valid until the next
 * failing call on this thread. "" when no call has failed yet. */
SM_API const char* sm_last_error(void);

/* Run-time version; compare with SM_VERSION_* from the header you built with
 * (major * 10000 + minor * 100 + patch is the library's SM_VERSION_NUMBER). */
SM_API sm_status sm_version(int* major, int* minor, int* patch);

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

typedef int32_t sm_dtype;
enum {
    SM_BOOL = 0,
    SM_UINT8 = 1,
    SM_INT8 = 2,
    SM_INT16 = 3,
    SM_INT32 = 4,
    SM_INT64 = 5,
    SM_FLOAT16 = 6,  /* IEEE binary16; conversions round to nearest even */
    SM_BFLOAT16 = 7, /* bfloat16; conversions round to nearest even      */
    SM_FLOAT32 = 8,
    SM_FLOAT64 = 9,
    SM_UINT16 = 10,     /* unsigned; arithmetic wraps                       */
    SM_UINT32 = 11,     /* unsigned; arithmetic wraps                       */
    SM_UINT64 = 12,     /* unsigned; compares and converts as unsigned      */
    SM_COMPLEX64 = 13,  /* two float32 (re, im), 8 bytes, 4-byte aligned    */
    SM_COMPLEX128 = 14, /* two float64 (re, im), 16 bytes, 8-byte aligned   */
    SM_NUM_DTYPES = 15  /* codes are append-only: existing values never change */
};

/* Size in bytes of one element; 0 for an unknown dtype. */
SM_API size_t sm_dtype_size(sm_dtype dtype);
/* Short name ("float32", "bfloat16", ...); "unknown" for an unknown dtype. */
SM_API const char* sm_dtype_name(sm_dtype dtype);

/* Device type codes are DLPack's. */
enum {
    SM_DEVICE_CPU = 1,
    SM_DEVICE_CUDA = 2,
    SM_DEVICE_CUDA_HOST = 3 /* pinned host memory, reachable from the GPU */
};

typedef struct sm_device {
    int32_t type;  /* SM_DEVICE_* */
    int32_t index; /* 0 for CPU and CUDA_HOST; the GPU ordinal for CUDA */
} sm_device;

typedef int32_t sm_memory_format;
enum {
    SM_CONTIGUOUS = 0,        /* row-major                                  */
    SM_CHANNELS_LAST = 1,     /* 4-D tensors stored in NHWC order           */
    SM_CHANNELS_LAST_3D = 2,  /* 5-D tensors stored in NDHWC order          */
    SM_PRESERVE = 3           /* keep the source's dense layout (clone only) */
};

/* Number of usable CUDA devices: 0 (and SM_OK) when the build has no CUDA or
 * no GPU is usable. Any CUDA-device call then returns SM_ERR_DEVICE. */
SM_API sm_status sm_cuda_device_count(int32_t* out);

/* ------------------------------------------------------------------------ */
/* Tensor lifetime                                                          */
/* ------------------------------------------------------------------------ */

/* Adds an owner to t. */
SM_API sm_status sm_tensor_retain(sm_tensor t);
/* Drops one owner; the handle dies with its last owner. NULL: no-op, SM_OK.
 * Works also on a tensor whose stack region was popped. */
SM_API sm_status sm_tensor_release(sm_tensor t);

/* ------------------------------------------------------------------------ */
/* Creation (constructors)                                                  */
/* ------------------------------------------------------------------------ */

/* Uninitialized, row-major. shape may be NULL when ndim == 0 (a 0-d tensor). */
SM_API sm_status sm_empty(const int64_t* shape, int32_t ndim, sm_dtype dtype,
                          sm_device device, sm_tensor* out);
/* Uninitialized with the given strides (negative allowed); the storage is
 * sized to hold exactly the elements the strides reach. */
SM_API sm_status sm_empty_strided(const int64_t* shape, const int64_t* strides,
                                  int32_t ndim, sm_dtype dtype, sm_device device,
                                  sm_tensor* out);
SM_API sm_status sm_zeros(const int64_t* shape, int32_t ndim, sm_dtype dtype,
                          sm_device device, sm_tensor* out);
/* Every element set to value converted to dtype (as sm_inplace_scalar FILL).
 * A value the dtype cannot hold is SM_ERR_DTYPE, as in PyTorch: for integers
 * NaN, +-inf and values outside [min, max] (a fraction inside truncates);
 * for floats finite values beyond the largest finite one (65504 for
 * float16); bool takes every value (nonzero, NaN included, is true). */
SM_API sm_status sm_full(const int64_t* shape, int32_t ndim, double value,
                         sm_dtype dtype, sm_device device, sm_tensor* out);
/* 1-D tensor of n elements: start, start + step, ... (computed in double,
 * each value converted once; complex dtypes get real values, imaginary part
 * 0). For an integer dtype every value must fit (SM_ERR_DTYPE otherwise;
 * PyTorch would wrap); floats overflow to inf. */
SM_API sm_status sm_arange(double start, double step, int64_t n, sm_dtype dtype,
                           sm_device device, sm_tensor* out);
/* Copies numel * dtype_size bytes of row-major host data in. */
SM_API sm_status sm_from_host(const void* data, const int64_t* shape, int32_t ndim,
                              sm_dtype dtype, sm_device device, sm_tensor* out);

/* Called exactly once, with the data pointer and ctx given to sm_from_blob,
 * when the last tensor over the wrapped memory dies. */
typedef void (*sm_deleter)(void* data, void* ctx);

/* Wraps memory the caller owns, zero copy. strides may be NULL (row-major).
 * deleter may be NULL (the caller keeps the memory alive longer than every
 * view). On failure the deleter is NOT called: the memory stays the caller's. */
SM_API sm_status sm_from_blob(void* data, const int64_t* shape, const int64_t* strides,
                              int32_t ndim, sm_dtype dtype, sm_device device,
                              sm_deleter deleter, void* ctx, sm_tensor* out);

/* Copies t out to host memory in row-major order. nbytes must be at least
 * sm_nbytes(t); exactly sm_nbytes(t) bytes are written. */
SM_API sm_status sm_copy_to_host(sm_tensor t, void* dst, size_t nbytes);

/* ------------------------------------------------------------------------ */
/* Metadata (methods; never copy)                                           */
/* ------------------------------------------------------------------------ */

SM_API sm_status sm_ndim(sm_tensor t, int32_t* out);
/* Write ndim values; capacity is the length of out (SM_ERR_INVALID_ARGUMENT
 * if smaller than ndim). out may be NULL when ndim == 0. */
SM_API sm_status sm_shape(sm_tensor t, int64_t* out, int32_t capacity);
SM_API sm_status sm_strides(sm_tensor t, int64_t* out, int32_t capacity);
SM_API sm_status sm_storage_offset(sm_tensor t, int64_t* out);
SM_API sm_status sm_dtype_of(sm_tensor t, sm_dtype* out);
SM_API sm_status sm_device_of(sm_tensor t, sm_device* out);
SM_API sm_status sm_numel(sm_tensor t, int64_t* out);
/* numel * dtype size: the bytes this view addresses logically. */
SM_API sm_status sm_nbytes(sm_tensor t, int64_t* out);
/* Bytes of the whole storage this view keeps alive (the "hidden reference"). */
SM_API sm_status sm_storage_nbytes(sm_tensor t, int64_t* out);
/* Address of element [0, ..., 0] (storage base + offset * dtype size). */
SM_API sm_status sm_data_ptr(sm_tensor t, void** out);
/* *out = 1 if t is dense in that memory format (SM_PRESERVE: dense in some
 * order, non-overlapping), else 0. Follows PyTorch: a size-1 dim's stride
 * never matters; every empty tensor is SM_CONTIGUOUS and SM_PRESERVE, but
 * SM_CHANNELS_LAST(_3D) only with the strides those formats give it (sizes
 * multiplied plainly, so a size-0 dim makes the strides outside it 0). */
SM_API sm_status sm_is_contiguous(sm_tensor t, sm_memory_format format, int* out);
/* *out = 1 if a and b view the same storage. */
SM_API sm_status sm_same_storage(sm_tensor a, sm_tensor b, int* out);
/* The storage's version counter, bumped by every in-place write through any
 * view of it (PyTorch's _version). */
SM_API sm_status sm_version_counter(sm_tensor t, int64_t* out);
/* *out = 1 if the tensor refuses writes (an import of read-only memory). */
SM_API sm_status sm_is_read_only(sm_tensor t, int* out);

/* ------------------------------------------------------------------------ */
/* Storages                                                                 */
/* ------------------------------------------------------------------------ */

/* A new owner of t's storage. Refused (SM_ERR_UNSUPPORTED) for tensors carved
 * from a stack of views, whose buffer the stack reuses. */
SM_API sm_status sm_tensor_storage(sm_tensor t, sm_storage* out);
SM_API sm_status sm_storage_retain(sm_storage s);
SM_API sm_status sm_storage_release(sm_storage s); /* NULL: no-op */
SM_API sm_status sm_storage_size(sm_storage s, int64_t* nbytes);
SM_API sm_status sm_storage_data_ptr(sm_storage s, void** out);
SM_API sm_status sm_storage_device(sm_storage s, sm_device* out);
/* A number no other storage of this process has had (from 1); snapshots name
 * the storage that holds each block by it. */
SM_API sm_status sm_storage_id(sm_storage s, uint64_t* out);
/* A tensor of any dtype over an existing storage (bounds-checked like
 * sm_as_strided; storage_offset in elements of dtype). SM_ERR_INVALID_ARGUMENT
 * when the storage's data address is not a multiple of the dtype's alignment
 * (its size; for complex types the size of one part: complex128 needs 8)
 * (e.g. the bytes of a uint8 view imported at an odd address): such elements
 * cannot be loaded; sm_clone the bytes first. */
SM_API sm_status sm_tensor_from_storage(sm_storage s, const int64_t* shape,
                                        const int64_t* strides, int32_t ndim,
                                        int64_t storage_offset, sm_dtype dtype,
                                        sm_tensor* out);

/* ------------------------------------------------------------------------ */
/* Views: metadata only, share the storage, never copy                      */
/* ------------------------------------------------------------------------ */

/* PyTorch's view(): one -1 is inferred; SM_ERR_SHAPE when the strides cannot
 * express the new shape (the message names the dims that cannot be merged
 * and suggests sm_reshape). */
SM_API sm_status sm_view(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out);
/* Any shape/strides/offset (offset absolute, in elements, as PyTorch's
 * storage_offset). Every reachable element must lie inside the storage. */
SM_API sm_status sm_as_strided(sm_tensor t, const int64_t* shape, const int64_t* strides,
                               int32_t ndim, int64_t storage_offset, sm_tensor* out);

/* Python's "None" for sm_slice's start or stop. */
#define SM_SLICE_NONE INT64_MIN
/* t[start:stop:step] along dim with Python's rules: negative indices count
 * from the end, out-of-range bounds clamp, step may be negative (a view with
 * a negative stride), step 0 is SM_ERR_INVALID_ARGUMENT. */
SM_API sm_status sm_slice(sm_tensor t, int32_t dim, int64_t start, int64_t stop,
                          int64_t step, sm_tensor* out);
/* Elements [start, start + length) of dim; start may be negative. No clamping.
 * start lies in [-size, size] (0 only for a size-0 dim), as torch.narrow (PyTorch 2). */
SM_API sm_status sm_narrow(sm_tensor t, int32_t dim, int64_t start, int64_t length,
                           sm_tensor* out);
/* Removes dim, keeping index (negative counts from the end). */
SM_API sm_status sm_select(sm_tensor t, int32_t dim, int64_t index, sm_tensor* out);
SM_API sm_status sm_permute(sm_tensor t, const int32_t* dims, int32_t ndim, sm_tensor* out);
SM_API sm_status sm_transpose(sm_tensor t, int32_t dim0, int32_t dim1, sm_tensor* out);
SM_API sm_status sm_movedim(sm_tensor t, const int32_t* source, const int32_t* destination,
                            int32_t n, sm_tensor* out);
/* Broadcast to shape (new leading dims allowed, -1 keeps a size); expanded
 * dims get stride 0, kept dims keep theirs, a new size-1 leading dim gets
 * size * stride of the dim after it (PyTorch); every dim of an expanded 0-d
 * tensor has stride 0. */
SM_API sm_status sm_expand(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out);
/* Removes the listed dims that have size 1 (others are left, as PyTorch);
 * dims == NULL and n == 0 removes every size-1 dim. */
SM_API sm_status sm_squeeze(sm_tensor t, const int32_t* dims, int32_t n, sm_tensor* out);
SM_API sm_status sm_unsqueeze(sm_tensor t, int32_t dim, sm_tensor* out);
/* Merges dims start_dim..end_dim; a view when the strides allow, else
 * SM_ERR_SHAPE (use sm_reshape to copy). */
SM_API sm_status sm_flatten(sm_tensor t, int32_t start_dim, int32_t end_dim, sm_tensor* out);
/* Splits dim into sizes (one -1 inferred). Always a view, with the strides
 * sm_view gives the new shape (PyTorch's unflatten is a view). */
SM_API sm_status sm_unflatten(sm_tensor t, int32_t dim, const int64_t* sizes, int32_t n,
                              sm_tensor* out);
/* All windows of `size` elements along dim, `step` apart: dim becomes the
 * window count and a new last dim of `size` is added (windows may overlap). */
SM_API sm_status sm_unfold(sm_tensor t, int32_t dim, int64_t size, int64_t step,
                           sm_tensor* out);
/* The diagonal of dims dim1/dim2 (offset > 0 above, < 0 below), appended as
 * the last dim. */
SM_API sm_status sm_diagonal(sm_tensor t, int64_t offset, int32_t dim1, int32_t dim2,
                             sm_tensor* out);
/* Views of split_size elements along dim (the last may be smaller).
 * outs == NULL: only *count is written. Otherwise capacity must be >= the
 * count; *count views are written to outs. */
SM_API sm_status sm_split(sm_tensor t, int64_t split_size, int32_t dim, sm_tensor* outs,
                          int32_t capacity, int32_t* count);
/* As torch.chunk: ceil(size / chunks) elements per view, possibly fewer views. */
SM_API sm_status sm_chunk(sm_tensor t, int32_t chunks, int32_t dim, sm_tensor* outs,
                          int32_t capacity, int32_t* count);
/* Reverses the listed dims: a view with negative strides (NumPy's flip). */
SM_API sm_status sm_flip(sm_tensor t, const int32_t* dims, int32_t n, sm_tensor* out);

/* ------------------------------------------------------------------------ */
/* Copies: the only calls that allocate tensor data                         */
/* ------------------------------------------------------------------------ */

/* *out = 1 if sm_reshape(t, shape) would have to copy. */
SM_API sm_status sm_reshape_would_copy(sm_tensor t, const int64_t* shape, int32_t ndim,
                                       int* out);
/* A view if the strides allow, else a row-major copy; *copied (may be NULL)
 * says which. */
SM_API sm_status sm_reshape(sm_tensor t, const int64_t* shape, int32_t ndim, sm_tensor* out,
                            int* copied);
/* A new handle to the same data if t is already dense in format, else a
 * copy in that format (SM_CONTIGUOUS, SM_CHANNELS_LAST, SM_CHANNELS_LAST_3D);
 * *copied (may be NULL) says which. */
SM_API sm_status sm_contiguous(sm_tensor t, sm_memory_format format, sm_tensor* out,
                               int* copied);
/* Always a copy, laid out in format. SM_PRESERVE (PyTorch's clone): a
 * non-overlapping and dense t keeps its strides exactly (size-1 dims and empty
 * tensors included; negative strides become positive), any other t gets dense
 * strides in t's stride order (PyTorch's infer_dense_strides: sorted by
 * |stride|, ties by size, stride-0 dims left in place). */
SM_API sm_status sm_clone(sm_tensor t, sm_memory_format format, sm_tensor* out);
/* Device and/or dtype change: a new handle to the same data when neither
 * changes, else a copy laid out as sm_clone(t, SM_PRESERVE) (PyTorch's .to);
 * *copied (may be NULL) says which. */
SM_API sm_status sm_to(sm_tensor t, sm_device device, sm_dtype dtype, sm_tensor* out,
                       int* copied);
/* Conversions (sm_to, sm_copy_into, FILL from a tensor), as NumPy's astype:
 * integer -> integer wraps (two's complement bits); anything -> float rounds
 * to nearest even once (uint64 values above INT64_MAX as unsigned values);
 * float -> integer truncates toward zero, NaN -> 0, out of range: int64
 * saturates, narrower integers (uint8/16/32 included) saturate to int64 and
 * wrap, uint64 wraps [-2^63, 0) (-1.0 -> 2^64 - 1) and saturates beyond
 * [-2^63, 2^64); real -> complex: imaginary part 0; complex -> real or
 * integer: the real part (imaginary discarded, as NumPy and PyTorch);
 * complex -> bool: true when either part is nonzero; complex64 <->
 * complex128: each part. */
/* dst[...] = src broadcast to dst's shape, converted to dst's dtype, any pair
 * of devices. Refused with SM_ERR_OVERLAP if dst's elements overlap each
 * other or src partially overlaps dst. Bumps dst's version counter. */
SM_API sm_status sm_copy_into(sm_tensor dst, sm_tensor src);
/* Gathers index (1-D, SM_INT32 or SM_INT64, negative wraps once) along dim
 * into a new tensor (a 0-d t takes exactly one index value, else
 * SM_ERR_SHAPE, and gives a 0-d result); an index outside [-size, size) is SM_ERR_OUT_OF_BOUNDS
 * (checked before anything is allocated, also when the result is empty).
 * The index is read where it lives, through its strides, never copied: an
 * expanded index costs one element whatever its length. The result is the
 * only allocation (an index on another device than t: its distinct elements
 * are moved to t's device first). */
SM_API sm_status sm_index_select(sm_tensor t, int32_t dim, sm_tensor index, sm_tensor* out);

/* ------------------------------------------------------------------------ */
/* In-place ops: write through views                                        */
/* ------------------------------------------------------------------------ */

typedef int32_t sm_op;
enum {
    SM_OP_FILL = 0,  /* t = a              | t = other                    */
    SM_OP_ZERO = 1,  /* t = 0                                             */
    SM_OP_ADD = 2,   /* t = t + a          | t = t + alpha * other        */
    SM_OP_SUB = 3,   /* t = t - a          | t = t - alpha * other        */
    SM_OP_MUL = 4,   /* t = t * a          | t = t * other                */
    SM_OP_DIV = 5,   /* t = t / a          | t = t / other (floating only) */
    SM_OP_CLAMP = 6, /* t = min(max(t, a), b)  (scalar only; NaN bound = none) */
    SM_OP_RELU = 7,  /* t = max(t, 0)                                     */
    SM_OP_NEG = 8,   /* t = -t                                            */
    SM_OP_ABS = 9,   /* t = |t|                                           */
    SM_OP_SQRT = 10, /* t = sqrt(t)   (floating only)                     */
    SM_OP_EXP = 11,  /* t = exp(t)    (floating only)                     */
    SM_OP_SIGN = 12  /* t = -1, 0 or +1 as t < 0, == 0, > 0 (not complex)  */
};

/* Overlap is decided exactly (stride 0, dense or provably disjoint layouts,
 * else an exact walk over the element range) except for a view whose reached
 * range exceeds 2^28 elements and that no cheap rule settles: such a
 * destination is written as given, as PyTorch does. A source whose overlap
 * with the destination cannot be settled is read through a private copy.
 * Dtype rules as PyTorch's in-place ops: the result must be representable
 * in t's dtype (a fractional scalar on an integer tensor, DIV/SQRT/EXP on an
 * integer tensor, arithmetic on bool: SM_ERR_DTYPE). A scalar that becomes
 * an element (the FILL value, CLAMP bounds) must fit t's dtype as for
 * sm_full, else SM_ERR_DTYPE (int8 FILL 300 or uint8 CLAMP(NaN, -5) are
 * refused, never wrapped). ADD/SUB/MUL scalars on integers are whole numbers
 * of the compute type (int64; uint64 tensors take [-2^63, 2^64)) and wrap
 * (int8 ADD 300 adds 44, as PyTorch). Integer arithmetic wraps
 * (uint16/32/64 included: NEG wraps, ABS and RELU are the identity, CLAMP
 * compares as unsigned). Floating f16/bf16 compute in float32. Complex
 * tensors: FILL, ZERO, ADD, SUB, MUL, DIV, NEG, SQRT, EXP (real scalars act
 * as (a, 0); division is Smith's; SQRT the principal root; complex64
 * computes in float); CLAMP, RELU and ABS are SM_ERR_DTYPE (no order; ABS's
 * result is real). SIGN (as PyTorch's sign_): -1, 0 or +1 in t's dtype;
 * floating zeros of either sign become +0.0 (as NumPy and PyTorch); a NaN
 * stays the NaN it was (as NumPy's sign, C's and Julia's; PyTorch 1.13 and
 * later give 0 for NaN, which is not followed); unsigned and bool tensors
 * give 0 or 1 (bool: the identity, as PyTorch); complex tensors are
 * SM_ERR_DTYPE, as PyTorch refuses sign for them (the complex sign x/|x| is
 * PyTorch's sgn, which this library does not provide). t with overlapping
 * elements: SM_ERR_OVERLAP. Bumps the version counter. */
SM_API sm_status sm_inplace_scalar(sm_tensor t, sm_op op, double a, double b);
/* other broadcasts to t's shape; FILL, ADD, SUB, MUL, DIV. other may be t
 * itself (or an identical view); a partial overlap is SM_ERR_OVERLAP.
 * alpha (ADD, SUB) must fit the promoted dtype of t and other (PyTorch's
 * promote_types: int8 with uint8 is int16, float16 with float32 is float32;
 * an unsigned type also takes -max..-1, which wrap) and be whole for integer
 * t, else SM_ERR_DTYPE. SUB of a bool other is SM_ERR_DTYPE (as in PyTorch;
 * ADD and MUL take bool others as 0/1). A complex other into a real t is
 * SM_ERR_DTYPE (as a floating other into an integer t), except FILL, which
 * converts as sm_copy_into. */
SM_API sm_status sm_inplace_tensor(sm_tensor t, sm_op op, sm_tensor other, double alpha);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

/* A struct that will grow: set struct_size = sizeof(sm_memory_stats_t)
 * before the call; only whole fields within struct_size are written (one it
 * cuts through is left as it was). The struct tag
 * and the function share the name sm_memory_stats, as POSIX's stat does; the
 * typedef is sm_memory_stats_t. */
typedef struct sm_memory_stats {
    uint32_t struct_size;
    uint32_t reserved0;
    int64_t allocated_bytes;      /* bytes in blocks handed to live storages */
    int64_t reserved_bytes;       /* allocated + cached, as held from the system
                                     (CPU and CUDA: whole segments, see below) */
    int64_t peak_allocated_bytes;
    int64_t peak_reserved_bytes;
    int64_t num_allocs;           /* storage allocations served */
    int64_t num_frees;            /* storage blocks returned */
    int64_t cache_hits;           /* allocations served from the cache */
    int64_t device_allocs;        /* allocations from the system (segments: aligned_alloc,
                                     cudaMalloc, cudaHostAlloc) */
    int64_t device_frees;         /* segments given back to the system */
    int64_t active_views;         /* live tensor objects on this device */
    int64_t active_storages;      /* live storages on this device */
    int64_t requested_bytes;      /* bytes asked for by live storages (before rounding) */
    int64_t reserved[8];
} sm_memory_stats_t;

SM_API sm_status sm_memory_stats(sm_device device, struct sm_memory_stats* out);
/* Peaks restart from the current values. */
SM_API sm_status sm_reset_peak_stats(sm_device device);
/* Where the bytes come from. CPU and CUDA memory: blocks are carved from
 * segments taken from the system (as PyTorch's CUDA caching allocator does):
 * a request up to SM_SMALL_BLOCK_MAX from a 2 MiB segment shared with other
 * small blocks, a larger one under 10 MiB from a 20 MiB segment, a request
 * from 10 MiB up from a segment of its size rounded up to 2 MiB (later
 * requests may share the rest); free neighbours merge again. reserved_bytes
 * counts whole segments, so one 512-byte CPU tensor shows 2 MiB reserved and
 * one 4 MiB tensor 20 MiB (address space: the pages are touched only as
 * blocks are used). On CPU no segment is larger than the limit on one host
 * request below (one that would be gets a segment of the request's size).
 * CUDA_HOST (pinned) memory: every block is a system allocation of its own,
 * reused for requests of the same size class.
 *
 * Returns every segment (CUDA_HOST: every cached block) without a live block
 * to the system; never a live block. The free parts of a segment that still
 * holds a live block stay reserved (reusable, not returned). A failing
 * allocation does the same before it gives up (as PyTorch's caching
 * allocator does): when the system refuses, the cache is emptied and the
 * request retried once. This is the one state change a call that fails with
 * SM_ERR_OUT_OF_MEMORY may make: reserved_bytes falls and device_frees grows
 * by the segments returned; no tensor, storage or live block changes. */
SM_API sm_status sm_empty_cache(sm_device device);
/* Texts of any length (sm_memory_summary, sm_memory_snapshot) follow the
 * "needed" convention: *needed is set to the bytes the whole text takes,
 * its NUL included. When len >= *needed the text is written to buf; when
 * buf is NULL (len 0) or len < *needed, nothing but *needed is written and
 * the call still returns SM_OK: allocate *needed bytes and call again, in a
 * loop (memory may change between the two calls, and with it the text):
 *     size_t need = 0, len = 0; char* buf = NULL;
 *     do { len = need; buf = realloc(buf, len);
 *          if (sm_memory_snapshot(dev, buf, len, &need) != SM_OK) break;
 *     } while (need > len);
 * needed may be NULL when buf is known to be large enough; a buf that is
 * too short for the text with needed NULL is SM_ERR_INVALID_ARGUMENT (the
 * message says how many bytes are needed), as is buf NULL with len > 0. */

/* A readable table: the statistics with sizes in B/KiB/MiB/GiB/TiB, cached
 * free bytes, the largest free block, fragmentation, and the largest holders
 * by tag. */
SM_API sm_status sm_memory_summary(sm_device device, char* buf, size_t len, size_t* needed);

/* Everything the device's allocator holds, as one JSON document
 * (docs/MEMORY_SNAPSHOT.md; tools/memviz draws it): every segment (address,
 * size, pool, stream) and every block in it (offset, size, requested size,
 * state: allocated / pending_free / inactive_split / cached_free, the
 * storage holding it (sm_storage_id), its tag, allocation sequence number
 * and time), the totals (equal to sm_memory_stats, read in the same
 * instant), fragmentation figures, the holders by tag, and the history
 * while it is recorded. */
SM_API sm_status sm_memory_snapshot(sm_device device, char* buf, size_t len, size_t* needed);

/* Tags: a stack per thread. Every allocation records the path of the
 * calling thread's stack, joined with '/' (push "encoder", push "attn":
 * "encoder/attn"), so a snapshot and an out-of-memory report say who holds
 * memory. tag: 1 to 256 bytes of UTF-8 without control characters
 * (U+0000..U+001F, U+007F..U+009F); at most 256 pushed per thread. A tag that
 * is not well-formed UTF-8 (overlong forms, surrogates and code points above
 * U+10FFFF included) or holds a control character is SM_ERR_INVALID_ARGUMENT,
 * and the message names the byte position. sm_pop_tag on an empty stack (or on another thread
 * than the push) is SM_ERR_INVALID_ARGUMENT. */
SM_API sm_status sm_push_tag(const char* tag);
SM_API sm_status sm_pop_tag(void);

/* Starts recording the last max_events allocator events of device (alloc,
 * free, segment_map, segment_unmap, empty_cache, oom: time, size, address,
 * tag, stream and the totals after each) into a ring that sm_memory_snapshot
 * includes; max_events 1 .. 2^24 (a fresh ring each call), 0 stops and drops
 * the events. Off by default and then free of cost. */
SM_API sm_status sm_memory_record_history(sm_device device, int64_t max_events);

/* Told when an allocation is about to fail with SM_ERR_OUT_OF_MEMORY, before
 * the failing call returns, on the thread that asked. report is the message
 * sm_last_error() will give after the function's name (valid during the
 * call only): what was
 * requested, allocated, reserved and cached, the largest free block,
 * fragmentation and the largest holders by tag. The observer may call the
 * library (take a snapshot, release tensors); an allocation that fails inside
 * it does not call it again. */
typedef struct sm_oom_info {
    uint32_t struct_size;  /* sizeof(sm_oom_info) of the library; read fields within it */
    sm_device device;
    uint32_t reserved0;
    int64_t requested_bytes;
    int64_t allocated_bytes;
    int64_t reserved_bytes;
    int64_t cached_free_bytes;
    int64_t largest_free_block;
    const char* report;
} sm_oom_info;
typedef void (*sm_oom_observer)(const sm_oom_info* info, void* user_data);
/* One observer for the process; NULL removes it. The call replacing it
 * returns once every call of the observers it replaced has returned, so their
 * user_data may be freed then; a failure after that calls the new observer.
 * Called from inside an observer, it does not wait for that call itself (an
 * observer may replace or remove itself), nor for observers on other threads
 * that are themselves inside sm_set_oom_observer; an observer that waits for
 * another thread which is replacing the observer deadlocks. */
SM_API sm_status sm_set_oom_observer(sm_oom_observer observer, void* user_data);

/* Allocation rounding (documented): requests are rounded up to a multiple of
 * SM_ALLOC_ROUND bytes; blocks up to SM_SMALL_BLOCK_MAX bytes come from the
 * small pool, larger ones from the large pool. */
#define SM_ALLOC_ROUND 512
#define SM_SMALL_BLOCK_MAX (1024 * 1024)

/* Host memory (SM_DEVICE_CPU tensors and storages, stacks of views,
 * SM_DEVICE_CUDA_HOST pinned memory): one request larger than this machine's
 * physical memory + swap (read once, at the first host allocation) fails with
 * SM_ERR_OUT_OF_MEMORY before the system is asked, even where the kernel
 * overcommits and would hand the address space out: it could never be backed,
 * and touching it would get the process killed. The message gives the
 * request, the limit and what to do. Like any out-of-memory failure, it first
 * returns the cache to the system (sm_empty_cache). The limit is per request;
 * many smaller requests are left to the system. */

/* ------------------------------------------------------------------------ */
/* Stack of views: tensors carved out of one preallocated buffer            */
/* ------------------------------------------------------------------------ */

/* Every pushed tensor starts at a multiple of SM_STACK_ALIGNMENT bytes. */
#define SM_STACK_ALIGNMENT 256

/* Constructor: one storage of capacity_bytes on device. */
SM_API sm_status sm_stack_create(sm_device device, int64_t capacity_bytes, sm_stack* out);
/* A row-major tensor carved from the top of the stack, O(1). Past capacity:
 * SM_ERR_OUT_OF_MEMORY and nothing changes. */
SM_API sm_status sm_stack_push(sm_stack s, const int64_t* shape, int32_t ndim, sm_dtype dtype,
                               sm_tensor* out);
/* The current top, to return to later. */
SM_API sm_status sm_stack_mark(sm_stack s, int64_t* mark);
/* Frees every push made after mark, O(1). Tensors (and their views) still
 * alive in the popped region become invalid: any call but release returns
 * SM_ERR_INVALID_HANDLE.
 * Threads: a pop does not wait for calls already running on the popped
 * tensors. Popping while another thread is still inside a call on a popped
 * tensor is a data race, like freeing memory another thread reads: that
 * call's write may land in the bytes of the next push. Order every use of a
 * region's tensors before the pop (join, mutex, barrier); every call that
 * starts after sm_stack_pop_to has returned refuses them. On CUDA, kernels
 * already queued on a stream run before work queued after them on the same
 * stream; work on other streams must be synchronized first. */
SM_API sm_status sm_stack_pop_to(sm_stack s, int64_t mark);
SM_API sm_status sm_stack_used(sm_stack s, int64_t* used_bytes, int64_t* capacity_bytes);
/* Destructor. Tensors still pushed stay valid and pin the buffer until they
 * are released (so a garbage collector may free in any order). NULL: no-op. */
SM_API sm_status sm_stack_release(sm_stack s);
/* A CPU stack whose buffer is shared memory (as sm_empty_shared): other
 * processes import sm_stack_storage's export and rebuild the pushed tensors
 * from their offsets (sm_tensor_from_storage), so workers fill regions that
 * this process pushed. Pops stay per process: a region popped here and
 * pushed again is reused under the other process's views, so order it. */
SM_API sm_status sm_stack_create_shared(int64_t capacity_bytes, sm_stack* out);
/* A new owner of the stack's whole buffer, to export or view. */
SM_API sm_status sm_stack_storage(sm_stack s, sm_storage* out);

/* ------------------------------------------------------------------------ */
/* Processes: storages shared with other processes (Linux)                   */
/* ------------------------------------------------------------------------ */

/* A storage leaves its process as an open file descriptor plus a small
 * fixed-size descriptor (sm_share_desc, plain bytes: send it over a pipe, a
 * Unix socket with the fd as SCM_RIGHTS, Python's multiprocessing). The other
 * process imports both into an ordinary storage over the same pages and
 * rebuilds any view with sm_tensor_from_storage; both see each other's
 * writes. No transport of stridemem's own: the fd travels by the OS's means.
 *
 * CPU storages live in shared memory when created there (sm_empty_shared,
 * sm_stack_create_shared) or moved there once (sm_share_memory): an anonymous
 * memfd, sealed against shrinking (no importer can be made to fault by a
 * truncation), so a crash leaves no name behind in /dev/shm. The memory
 * lives until the last mapping and fd in any process are gone. Every shared
 * CPU storage holds one fd (close-on-exec) for later exports: count them
 * against RLIMIT_NOFILE. Shared memory is not carved from the caching
 * allocator: sm_memory_stats counts such a storage in active_storages, not
 * in allocated_bytes.
 *
 * CUDA storages are shared through CUDA IPC: a storage carved from a caching
 * allocator segment exports the segment's cudaIpcMemHandle and its offset in
 * the segment (as PyTorch does); the importer opens the segment once per
 * process, however many storages of it arrive, and closes it with the last.
 * The exporter keeps the storage alive while importers use it (its block
 * returns to the cache when it dies, and may hold other data next). Export
 * synchronizes the device, so work queued before it is visible to the
 * importer; later writes are ordered by the caller (sm_synchronize).
 *
 * What stays per process: version counters (an in-place write in one process
 * does not bump the other's), stacks of views (a pop in one process does not
 * invalidate the other's views: order reuse yourself), handles. */

#define SM_SHARE_MAGIC 0x48534d53u /* "SMSH" in memory on little-endian machines */
#define SM_SHARE_FORMAT 1          /* layout of sm_share_desc; bumped if it ever changes */
#define SM_SHARE_DESC_SIZE 144

typedef int32_t sm_share_kind;
enum {
    SM_SHARE_MEMFD = 1,   /* CPU: a memfd; the fd travels with the descriptor */
    SM_SHARE_CUDA_IPC = 2 /* CUDA: cudaIpcMemHandle of the segment; no fd (-1) */
};

/* Written by sm_storage_export, read by sm_storage_import; treat it as
 * opaque bytes (all fields little-endian as the machine writes them). */
typedef struct sm_share_desc {
    uint32_t magic;           /* SM_SHARE_MAGIC */
    uint16_t format;          /* SM_SHARE_FORMAT */
    uint16_t struct_size;     /* SM_SHARE_DESC_SIZE */
    sm_share_kind kind;       /* SM_SHARE_* */
    uint32_t library_version; /* the exporter's SM_VERSION_NUMBER */
    sm_device device;         /* where the bytes live */
    int64_t nbytes;           /* the storage's size */
    int64_t offset;           /* where it starts in the shared object, in bytes */
    int64_t object_bytes;     /* the shared object's size (memfd, CUDA segment) */
    uint64_t object_id;       /* memfd: its inode number (an fd of another object is refused) */
    uint64_t object_dev;      /* memfd: its st_dev */
    int64_t exporter_pid;     /* for messages */
    uint8_t cuda_ipc_handle[64]; /* SM_SHARE_CUDA_IPC: the segment's cudaIpcMemHandle_t */
    uint64_t checksum;        /* FNV-1a 64 over every byte before it */
} sm_share_desc;
/* The layout is part of the ABI: no padding, SM_SHARE_DESC_SIZE bytes. */
typedef char sm_share_desc_size_is_fixed[sizeof(sm_share_desc) == SM_SHARE_DESC_SIZE ? 1 : -1];

/* A row-major CPU tensor in a fresh shared-memory storage (zero-filled, as
 * fresh pages are). */
SM_API sm_status sm_empty_shared(const int64_t* shape, int32_t ndim, sm_dtype dtype,
                                 sm_tensor* out);
/* PyTorch's Tensor.share_memory_(): moves t's CPU storage into shared memory
 * in place, one copy; every view of it, in any handle, then reads and writes
 * the shared pages. A no-op for a storage already shared and for a CUDA
 * storage the caching allocator owns (CUDA IPC shares it as it is; an
 * empty one has no device memory to share: SM_ERR_UNSUPPORTED).
 * Refused, changing nothing: a tensor carved from a stack of views
 * (SM_ERR_UNSUPPORTED: create the stack with sm_stack_create_shared), memory
 * the library does not own (from_blob, DLPack imports: their producer would
 * silently stop seeing the tensor's writes; SM_ERR_UNSUPPORTED, sm_clone into
 * sm_empty_shared instead), pinned memory, and a storage with a live DLPack
 * export (its consumer holds the old address). Addresses taken before
 * (sm_data_ptr, sm_storage_data_ptr) point to freed memory afterwards: move
 * first, then hand addresses out. Another thread inside a call on a view of
 * the storage while it moves is a data race, as with freeing memory
 * (sm_share_memory itself excepted: concurrent moves of one storage are
 * serialized, one moves it and the others find it shared). */
SM_API sm_status sm_share_memory(sm_tensor t);
/* *out = 1 if t's storage can be exported as it is (shared CPU memory, a
 * non-empty CUDA caching-allocator block, an imported storage), else 0. */
SM_API sm_status sm_is_shared(sm_tensor t, int* out);
/* Exports s: fills *desc and, for SM_SHARE_MEMFD, writes a new fd
 * (close-on-exec) that the caller owns and closes once it has been sent
 * (-1 for CUDA). A CPU storage that is not in shared memory is refused
 * (SM_ERR_UNSUPPORTED: sm_share_memory first), as are pinned memory and
 * CUDA memory the caching allocator does not own. */
SM_API sm_status sm_storage_export(sm_storage s, sm_share_desc* desc, int* fd);
/* sm_storage_export of t's storage, without a storage handle: also for a
 * tensor carved from a shared stack (the whole stack buffer is exported;
 * the importer rebuilds the tensor from its offset). */
SM_API sm_status sm_tensor_export(sm_tensor t, sm_share_desc* desc, int* fd);
/* A storage over an export of this or another process. fd stays the
 * caller's (the call takes its own duplicate); -1 for SM_SHARE_CUDA_IPC.
 * Every check happens before anything is mapped, and a failure leaves no
 * mapping and no fd behind:
 *  - not a descriptor (magic, size), corrupted (checksum), unknown kind or a
 *    device that does not match it: SM_ERR_INVALID_ARGUMENT;
 *  - another descriptor format or library major version: SM_ERR_UNSUPPORTED
 *    (the message names both versions);
 *  - fd not open, not a stridemem memfd (a regular file, a pipe, a memfd not
 *    sealed against shrinking), or another object than the one described:
 *    SM_ERR_INVALID_ARGUMENT;
 *  - offset + nbytes beyond the object (or the fd's real size):
 *    SM_ERR_OUT_OF_BOUNDS;
 *  - a CUDA descriptor in a build or on a machine without a usable GPU:
 *    SM_ERR_DEVICE; one exported by this very process: SM_ERR_UNSUPPORTED
 *    (CUDA IPC opens handles in other processes only: use the storage). */
SM_API sm_status sm_storage_import(const sm_share_desc* desc, int fd, sm_storage* out);
/* *out = 1 if s lives in memory another process can map (as sm_is_shared). */
SM_API sm_status sm_storage_is_shared(sm_storage s, int* out);

/* ------------------------------------------------------------------------ */
/* Streams and devices                                                      */
/* ------------------------------------------------------------------------ */

/* Sets the calling thread's current stream for a CUDA device (NULL: the
 * default stream). */
SM_API sm_status sm_set_stream(sm_device device, void* cuda_stream);
SM_API sm_status sm_get_stream(sm_device device, void** cuda_stream);
/* Waits for all work on the device (CPU: returns at once). */
SM_API sm_status sm_synchronize(sm_device device);
/* Marks t's storage as used on stream: its memory is not reused until the
 * work queued there so far has finished. */
SM_API sm_status sm_record_stream(sm_tensor t, void* cuda_stream);

/* CPU worker threads for large copies (0 = one per core), for the whole
 * process; a copy already running keeps the count it started with. The
 * environment variable STRIDEMEM_NUM_THREADS sets the initial value. */
SM_API sm_status sm_set_num_threads(int32_t n);
SM_API sm_status sm_get_num_threads(int32_t* out);

/* ------------------------------------------------------------------------ */
/* DLPack interop (struct layouts in stridemem_dlpack.h)                    */
/* ------------------------------------------------------------------------ */

/* Zero-copy export: *managed is a DLManagedTensor* (versioned == 0) or a
 * DLManagedTensorVersioned* (versioned != 0) that keeps t's storage alive
 * until the consumer calls its deleter once. data points at element
 * [0, ..., 0] with byte_offset 0 (as PyTorch exports); strides are always
 * given, negative ones included. A read-only tensor can only be exported
 * versioned (legacy DLPack cannot say read-only: SM_ERR_READ_ONLY). A tensor carved from a stack of views is
 * refused (SM_ERR_UNSUPPORTED): its region is reused after sm_stack_pop_to
 * while a consumer could still hold it; export a clone. */
SM_API sm_status sm_to_dlpack(sm_tensor t, int versioned, void** managed);
/* Flags for sm_to_dlpack_ex. */
#define SM_DLPACK_VERSIONED 1u /* produce a DLManagedTensorVersioned (else legacy) */
#define SM_DLPACK_NORMALIZE 2u /* for consumers that cannot take negative strides: such a
                                  tensor is exported as a dense copy; others stay zero-copy.
                                  A negative stride that moves nothing (a dim of one
                                  element, an empty tensor) is exported as 1, zero copy */
#define SM_DLPACK_COPY 4u      /* always export a fresh row-major copy (array API copy=True) */
#define SM_DLPACK_NO_COPY 8u   /* never copy (copy=False): an export that would need one
                                  (another device, NORMALIZE of negative strides) is
                                  refused with SM_ERR_UNSUPPORTED */
/* The whole DLPack export protocol (the Python array API's __dlpack__): flags
 * above; device (may be NULL: t's own) names the device the consumer wants,
 * and a different one makes the export a copy there. Every copy made here is
 * flagged IS_COPIED in a versioned export, and *copied (may be NULL) is set
 * to 1 when the export is a copy, 0 when it shares t's memory.
 * SM_DLPACK_COPY with SM_DLPACK_NO_COPY is SM_ERR_INVALID_ARGUMENT. */
SM_API sm_status sm_to_dlpack_ex(sm_tensor t, uint32_t flags, const sm_device* device,
                                 void** managed, int* copied);
/* Zero-copy import; takes ownership of managed on success (its deleter runs
 * exactly once, when the last view dies). On failure ownership stays with the
 * caller. data + byte_offset and the bytes the shape and strides reach are
 * checked in unsigned arithmetic: a byte_offset above PTRDIFF_MAX, NULL data
 * with a byte_offset, or a span that wraps below address 0 or past the top of
 * the address space is refused (SM_ERR_INVALID_ARGUMENT / SM_ERR_OUT_OF_BOUNDS).
 * One of this library's own exports coming back is a view of the exporting
 * tensor's storage itself: same storage (sm_same_storage), same version
 * counter, and its deleter runs during this call. Untouched, it comes back at
 * the exported tensor's own offset; metadata the consumer moved (data,
 * byte_offset, shape, strides, dtype) names the element of that storage it
 * starts at, and metadata that lands outside the storage or between its
 * elements (SM_ERR_OUT_OF_BOUNDS) or on another device (SM_ERR_DEVICE) is
 * refused. */
SM_API sm_status sm_from_dlpack(void* managed, int versioned, sm_tensor* out);

/* ------------------------------------------------------------------------ */
/* Testing hooks                                                            */
/* ------------------------------------------------------------------------ */

/* Fault injection: the n-th data allocation from now (1-based, any device,
 * any thread: one countdown for the process, which a later call replaces)
 * fails as if the system were out of memory; n <= 0 disables. The
 * environment variable STRIDEMEM_FAIL_ALLOC=n sets it at load time. */
SM_API sm_status sm_debug_fail_alloc(int64_t n);
/* Number of live tensor, storage and stack handles (leak checks). */
SM_API sm_status sm_debug_live_handles(int64_t* tensors, int64_t* storages, int64_t* stacks);
/* Walks a handle slot to its generation limit in a few calls: the free slot
 * that the released tensor, storage or stack handle `released` names becomes
 * the next slot of its kind to be reused, and retires after
 * generations_left + 1 more uses (0 .. 2^28 - 2; 0: its next use is its
 * last). SM_ERR_INVALID_ARGUMENT when that slot is live or already retired,
 * or when it is already closer to its limit (generations never go back);
 * SM_ERR_INVALID_HANDLE for a value that is no handle. Changes no live
 * handle. Another thread creating a handle of that kind may take the slot
 * first (it is then live: refused) or right after this call. */
SM_API sm_status sm_debug_age_handle_slot(const void* released, int64_t generations_left);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRIDEMEM_H */
