/*
 * DLPack from C99, both directions, every field checked.
 *
 * Export (sm_to_dlpack, sm_to_dlpack_ex): every dtype over dense, permuted,
 * sliced, negative-stride, flipped, selected, expanded, size-0 and 0-d
 * layouts, legacy and versioned. Each DLTensor field is compared with the
 * tensor's metadata (data = element [0, ..., 0], byte_offset 0, shape,
 * strides, dtype code/bits/lanes, device), and every element is read through
 * the DLTensor's own addressing and compared with sm_copy_to_host. Versioned
 * flags: READ_ONLY for read-only storages, IS_COPIED for normalized
 * negative-stride exports. The storage outlives our handle until the
 * consumer calls the deleter (memory statistics prove it).
 *
 * Import (sm_from_dlpack): hand-built producer tensors whose deleters count
 * their calls: exactly once, only after the last view (views derived from
 * the import, storage handles included) dies. Read-only versioned imports
 * refuse every write with SM_ERR_READ_ONLY. Unsupported inputs fail with a
 * clear status, write nothing and do not call the deleter.
 *
 * Round trips: export -> import aliases the same memory; stack-carved tensors
 * are refused by export.
 *
 * On a build with a usable GPU, CUDA and pinned-host tensors go through the
 * same export/import checks; without one, the CUDA device codes are refused
 * with SM_ERR_DEVICE (checked, not skipped).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stridemem.h"
#include "stridemem_dlpack.h"

static int g_failures = 0;
static int g_checks = 0;

#define EXPECT(cond)                                                                \
    do {                                                                            \
        ++g_checks;                                                                 \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: [%s] expected %s\n", __FILE__, __LINE__,        \
                    g_ctx, #cond);                                                  \
            ++g_failures;                                                           \
        }                                                                           \
    } while (0)

#define EXPECT_EQ_I64(a, b)                                                         \
    do {                                                                            \
        long long a_ = (long long)(a), b_ = (long long)(b);                         \
        ++g_checks;                                                                 \
        if (a_ != b_) {                                                             \
            fprintf(stderr, "%s:%d: [%s] %s == %lld, expected %s == %lld\n",        \
                    __FILE__, __LINE__, g_ctx, #a, a_, #b, b_);                     \
            ++g_failures;                                                           \
        }                                                                           \
    } while (0)

#define EXPECT_STATUS(call, want)                                                   \
    do {                                                                            \
        sm_status st_ = (call);                                                     \
        ++g_checks;                                                                 \
        if (st_ != (want)) {                                                        \
            fprintf(stderr, "%s:%d: [%s] %s -> %s (%d), expected %s; last error: %s\n", \
                    __FILE__, __LINE__, g_ctx, #call, sm_status_string(st_),        \
                    (int)st_, sm_status_string(want), sm_last_error());             \
            ++g_failures;                                                           \
        }                                                                           \
    } while (0)

#define EXPECT_OK(call) EXPECT_STATUS(call, SM_OK)

/* What the current check is about (printed with failures). */
static char g_ctx[200] = "";
#define CTX(...) snprintf(g_ctx, sizeof g_ctx, __VA_ARGS__)

static const sm_device k_cpu = {SM_DEVICE_CPU, 0};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    int64_t storages;
    int64_t allocated;
    int64_t views;
} live_mem;

static live_mem mem_now(sm_device dev)
{
    sm_memory_stats_t s;
    live_mem m = {-1, -1, -1};
    memset(&s, 0, sizeof s);
    s.struct_size = (uint32_t)sizeof s;
    if (sm_memory_stats(dev, &s) == SM_OK) {
        m.storages = s.active_storages;
        m.allocated = s.allocated_bytes;
        m.views = s.active_views;
    }
    return m;
}

static int64_t live_tensor_handles(void)
{
    int64_t t = -1, s = -1, k = -1;
    if (sm_debug_live_handles(&t, &s, &k) != SM_OK) return -1;
    return t + s + k;
}

/* The last error must be a real explanation: non-empty and mentioning word. */
static void expect_error_mentions(const char* word)
{
    const char* e = sm_last_error();
    ++g_checks;
    if (!e || !*e || (word && !strstr(e, word))) {
        fprintf(stderr, "%s:%d: [%s] last error \"%s\" should mention \"%s\"\n", __FILE__,
                __LINE__, g_ctx, e ? e : "(null)", word ? word : "");
        ++g_failures;
    }
}

static sm_tensor arange_view(sm_dtype dt, const int64_t* shape, int32_t ndim)
{
    int64_t n = 1;
    int32_t i;
    sm_tensor flat = NULL, v = NULL;
    for (i = 0; i < ndim; ++i) n *= shape[i];
    /* Values stay small enough for every dtype (bool: 0 then 1s, u8/i8: < 128). */
    EXPECT_OK(sm_arange(0.0, 1.0, n, dt, k_cpu, &flat));
    EXPECT_OK(sm_view(flat, shape, ndim, &v));
    sm_tensor_release(flat);
    return v;
}

/* DLPack type code and bits we must export for each dtype. */
static void expected_dl_dtype(sm_dtype dt, uint8_t* code, uint8_t* bits)
{
    switch (dt) {
    case SM_BOOL: *code = sm_kDLBool; *bits = 8; break;
    case SM_UINT8: *code = sm_kDLUInt; *bits = 8; break;
    case SM_INT8: *code = sm_kDLInt; *bits = 8; break;
    case SM_INT16: *code = sm_kDLInt; *bits = 16; break;
    case SM_INT32: *code = sm_kDLInt; *bits = 32; break;
    case SM_INT64: *code = sm_kDLInt; *bits = 64; break;
    case SM_FLOAT16: *code = sm_kDLFloat; *bits = 16; break;
    case SM_BFLOAT16: *code = sm_kDLBfloat; *bits = 16; break;
    case SM_FLOAT32: *code = sm_kDLFloat; *bits = 32; break;
    case SM_FLOAT64: *code = sm_kDLFloat; *bits = 64; break;
    case SM_UINT16: *code = sm_kDLUInt; *bits = 16; break;
    case SM_UINT32: *code = sm_kDLUInt; *bits = 32; break;
    case SM_UINT64: *code = sm_kDLUInt; *bits = 64; break;
    case SM_COMPLEX64: *code = sm_kDLComplex; *bits = 64; break;   /* both parts */
    case SM_COMPLEX128: *code = sm_kDLComplex; *bits = 128; break;
    default: *code = 255; *bits = 0; break;
    }
}

static sm_DLTensor* dl_of(void* managed, int versioned)
{
    if (!managed) return NULL;
    return versioned ? &((sm_DLManagedTensorVersioned*)managed)->dl_tensor
                     : &((sm_DLManagedTensor*)managed)->dl_tensor;
}

/* The consumer's side of the contract: call the deleter once. */
static void consumer_done(void* managed, int versioned)
{
    if (!managed) return;
    if (versioned) {
        sm_DLManagedTensorVersioned* m = (sm_DLManagedTensorVersioned*)managed;
        if (m->deleter) m->deleter(m);
    } else {
        sm_DLManagedTensor* m = (sm_DLManagedTensor*)managed;
        if (m->deleter) m->deleter(m);
    }
}

/* Gathers the elements of a host-reachable DLTensor in row-major order using
 * only the DLTensor's fields (data + byte_offset + index . strides). */
static void gather_dl(const sm_DLTensor* dl, unsigned char* out)
{
    const int64_t item = dl->dtype.bits / 8;
    int64_t idx[SM_MAX_DIMS];
    int64_t n = 1, k;
    int32_t d;
    for (d = 0; d < dl->ndim; ++d) {
        n *= dl->shape[d];
        idx[d] = 0;
    }
    for (k = 0; k < n; ++k) {
        int64_t off = 0;
        for (d = 0; d < dl->ndim; ++d) off += idx[d] * dl->strides[d];
        memcpy(out + k * item,
               (const unsigned char*)dl->data + dl->byte_offset + off * item, (size_t)item);
        for (d = dl->ndim - 1; d >= 0; --d) {
            if (++idx[d] < dl->shape[d]) break;
            idx[d] = 0;
        }
    }
}

/* Every field of an exported DLTensor against t; values read through the
 * DLTensor when the memory is host memory. */
static void check_exported_fields(sm_tensor t, void* managed, int versioned,
                                  uint64_t want_flags)
{
    sm_DLTensor* dl = dl_of(managed, versioned);
    int32_t ndim = -1, d;
    int64_t shape[SM_MAX_DIMS], strides[SM_MAX_DIMS], nbytes = -1;
    sm_dtype dt = -1;
    sm_device dev = {0, 0};
    void* ptr = NULL;
    uint8_t code, bits;

    EXPECT(managed != NULL);
    if (!managed) return;
    EXPECT_OK(sm_ndim(t, &ndim));
    EXPECT_OK(sm_shape(t, shape, SM_MAX_DIMS));
    EXPECT_OK(sm_strides(t, strides, SM_MAX_DIMS));
    EXPECT_OK(sm_dtype_of(t, &dt));
    EXPECT_OK(sm_device_of(t, &dev));
    EXPECT_OK(sm_data_ptr(t, &ptr));
    EXPECT_OK(sm_nbytes(t, &nbytes));
    expected_dl_dtype(dt, &code, &bits);

    if (versioned) {
        sm_DLManagedTensorVersioned* m = (sm_DLManagedTensorVersioned*)managed;
        EXPECT_EQ_I64(m->version.major, 1);
        EXPECT_EQ_I64(m->version.minor, SM_DLPACK_MINOR_VERSION);
        EXPECT(m->deleter != NULL);
        EXPECT_EQ_I64(m->flags, want_flags);
    } else {
        sm_DLManagedTensor* m = (sm_DLManagedTensor*)managed;
        EXPECT(m->deleter != NULL);
    }
    EXPECT(dl->data == ptr);
    EXPECT_EQ_I64(dl->byte_offset, 0);
    EXPECT_EQ_I64(dl->device.device_type, dev.type);
    EXPECT_EQ_I64(dl->device.device_id, dev.index);
    EXPECT_EQ_I64(dl->ndim, ndim);
    EXPECT_EQ_I64(dl->dtype.code, code);
    EXPECT_EQ_I64(dl->dtype.bits, bits);
    EXPECT_EQ_I64(dl->dtype.lanes, 1);
    EXPECT(dl->strides != NULL); /* always given, as documented */
    EXPECT(ndim == 0 || dl->shape != NULL);
    if (!dl->strides || (ndim > 0 && !dl->shape)) return;
    for (d = 0; d < ndim && d < SM_MAX_DIMS; ++d) {
        EXPECT_EQ_I64(dl->shape[d], shape[d]);
        EXPECT_EQ_I64(dl->strides[d], strides[d]);
    }
    if (dev.type != SM_DEVICE_CUDA && nbytes >= 0) {
        unsigned char* want = (unsigned char*)malloc((size_t)nbytes + 1);
        unsigned char* got = (unsigned char*)malloc((size_t)nbytes + 1);
        EXPECT_OK(sm_copy_to_host(t, want, (size_t)nbytes));
        gather_dl(dl, got);
        EXPECT(memcmp(want, got, (size_t)nbytes) == 0);
        free(want);
        free(got);
    }
}

/* ------------------------------------------------------------------------ */
/* Export: every dtype, every layout                                         */
/* ------------------------------------------------------------------------ */

#define MAX_CASES 16

/* Views of a 4x6 base of dtype dt; names[i] says which. Returns the count. */
static int make_layouts(sm_tensor base, sm_tensor* out, const char** names)
{
    int n = 0;
    int32_t rev[2] = {1, 0};
    int32_t both[2] = {0, 1};
    int64_t row_shape[2] = {5, 6};
    int64_t exp_shape[3] = {3, 4, 6};
    sm_tensor tmp = NULL, row = NULL, flat = NULL, t3 = NULL;
    int64_t shape3[3] = {2, 3, 4};
    int32_t perm3[3] = {2, 0, 1};

    names[n] = "dense";
    EXPECT_OK(sm_tensor_retain(base));
    out[n++] = base;
    names[n] = "permuted";
    EXPECT_OK(sm_permute(base, rev, 2, &out[n++]));
    names[n] = "sliced [1:, ::2]";
    EXPECT_OK(sm_slice(base, 0, 1, SM_SLICE_NONE, 1, &tmp));
    EXPECT_OK(sm_slice(tmp, 1, SM_SLICE_NONE, SM_SLICE_NONE, 2, &out[n++]));
    sm_tensor_release(tmp);
    names[n] = "negative steps [::-1, ::-2]";
    EXPECT_OK(sm_slice(base, 0, SM_SLICE_NONE, SM_SLICE_NONE, -1, &tmp));
    EXPECT_OK(sm_slice(tmp, 1, SM_SLICE_NONE, SM_SLICE_NONE, -2, &out[n++]));
    sm_tensor_release(tmp);
    names[n] = "flipped";
    EXPECT_OK(sm_flip(base, both, 2, &out[n++]));
    names[n] = "select column (stride 6)";
    EXPECT_OK(sm_select(base, 1, -1, &out[n++]));
    names[n] = "expanded row (stride 0)";
    EXPECT_OK(sm_narrow(base, 0, 2, 1, &row));
    EXPECT_OK(sm_expand(row, row_shape, 2, &out[n++]));
    names[n] = "expanded, new leading dim";
    EXPECT_OK(sm_expand(base, exp_shape, 3, &out[n++]));
    sm_tensor_release(row);
    names[n] = "size 0";
    EXPECT_OK(sm_narrow(base, 0, 1, 0, &out[n++]));
    names[n] = "size 0, negative step";
    EXPECT_OK(sm_slice(base, 1, 2, 2, -1, &out[n++]));
    names[n] = "0-d";
    EXPECT_OK(sm_select(base, 0, 2, &tmp));
    EXPECT_OK(sm_select(tmp, 0, 3, &out[n++]));
    sm_tensor_release(tmp);
    names[n] = "3-d permuted + flipped";
    EXPECT_OK(sm_view(base, shape3, 3, &t3));
    EXPECT_OK(sm_permute(t3, perm3, 3, &tmp));
    EXPECT_OK(sm_flip(tmp, perm3, 1, &out[n++])); /* flips dim 2 */
    sm_tensor_release(tmp);
    sm_tensor_release(t3);
    names[n] = "diagonal (stride 7)";
    EXPECT_OK(sm_diagonal(base, 0, 0, 1, &out[n++]));
    names[n] = "unfolded windows (overlapping)";
    {
        int64_t m1 = -1;
        EXPECT_OK(sm_view(base, &m1, 1, &flat));
        EXPECT_OK(sm_unfold(flat, 0, 5, 3, &out[n++]));
        sm_tensor_release(flat);
    }
    return n;
}

static void test_export_every_dtype_and_layout(void)
{
    sm_dtype dt;
    const int64_t shape[2] = {4, 6};
    for (dt = 0; dt < SM_NUM_DTYPES; ++dt) {
        sm_tensor base = arange_view(dt, shape, 2);
        sm_tensor views[MAX_CASES];
        const char* names[MAX_CASES];
        int n = make_layouts(base, views, names), i, versioned;
        for (i = 0; i < n; ++i) {
            for (versioned = 0; versioned <= 1; ++versioned) {
                void* m = NULL;
                CTX("export %s %s, %s", sm_dtype_name(dt), names[i],
                    versioned ? "versioned" : "legacy");
                EXPECT_OK(sm_to_dlpack(views[i], versioned, &m));
                check_exported_fields(views[i], m, versioned, 0);
                consumer_done(m, versioned);
            }
            sm_tensor_release(views[i]);
        }
        sm_tensor_release(base);
    }
}

/* ------------------------------------------------------------------------ */
/* Export: lifetime (the storage outlives our handle until the deleter)       */
/* ------------------------------------------------------------------------ */

static void test_export_lifetime(void)
{
    int versioned;
    for (versioned = 0; versioned <= 1; ++versioned) {
        live_mem m0, m1, m2;
        int64_t h0 = live_tensor_handles();
        sm_tensor t = NULL, v = NULL;
        void* managed = NULL;
        sm_DLTensor* dl;
        double got[3];
        CTX("export lifetime (%s)", versioned ? "versioned" : "legacy");
        m0 = mem_now(k_cpu);
        EXPECT_OK(sm_arange(0.0, 1.0, 1000, SM_FLOAT64, k_cpu, &t));
        m1 = mem_now(k_cpu);
        EXPECT_EQ_I64(m1.storages, m0.storages + 1);
        EXPECT(m1.allocated >= m0.allocated + 8000);
        /* A small slice, exported: it pins the whole storage. */
        EXPECT_OK(sm_slice(t, 0, 500, 503, 1, &v));
        EXPECT_OK(sm_to_dlpack(v, versioned, &managed));
        sm_tensor_release(v);
        sm_tensor_release(t);
        EXPECT_EQ_I64(live_tensor_handles(), h0); /* no handle is left ... */
        m2 = mem_now(k_cpu);
        EXPECT_EQ_I64(m2.storages, m1.storages); /* ... but the storage lives */
        EXPECT_EQ_I64(m2.allocated, m1.allocated);
        dl = dl_of(managed, versioned);
        if (dl) {
            memcpy(got, dl->data, sizeof got);
            EXPECT(got[0] == 500.0 && got[1] == 501.0 && got[2] == 502.0);
            /* Writable: a consumer may write (no READ_ONLY flag). */
            ((double*)dl->data)[0] = -1.0;
            EXPECT(((double*)dl->data)[0] == -1.0);
        }
        consumer_done(managed, versioned);
        m2 = mem_now(k_cpu);
        EXPECT_EQ_I64(m2.storages, m0.storages);
        EXPECT_EQ_I64(m2.allocated, m0.allocated);
    }

    /* Several exports of one tensor: each deleter drops one owner. */
    {
        live_mem m0 = mem_now(k_cpu), m1;
        sm_tensor t = NULL;
        void* a = NULL;
        void* b = NULL;
        CTX("two exports of one tensor");
        EXPECT_OK(sm_zeros(NULL, 0, SM_INT32, k_cpu, &t));
        EXPECT_OK(sm_to_dlpack(t, 0, &a));
        EXPECT_OK(sm_to_dlpack(t, 1, &b));
        EXPECT(a != b);
        EXPECT(dl_of(a, 0)->data == dl_of(b, 1)->data);
        sm_tensor_release(t);
        consumer_done(a, 0);
        m1 = mem_now(k_cpu);
        EXPECT_EQ_I64(m1.storages, m0.storages + 1);
        consumer_done(b, 1);
        m1 = mem_now(k_cpu);
        EXPECT_EQ_I64(m1.storages, m0.storages);
        EXPECT_EQ_I64(m1.allocated, m0.allocated);
    }
}

/* ------------------------------------------------------------------------ */
/* Export: flags, normalization                                              */
/* ------------------------------------------------------------------------ */

static void test_export_normalize(void)
{
    const int64_t shape[2] = {3, 4};
    sm_tensor base = arange_view(SM_INT32, shape, 2);
    sm_tensor flipped = NULL, plain = NULL;
    int32_t d1 = 1;
    int versioned;
    EXPECT_OK(sm_flip(base, &d1, 1, &flipped));
    EXPECT_OK(sm_transpose(base, 0, 1, &plain));

    for (versioned = 0; versioned <= 1; ++versioned) {
        const uint32_t vflag = versioned ? SM_DLPACK_VERSIONED : 0u;
        void* m = NULL;
        int copied = -1;
        sm_DLTensor* dl;
        void* src_ptr = NULL;
        int32_t want[12];
        int32_t got[12];
        live_mem m0 = mem_now(k_cpu), m1;

        /* Negative strides + NORMALIZE: a dense copy, said so. */
        CTX("normalize flipped (%s)", versioned ? "versioned" : "legacy");
        EXPECT_OK(sm_data_ptr(flipped, &src_ptr));
        EXPECT_OK(sm_to_dlpack_ex(flipped, vflag | SM_DLPACK_NORMALIZE, NULL, &m, &copied));
        EXPECT_EQ_I64(copied, 1);
        dl = dl_of(m, versioned);
        if (dl) {
            int d;
            EXPECT(dl->data != src_ptr);
            EXPECT_EQ_I64(dl->byte_offset, 0);
            EXPECT_EQ_I64(dl->ndim, 2);
            EXPECT_EQ_I64(dl->shape[0], 3);
            EXPECT_EQ_I64(dl->shape[1], 4);
            for (d = 0; d < 2; ++d) EXPECT(dl->strides[d] > 0);
            EXPECT_OK(sm_copy_to_host(flipped, want, sizeof want));
            gather_dl(dl, (unsigned char*)got);
            EXPECT(memcmp(want, got, sizeof want) == 0);
            if (versioned)
                EXPECT_EQ_I64(((sm_DLManagedTensorVersioned*)m)->flags,
                              SM_DLPACK_FLAG_BITMASK_IS_COPIED);
        }
        m1 = mem_now(k_cpu);
        EXPECT_EQ_I64(m1.storages, m0.storages + 1); /* the copy */
        consumer_done(m, versioned);
        m1 = mem_now(k_cpu);
        EXPECT_EQ_I64(m1.storages, m0.storages);

        /* Positive strides + NORMALIZE: zero copy, not flagged. */
        CTX("normalize transposed (%s)", versioned ? "versioned" : "legacy");
        copied = -1;
        m = NULL;
        EXPECT_OK(sm_to_dlpack_ex(plain, vflag | SM_DLPACK_NORMALIZE, NULL, &m, &copied));
        EXPECT_EQ_I64(copied, 0);
        check_exported_fields(plain, m, versioned, 0);
        consumer_done(m, versioned);

        /* No NORMALIZE: negative strides go out as they are. */
        CTX("no normalize, flipped (%s)", versioned ? "versioned" : "legacy");
        copied = -1;
        m = NULL;
        EXPECT_OK(sm_to_dlpack_ex(flipped, vflag, NULL, &m, &copied));
        EXPECT_EQ_I64(copied, 0);
        check_exported_fields(flipped, m, versioned, 0);
        consumer_done(m, versioned);

        /* copied may be NULL. */
        CTX("normalize with copied == NULL (%s)", versioned ? "versioned" : "legacy");
        m = NULL;
        EXPECT_OK(sm_to_dlpack_ex(flipped, vflag | SM_DLPACK_NORMALIZE, NULL, &m, NULL));
        EXPECT(m != NULL);
        consumer_done(m, versioned);
    }

    /* A negative stride on a size-1 dim: NORMALIZE promises the consumer no
     * negative strides; a size-1 dim needs no copy, but its stride must not
     * go out negative either (PyTorch refuses any negative stride). */
    {
        sm_tensor row = NULL, rowflip = NULL;
        int32_t d0 = 0;
        int64_t st[2] = {0, 0};
        void* m = NULL;
        int copied = -1;
        CTX("normalize, negative stride on a size-1 dim");
        EXPECT_OK(sm_narrow(base, 0, 1, 1, &row));
        EXPECT_OK(sm_flip(row, &d0, 1, &rowflip));
        EXPECT_OK(sm_strides(rowflip, st, 2));
        if (st[0] < 0) {
            EXPECT_OK(sm_to_dlpack_ex(rowflip, SM_DLPACK_VERSIONED | SM_DLPACK_NORMALIZE, NULL, &m,
                                      &copied));
            if (m) {
                sm_DLTensor* dl = dl_of(m, 1);
                int32_t want[4], got[4];
                EXPECT(dl->strides[0] >= 0);
                EXPECT(dl->strides[1] >= 0);
                EXPECT_OK(sm_copy_to_host(rowflip, want, sizeof want));
                gather_dl(dl, (unsigned char*)got);
                EXPECT(memcmp(want, got, sizeof want) == 0);
                consumer_done(m, 1);
            }
        }
        sm_tensor_release(rowflip);
        sm_tensor_release(row);
    }

    /* Negative strides that move nothing: NORMALIZE exports them as 1,
     * zero copy (NO_COPY proves it), on a size-1 dim and on every dim of an
     * empty tensor, whose strides no consumer ever uses. */
    {
        sm_tensor row = NULL, rowflip = NULL, none = NULL, noneflip = NULL;
        int32_t d0 = 0, d1 = 1;
        sm_tensor cases[2];
        int k;
        CTX("normalize, negative strides that move nothing");
        EXPECT_OK(sm_narrow(base, 0, 1, 1, &row));
        EXPECT_OK(sm_flip(row, &d0, 1, &rowflip));
        EXPECT_OK(sm_narrow(base, 0, 1, 0, &none));
        EXPECT_OK(sm_flip(none, &d1, 1, &noneflip)); /* shape (0, 4), stride -1 on dim 1 */
        cases[0] = rowflip;
        cases[1] = noneflip;
        for (k = 0; k < 4; ++k) {
            const uint32_t vf = (k & 2) ? SM_DLPACK_VERSIONED : 0u;
            int64_t st[2] = {0, 0};
            void* data = NULL;
            void* m = NULL;
            int copied = -1;
            EXPECT_OK(sm_strides(cases[k & 1], st, 2));
            EXPECT(st[0] < 0 || st[1] < 0); /* the layout under test */
            EXPECT_OK(sm_data_ptr(cases[k & 1], &data));
            EXPECT_OK(sm_to_dlpack_ex(cases[k & 1], vf | SM_DLPACK_NORMALIZE | SM_DLPACK_NO_COPY,
                                      NULL, &m, &copied));
            EXPECT_EQ_I64(copied, 0);
            if (m) {
                sm_DLTensor* dl = dl_of(m, vf != 0);
                EXPECT(dl->strides[0] >= 0 && dl->strides[1] >= 0);
                EXPECT(dl->data == data);
                if (vf) {
                    EXPECT(!(((sm_DLManagedTensorVersioned*)m)->flags &
                             SM_DLPACK_FLAG_BITMASK_IS_COPIED));
                }
                consumer_done(m, vf != 0);
            }
        }
        sm_tensor_release(noneflip);
        sm_tensor_release(none);
        sm_tensor_release(rowflip);
        sm_tensor_release(row);
    }

    /* Bad flags / arguments. */
    {
        void* m = (void*)&m;
        int copied = 7;
        CTX("sm_to_dlpack_ex bad flags");
        EXPECT_STATUS(sm_to_dlpack_ex(base, 16u, NULL, &m, &copied), SM_ERR_INVALID_ARGUMENT);
        EXPECT(m == (void*)&m);
        EXPECT_EQ_I64(copied, 7);
        expect_error_mentions("flags");
        EXPECT_STATUS(sm_to_dlpack_ex(base, 0, NULL, NULL, &copied), SM_ERR_INVALID_ARGUMENT);
        EXPECT_STATUS(sm_to_dlpack(base, 0, NULL), SM_ERR_INVALID_ARGUMENT);
        EXPECT_STATUS(sm_to_dlpack(NULL, 0, &m), SM_ERR_INVALID_HANDLE);
        EXPECT_STATUS(sm_to_dlpack_ex(NULL, 0, NULL, &m, NULL), SM_ERR_INVALID_HANDLE);
        EXPECT(m == (void*)&m);
    }
    {
        sm_tensor dead = NULL;
        void* m = NULL;
        CTX("export of a released handle");
        EXPECT_OK(sm_zeros(NULL, 0, SM_FLOAT32, k_cpu, &dead));
        sm_tensor_release(dead);
        EXPECT_STATUS(sm_to_dlpack(dead, 1, &m), SM_ERR_INVALID_HANDLE);
        EXPECT(m == NULL);
    }

    sm_tensor_release(plain);
    sm_tensor_release(flipped);
    sm_tensor_release(base);
}

/* ------------------------------------------------------------------------ */
/* A producer: hand-built managed tensors whose deleters count their calls   */
/* ------------------------------------------------------------------------ */

typedef struct {
    void* buffer;
    int64_t shape[SM_MAX_DIMS + 2];
    int64_t strides[SM_MAX_DIMS + 2];
    int* counter;
    void* self_seen;
} producer;

static int g_legacy_calls = 0;
static int g_versioned_calls = 0;

static void producer_legacy_deleter(sm_DLManagedTensor* self)
{
    producer* p = (producer*)self->manager_ctx;
    ++*p->counter;
    free(p->buffer);
    free(p);
    free(self);
}

static void producer_versioned_deleter(sm_DLManagedTensorVersioned* self)
{
    producer* p = (producer*)self->manager_ctx;
    ++*p->counter;
    free(p->buffer);
    free(p);
    free(self);
}

/* A buffer of nbytes (filled with 0, 1, 2, ... per byte) plus a DLTensor over
 * it: data = buffer, no strides (row-major), CPU float32, shape {2, 3}.
 * Callers adjust the fields. */
static void* make_producer(int versioned, size_t nbytes, sm_DLTensor** dl_out)
{
    producer* p = (producer*)calloc(1, sizeof *p);
    size_t i;
    sm_DLTensor* dl;
    void* managed;
    p->buffer = malloc(nbytes ? nbytes : 1);
    for (i = 0; i < nbytes; ++i) ((unsigned char*)p->buffer)[i] = (unsigned char)i;
    p->shape[0] = 2;
    p->shape[1] = 3;
    if (versioned) {
        sm_DLManagedTensorVersioned* m =
            (sm_DLManagedTensorVersioned*)calloc(1, sizeof *m);
        m->version.major = SM_DLPACK_MAJOR_VERSION;
        m->version.minor = SM_DLPACK_MINOR_VERSION;
        m->manager_ctx = p;
        m->deleter = producer_versioned_deleter;
        m->flags = 0;
        p->counter = &g_versioned_calls;
        dl = &m->dl_tensor;
        managed = m;
    } else {
        sm_DLManagedTensor* m = (sm_DLManagedTensor*)calloc(1, sizeof *m);
        m->manager_ctx = p;
        m->deleter = producer_legacy_deleter;
        p->counter = &g_legacy_calls;
        dl = &m->dl_tensor;
        managed = m;
    }
    dl->data = p->buffer;
    dl->device.device_type = sm_kDLCPU;
    dl->device.device_id = 0;
    dl->ndim = 2;
    dl->dtype.code = sm_kDLFloat;
    dl->dtype.bits = 32;
    dl->dtype.lanes = 1;
    dl->shape = p->shape;
    dl->strides = NULL;
    dl->byte_offset = 0;
    *dl_out = dl;
    return managed;
}

static producer* producer_of(void* managed, int versioned)
{
    return versioned ? (producer*)((sm_DLManagedTensorVersioned*)managed)->manager_ctx
                     : (producer*)((sm_DLManagedTensor*)managed)->manager_ctx;
}

static int* counter_of(int versioned)
{
    return versioned ? &g_versioned_calls : &g_legacy_calls;
}

/* ------------------------------------------------------------------------ */
/* Import: fields, values, every dtype                                       */
/* ------------------------------------------------------------------------ */

static void test_import_fields(void)
{
    int versioned;
    for (versioned = 0; versioned <= 1; ++versioned) {
        int* calls = counter_of(versioned);
        const char* kind = versioned ? "versioned" : "legacy";

        /* Row-major (strides NULL) float32 2x3. */
        {
            sm_DLTensor* dl;
            void* m = make_producer(versioned, 6 * sizeof(float), &dl);
            float* f = (float*)producer_of(m, versioned)->buffer;
            float got[6];
            int i;
            sm_tensor t = NULL;
            int32_t ndim = -1;
            int64_t sh[2], st[2], off = -1;
            sm_dtype dt = -1;
            sm_device dev = {0, 0};
            void* ptr = NULL;
            int ro = -1;
            int before = *calls;
            CTX("import row-major float32 (%s)", kind);
            for (i = 0; i < 6; ++i) f[i] = (float)i * 1.5f;
            EXPECT_OK(sm_from_dlpack(m, versioned, &t));
            EXPECT_OK(sm_ndim(t, &ndim));
            EXPECT_EQ_I64(ndim, 2);
            EXPECT_OK(sm_shape(t, sh, 2));
            EXPECT_OK(sm_strides(t, st, 2));
            EXPECT(sh[0] == 2 && sh[1] == 3);
            EXPECT(st[0] == 3 && st[1] == 1);
            EXPECT_OK(sm_storage_offset(t, &off));
            EXPECT_EQ_I64(off, 0);
            EXPECT_OK(sm_dtype_of(t, &dt));
            EXPECT_EQ_I64(dt, SM_FLOAT32);
            EXPECT_OK(sm_device_of(t, &dev));
            EXPECT(dev.type == SM_DEVICE_CPU && dev.index == 0);
            EXPECT_OK(sm_data_ptr(t, &ptr));
            EXPECT(ptr == (void*)f);
            EXPECT_OK(sm_is_read_only(t, &ro));
            EXPECT_EQ_I64(ro, 0);
            EXPECT_OK(sm_copy_to_host(t, got, sizeof got));
            EXPECT(memcmp(got, f, sizeof got) == 0);
            /* Writes go to the producer's memory, and the other way round. */
            EXPECT_OK(sm_inplace_scalar(t, SM_OP_ADD, 1.0, 0.0));
            EXPECT(f[0] == 1.0f && f[5] == 8.5f);
            f[4] = 42.0f;
            EXPECT_OK(sm_copy_to_host(t, got, sizeof got));
            EXPECT(got[4] == 42.0f);
            EXPECT_EQ_I64(*calls, before);
            sm_tensor_release(t);
            EXPECT_EQ_I64(*calls, before + 1);
        }

        /* Negative and permuted strides, byte_offset, int16. Buffer holds
         * 4x5 int16 [0..19]; the import is rows 3..1 reversed, columns
         * 4,2,0 -> transposed: shape {3, 3}, strides {-2, -5}, data at row
         * 3 col 4 expressed as buffer + byte_offset. */
        {
            sm_DLTensor* dl;
            void* m = make_producer(versioned, 20 * sizeof(int16_t), &dl);
            producer* p = producer_of(m, versioned);
            int16_t* b = (int16_t*)p->buffer;
            int16_t got[9];
            sm_tensor t = NULL;
            int64_t st[2], sh[2];
            void* ptr = NULL;
            int i, j, before = *calls;
            CTX("import negative strides + byte_offset int16 (%s)", kind);
            for (i = 0; i < 20; ++i) b[i] = (int16_t)i;
            dl->dtype.code = sm_kDLInt;
            dl->dtype.bits = 16;
            p->shape[0] = 3; /* columns 4, 2, 0 */
            p->shape[1] = 3; /* rows 3, 2, 1 */
            p->strides[0] = -2;
            p->strides[1] = -5;
            dl->strides = p->strides;
            dl->byte_offset = (3 * 5 + 4) * sizeof(int16_t);
            EXPECT_OK(sm_from_dlpack(m, versioned, &t));
            EXPECT_OK(sm_shape(t, sh, 2));
            EXPECT_OK(sm_strides(t, st, 2));
            EXPECT(sh[0] == 3 && sh[1] == 3);
            EXPECT(st[0] == -2 && st[1] == -5);
            EXPECT_OK(sm_data_ptr(t, &ptr));
            EXPECT(ptr == (void*)(b + 19));
            EXPECT_OK(sm_copy_to_host(t, got, sizeof got));
            for (i = 0; i < 3; ++i)
                for (j = 0; j < 3; ++j) EXPECT_EQ_I64(got[i * 3 + j], (3 - j) * 5 + (4 - 2 * i));
            {
                /* The storage spans exactly the reached elements. */
                int64_t sn = -1;
                EXPECT_OK(sm_storage_nbytes(t, &sn));
                EXPECT_EQ_I64(sn, (19 - 5) * (int64_t)sizeof(int16_t) + 2);
            }
            sm_tensor_release(t);
            EXPECT_EQ_I64(*calls, before + 1);
        }

        /* Every dtype code we know, and the stridemem dtype it becomes. */
        {
            static const struct { uint8_t code, bits; sm_dtype want; } table[] = {
                {sm_kDLBool, 8, SM_BOOL},     {sm_kDLUInt, 8, SM_UINT8},
                {sm_kDLInt, 8, SM_INT8},      {sm_kDLInt, 16, SM_INT16},
                {sm_kDLInt, 32, SM_INT32},    {sm_kDLInt, 64, SM_INT64},
                {sm_kDLFloat, 16, SM_FLOAT16}, {sm_kDLBfloat, 16, SM_BFLOAT16},
                {sm_kDLFloat, 32, SM_FLOAT32}, {sm_kDLFloat, 64, SM_FLOAT64},
                {sm_kDLUInt, 16, SM_UINT16},  {sm_kDLUInt, 32, SM_UINT32},
                {sm_kDLUInt, 64, SM_UINT64},  {sm_kDLComplex, 64, SM_COMPLEX64},
                {sm_kDLComplex, 128, SM_COMPLEX128}};
            size_t k;
            for (k = 0; k < sizeof table / sizeof table[0]; ++k) {
                sm_DLTensor* dl;
                void* m = make_producer(versioned, 6 * 16, &dl);
                sm_tensor t = NULL;
                sm_dtype dt = -1;
                unsigned char got[96];
                int64_t nb = -1;
                int before = *calls;
                CTX("import dtype code %u bits %u (%s)", table[k].code, table[k].bits, kind);
                dl->dtype.code = table[k].code;
                dl->dtype.bits = table[k].bits;
                if (table[k].want == SM_BOOL) /* valid bools only: 0 or 1 */
                    memset(producer_of(m, versioned)->buffer, 1, 6);
                EXPECT_OK(sm_from_dlpack(m, versioned, &t));
                EXPECT_OK(sm_dtype_of(t, &dt));
                EXPECT_EQ_I64(dt, table[k].want);
                EXPECT_OK(sm_nbytes(t, &nb));
                EXPECT_EQ_I64(nb, 6 * (int64_t)(table[k].bits / 8));
                EXPECT_OK(sm_copy_to_host(t, got, (size_t)nb));
                EXPECT(memcmp(got, producer_of(m, versioned)->buffer, (size_t)nb) == 0);
                sm_tensor_release(t);
                EXPECT_EQ_I64(*calls, before + 1);
            }
        }

        /* 0-d (shape NULL) and size-0 (data NULL). */
        {
            sm_DLTensor* dl;
            void* m = make_producer(versioned, sizeof(double), &dl);
            double v = 2.25, got = 0;
            sm_tensor t = NULL;
            int32_t ndim = -1;
            int64_t n = -1;
            int before = *calls;
            CTX("import 0-d (%s)", kind);
            memcpy(producer_of(m, versioned)->buffer, &v, sizeof v);
            dl->ndim = 0;
            dl->shape = NULL;
            dl->dtype.bits = 64;
            EXPECT_OK(sm_from_dlpack(m, versioned, &t));
            EXPECT_OK(sm_ndim(t, &ndim));
            EXPECT_EQ_I64(ndim, 0);
            EXPECT_OK(sm_numel(t, &n));
            EXPECT_EQ_I64(n, 1);
            EXPECT_OK(sm_copy_to_host(t, &got, sizeof got));
            EXPECT(got == 2.25);
            sm_tensor_release(t);
            EXPECT_EQ_I64(*calls, before + 1);
        }
        {
            sm_DLTensor* dl;
            void* m = make_producer(versioned, 0, &dl);
            sm_tensor t = NULL, v = NULL;
            int64_t n = -1, sh[2];
            int before = *calls;
            CTX("import size-0 with NULL data (%s)", kind);
            producer_of(m, versioned)->shape[0] = 0;
            dl->data = NULL;
            EXPECT_OK(sm_from_dlpack(m, versioned, &t));
            EXPECT_OK(sm_numel(t, &n));
            EXPECT_EQ_I64(n, 0);
            EXPECT_OK(sm_shape(t, sh, 2));
            EXPECT(sh[0] == 0 && sh[1] == 3);
            EXPECT_OK(sm_clone(t, SM_CONTIGUOUS, &v));
            sm_tensor_release(v);
            sm_tensor_release(t);
            EXPECT_EQ_I64(*calls, before + 1);
        }

        /* A producer without a deleter (it keeps the memory itself). */
        {
            float keep[6] = {1, 2, 3, 4, 5, 6};
            int64_t shp[2] = {2, 3};
            sm_DLManagedTensor lm;
            sm_DLManagedTensorVersioned vm;
            sm_DLTensor* dl = versioned ? &vm.dl_tensor : &lm.dl_tensor;
            void* m = versioned ? (void*)&vm : (void*)&lm;
            sm_tensor t = NULL;
            float got[6];
            CTX("import with a NULL deleter (%s)", kind);
            memset(&lm, 0, sizeof lm);
            memset(&vm, 0, sizeof vm);
            vm.version.major = 1;
            dl->data = keep;
            dl->device.device_type = sm_kDLCPU;
            dl->ndim = 2;
            dl->dtype.code = sm_kDLFloat;
            dl->dtype.bits = 32;
            dl->dtype.lanes = 1;
            dl->shape = shp;
            EXPECT_OK(sm_from_dlpack(m, versioned, &t));
            EXPECT_OK(sm_copy_to_host(t, got, sizeof got));
            EXPECT(memcmp(got, keep, sizeof got) == 0);
            sm_tensor_release(t);
        }
    }

    /* A newer 1.x minor is still 1.x: accepted. */
    {
        sm_DLTensor* dl;
        void* m = make_producer(1, 6 * sizeof(float), &dl);
        sm_tensor t = NULL;
        int before = g_versioned_calls;
        CTX("import versioned 1.7");
        ((sm_DLManagedTensorVersioned*)m)->version.minor = 7;
        EXPECT_OK(sm_from_dlpack(m, 1, &t));
        sm_tensor_release(t);
        EXPECT_EQ_I64(g_versioned_calls, before + 1);
    }
}

/* ------------------------------------------------------------------------ */
/* Import: the deleter runs exactly once, after the last view                */
/* ------------------------------------------------------------------------ */

static void test_import_deleter_after_last_view(void)
{
    int versioned;
    for (versioned = 0; versioned <= 1; ++versioned) {
        int* calls = counter_of(versioned);
        sm_DLTensor* dl;
        void* m = make_producer(versioned, 6 * sizeof(float), &dl);
        sm_tensor t = NULL, tr = NULL, sl = NULL, ex = NULL, fs = NULL, cl = NULL;
        sm_storage st = NULL;
        int64_t shp[1] = {2}, strd[1] = {3};
        int64_t eshape[3] = {4, 2, 3};
        live_mem m0 = mem_now(k_cpu), m1;
        int64_t h0 = live_tensor_handles();
        int before = *calls;
        float got[2];
        CTX("import deleter after the last view (%s)", versioned ? "versioned" : "legacy");
        EXPECT_OK(sm_from_dlpack(m, versioned, &t));
        m1 = mem_now(k_cpu);
        EXPECT_EQ_I64(m1.storages, m0.storages + 1); /* an external storage ... */
        EXPECT_EQ_I64(m1.allocated, m0.allocated);   /* ... that allocated nothing */

        EXPECT_OK(sm_transpose(t, 0, 1, &tr));
        EXPECT_OK(sm_slice(tr, 0, SM_SLICE_NONE, SM_SLICE_NONE, -1, &sl));
        EXPECT_OK(sm_expand(t, eshape, 3, &ex));
        EXPECT_OK(sm_clone(t, SM_PRESERVE, &cl)); /* a copy holds nothing */
        EXPECT_OK(sm_tensor_storage(t, &st));
        EXPECT_OK(sm_tensor_from_storage(st, shp, strd, 1, 1, SM_FLOAT32, &fs));

        sm_tensor_release(t);
        EXPECT_EQ_I64(*calls, before);
        sm_tensor_release(tr);
        EXPECT_EQ_I64(*calls, before);
        sm_tensor_release(cl);
        EXPECT_EQ_I64(*calls, before);
        sm_tensor_release(ex);
        EXPECT_EQ_I64(*calls, before);
        sm_tensor_release(sl);
        EXPECT_EQ_I64(*calls, before);
        sm_tensor_release(fs);
        EXPECT_EQ_I64(*calls, before);
        /* Only the storage handle is left: the memory is still readable. */
        {
            sm_tensor again = NULL;
            EXPECT_OK(sm_tensor_from_storage(st, shp, strd, 1, 2, SM_FLOAT32, &again));
            EXPECT_OK(sm_copy_to_host(again, got, sizeof got));
            {
                const float* f = (const float*)dl->data; /* producer's memory, still alive */
                EXPECT(got[0] == f[2] && got[1] == f[5]);
            }
            sm_tensor_release(again);
        }
        EXPECT_EQ_I64(*calls, before);
        sm_storage_release(st);
        EXPECT_EQ_I64(*calls, before + 1);
        m1 = mem_now(k_cpu);
        EXPECT_EQ_I64(m1.storages, m0.storages);
        EXPECT_EQ_I64(m1.allocated, m0.allocated);
        EXPECT_EQ_I64(live_tensor_handles(), h0);
    }

    /* retain/release pairs: one more owner, still exactly once. */
    {
        sm_DLTensor* dl;
        void* m = make_producer(1, 6 * sizeof(float), &dl);
        sm_tensor t = NULL;
        int before = g_versioned_calls;
        CTX("import retain/release");
        EXPECT_OK(sm_from_dlpack(m, 1, &t));
        EXPECT_OK(sm_tensor_retain(t));
        sm_tensor_release(t);
        EXPECT_EQ_I64(g_versioned_calls, before);
        sm_tensor_release(t);
        EXPECT_EQ_I64(g_versioned_calls, before + 1);
        EXPECT_STATUS(sm_tensor_release(t), SM_ERR_INVALID_HANDLE); /* already dead */
        EXPECT_EQ_I64(g_versioned_calls, before + 1);
    }
}

/* ------------------------------------------------------------------------ */
/* Import: read-only                                                         */
/* ------------------------------------------------------------------------ */

static void test_import_read_only(void)
{
    sm_DLTensor* dl;
    void* m = make_producer(1, 6 * sizeof(float), &dl);
    float* f = (float*)producer_of(m, 1)->buffer;
    float snapshot[6], got[6];
    sm_tensor t = NULL, v = NULL, other = NULL, cl = NULL, dst = NULL;
    int ro = -1, i;
    int64_t ver0 = -1, ver1 = -1;
    void* exported = NULL;
    int before = g_versioned_calls;
    const int64_t shape[2] = {2, 3};

    CTX("read-only versioned import");
    for (i = 0; i < 6; ++i) f[i] = (float)(i + 1);
    memcpy(snapshot, f, sizeof snapshot);
    ((sm_DLManagedTensorVersioned*)m)->flags = SM_DLPACK_FLAG_BITMASK_READ_ONLY;
    EXPECT_OK(sm_from_dlpack(m, 1, &t));
    EXPECT_OK(sm_is_read_only(t, &ro));
    EXPECT_EQ_I64(ro, 1);
    EXPECT_OK(sm_version_counter(t, &ver0));
    EXPECT_OK(sm_transpose(t, 0, 1, &v));
    ro = -1;
    EXPECT_OK(sm_is_read_only(v, &ro));
    EXPECT_EQ_I64(ro, 1); /* views inherit it */
    EXPECT_OK(sm_full(shape, 2, 9.0, SM_FLOAT32, k_cpu, &other));

    {
        static const sm_op scalar_ops[] = {SM_OP_FILL, SM_OP_ZERO, SM_OP_ADD, SM_OP_SUB,
                                           SM_OP_MUL,  SM_OP_DIV,  SM_OP_CLAMP, SM_OP_RELU,
                                           SM_OP_NEG,  SM_OP_ABS,  SM_OP_SQRT, SM_OP_EXP,
                                           SM_OP_SIGN};
        static const sm_op tensor_ops[] = {SM_OP_FILL, SM_OP_ADD, SM_OP_SUB, SM_OP_MUL,
                                           SM_OP_DIV};
        size_t k;
        for (k = 0; k < sizeof scalar_ops / sizeof scalar_ops[0]; ++k) {
            CTX("read-only: sm_inplace_scalar op %d", (int)scalar_ops[k]);
            EXPECT_STATUS(sm_inplace_scalar(t, scalar_ops[k], 1.0, 2.0), SM_ERR_READ_ONLY);
            expect_error_mentions("read-only");
            EXPECT_STATUS(sm_inplace_scalar(v, scalar_ops[k], 1.0, 2.0), SM_ERR_READ_ONLY);
        }
        for (k = 0; k < sizeof tensor_ops / sizeof tensor_ops[0]; ++k) {
            CTX("read-only: sm_inplace_tensor op %d", (int)tensor_ops[k]);
            EXPECT_STATUS(sm_inplace_tensor(t, tensor_ops[k], other, 1.0), SM_ERR_READ_ONLY);
            expect_error_mentions("read-only");
        }
    }
    CTX("read-only: sm_copy_into");
    EXPECT_STATUS(sm_copy_into(t, other), SM_ERR_READ_ONLY);
    expect_error_mentions("read-only");
    EXPECT_STATUS(sm_copy_into(v, v), SM_ERR_READ_ONLY);
    /* Nothing changed, and the version counter did not move. */
    EXPECT(memcmp(f, snapshot, sizeof snapshot) == 0);
    EXPECT_OK(sm_version_counter(t, &ver1));
    EXPECT_EQ_I64(ver1, ver0);

    /* Reading is fine: copies out, clones (writable), copy_into from it. */
    CTX("read-only: reads");
    EXPECT_OK(sm_copy_to_host(t, got, sizeof got));
    EXPECT(memcmp(got, snapshot, sizeof got) == 0);
    EXPECT_OK(sm_clone(t, SM_CONTIGUOUS, &cl));
    ro = -1;
    EXPECT_OK(sm_is_read_only(cl, &ro));
    EXPECT_EQ_I64(ro, 0);
    EXPECT_OK(sm_inplace_scalar(cl, SM_OP_ADD, 1.0, 0.0));
    EXPECT_OK(sm_empty(shape, 2, SM_FLOAT64, k_cpu, &dst));
    EXPECT_OK(sm_copy_into(dst, t));

    /* Re-export keeps the flag in a versioned tensor. */
    CTX("read-only: re-export versioned");
    EXPECT_OK(sm_to_dlpack(v, 1, &exported));
    check_exported_fields(v, exported, 1, SM_DLPACK_FLAG_BITMASK_READ_ONLY);
    {
        /* ... and a normalized copy of it is writable, so only IS_COPIED. */
        sm_tensor vf = NULL;
        int32_t d0 = 0;
        void* m2 = NULL;
        int copied = -1;
        EXPECT_OK(sm_flip(v, &d0, 1, &vf));
        EXPECT_OK(sm_to_dlpack_ex(vf, SM_DLPACK_VERSIONED | SM_DLPACK_NORMALIZE, NULL, &m2, &copied));
        EXPECT_EQ_I64(copied, 1);
        if (m2)
            EXPECT_EQ_I64(((sm_DLManagedTensorVersioned*)m2)->flags,
                          SM_DLPACK_FLAG_BITMASK_IS_COPIED);
        consumer_done(m2, 1);
        sm_tensor_release(vf);
    }
    {
        /* The re-export, imported again, is read-only too. */
        sm_tensor back = NULL;
        CTX("read-only: re-import of the re-export");
        EXPECT_OK(sm_from_dlpack(exported, 1, &back));
        ro = -1;
        EXPECT_OK(sm_is_read_only(back, &ro));
        EXPECT_EQ_I64(ro, 1);
        EXPECT_STATUS(sm_inplace_scalar(back, SM_OP_ZERO, 0, 0), SM_ERR_READ_ONLY);
        sm_tensor_release(t);
        sm_tensor_release(v);
        EXPECT_EQ_I64(g_versioned_calls, before); /* back still holds it */
        sm_tensor_release(back);
    }
    EXPECT_EQ_I64(g_versioned_calls, before + 1);
    EXPECT(memcmp(snapshot, got, sizeof got) == 0);
    sm_tensor_release(other);
    sm_tensor_release(cl);
    sm_tensor_release(dst);
}

/* ------------------------------------------------------------------------ */
/* Import: unsupported inputs are refused, the deleter is not called         */
/* ------------------------------------------------------------------------ */

typedef void (*mutator)(sm_DLTensor* dl, void* managed, producer* p);

static void mut_lanes(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->dtype.lanes = 4; }
static void mut_code(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->dtype.code = 99; }
static void mut_opaque(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->dtype.code = sm_kDLOpaqueHandle; dl->dtype.bits = 64; }
static void mut_complex(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->dtype.code = sm_kDLComplex; dl->dtype.bits = 32; }
static void mut_bits(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->dtype.bits = 24; }
static void mut_bool1(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->dtype.code = sm_kDLBool; dl->dtype.bits = 1; }
static void mut_uint16(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->dtype.code = sm_kDLUInt; dl->dtype.bits = 24; }
static void mut_device(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->device.device_type = (sm_DLDeviceType)4; /* OpenCL */ }
static void mut_device_big(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->device.device_type = (sm_DLDeviceType)10; /* ROCm */ }
static void mut_ndim17(sm_DLTensor* dl, void* m, producer* p)
{
    int i;
    (void)m;
    for (i = 0; i < SM_MAX_DIMS + 1; ++i) p->shape[i] = 1;
    dl->ndim = SM_MAX_DIMS + 1;
}
static void mut_ndim_neg(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->ndim = -1; }
static void mut_null_data(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->data = NULL; }
static void mut_null_shape(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)p; dl->shape = NULL; }
static void mut_neg_shape(sm_DLTensor* dl, void* m, producer* p) { (void)m; (void)dl; p->shape[0] = -2; }
static void mut_overflow(sm_DLTensor* dl, void* m, producer* p)
{
    (void)m;
    p->shape[0] = 3;
    p->strides[0] = INT64_MAX / 2 + 1;
    p->strides[1] = 1;
    dl->strides = p->strides;
}
/* The element span fits int64 but its size in bytes does not. */
static void mut_byte_overflow(sm_DLTensor* dl, void* m, producer* p)
{
    (void)m;
    dl->ndim = 1;
    p->shape[0] = 2;
    p->strides[0] = INT64_MAX / 4;
    dl->strides = p->strides;
}
static void mut_major2(sm_DLTensor* dl, void* m, producer* p)
{
    (void)dl; (void)p;
    ((sm_DLManagedTensorVersioned*)m)->version.major = 2;
}
static void mut_major0(sm_DLTensor* dl, void* m, producer* p)
{
    (void)dl; (void)p;
    ((sm_DLManagedTensorVersioned*)m)->version.major = 0;
}

static void test_import_refusals(void)
{
    static const struct {
        const char* name;
        mutator mut;
        sm_status want;
        int versioned_only;
        const char* mentions;
    } cases[] = {
        {"lanes 4", mut_lanes, SM_ERR_DTYPE, 0, "lanes"},
        {"unknown dtype code 99", mut_code, SM_ERR_DTYPE, 0, "99"},
        {"opaque handle dtype", mut_opaque, SM_ERR_DTYPE, 0, "code"},
        {"complex32 (no such dtype here)", mut_complex, SM_ERR_DTYPE, 0, "code"},
        {"float24", mut_bits, SM_ERR_DTYPE, 0, "24"},
        {"1-bit bool", mut_bool1, SM_ERR_DTYPE, 0, "bits"},
        {"uint24", mut_uint16, SM_ERR_DTYPE, 0, "24"},
        {"device type 4 (OpenCL)", mut_device, SM_ERR_DEVICE, 0, "4"},
        {"device type 10 (ROCm)", mut_device_big, SM_ERR_DEVICE, 0, "10"},
        {"ndim 17", mut_ndim17, SM_ERR_INVALID_ARGUMENT, 0, "17"},
        {"ndim -1", mut_ndim_neg, SM_ERR_INVALID_ARGUMENT, 0, "-1"},
        {"NULL data with elements", mut_null_data, SM_ERR_INVALID_ARGUMENT, 0, "NULL"},
        {"NULL shape with ndim 2", mut_null_shape, SM_ERR_INVALID_ARGUMENT, 0, "shape"},
        {"negative size", mut_neg_shape, SM_ERR_SHAPE, 0, "-2"},
        {"strides overflow int64", mut_overflow, SM_ERR_OVERFLOW, 0, "overflow"},
        {"byte span overflows int64", mut_byte_overflow, SM_ERR_OVERFLOW, 0, "overflow"},
        {"major version 2", mut_major2, SM_ERR_UNSUPPORTED, 1, "2"},
        {"major version 0", mut_major0, SM_ERR_UNSUPPORTED, 1, "version"},
    };
    size_t k;
    int versioned;
    for (k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        for (versioned = cases[k].versioned_only; versioned <= 1; ++versioned) {
            sm_DLTensor* dl;
            void* m = make_producer(versioned, 6 * sizeof(float), &dl);
            producer* p = producer_of(m, versioned);
            int* calls = counter_of(versioned);
            int before = *calls;
            int64_t h0 = live_tensor_handles();
            live_mem m0 = mem_now(k_cpu), m1;
            sm_tensor out = (sm_tensor)(void*)&out; /* sentinel: must stay */
            sm_status st;
            CTX("import refused: %s (%s)", cases[k].name, versioned ? "versioned" : "legacy");
            cases[k].mut(dl, m, p);
            st = sm_from_dlpack(m, versioned, &out);
            ++g_checks;
            if (st != cases[k].want) {
                fprintf(stderr, "%s:%d: [%s] status %s (%d), expected %s; last error: %s\n",
                        __FILE__, __LINE__, g_ctx, sm_status_string(st), (int)st,
                        sm_status_string(cases[k].want), sm_last_error());
                ++g_failures;
            }
            EXPECT(st != SM_OK);
            if (st != SM_OK) expect_error_mentions(cases[k].mentions);
            EXPECT(out == (sm_tensor)(void*)&out);
            EXPECT_EQ_I64(*calls, before); /* ownership stays with the caller */
            EXPECT_EQ_I64(live_tensor_handles(), h0);
            m1 = mem_now(k_cpu);
            EXPECT_EQ_I64(m1.storages, m0.storages);
            if (st == SM_OK) sm_tensor_release(out);
            else consumer_done(m, versioned); /* the producer frees it itself */
            EXPECT_EQ_I64(*calls, before + 1);
        }
    }

    /* NULL arguments. */
    {
        sm_DLTensor* dl;
        void* m = make_producer(0, 6 * sizeof(float), &dl);
        sm_tensor out = NULL;
        int before = g_legacy_calls;
        CTX("import NULL arguments");
        EXPECT_STATUS(sm_from_dlpack(NULL, 0, &out), SM_ERR_INVALID_ARGUMENT);
        EXPECT_STATUS(sm_from_dlpack(NULL, 1, &out), SM_ERR_INVALID_ARGUMENT);
        EXPECT(out == NULL);
        EXPECT_STATUS(sm_from_dlpack(m, 0, NULL), SM_ERR_INVALID_ARGUMENT);
        EXPECT_EQ_I64(g_legacy_calls, before);
        consumer_done(m, 0);
        EXPECT_EQ_I64(g_legacy_calls, before + 1);
    }
}

/* ------------------------------------------------------------------------ */
/* Round trips and the stack of views                                        */
/* ------------------------------------------------------------------------ */

static void test_round_trip(void)
{
    int versioned;
    for (versioned = 0; versioned <= 1; ++versioned) {
        const int64_t shape[3] = {2, 3, 4};
        sm_tensor base = arange_view(SM_FLOAT32, shape, 3);
        sm_tensor t = NULL, tmp = NULL, u = NULL;
        int32_t perm[3] = {2, 0, 1};
        int64_t st_t[3], st_u[3], sh_t[3], sh_u[3];
        void *pt = NULL, *pu = NULL, *m = NULL;
        float a[24], b[24];
        live_mem m0;
        int ro = -1;
        CTX("round trip (%s)", versioned ? "versioned" : "legacy");
        EXPECT_OK(sm_permute(base, perm, 3, &tmp));
        EXPECT_OK(sm_slice(tmp, 0, SM_SLICE_NONE, SM_SLICE_NONE, -1, &t));
        sm_tensor_release(tmp);
        sm_tensor_release(base);
        m0 = mem_now(k_cpu);
        EXPECT_OK(sm_to_dlpack(t, versioned, &m));
        EXPECT_OK(sm_from_dlpack(m, versioned, &u));
        EXPECT_OK(sm_data_ptr(t, &pt));
        EXPECT_OK(sm_data_ptr(u, &pu));
        EXPECT(pt == pu);
        EXPECT_OK(sm_shape(t, sh_t, 3));
        EXPECT_OK(sm_shape(u, sh_u, 3));
        EXPECT_OK(sm_strides(t, st_t, 3));
        EXPECT_OK(sm_strides(u, st_u, 3));
        EXPECT(memcmp(sh_t, sh_u, sizeof sh_t) == 0);
        EXPECT(memcmp(st_t, st_u, sizeof st_t) == 0);
        EXPECT_OK(sm_is_read_only(u, &ro));
        EXPECT_EQ_I64(ro, 0);
        EXPECT_OK(sm_copy_to_host(t, a, sizeof a));
        EXPECT_OK(sm_copy_to_host(u, b, sizeof b));
        EXPECT(memcmp(a, b, sizeof a) == 0);
        /* The same memory: a write through one is seen through the other. */
        EXPECT_OK(sm_inplace_scalar(u, SM_OP_MUL, 2.0, 0.0));
        EXPECT_OK(sm_copy_to_host(t, b, sizeof b));
        EXPECT(b[1] == 2 * a[1] && b[23] == 2 * a[23]);
        /* Our own export came back: u is a view of t's storage itself (no
         * wrapper), sharing its version counter. */
        EXPECT_EQ_I64(mem_now(k_cpu).storages, m0.storages);
        EXPECT_OK(sm_same_storage(t, u, &ro));
        EXPECT_EQ_I64(ro, 1);
        /* The original goes first: the import keeps its storage alive. */
        sm_tensor_release(t);
        EXPECT_EQ_I64(mem_now(k_cpu).storages, m0.storages);
        EXPECT_OK(sm_copy_to_host(u, a, sizeof a));
        EXPECT(memcmp(a, b, sizeof a) == 0);
        sm_tensor_release(u);
        EXPECT_EQ_I64(mem_now(k_cpu).storages, m0.storages - 1);
    }

    /* Round trip of a size-0 and a 0-d tensor. */
    {
        const int64_t z[2] = {0, 5};
        sm_tensor t = NULL, u = NULL;
        void* m = NULL;
        int64_t n = -1, sh[2];
        double one = 0;
        CTX("round trip size 0 and 0-d");
        EXPECT_OK(sm_zeros(z, 2, SM_FLOAT64, k_cpu, &t));
        EXPECT_OK(sm_to_dlpack(t, 1, &m));
        EXPECT_OK(sm_from_dlpack(m, 1, &u));
        EXPECT_OK(sm_numel(u, &n));
        EXPECT_EQ_I64(n, 0);
        EXPECT_OK(sm_shape(u, sh, 2));
        EXPECT(sh[0] == 0 && sh[1] == 5);
        sm_tensor_release(u);
        sm_tensor_release(t);
        EXPECT_OK(sm_full(NULL, 0, 3.5, SM_FLOAT64, k_cpu, &t));
        EXPECT_OK(sm_to_dlpack(t, 0, &m));
        EXPECT_OK(sm_from_dlpack(m, 0, &u));
        EXPECT_OK(sm_copy_to_host(u, &one, sizeof one));
        EXPECT(one == 3.5);
        sm_tensor_release(t);
        sm_tensor_release(u);
    }
}

static void test_stack_refused(void)
{
    sm_stack s = NULL;
    sm_tensor a = NULL, v = NULL, c = NULL;
    const int64_t shape[2] = {4, 4};
    void* m = (void*)&m;
    int copied = 5;
    CTX("stack-carved tensors are refused by export");
    EXPECT_OK(sm_stack_create(k_cpu, 4096, &s));
    EXPECT_OK(sm_stack_push(s, shape, 2, SM_FLOAT32, &a));
    EXPECT_OK(sm_inplace_scalar(a, SM_OP_FILL, 1.5, 0.0)); /* pushed memory is uninitialized */
    EXPECT_STATUS(sm_to_dlpack(a, 0, &m), SM_ERR_UNSUPPORTED);
    expect_error_mentions("stack");
    EXPECT_STATUS(sm_to_dlpack(a, 1, &m), SM_ERR_UNSUPPORTED);
    EXPECT_STATUS(sm_to_dlpack_ex(a, SM_DLPACK_VERSIONED | SM_DLPACK_NORMALIZE, NULL, &m, &copied),
                  SM_ERR_UNSUPPORTED);
    EXPECT(m == (void*)&m);
    EXPECT_EQ_I64(copied, 5);
    /* A view of it is carved from the stack too. */
    EXPECT_OK(sm_transpose(a, 0, 1, &v));
    EXPECT_STATUS(sm_to_dlpack(v, 1, &m), SM_ERR_UNSUPPORTED);
    EXPECT(m == (void*)&m);
    /* A clone is an ordinary tensor. */
    EXPECT_OK(sm_clone(v, SM_CONTIGUOUS, &c));
    m = NULL;
    EXPECT_OK(sm_to_dlpack(c, 1, &m));
    check_exported_fields(c, m, 1, 0);
    consumer_done(m, 1);
    sm_tensor_release(c);
    sm_tensor_release(v);
    sm_tensor_release(a);
    EXPECT_OK(sm_stack_release(s));
}

/* ------------------------------------------------------------------------ */
/* CUDA and pinned host                                                      */
/* ------------------------------------------------------------------------ */

static void test_gpu_devices(void)
{
    int32_t n = -1;
    EXPECT_OK(sm_cuda_device_count(&n));
    if (n <= 0) {
        /* No usable GPU: CUDA device codes are refused, the deleter untouched. */
        int dt;
        for (dt = sm_kDLCUDA; dt <= sm_kDLCUDAHost; ++dt) {
            int versioned;
            for (versioned = 0; versioned <= 1; ++versioned) {
                sm_DLTensor* dl;
                void* m = make_producer(versioned, 6 * sizeof(float), &dl);
                sm_tensor out = NULL;
                int* calls = counter_of(versioned);
                int before = *calls;
                CTX("no GPU: import of device type %d (%s)", dt,
                    versioned ? "versioned" : "legacy");
                dl->device.device_type = (sm_DLDeviceType)dt;
                EXPECT_STATUS(sm_from_dlpack(m, versioned, &out), SM_ERR_DEVICE);
                expect_error_mentions(NULL);
                EXPECT(out == NULL);
                EXPECT_EQ_I64(*calls, before);
                consumer_done(m, versioned);
            }
        }
        printf("test_dlpack: no usable GPU: CUDA/pinned imports checked to be refused "
               "(the CUDA/pinned round trips need a GPU build on a GPU machine)\n");
        return;
    }
    {
        int dt;
        for (dt = SM_DEVICE_CUDA; dt <= SM_DEVICE_CUDA_HOST; ++dt) {
            sm_device dev;
            const int64_t shape[2] = {8, 5};
            sm_tensor t = NULL, v = NULL, u = NULL;
            int versioned;
            dev.type = dt;
            dev.index = 0;
            for (versioned = 0; versioned <= 1; ++versioned) {
                void* m = NULL;
                void *pv = NULL, *pu = NULL;
                float a[40], b[40];
                int32_t d1 = 1;
                live_mem m0;
                CTX("GPU round trip device type %d (%s)", dt, versioned ? "versioned" : "legacy");
                EXPECT_OK(sm_arange(0, 1, 40, SM_FLOAT32, dev, &t));
                EXPECT_OK(sm_view(t, shape, 2, &u));
                sm_tensor_release(t);
                EXPECT_OK(sm_flip(u, &d1, 1, &v));
                sm_tensor_release(u);
                u = NULL;
                EXPECT_OK(sm_synchronize(dev)); /* pinned memory is read by the host below */
                m0 = mem_now(dev);
                EXPECT_OK(sm_to_dlpack(v, versioned, &m));
                check_exported_fields(v, m, versioned, 0);
                EXPECT_OK(sm_from_dlpack(m, versioned, &u));
                EXPECT_OK(sm_data_ptr(v, &pv));
                EXPECT_OK(sm_data_ptr(u, &pu));
                EXPECT(pv == pu);
                EXPECT_OK(sm_copy_to_host(v, a, sizeof a));
                EXPECT_OK(sm_inplace_scalar(u, SM_OP_ADD, 1.0, 0.0));
                EXPECT_OK(sm_synchronize(dev));
                EXPECT_OK(sm_copy_to_host(v, b, sizeof b));
                EXPECT(b[0] == a[0] + 1 && b[39] == a[39] + 1);
                sm_tensor_release(v);
                /* Our own export comes back as a view of the same storage. */
                EXPECT_EQ_I64(mem_now(dev).storages, m0.storages);
                sm_tensor_release(u);
                EXPECT_EQ_I64(mem_now(dev).storages, m0.storages - 1);
            }
        }
    }
}

int main(void)
{
    int64_t h0 = live_tensor_handles();
    live_mem m0 = mem_now(k_cpu), m1;

    test_export_every_dtype_and_layout();
    test_export_lifetime();
    test_export_normalize();
    test_import_fields();
    test_import_deleter_after_last_view();
    test_import_read_only();
    test_import_refusals();
    test_round_trip();
    test_stack_refused();
    test_gpu_devices();

    CTX("end: everything released");
    EXPECT_EQ_I64(live_tensor_handles(), h0);
    m1 = mem_now(k_cpu);
    EXPECT_EQ_I64(m1.storages, m0.storages);
    EXPECT_EQ_I64(m1.allocated, m0.allocated);

    if (g_failures) {
        fprintf(stderr, "test_dlpack: %d of %d checks FAILED\n", g_failures, g_checks);
        return 1;
    }
    printf("test_dlpack: all %d checks passed\n", g_checks);
    return 0;
}
