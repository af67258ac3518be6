/*
 * stridemem_mpi.h - send and receive stridemem views in place through MPI.
 *
 * Header-only: every function is static inline and this header is the only
 * place that includes <mpi.h>. libstridemem itself never links MPI; a program
 * that includes this header links its MPI (mpicc, or MPI::MPI_C in CMake) and
 * libstridemem. Hand-written C99; also compiles as C++.
 *
 * The idea. A view is shape + strides (in elements, any sign) + offset +
 * dtype over one storage. MPI describes memory the same way with derived
 * datatypes, so a view needs no packing: sm_mpi_view_type turns the view's
 * layout into one committed MPI datatype plus the buffer address to pass with
 * it, and MPI_Send / MPI_Recv (any point-to-point or collective call that
 * moves a buffer given as buffer, count and type: MPI_Bcast, MPI_Gather,
 * MPI_Alltoallw, ...) moves the view's elements straight from and into the
 * storage. Reductions with MPI's predefined ops are defined on predefined
 * types: reduce contiguous tensors.
 *
 *     void* buf; MPI_Datatype type; char why[256];
 *     if (sm_mpi_view_type(column, SM_MPI_SEND, &buf, &type, why, sizeof why) != SM_OK)
 *         fprintf(stderr, "%s\n", why);
 *     MPI_Send(buf, 1, type, dest, tag, comm);      <- count is always 1
 *     sm_mpi_type_free(&type, NULL, 0);
 *
 * or, for one message, sm_mpi_send / sm_mpi_recv / sm_mpi_isend / sm_mpi_irecv
 * below, which do the three steps.
 *
 * What the datatype is:
 *  - Relative to element [0, ..., 0] of the view: buf is sm_data_ptr(t)
 *    (storage base + storage_offset * dtype size), the address DLPack and
 *    sm_data_ptr call the view's data. The element at index i sits at byte
 *    displacement sum_d i_d * strides[d] * dtype_size from buf, so a negative
 *    stride is a negative displacement (MPI allows them: the type's lower
 *    bound is then below buf, which is fine because those bytes belong to the
 *    storage). Being relative to element [0..0] rather than to the storage
 *    base means the same type serves any two views with the same shape and
 *    strides, and a caller that has only a data pointer and a layout (a
 *    DLPack tensor, a NumPy array) uses sm_mpi_layout_type the same way.
 *  - Its type map lists the elements in row-major order of the view's
 *    logical index (the order sm_contiguous and sm_copy_to_host give), each
 *    as the MPI type of its dtype (sm_mpi_element_type). So the two sides of
 *    a message need the same dtype and the same number of elements, not the
 *    same shape or strides: a [4, 6] column block may be received into a
 *    [24] tensor or a [6, 4] transposed view, element k going to element k.
 *  - Built as MPI does best: size-1 dims are dropped (their stride never
 *    matters), dims that are contiguous with each other in memory are merged
 *    (also through negative strides), so a contiguous view is one
 *    MPI_Type_contiguous block (MPI's fast path, no pack) and a column of a
 *    row-major matrix is one hvector (MPI_Type_vector's shape). Every other
 *    dim adds one MPI_Type_create_hvector around the inner ones, the innermost
 *    contiguous run of elements going in as the block length. hvector strides
 *    are bytes, so each dim says exactly where its next element is and no
 *    extent needs resizing (MPI_Type_create_resized) and no displacement list
 *    (hindexed) is needed: a strided view is a nest of equally spaced runs.
 *  - MPI counts are int. A dim of more than SM_MPI_MAX_COUNT elements (the
 *    size of a dim, or of a contiguous run) is split into an hvector of
 *    chunks of SM_MPI_MAX_COUNT plus a tail (MPI_Type_create_struct), so any
 *    view the library can describe gets a type; MPI's own limits on one
 *    message then apply.
 *  - A size-0 view gives an empty type (MPI_Type_contiguous(0, element)); a
 *    0-d view one element.
 *  - A dim whose byte stride is exactly -1 (a flipped dim of a 1-byte dtype)
 *    is built as pairs of elements {0, -1}, 2 bytes apart: Open MPI reads an
 *    hvector stride of -1 as "the inner type's extent" and would walk such a
 *    dim forward (see sm_mpi_impl_hvector).
 *
 * Cost. Building a type reads the layout through the C API and costs about
 * 0.4 us (bench/RESULTS.md, "MPI views"); an exchange repeated many times
 * should build its types once (sm_mpi_view_type) and reuse them. A strided
 * view then costs what MPI_Type_vector by hand costs; against a contiguous
 * message of the same bytes it pays the strided memory traffic (an element
 * per cache line for a column) and MPI's pack/unpack of non-contiguous data.
 *
 * Send versus receive (sm_mpi_intent). MPI forbids a receive type that
 * names a memory location twice, and such a receive would leave the
 * element's value to whichever copy lands last. A view whose elements
 * overlap (an expanded view, stride 0; an unfold with step < size; any
 * as_strided that reuses an address) may be SENT (each element read as
 * often as the view lists it, as sm_contiguous would) but a RECEIVE into it
 * is refused with SM_ERR_OVERLAP. The check is exact: stride 0 and
 * provably disjoint layouts are settled by rule, anything else by listing
 * the element offsets (a bitmap or a sorted list, whichever is smaller); a
 * layout whose listing would need more than SM_MPI_OVERLAP_CHECK_MAX_BYTES
 * of scratch memory is refused with SM_ERR_UNSUPPORTED (receive into a
 * contiguous tensor and sm_copy_into the view instead). A receive into a
 * read-only tensor (a read-only DLPack import) is SM_ERR_READ_ONLY.
 *
 * What MPI does behind the library's back: a receive writes the storage
 * without bumping its version counter (sm_version_counter), since no
 * library call makes the write. Keep the tensor (and so its storage) alive
 * until a non-blocking operation completes (MPI_Wait); the datatype itself
 * may be freed at once after posting (MPI completes pending operations on a
 * freed type), which the sm_mpi_isend / sm_mpi_irecv helpers do.
 *
 * CUDA. The datatype only describes where the elements are, so a CUDA
 * tensor gets the same type with buf a device pointer, and a CUDA-aware MPI
 * (Open MPI built with CUDA, MVAPICH2-GDR, ...) takes it as it is. Untested
 * here (no GPU, and Debian's Open MPI is not CUDA-aware). The sm_mpi_send /
 * sm_mpi_recv / sm_mpi_isend / sm_mpi_irecv helpers wait for the tensor's
 * device (sm_synchronize) before handing its memory to MPI, since MPI knows
 * nothing of stridemem's streams, and refuse a CUDA tensor with
 * SM_ERR_DEVICE where the MPI says it is not CUDA-aware (sm_mpi_cuda_aware()
 * == 0), where MPI would read a device address as host memory.
 *
 * Errors. Every function returns an sm_status: SM_OK, one of the library's
 * codes (stridemem.h) or SM_MPI_ERR (an MPI call failed, or MPI is not
 * initialized or already finalized). On failure nothing is written to the
 * out-parameters, no MPI object is left allocated and nothing is sent or
 * received. Messages: sm_last_error() belongs to the library (its failures
 * only), so these helpers write theirs into an optional caller buffer
 * (msg, msg_len): a NUL-terminated text, cut to msg_len - 1 bytes, naming
 * the function, the argument and the values; "" on success. msg may be NULL
 * (msg_len is then ignored); msg_len 0 leaves msg untouched. Where a library
 * call fails inside a helper, its status is returned and its sm_last_error()
 * text is copied into msg after the helper's name. MPI errors are reported
 * only where MPI returns them: with MPI's default error handler
 * (MPI_ERRORS_ARE_FATAL) a failing MPI call aborts the job before the
 * helper sees it; set MPI_ERRORS_RETURN on the
 * communicator, and on MPI_COMM_WORLD for the datatype calls (where MPI 3.1
 * implementations such as Open MPI 4 raise them; MPI 4 uses MPI_COMM_SELF),
 * to get SM_MPI_ERR with MPI_Error_string's text.
 *
 * Thread rule: as thread-safe as the MPI calls they make (MPI_THREAD_MULTIPLE
 * for concurrent use); no state of their own.
 */
#ifndef STRIDEMEM_MPI_H
#define STRIDEMEM_MPI_H

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif

#include "stridemem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status, intent, limits                                                   */
/* ------------------------------------------------------------------------ */

/* An MPI call failed (the message holds MPI_Error_string's text), or MPI is
 * not initialized or already finalized. Far above the library's own codes,
 * which are append-only from 0, so the two never meet; sm_status_string()
 * does not know it: sm_mpi_status_string() does. */
enum { SM_MPI_ERR = 1000 };

/* What MPI will do with the view: read it (SEND: any view) or write it
 * (RECV: its elements must not overlap and it must be writable). The values
 * start at 1 so that zeroed memory is no valid intent. */
typedef int32_t sm_mpi_intent;
enum { SM_MPI_SEND = 1, SM_MPI_RECV = 2 };

/* The largest count given to one MPI datatype constructor (MPI counts are
 * int). Larger dims are split into chunks (see the top of this file). Tests
 * define it small to run the split on small tensors. */
#ifndef SM_MPI_MAX_COUNT
#define SM_MPI_MAX_COUNT INT_MAX
#endif
/* Scratch memory the exact overlap check of a receive may take (a bitmap of
 * the reached range or a sorted offset list, the smaller one). */
#ifndef SM_MPI_OVERLAP_CHECK_MAX_BYTES
#define SM_MPI_OVERLAP_CHECK_MAX_BYTES ((size_t)64 << 20)
#endif
/* A chunk must hold at least two elements for the split to shrink a count. */
typedef char sm_mpi_impl_max_count_is_valid[(SM_MPI_MAX_COUNT >= 2 && SM_MPI_MAX_COUNT <= INT_MAX)
                                                ? 1
                                                : -1];

/* ------------------------------------------------------------------------ */
/* Internals (sm_mpi_impl_*: not API, may change)                          */
/* ------------------------------------------------------------------------ */

#if defined(__GNUC__)
#define SM_MPI_IMPL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SM_MPI_IMPL_PRINTF(f, a)
#endif

/* Writes the message into the caller's buffer, if there is one. */
static inline void sm_mpi_impl_say(char* msg, size_t msg_len, const char* fmt, ...)
    SM_MPI_IMPL_PRINTF(3, 4);
static inline void sm_mpi_impl_say(char* msg, size_t msg_len, const char* fmt, ...)
{
    va_list ap;
    if (msg == NULL || msg_len == 0) return;
    va_start(ap, fmt);
    vsnprintf(msg, msg_len, fmt, ap);
    va_end(ap);
}

/* A failed MPI call: its text and SM_MPI_ERR. */
static inline sm_status sm_mpi_impl_mpi_failed(const char* fn, const char* call, int code,
                                               char* msg, size_t msg_len)
{
    char text[MPI_MAX_ERROR_STRING + 1];
    int n = 0;
    text[0] = '\0';
    if (MPI_Error_string(code, text, &n) != MPI_SUCCESS) n = 0;
    text[n < 0 ? 0 : (n > MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING : n)] = '\0';
    sm_mpi_impl_say(msg, msg_len, "%s: %s failed with MPI error %d: %s", fn, call, code, text);
    return SM_MPI_ERR;
}

/* MPI must be between MPI_Init and MPI_Finalize for any datatype call;
 * MPI_Initialized and MPI_Finalized may be asked at any time. */
static inline sm_status sm_mpi_impl_check_mpi(const char* fn, char* msg, size_t msg_len)
{
    int init = 0, fin = 0;
    if (MPI_Initialized(&init) != MPI_SUCCESS || !init) {
        sm_mpi_impl_say(msg, msg_len, "%s: MPI is not initialized (call MPI_Init first)", fn);
        return SM_MPI_ERR;
    }
    if (MPI_Finalized(&fin) != MPI_SUCCESS || fin) {
        sm_mpi_impl_say(msg, msg_len, "%s: MPI is already finalized", fn);
        return SM_MPI_ERR;
    }
    return SM_OK;
}

/* A library call failed inside a helper: its status, its message. */
static inline sm_status sm_mpi_impl_library_failed(const char* fn, sm_status st, char* msg,
                                                   size_t msg_len)
{
    sm_mpi_impl_say(msg, msg_len, "%s: %s", fn, sm_last_error());
    return st;
}

/* a * b into *out when it fits int64 (both >= 0). */
static inline int sm_mpi_impl_mul_ok(int64_t a, int64_t b, int64_t* out)
{
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* A dim after normalization: size > 1, stride in elements. */
typedef struct sm_mpi_impl_dim {
    int64_t size;
    int64_t stride;
} sm_mpi_impl_dim;

/* The view's layout as MPI will see it: size-1 dims dropped, neighbours
 * merged where the outer stride is the inner stride times the inner size
 * (the elements of the two dims are then one equally spaced run, whatever
 * the sign), outermost first. *nd == 0 with *numel == 1: one element;
 * *numel == 0: no element. Checks the arguments and that every byte
 * displacement fits int64 and MPI_Aint. */
static inline sm_status sm_mpi_impl_normalize(const char* fn, const int64_t* shape,
                                              const int64_t* strides, int32_t ndim,
                                              size_t elem_size, sm_mpi_impl_dim* dims,
                                              int32_t* nd, int64_t* numel, char* msg,
                                              size_t msg_len)
{
    int32_t d, n = 0;
    int64_t count = 1, reach = 0, reach_bytes = 0;
    if (ndim < 0 || ndim > SM_MAX_DIMS) {
        sm_mpi_impl_say(msg, msg_len, "%s: ndim %d is outside [0, %d]", fn, (int)ndim,
                        SM_MAX_DIMS);
        return SM_ERR_INVALID_ARGUMENT;
    }
    if (ndim > 0 && (shape == NULL || strides == NULL)) {
        sm_mpi_impl_say(msg, msg_len, "%s: shape and strides may be NULL only when ndim is 0",
                        fn);
        return SM_ERR_INVALID_ARGUMENT;
    }
    for (d = 0; d < ndim; ++d) {
        if (shape[d] < 0) {
            sm_mpi_impl_say(msg, msg_len, "%s: shape[%d] is %lld (negative)", fn, (int)d,
                            (long long)shape[d]);
            return SM_ERR_SHAPE;
        }
        if (strides[d] == INT64_MIN) {
            /* |INT64_MIN| has no int64 value; no storage is that large. */
            sm_mpi_impl_say(msg, msg_len, "%s: strides[%d] is INT64_MIN", fn, (int)d);
            return SM_ERR_OVERFLOW;
        }
    }
    for (d = 0; d < ndim; ++d) {
        if (shape[d] == 0) {
            *nd = 0;
            *numel = 0;
            return SM_OK;
        }
    }
    for (d = 0; d < ndim; ++d) {
        int64_t step = 0;
        if (!sm_mpi_impl_mul_ok(count, shape[d], &count)) {
            sm_mpi_impl_say(msg, msg_len, "%s: the number of elements overflows int64", fn);
            return SM_ERR_OVERFLOW;
        }
        /* (size - 1) * |stride| summed over the dims: the elements the view
         * reaches from its lowest to its highest, which bounds every byte
         * displacement of the type. */
        if (!sm_mpi_impl_mul_ok(shape[d] - 1, strides[d] < 0 ? -strides[d] : strides[d], &step) ||
            reach >= INT64_MAX - step) { /* reach + 1 below must fit too */
            sm_mpi_impl_say(msg, msg_len, "%s: the range of elements the strides reach overflows int64",
                            fn);
            return SM_ERR_OVERFLOW;
        }
        reach += step;
    }
    if (!sm_mpi_impl_mul_ok(reach + 1, (int64_t)elem_size, &reach_bytes) ||
        (int64_t)(MPI_Aint)reach_bytes != reach_bytes) {
        sm_mpi_impl_say(msg, msg_len,
                        "%s: the view reaches %lld elements of %zu bytes: more bytes than int64 "
                        "and MPI_Aint address",
                        fn, (long long)reach + 1, elem_size);
        return SM_ERR_OVERFLOW;
    }
    for (d = 0; d < ndim; ++d) {
        if (shape[d] == 1) continue;
        int64_t run = 0; /* |strides[d]| * shape[d]: where the dim's elements would continue */
        if (n > 0 && sm_mpi_impl_mul_ok(strides[d] < 0 ? -strides[d] : strides[d], shape[d], &run) &&
            dims[n - 1].stride == (strides[d] < 0 ? -run : run)) {
            /* The sizes' product is a factor of numel: no overflow. */
            dims[n - 1].size *= shape[d];
            dims[n - 1].stride = strides[d];
        } else {
            dims[n].size = shape[d];
            dims[n].stride = strides[d];
            ++n;
        }
    }
    *nd = n;
    *numel = count;
    return SM_OK;
}

/* qsort order of element offsets. */
static inline int sm_mpi_impl_cmp_i64(const void* a, const void* b)
{
    int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* Whether two indices of the normalized layout name the same element:
 * 1 (they do), 0 (never), or SM_ERR_UNSUPPORTED / SM_ERR_OUT_OF_MEMORY when
 * it cannot be settled within SM_MPI_OVERLAP_CHECK_MAX_BYTES. */
static inline sm_status sm_mpi_impl_overlaps(const char* fn, const sm_mpi_impl_dim* dims,
                                             int32_t nd, int64_t numel, int* overlaps,
                                             char* msg, size_t msg_len)
{
    sm_mpi_impl_dim sorted[SM_MAX_DIMS];
    int32_t i, j;
    int64_t reach = 0, lowest = 0, span;
    size_t bitmap_bytes, list_bytes;
    int64_t idx[SM_MAX_DIMS];
    *overlaps = 0;
    if (nd == 0 || numel <= 1) return SM_OK;
    for (i = 0; i < nd; ++i) {
        if (dims[i].stride == 0) {
            /* Normalized dims have size > 1: two indices, one address. */
            sm_mpi_impl_say(msg, msg_len,
                            "%s: cannot receive into a view whose elements overlap (a dim of %lld "
                            "elements with stride 0, as an expanded view has); receive into a "
                            "tensor whose elements are distinct",
                            fn, (long long)dims[i].size);
            *overlaps = 1;
            return SM_OK;
        }
    }
    /* Sufficient rule (dense, permuted, sliced, flipped, diagonal layouts):
     * sorted by |stride|, each stride is larger than the whole range the
     * smaller ones reach, so every offset has one mixed-radix spelling. */
    for (i = 0; i < nd; ++i) {
        sm_mpi_impl_dim v = dims[i];
        if (v.stride < 0) v.stride = -v.stride;
        for (j = i; j > 0 && sorted[j - 1].stride > v.stride; --j) sorted[j] = sorted[j - 1];
        sorted[j] = v;
    }
    for (i = 0; i < nd; ++i) {
        if (sorted[i].stride <= reach) break;
        reach += sorted[i].stride * (sorted[i].size - 1);
    }
    if (i == nd) return SM_OK;
    /* Otherwise list the offsets. Normalization bounded every sum below. */
    reach = 0;
    for (i = 0; i < nd; ++i) {
        int64_t s = dims[i].stride < 0 ? -dims[i].stride : dims[i].stride;
        reach += s * (dims[i].size - 1);
        if (dims[i].stride < 0) lowest += dims[i].stride * (dims[i].size - 1);
    }
    span = reach + 1;
    if (numel > span) {
        /* More elements than addresses: two of them share one. */
        *overlaps = 1;
    } else {
        unsigned char* bitmap = NULL;
        int64_t* list = NULL;
        int64_t k = 0, off = -lowest; /* offset of the current index above the lowest */
        bitmap_bytes = (size_t)(span / 8 + 1);
        list_bytes = (uint64_t)numel > (uint64_t)(SIZE_MAX / sizeof(int64_t))
                         ? SIZE_MAX
                         : (size_t)numel * sizeof(int64_t);
        if (bitmap_bytes > SM_MPI_OVERLAP_CHECK_MAX_BYTES &&
            list_bytes > SM_MPI_OVERLAP_CHECK_MAX_BYTES) {
            sm_mpi_impl_say(msg, msg_len,
                            "%s: cannot prove that the %lld elements of this view (over a range of "
                            "%lld) are distinct within %zu bytes of scratch memory "
                            "(SM_MPI_OVERLAP_CHECK_MAX_BYTES); receive into a contiguous tensor "
                            "and sm_copy_into the view",
                            fn, (long long)numel, (long long)span,
                            (size_t)SM_MPI_OVERLAP_CHECK_MAX_BYTES);
            return SM_ERR_UNSUPPORTED;
        }
        if (bitmap_bytes <= list_bytes) {
            bitmap = (unsigned char*)calloc(bitmap_bytes, 1);
        } else {
            list = (int64_t*)malloc(list_bytes);
        }
        if (bitmap == NULL && list == NULL) {
            sm_mpi_impl_say(msg, msg_len, "%s: no memory for the overlap check (%zu bytes)", fn,
                            bitmap_bytes <= list_bytes ? bitmap_bytes : list_bytes);
            return SM_ERR_OUT_OF_MEMORY;
        }
        for (i = 0; i < nd; ++i) idx[i] = 0;
        for (;;) {
            /* Visit off, then step the odometer (innermost dim fastest). */
            if (bitmap != NULL) {
                unsigned char bit = (unsigned char)(1u << (off & 7));
                if (bitmap[off >> 3] & bit) {
                    *overlaps = 1;
                    break;
                }
                bitmap[off >> 3] |= bit;
            } else {
                list[k] = off;
            }
            ++k;
            for (i = nd - 1; i >= 0; --i) {
                if (++idx[i] < dims[i].size) {
                    off += dims[i].stride;
                    break;
                }
                off -= dims[i].stride * (dims[i].size - 1);
                idx[i] = 0;
            }
            if (i < 0) break;
        }
        if (list != NULL) {
            qsort(list, (size_t)numel, sizeof(int64_t), sm_mpi_impl_cmp_i64);
            for (k = 1; k < numel; ++k) {
                if (list[k] == list[k - 1]) {
                    *overlaps = 1;
                    break;
                }
            }
        }
        free(bitmap);
        free(list);
    }
    if (*overlaps) {
        sm_mpi_impl_say(msg, msg_len,
                        "%s: cannot receive into a view whose elements overlap (two indices name "
                        "one element; e.g. an unfold with step < size or an as_strided that "
                        "reuses addresses); receive into a tensor whose elements are distinct",
                        fn);
    }
    return SM_OK;
}

/* count blocks of blocklen `inner`s, stride_bytes apart, as one datatype,
 * whatever the count: counts above SM_MPI_MAX_COUNT become an hvector of
 * chunks (recursively, for counts above SM_MPI_MAX_COUNT^2) plus a tail, so
 * every int handed to MPI fits. blocklen <= SM_MPI_MAX_COUNT (the caller
 * keeps longer runs as a dim of their own). Returns an MPI error code;
 * nothing is left allocated on failure. */
static inline int sm_mpi_impl_hvector(int64_t count, int64_t blocklen, MPI_Aint stride_bytes,
                                      MPI_Datatype inner, MPI_Datatype* out, const char** call)
{
    const int64_t chunk_count = SM_MPI_MAX_COUNT;
    MPI_Datatype chunk = MPI_DATATYPE_NULL, whole = MPI_DATATYPE_NULL, tail = MPI_DATATYPE_NULL;
    int64_t q, r;
    int rc;
    if (stride_bytes == -1 && count >= 2) {
        /* Open MPI (4.1, and its datatype engine since) reads an extent of
         * -1 as "the type's own extent" (opal_datatype_add), so an hvector
         * whose stride is exactly -1 byte (a flipped dim of a 1-byte dtype)
         * would walk forward: elements 0, 1, 2 instead of 0, -1, -2. Never
         * hand it -1: pairs {0, -1} (hindexed_block: displacements, not an
         * extent), the pairs 2 bytes apart, an odd last block at its own
         * displacement. Same type map, any MPI. */
        MPI_Aint pair_displs[2];
        MPI_Datatype pair = MPI_DATATYPE_NULL;
        pair_displs[0] = 0;
        pair_displs[1] = -1;
        *call = "MPI_Type_create_hindexed_block";
        rc = MPI_Type_create_hindexed_block(2, (int)blocklen, pair_displs, inner, &pair);
        if (rc != MPI_SUCCESS) return rc;
        rc = sm_mpi_impl_hvector(count / 2, 1, -2, pair, &whole, call);
        MPI_Type_free(&pair);
        if (rc != MPI_SUCCESS || count % 2 == 0) {
            if (rc == MPI_SUCCESS) *out = whole;
            return rc;
        }
        {
            int blocklens[2];
            MPI_Aint displs[2];
            MPI_Datatype types[2];
            blocklens[0] = 1;
            blocklens[1] = (int)blocklen;
            displs[0] = 0;
            displs[1] = -(MPI_Aint)(count - 1);
            types[0] = whole;
            types[1] = inner;
            *call = "MPI_Type_create_struct";
            rc = MPI_Type_create_struct(2, blocklens, displs, types, out);
        }
        MPI_Type_free(&whole);
        return rc;
    }
    if (count <= chunk_count) {
        *call = "MPI_Type_create_hvector";
        return MPI_Type_create_hvector((int)count, (int)blocklen, stride_bytes, inner, out);
    }
    q = count / chunk_count;
    r = count % chunk_count;
    /* Chunks of chunk_count blocks; chunk i starts i * chunk_count strides on. */
    *call = "MPI_Type_create_hvector";
    rc = MPI_Type_create_hvector((int)chunk_count, (int)blocklen, stride_bytes, inner, &chunk);
    if (rc != MPI_SUCCESS) return rc;
    rc = sm_mpi_impl_hvector(q, 1, stride_bytes * (MPI_Aint)chunk_count, chunk, &whole, call);
    MPI_Type_free(&chunk);
    if (rc != MPI_SUCCESS) return rc;
    if (r == 0) {
        *out = whole;
        return MPI_SUCCESS;
    }
    /* The tail's first block is block q * chunk_count. */
    rc = MPI_Type_create_hvector((int)r, (int)blocklen, stride_bytes, inner, &tail);
    if (rc == MPI_SUCCESS) {
        int blocklens[2] = {1, 1};
        MPI_Aint displs[2];
        MPI_Datatype types[2];
        displs[0] = 0;
        displs[1] = stride_bytes * (MPI_Aint)(q * chunk_count);
        types[0] = whole;
        types[1] = tail;
        *call = "MPI_Type_create_struct";
        rc = MPI_Type_create_struct(2, blocklens, displs, types, out);
        MPI_Type_free(&tail);
    }
    MPI_Type_free(&whole);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* API                                                                      */
/* ------------------------------------------------------------------------ */

/* sm_status_string() for these helpers' statuses: SM_MPI_ERR included. */
static inline const char* sm_mpi_status_string(sm_status status)
{
    if (status == SM_MPI_ERR) {
        return "SM_MPI_ERR: an MPI call failed, or MPI is not initialized or already finalized";
    }
    return sm_status_string(status);
}

/* The predefined MPI type of one element of dtype, chosen so that MPI moves
 * the element's bytes unchanged: bool as MPI_UINT8_T (a stridemem bool is a
 * byte, possibly other than 0 or 1, which MPI_C_BOOL would not promise to
 * carry), the integers as MPI_[U]INT{8,16,32,64}_T, float16 and bfloat16 as
 * MPI_UINT16_T (their bits: MPI has no 16-bit floats), float32 MPI_FLOAT,
 * float64 MPI_DOUBLE, complex64 MPI_C_FLOAT_COMPLEX, complex128
 * MPI_C_DOUBLE_COMPLEX. Also the type to use with reductions (MPI_SUM of
 * float16 bits is meaningless: reduce such tensors after sm_to float32).
 * A dtype this header does not know (a code added to the library later, or
 * no dtype at all) is SM_ERR_DTYPE. A predefined type needs no freeing.
 * Does not call MPI, so it may be used before MPI_Init. */
static inline sm_status sm_mpi_impl_element_type(const char* fn, sm_dtype dtype,
                                                 MPI_Datatype* out, char* msg, size_t msg_len)
{
    MPI_Datatype t;
    if (out == NULL) {
        sm_mpi_impl_say(msg, msg_len, "%s: out is NULL", fn);
        return SM_ERR_INVALID_ARGUMENT;
    }
    switch (dtype) {
        case SM_BOOL: t = MPI_UINT8_T; break;
        case SM_UINT8: t = MPI_UINT8_T; break;
        case SM_INT8: t = MPI_INT8_T; break;
        case SM_INT16: t = MPI_INT16_T; break;
        case SM_INT32: t = MPI_INT32_T; break;
        case SM_INT64: t = MPI_INT64_T; break;
        case SM_FLOAT16: t = MPI_UINT16_T; break;
        case SM_BFLOAT16: t = MPI_UINT16_T; break;
        case SM_FLOAT32: t = MPI_FLOAT; break;
        case SM_FLOAT64: t = MPI_DOUBLE; break;
        case SM_UINT16: t = MPI_UINT16_T; break;
        case SM_UINT32: t = MPI_UINT32_T; break;
        case SM_UINT64: t = MPI_UINT64_T; break;
        case SM_COMPLEX64: t = MPI_C_FLOAT_COMPLEX; break;
        case SM_COMPLEX128: t = MPI_C_DOUBLE_COMPLEX; break;
        default:
            sm_mpi_impl_say(msg, msg_len,
                            "%s: dtype %d is not one this header knows (0 .. %d); a newer "
                            "stridemem needs a newer stridemem_mpi.h",
                            fn, (int)dtype, SM_NUM_DTYPES - 1);
            return SM_ERR_DTYPE;
    }
    *out = t;
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    return SM_OK;
}
/* The element type of dtype, as documented just above. */
static inline sm_status sm_mpi_element_type(sm_dtype dtype, MPI_Datatype* out, char* msg,
                                            size_t msg_len)
{
    return sm_mpi_impl_element_type("sm_mpi_element_type", dtype, out, msg, msg_len);
}

/* One committed MPI datatype for count 1 that holds the elements of a
 * layout (shape, strides in elements, dtype) in row-major order of the
 * index, relative to the address of element [0, ..., 0] (see the top of this
 * file). shape and strides may be NULL when ndim == 0. SM_MPI_RECV refuses
 * layouts whose elements overlap (SM_ERR_OVERLAP, or SM_ERR_UNSUPPORTED when
 * that cannot be settled, see above). Free *type with sm_mpi_type_free (or
 * MPI_Type_free). Errors: SM_ERR_INVALID_ARGUMENT (NULL type, ndim outside
 * [0, SM_MAX_DIMS], NULL shape/strides with ndim > 0, an unknown intent),
 * SM_ERR_SHAPE (a negative size), SM_ERR_DTYPE (an unknown dtype),
 * SM_ERR_OVERFLOW (the bytes the strides reach overflow int64 or MPI_Aint),
 * SM_ERR_UNSUPPORTED (this MPI's element type has another size than the
 * dtype), SM_MPI_ERR. */
static inline sm_status sm_mpi_impl_layout_type(const char* fn, const int64_t* shape,
                                                const int64_t* strides, int32_t ndim,
                                                sm_dtype dtype, sm_mpi_intent intent,
                                                MPI_Datatype* type, char* msg, size_t msg_len)
{
    sm_mpi_impl_dim dims[SM_MAX_DIMS];
    int32_t nd = 0, next;
    int64_t numel = 0;
    size_t elem_size;
    MPI_Datatype elem, built = MPI_DATATYPE_NULL;
    int rc, mpi_size = 0;
    const char* call = "MPI_Type_contiguous";
    sm_status st;

    if (type == NULL) {
        sm_mpi_impl_say(msg, msg_len, "%s: type is NULL", fn);
        return SM_ERR_INVALID_ARGUMENT;
    }
    if (intent != SM_MPI_SEND && intent != SM_MPI_RECV) {
        sm_mpi_impl_say(msg, msg_len, "%s: intent %d is neither SM_MPI_SEND (%d) nor SM_MPI_RECV (%d)",
                        fn, (int)intent, (int)SM_MPI_SEND, (int)SM_MPI_RECV);
        return SM_ERR_INVALID_ARGUMENT;
    }
    st = sm_mpi_impl_element_type(fn, dtype, &elem, msg, msg_len);
    if (st != SM_OK) return st;
    elem_size = sm_dtype_size(dtype);
    st = sm_mpi_impl_normalize(fn, shape, strides, ndim, elem_size, dims, &nd, &numel, msg,
                               msg_len);
    if (st != SM_OK) return st;
    if (intent == SM_MPI_RECV) {
        int overlaps = 0;
        st = sm_mpi_impl_overlaps(fn, dims, nd, numel, &overlaps, msg, msg_len);
        if (st != SM_OK) return st;
        if (overlaps) return SM_ERR_OVERLAP;
    }
    st = sm_mpi_impl_check_mpi(fn, msg, msg_len);
    if (st != SM_OK) return st;
    rc = MPI_Type_size(elem, &mpi_size);
    if (rc != MPI_SUCCESS) return sm_mpi_impl_mpi_failed(fn, "MPI_Type_size", rc, msg, msg_len);
    if ((size_t)mpi_size != elem_size) {
        sm_mpi_impl_say(msg, msg_len,
                        "%s: this MPI's type for %s is %d bytes, a %s element %zu: its bytes "
                        "would not arrive unchanged",
                        fn, sm_dtype_name(dtype), mpi_size, sm_dtype_name(dtype), elem_size);
        return SM_ERR_UNSUPPORTED;
    }

    if (numel == 0 || nd == 0) {
        /* No element, or one: nothing to describe but the count. */
        rc = MPI_Type_contiguous(numel == 0 ? 0 : 1, elem, &built);
    } else if (nd == 1 && dims[0].stride == 1 && dims[0].size <= SM_MPI_MAX_COUNT) {
        /* One run of adjacent elements in order: MPI's contiguous fast path. */
        rc = MPI_Type_contiguous((int)dims[0].size, elem, &built);
    } else {
        /* Innermost first. A contiguous innermost run becomes the block
         * length of the next dim's hvector (one vector of elements, the shape
         * MPI packs fastest), else the innermost dim is an hvector of single
         * elements; every outer dim wraps what is built in one hvector. */
        const MPI_Aint esz = (MPI_Aint)elem_size;
        next = nd - 1;
        if (nd >= 2 && dims[nd - 1].stride == 1 && dims[nd - 1].size <= SM_MPI_MAX_COUNT) {
            rc = sm_mpi_impl_hvector(dims[nd - 2].size, dims[nd - 1].size,
                                     (MPI_Aint)dims[nd - 2].stride * esz, elem, &built, &call);
            next = nd - 3;
        } else {
            rc = sm_mpi_impl_hvector(dims[nd - 1].size, 1, (MPI_Aint)dims[nd - 1].stride * esz,
                                     elem, &built, &call);
            next = nd - 2;
        }
        for (; rc == MPI_SUCCESS && next >= 0; --next) {
            MPI_Datatype outer = MPI_DATATYPE_NULL;
            rc = sm_mpi_impl_hvector(dims[next].size, 1, (MPI_Aint)dims[next].stride * esz, built,
                                     &outer, &call);
            /* The outer type keeps what it needs of the inner one. */
            MPI_Type_free(&built);
            built = outer;
        }
    }
    if (rc == MPI_SUCCESS) {
        call = "MPI_Type_commit";
        rc = MPI_Type_commit(&built);
    }
    if (rc != MPI_SUCCESS) {
        if (built != MPI_DATATYPE_NULL) MPI_Type_free(&built);
        return sm_mpi_impl_mpi_failed(fn, call, rc, msg, msg_len);
    }
    *type = built;
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    return SM_OK;
}
/* The datatype of a layout, as documented just above. */
static inline sm_status sm_mpi_layout_type(const int64_t* shape, const int64_t* strides,
                                           int32_t ndim, sm_dtype dtype, sm_mpi_intent intent,
                                           MPI_Datatype* type, char* msg, size_t msg_len)
{
    return sm_mpi_impl_layout_type("sm_mpi_layout_type", shape, strides, ndim, dtype, intent,
                                   type, msg, msg_len);
}

/* sm_mpi_layout_type for a view: reads t's layout through the library and
 * writes *buf = sm_data_ptr(t) (element [0, ..., 0]; for a size-0 view still
 * the view's address, which MPI never reads) and *type. MPI_Send(*buf, 1,
 * *type, ...) sends the view's elements in row-major order of its index;
 * MPI_Recv(*buf, 1, *type, ...) writes them in place, touching no other byte
 * of the storage. Errors: those of sm_mpi_layout_type; the library's
 * (SM_ERR_INVALID_HANDLE for a released or forged t, message copied from
 * sm_last_error()); SM_ERR_READ_ONLY for SM_MPI_RECV into a read-only
 * tensor; SM_ERR_INVALID_ARGUMENT for NULL buf or type. The layout is read
 * once: views are immutable, a new view is a new handle. */
static inline sm_status sm_mpi_impl_view_type(const char* fn, sm_tensor t,
                                              sm_mpi_intent intent, void** buf,
                                              MPI_Datatype* type, char* msg, size_t msg_len)
{
    int64_t shape[SM_MAX_DIMS], strides[SM_MAX_DIMS];
    int32_t ndim = 0;
    sm_dtype dtype = 0;
    void* data = NULL;
    int read_only = 0;
    MPI_Datatype built = MPI_DATATYPE_NULL;
    sm_status st;

    if (buf == NULL || type == NULL) {
        sm_mpi_impl_say(msg, msg_len, "%s: %s is NULL", fn, buf == NULL ? "buf" : "type");
        return SM_ERR_INVALID_ARGUMENT;
    }
    if (intent != SM_MPI_SEND && intent != SM_MPI_RECV) {
        sm_mpi_impl_say(msg, msg_len, "%s: intent %d is neither SM_MPI_SEND (%d) nor SM_MPI_RECV (%d)",
                        fn, (int)intent, (int)SM_MPI_SEND, (int)SM_MPI_RECV);
        return SM_ERR_INVALID_ARGUMENT;
    }
    /* Only a receive writes, so only a receive asks whether t may be written
     * (each library call costs a handle lookup: ~35 ns). */
    if ((st = sm_ndim(t, &ndim)) != SM_OK || (st = sm_shape(t, shape, SM_MAX_DIMS)) != SM_OK ||
        (st = sm_strides(t, strides, SM_MAX_DIMS)) != SM_OK ||
        (st = sm_dtype_of(t, &dtype)) != SM_OK || (st = sm_data_ptr(t, &data)) != SM_OK ||
        (intent == SM_MPI_RECV && (st = sm_is_read_only(t, &read_only)) != SM_OK)) {
        return sm_mpi_impl_library_failed(fn, st, msg, msg_len);
    }
    if (intent == SM_MPI_RECV && read_only) {
        sm_mpi_impl_say(msg, msg_len,
                        "%s: cannot receive into a read-only tensor (an import of read-only "
                        "memory)",
                        fn);
        return SM_ERR_READ_ONLY;
    }
    st = sm_mpi_impl_layout_type(fn, shape, strides, ndim, dtype, intent, &built, msg, msg_len);
    if (st != SM_OK) return st;
    *buf = data;
    *type = built;
    return SM_OK;
}
/* The buffer and datatype of a view, as documented just above. */
static inline sm_status sm_mpi_view_type(sm_tensor t, sm_mpi_intent intent, void** buf,
                                         MPI_Datatype* type, char* msg, size_t msg_len)
{
    return sm_mpi_impl_view_type("sm_mpi_view_type", t, intent, buf, type, msg, msg_len);
}

/* Frees a datatype made by these helpers and sets *type to
 * MPI_DATATYPE_NULL (as MPI_Type_free). NULL or MPI_DATATYPE_NULL: a no-op
 * (SM_OK), as the library's *_release of NULL. A predefined type (MPI_DOUBLE,
 * what sm_mpi_element_type gives) is never freed: SM_ERR_INVALID_ARGUMENT
 * (MPI would fail the job). SM_MPI_ERR outside MPI_Init .. MPI_Finalize. */
static inline sm_status sm_mpi_type_free(MPI_Datatype* type, char* msg, size_t msg_len)
{
    static const char fn[] = "sm_mpi_type_free";
    int n_int = 0, n_addr = 0, n_types = 0, combiner = 0, rc;
    sm_status st;
    if (type == NULL || *type == MPI_DATATYPE_NULL) {
        if (msg != NULL && msg_len > 0) msg[0] = '\0';
        return SM_OK;
    }
    st = sm_mpi_impl_check_mpi(fn, msg, msg_len);
    if (st != SM_OK) return st;
    rc = MPI_Type_get_envelope(*type, &n_int, &n_addr, &n_types, &combiner);
    if (rc != MPI_SUCCESS) return sm_mpi_impl_mpi_failed(fn, "MPI_Type_get_envelope", rc, msg, msg_len);
    if (combiner == MPI_COMBINER_NAMED) {
        sm_mpi_impl_say(msg, msg_len, "%s: a predefined MPI type cannot be freed", fn);
        return SM_ERR_INVALID_ARGUMENT;
    }
    rc = MPI_Type_free(type);
    if (rc != MPI_SUCCESS) return sm_mpi_impl_mpi_failed(fn, "MPI_Type_free", rc, msg, msg_len);
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    return SM_OK;
}

/* 1: this MPI says it takes CUDA device pointers; 0: it says it does not
 * (an Open MPI built without CUDA, as Debian's); -1: it cannot say (not Open
 * MPI, or an Open MPI without the CUDA extension). */
static inline int sm_mpi_cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() ? 1 : 0;
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
    return 0;
#else
    return -1;
#endif
}

/* The common part of the four message helpers: type, device rules. */
static inline sm_status sm_mpi_impl_prepare(const char* fn, sm_tensor t, sm_mpi_intent intent,
                                            void** buf, MPI_Datatype* type, char* msg,
                                            size_t msg_len)
{
    sm_device dev;
    sm_status st = sm_device_of(t, &dev);
    if (st != SM_OK) return sm_mpi_impl_library_failed(fn, st, msg, msg_len);
    if (dev.type == SM_DEVICE_CUDA && sm_mpi_cuda_aware() == 0) {
        sm_mpi_impl_say(msg, msg_len,
                        "%s: the tensor is on CUDA device %d and this MPI is not CUDA-aware; copy "
                        "it to the CPU (sm_to) first",
                        fn, (int)dev.index);
        return SM_ERR_DEVICE;
    }
    st = sm_mpi_impl_view_type(fn, t, intent, buf, type, msg, msg_len);
    if (st != SM_OK) return st;
    if (dev.type != SM_DEVICE_CPU && (st = sm_synchronize(dev)) != SM_OK) {
        MPI_Type_free(type);
        return sm_mpi_impl_library_failed(fn, st, msg, msg_len);
    }
    return SM_OK;
}

/* The four one-message helpers below in one place: build the view's type,
 * post the operation, free the type (MPI completes pending operations on a
 * freed type), report an MPI failure under the helper's name. */
typedef enum {
    SM_MPI_IMPL_SEND,
    SM_MPI_IMPL_RECV,
    SM_MPI_IMPL_ISEND,
    SM_MPI_IMPL_IRECV
} sm_mpi_impl_op;

static inline sm_status sm_mpi_impl_post(sm_mpi_impl_op op, sm_tensor t, int peer, int tag,
                                         MPI_Comm comm, MPI_Status* status, MPI_Request* request,
                                         char* msg, size_t msg_len)
{
    static const char* const fns[4] = {"sm_mpi_send", "sm_mpi_recv", "sm_mpi_isend",
                                       "sm_mpi_irecv"};
    static const char* const calls[4] = {"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv"};
    const int receives = op == SM_MPI_IMPL_RECV || op == SM_MPI_IMPL_IRECV;
    void* buf = NULL;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int rc = MPI_SUCCESS;
    sm_status st;
    if ((op == SM_MPI_IMPL_ISEND || op == SM_MPI_IMPL_IRECV) && request == NULL) {
        sm_mpi_impl_say(msg, msg_len, "%s: request is NULL", fns[op]);
        return SM_ERR_INVALID_ARGUMENT;
    }
    st = sm_mpi_impl_prepare(fns[op], t, receives ? SM_MPI_RECV : SM_MPI_SEND, &buf, &type, msg,
                             msg_len);
    if (st != SM_OK) return st;
    switch (op) {
        case SM_MPI_IMPL_SEND: rc = MPI_Send(buf, 1, type, peer, tag, comm); break;
        case SM_MPI_IMPL_RECV: rc = MPI_Recv(buf, 1, type, peer, tag, comm, status); break;
        case SM_MPI_IMPL_ISEND: rc = MPI_Isend(buf, 1, type, peer, tag, comm, request); break;
        case SM_MPI_IMPL_IRECV: rc = MPI_Irecv(buf, 1, type, peer, tag, comm, request); break;
    }
    MPI_Type_free(&type);
    if (rc != MPI_SUCCESS) return sm_mpi_impl_mpi_failed(fns[op], calls[op], rc, msg, msg_len);
    return SM_OK;
}

/* MPI_Send of the view (count 1 of its datatype, freed before returning). */
static inline sm_status sm_mpi_send(sm_tensor t, int dest, int tag, MPI_Comm comm, char* msg,
                                    size_t msg_len)
{
    return sm_mpi_impl_post(SM_MPI_IMPL_SEND, t, dest, tag, comm, NULL, NULL, msg, msg_len);
}

/* MPI_Recv into the view, in place. The message must hold as many elements
 * of t's dtype as t has (MPI_ERR_TRUNCATE when it holds more). status may be
 * MPI_STATUS_IGNORE. */
static inline sm_status sm_mpi_recv(sm_tensor t, int source, int tag, MPI_Comm comm,
                                    MPI_Status* status, char* msg, size_t msg_len)
{
    return sm_mpi_impl_post(SM_MPI_IMPL_RECV, t, source, tag, comm, status, NULL, msg, msg_len);
}

/* MPI_Isend of the view. The type is freed at once (MPI finishes the send
 * with it); t must stay alive, and its elements unchanged, until *request
 * completes. */
static inline sm_status sm_mpi_isend(sm_tensor t, int dest, int tag, MPI_Comm comm,
                                     MPI_Request* request, char* msg, size_t msg_len)
{
    return sm_mpi_impl_post(SM_MPI_IMPL_ISEND, t, dest, tag, comm, NULL, request, msg, msg_len);
}

/* MPI_Irecv into the view, in place; as sm_mpi_isend, t must stay alive
 * (and no other write or read of its elements happen) until *request
 * completes. */
static inline sm_status sm_mpi_irecv(sm_tensor t, int source, int tag, MPI_Comm comm,
                                     MPI_Request* request, char* msg, size_t msg_len)
{
    return sm_mpi_impl_post(SM_MPI_IMPL_IRECV, t, source, tag, comm, NULL, request, msg,
                            msg_len);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRIDEMEM_MPI_H */
