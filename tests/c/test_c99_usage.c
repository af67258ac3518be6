/*
 * Strict C99 use of the public API: the parts of the header a C caller meets
 * first and that C++ tests would not exercise the same way.
 *  - struct sm_memory_stats and its typedef sm_memory_stats_t, struct_size
 *  - sm_device passed and returned by value (compound literals)
 *  - sm_slice with SM_SLICE_NONE and negative steps (views, Python's rules)
 *  - sm_split / sm_chunk into an array of handles
 *  - the stack of views: LIFO invalidation after sm_stack_pop_to
 *  - NULL, released and forged handles: SM_ERR_INVALID_HANDLE, never a crash
 *  - sm_status_string for every code
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stridemem.h"

static int g_failures = 0;

#define EXPECT(cond)                                                                \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);     \
            ++g_failures;                                                           \
        }                                                                           \
    } while (0)

#define EXPECT_STATUS(call, want)                                                   \
    do {                                                                            \
        sm_status st_ = (call);                                                     \
        if (st_ != (want)) {                                                        \
            fprintf(stderr, "%s:%d: %s -> %s (%d), expected %s; last error: %s\n",  \
                    __FILE__, __LINE__, #call, sm_status_string(st_), (int)st_,     \
                    sm_status_string(want), sm_last_error());                       \
            ++g_failures;                                                           \
        }                                                                           \
    } while (0)

#define EXPECT_OK(call) EXPECT_STATUS(call, SM_OK)

static const sm_device k_cpu = {SM_DEVICE_CPU, 0};

/* Reads a 1-D float32 tensor (at most 64 elements) into out; returns numel. */
static int64_t read_f32(sm_tensor t, float* out)
{
    int64_t n = -1;
    EXPECT_OK(sm_numel(t, &n));
    if (n < 0 || n > 64) return -1;
    EXPECT_OK(sm_copy_to_host(t, out, (size_t)n * sizeof(float)));
    return n;
}

/* ------------------------------------------------------------------------ */

static void test_memory_stats(void)
{
    struct sm_memory_stats s;   /* the struct tag ...     */
    sm_memory_stats_t before;   /* ... and its typedef     */
    sm_memory_stats_t partial;
    const int64_t shape[1] = {1 << 18}; /* 1 MiB of float32 */
    sm_tensor t = NULL;
    unsigned char* bytes;
    size_t i, cut;

    memset(&before, 0, sizeof before);
    before.struct_size = (uint32_t)sizeof(sm_memory_stats_t);
    EXPECT_OK(sm_memory_stats(k_cpu, &before));
    EXPECT(before.allocated_bytes >= 0);
    EXPECT(before.reserved_bytes >= before.allocated_bytes);

    EXPECT_OK(sm_empty(shape, 1, SM_FLOAT32, k_cpu, &t));
    memset(&s, 0, sizeof s);
    s.struct_size = (uint32_t)sizeof s;
    EXPECT_OK(sm_memory_stats(k_cpu, &s));
    EXPECT(s.allocated_bytes >= before.allocated_bytes + ((int64_t)1 << 20));
    EXPECT(s.peak_allocated_bytes >= s.allocated_bytes);
    EXPECT(s.num_allocs >= before.num_allocs + 1);
    EXPECT(s.active_storages >= 1);
    EXPECT(s.active_views >= 1);
    EXPECT(s.requested_bytes >= ((int64_t)1 << 20));

    /* After a reset the peak restarts from the current value. */
    EXPECT_OK(sm_reset_peak_stats(k_cpu));
    s = before; /* the tag and the typedef are one type */
    memset(&s, 0, sizeof s);
    s.struct_size = (uint32_t)sizeof s;
    EXPECT_OK(sm_memory_stats(k_cpu, &s));
    EXPECT(s.peak_allocated_bytes == s.allocated_bytes);

    /* An older, shorter struct: fields past struct_size are not written. */
    cut = offsetof(sm_memory_stats_t, peak_allocated_bytes);
    memset(&partial, 0x5a, sizeof partial);
    partial.struct_size = (uint32_t)cut;
    EXPECT_OK(sm_memory_stats(k_cpu, &partial));
    EXPECT(partial.allocated_bytes == s.allocated_bytes);
    bytes = (unsigned char*)&partial;
    for (i = cut; i < sizeof partial; ++i) {
        if (bytes[i] != 0x5a) {
            fprintf(stderr, "sm_memory_stats wrote byte %lu past struct_size %lu\n",
                    (unsigned long)i, (unsigned long)cut);
            ++g_failures;
            break;
        }
    }

    EXPECT_OK(sm_tensor_release(t));
    EXPECT_STATUS(sm_memory_stats(k_cpu, NULL), SM_ERR_INVALID_ARGUMENT);
    {
        char summary[2048];
        summary[0] = '\0';
        EXPECT_OK(sm_memory_summary(k_cpu, summary, sizeof summary, NULL));
        EXPECT(strlen(summary) > 0 && strlen(summary) < sizeof summary);
    }
}

/* ------------------------------------------------------------------------ */

static void test_device_by_value(void)
{
    const int64_t shape[2] = {2, 3};
    sm_device got = {-1, -1};
    sm_tensor t = NULL, none = NULL;
    int32_t ncuda = -1;

    EXPECT_OK(sm_zeros(shape, 2, SM_INT16, (sm_device){SM_DEVICE_CPU, 0}, &t));
    EXPECT_OK(sm_device_of(t, &got));
    EXPECT(got.type == SM_DEVICE_CPU && got.index == 0);
    EXPECT(got.type == k_cpu.type && got.index == k_cpu.index);
    EXPECT_OK(sm_tensor_release(t));

    /* A device type that does not exist is refused, and out stays NULL. */
    EXPECT(sm_zeros(shape, 2, SM_INT16, (sm_device){42, 0}, &none) != SM_OK);
    EXPECT(none == NULL);
    EXPECT(strlen(sm_last_error()) > 0);

    /* With no usable GPU a CUDA tensor is SM_ERR_DEVICE, with a message. */
    EXPECT_OK(sm_cuda_device_count(&ncuda));
    EXPECT(ncuda >= 0);
    if (ncuda == 0) {
        EXPECT_STATUS(sm_zeros(shape, 2, SM_INT16, (sm_device){SM_DEVICE_CUDA, 0}, &none),
                      SM_ERR_DEVICE);
        EXPECT(none == NULL);
        EXPECT(strlen(sm_last_error()) > 0);
    } else {
        EXPECT_STATUS(sm_zeros(shape, 2, SM_INT16, (sm_device){SM_DEVICE_CUDA, ncuda}, &none),
                      SM_ERR_DEVICE);
        EXPECT(none == NULL);
    }
}

/* ------------------------------------------------------------------------ */

typedef struct slice_case {
    int64_t start, stop, step;
    int64_t n;          /* expected length   */
    float first;        /* expected values: first, first + delta, ... */
    float delta;
} slice_case;

static void test_negative_slices(void)
{
    static const slice_case cases[] = {
        {SM_SLICE_NONE, SM_SLICE_NONE, -1, 10, 9, -1}, /* a[::-1]      */
        {SM_SLICE_NONE, SM_SLICE_NONE, -3, 4, 9, -3},  /* a[::-3]      */
        {7, SM_SLICE_NONE, -2, 4, 7, -2},              /* a[7::-2]     */
        {-2, SM_SLICE_NONE, -1, 9, 8, -1},             /* a[-2::-1]    */
        {SM_SLICE_NONE, 2, -1, 7, 9, -1},              /* a[:2:-1]     */
        {100, -100, -4, 3, 9, -4},                     /* a[100:-100:-4] clamps */
        {SM_SLICE_NONE, -3, -1, 2, 9, -1},             /* a[:-3:-1]    */
        {2, 5, -1, 0, 0, 0},                           /* a[2:5:-1] is empty */
        {SM_SLICE_NONE, SM_SLICE_NONE, 2, 5, 0, 2},    /* a[::2]       */
    };
    sm_tensor a = NULL, s = NULL;
    void* base = NULL;
    void* p = NULL;
    size_t k;
    int same = -1;

    EXPECT_OK(sm_arange(0.0, 1.0, 10, SM_FLOAT32, k_cpu, &a));
    EXPECT_OK(sm_data_ptr(a, &base));
    for (k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const slice_case* c = &cases[k];
        int64_t shape = -1, stride = 0, offset = -1, n, i;
        float vals[64];
        s = NULL;
        EXPECT_OK(sm_slice(a, 0, c->start, c->stop, c->step, &s));
        if (s == NULL) {
            fprintf(stderr, "  (slice case %lu)\n", (unsigned long)k);
            continue;
        }
        EXPECT_OK(sm_shape(s, &shape, 1));
        EXPECT_OK(sm_strides(s, &stride, 1));
        EXPECT_OK(sm_storage_offset(s, &offset));
        EXPECT_OK(sm_same_storage(a, s, &same));
        EXPECT(shape == c->n);
        EXPECT(same == 1);
        if (c->n > 0) {
            EXPECT(stride == c->step);
            EXPECT(offset == (int64_t)c->first);
            EXPECT_OK(sm_data_ptr(s, &p));
            EXPECT((char*)p == (char*)base + (ptrdiff_t)c->first * (ptrdiff_t)sizeof(float));
        }
        n = read_f32(s, vals);
        EXPECT(n == c->n);
        for (i = 0; i < n && i < 64; ++i) {
            if (vals[i] != c->first + (float)i * c->delta) {
                fprintf(stderr, "slice case %lu: element %ld is %g, expected %g\n",
                        (unsigned long)k, (long)i, (double)vals[i],
                        (double)(c->first + (float)i * c->delta));
                ++g_failures;
                break;
            }
        }
        EXPECT_OK(sm_tensor_release(s));
    }

    /* A negative-stride view is written through like any other. */
    s = NULL;
    EXPECT_OK(sm_slice(a, 0, SM_SLICE_NONE, SM_SLICE_NONE, -2, &s)); /* 9, 7, 5, 3, 1 */
    EXPECT_OK(sm_inplace_scalar(s, SM_OP_NEG, 0.0, 0.0));
    {
        float vals[64];
        int64_t i, n = read_f32(a, vals);
        EXPECT(n == 10);
        for (i = 0; i < n && i < 10; ++i)
            EXPECT(vals[i] == (i % 2 ? -(float)i : (float)i));
    }
    EXPECT_OK(sm_tensor_release(s));

    /* step 0 is an invalid argument, and out is not written. */
    s = NULL;
    EXPECT_STATUS(sm_slice(a, 0, SM_SLICE_NONE, SM_SLICE_NONE, 0, &s), SM_ERR_INVALID_ARGUMENT);
    EXPECT(s == NULL);
    EXPECT_OK(sm_tensor_release(a));
}

/* ------------------------------------------------------------------------ */

static void test_split(void)
{
    const int64_t shape[2] = {3, 10};
    sm_tensor a = NULL, parts[4] = {NULL, NULL, NULL, NULL}, flat = NULL;
    int32_t count = -1, k;
    int64_t offsets[4] = {-1, -1, -1, -1};
    int same = -1;
    static const int64_t want_size[3] = {4, 4, 2};
    static const int64_t want_off[3] = {0, 4, 8};

    EXPECT_OK(sm_arange(0.0, 1.0, 30, SM_FLOAT32, k_cpu, &flat));
    EXPECT_OK(sm_view(flat, shape, 2, &a));
    EXPECT_OK(sm_tensor_release(flat));

    /* First ask how many, then fetch them. */
    EXPECT_OK(sm_split(a, 4, 1, NULL, 0, &count));
    EXPECT(count == 3);
    count = -1;
    EXPECT(sm_split(a, 4, 1, parts, 2, &count) != SM_OK); /* capacity too small */
    EXPECT(parts[0] == NULL && parts[1] == NULL && count == -1);
    EXPECT_OK(sm_split(a, 4, -1, parts, 4, &count));
    EXPECT(count == 3);
    EXPECT(parts[3] == NULL);
    for (k = 0; k < 3 && k < count; ++k) {
        int64_t dims[2] = {-1, -1};
        float vals[64];
        sm_tensor row = NULL;
        int64_t n, i;
        EXPECT_OK(sm_shape(parts[k], dims, 2));
        EXPECT_OK(sm_storage_offset(parts[k], &offsets[k]));
        EXPECT_OK(sm_same_storage(a, parts[k], &same));
        EXPECT(dims[0] == 3 && dims[1] == want_size[k]);
        EXPECT(offsets[k] == want_off[k]);
        EXPECT(same == 1);
        /* row 2 of part k: 20 + want_off[k], ... */
        EXPECT_OK(sm_select(parts[k], 0, 2, &row));
        n = read_f32(row, vals);
        EXPECT(n == want_size[k]);
        for (i = 0; i < n; ++i) EXPECT(vals[i] == (float)(20 + want_off[k] + i));
        EXPECT_OK(sm_tensor_release(row));
    }
    for (k = 0; k < 4; ++k) EXPECT_OK(sm_tensor_release(parts[k]));

    /* chunk: ceil(10 / 4) = 3 per view, so 4 views of 3, 3, 3, 1. */
    memset(parts, 0, sizeof parts);
    count = -1;
    EXPECT_OK(sm_chunk(a, 4, 1, parts, 4, &count));
    EXPECT(count == 4);
    for (k = 0; k < count && k < 4; ++k) {
        int64_t dims[2] = {-1, -1};
        EXPECT_OK(sm_shape(parts[k], dims, 2));
        EXPECT(dims[1] == (k < 3 ? 3 : 1));
        EXPECT_OK(sm_tensor_release(parts[k]));
    }
    EXPECT_OK(sm_tensor_release(a));
}

/* ------------------------------------------------------------------------ */

static void test_stack_lifo(void)
{
    const int64_t shape[1] = {16};
    const int64_t big[1] = {4096};
    sm_stack s = NULL;
    sm_tensor keep = NULL, t1 = NULL, t2 = NULL, view = NULL, again = NULL, none = NULL;
    int64_t mark = -1, used = -1, cap = -1, used_at_mark = -1, n = -1, off = -1;
    float vals[64];

    EXPECT_OK(sm_stack_create(k_cpu, 4096, &s));
    EXPECT_OK(sm_stack_used(s, &used, &cap));
    EXPECT(used == 0 && cap == 4096);

    EXPECT_OK(sm_stack_push(s, shape, 1, SM_FLOAT32, &keep));
    EXPECT_OK(sm_inplace_scalar(keep, SM_OP_FILL, 7.0, 0.0));
    EXPECT_OK(sm_stack_mark(s, &mark));
    EXPECT_OK(sm_stack_used(s, &used_at_mark, &cap));
    EXPECT(used_at_mark >= 16 * 4);

    EXPECT_OK(sm_stack_push(s, shape, 1, SM_FLOAT32, &t1));
    EXPECT_OK(sm_stack_push(s, shape, 1, SM_FLOAT32, &t2));
    EXPECT_OK(sm_storage_offset(t2, &off));
    EXPECT(off * 4 % SM_STACK_ALIGNMENT == 0);
    EXPECT_OK(sm_narrow(t2, 0, 4, 8, &view));
    EXPECT_OK(sm_inplace_scalar(t1, SM_OP_FILL, 1.0, 0.0));

    /* Past capacity: out of memory, and nothing changes. */
    EXPECT_OK(sm_stack_used(s, &used, &cap));
    EXPECT_STATUS(sm_stack_push(s, big, 1, SM_FLOAT32, &none), SM_ERR_OUT_OF_MEMORY);
    EXPECT(none == NULL);
    {
        int64_t used2 = -1;
        EXPECT_OK(sm_stack_used(s, &used2, &cap));
        EXPECT(used2 == used);
    }

    /* Pop: the tensors pushed after the mark (and their views) go stale. */
    EXPECT_OK(sm_stack_pop_to(s, mark));
    EXPECT_OK(sm_stack_used(s, &used, &cap));
    EXPECT(used == used_at_mark);
    EXPECT_STATUS(sm_numel(t1, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_numel(t2, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_numel(view, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_inplace_scalar(t1, SM_OP_FILL, 3.0, 0.0), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_copy_to_host(t2, vals, sizeof vals), SM_ERR_INVALID_HANDLE);
    EXPECT(strlen(sm_last_error()) > 0);

    /* A new push reuses the region; the stale handles stay stale. */
    EXPECT_OK(sm_stack_push(s, shape, 1, SM_FLOAT32, &again));
    EXPECT_OK(sm_inplace_scalar(again, SM_OP_FILL, 5.0, 0.0));
    EXPECT_STATUS(sm_numel(t1, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_inplace_scalar(t1, SM_OP_FILL, 3.0, 0.0), SM_ERR_INVALID_HANDLE);
    EXPECT(read_f32(again, vals) == 16 && vals[0] == 5.0f && vals[15] == 5.0f);

    /* The tensor below the mark is untouched and valid. */
    EXPECT(read_f32(keep, vals) == 16 && vals[0] == 7.0f && vals[15] == 7.0f);

    /* Release still works on the stale handles, once. */
    EXPECT_OK(sm_tensor_release(view));
    EXPECT_OK(sm_tensor_release(t2));
    EXPECT_OK(sm_tensor_release(t1));
    EXPECT_STATUS(sm_tensor_release(t1), SM_ERR_INVALID_HANDLE);
    EXPECT_OK(sm_tensor_release(again));

    /* Releasing the stack leaves pushed tensors valid (they pin the buffer). */
    EXPECT_OK(sm_stack_release(s));
    EXPECT(read_f32(keep, vals) == 16 && vals[3] == 7.0f);
    EXPECT_STATUS(sm_stack_mark(s, &mark), SM_ERR_INVALID_HANDLE);
    EXPECT_OK(sm_tensor_release(keep));
    EXPECT_OK(sm_stack_release(NULL));
}

/* ------------------------------------------------------------------------ */

static void test_bad_handles(void)
{
    const sm_tensor forged = (sm_tensor)(uintptr_t)0xdeadbeef;
    const sm_storage forged_storage = (sm_storage)(uintptr_t)0xdeadbeef;
    const sm_stack forged_stack = (sm_stack)(uintptr_t)0xdeadbeef;
    const int64_t shape[1] = {4};
    sm_tensor t = NULL, out = NULL;
    sm_storage st = NULL;
    int64_t n = -1;
    int32_t nd = -1;
    int same = -1;

    /* NULL */
    EXPECT_STATUS(sm_numel(NULL, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_transpose(NULL, 0, 1, &out), SM_ERR_INVALID_HANDLE);
    EXPECT(out == NULL);
    EXPECT_STATUS(sm_storage_size(NULL, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_stack_mark(NULL, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_OK(sm_tensor_release(NULL));
    EXPECT_OK(sm_storage_release(NULL));
    EXPECT_OK(sm_stack_release(NULL));
    EXPECT(n == -1);

    /* Forged */
    EXPECT_STATUS(sm_numel(forged, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_ndim(forged, &nd), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_transpose(forged, 0, 1, &out), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_inplace_scalar(forged, SM_OP_ZERO, 0.0, 0.0), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_tensor_retain(forged), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_tensor_release(forged), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_storage_size(forged_storage, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_storage_release(forged_storage), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_stack_push(forged_stack, shape, 1, SM_FLOAT32, &out), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_stack_release(forged_stack), SM_ERR_INVALID_HANDLE);
    EXPECT(out == NULL && n == -1 && nd == -1);
    EXPECT(strlen(sm_last_error()) > 0);

    /* A real tensor next to a forged one. */
    EXPECT_OK(sm_zeros(shape, 1, SM_FLOAT32, k_cpu, &t));
    EXPECT_STATUS(sm_same_storage(t, forged, &same), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_copy_into(t, forged), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_copy_into(forged, t), SM_ERR_INVALID_HANDLE);
    EXPECT(same == -1);
    /* A NULL out-parameter is an argument error, not a handle error. */
    EXPECT_STATUS(sm_numel(t, NULL), SM_ERR_INVALID_ARGUMENT);

    /* Released: a storage handle and a tensor handle both go stale. */
    EXPECT_OK(sm_tensor_storage(t, &st));
    EXPECT_OK(sm_storage_release(st));
    EXPECT_STATUS(sm_storage_size(st, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_storage_release(st), SM_ERR_INVALID_HANDLE);
    EXPECT_OK(sm_tensor_retain(t));
    EXPECT_OK(sm_tensor_release(t)); /* one owner left */
    EXPECT_OK(sm_numel(t, &n));
    EXPECT(n == 4);
    EXPECT_OK(sm_tensor_release(t)); /* the last one */
    EXPECT_STATUS(sm_numel(t, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_STATUS(sm_tensor_release(t), SM_ERR_INVALID_HANDLE);

    /* A new tensor must not revive the old handle value. */
    out = NULL;
    EXPECT_OK(sm_zeros(shape, 1, SM_FLOAT32, k_cpu, &out));
    if (out == t) {
        fprintf(stderr, "a new tensor reused a released handle value\n");
        ++g_failures;
    }
    EXPECT_STATUS(sm_numel(t, &n), SM_ERR_INVALID_HANDLE);
    EXPECT_OK(sm_tensor_release(out));
}

/* ------------------------------------------------------------------------ */

static void test_status_strings(void)
{
    static const sm_status codes[] = {
        SM_OK, SM_ERR_INVALID_ARGUMENT, SM_ERR_INVALID_HANDLE, SM_ERR_OUT_OF_MEMORY,
        SM_ERR_SHAPE, SM_ERR_OUT_OF_BOUNDS, SM_ERR_DTYPE, SM_ERR_DEVICE, SM_ERR_OVERLAP,
        SM_ERR_OVERFLOW, SM_ERR_UNSUPPORTED, SM_ERR_CUDA, SM_ERR_INTERNAL, SM_ERR_READ_ONLY};
    const size_t n = sizeof codes / sizeof codes[0];
    size_t i, j;
    const char* unknown;

    /* The values are frozen. */
    for (i = 0; i < n; ++i) EXPECT(codes[i] == (sm_status)i);
    for (i = 0; i < n; ++i) {
        const char* s = sm_status_string(codes[i]);
        EXPECT(s != NULL && s[0] != '\0');
        if (s == NULL) continue;
        for (j = 0; j < i; ++j) {
            const char* o = sm_status_string(codes[j]);
            if (o != NULL && strcmp(s, o) == 0) {
                fprintf(stderr, "status %lu and %lu share the string \"%s\"\n",
                        (unsigned long)i, (unsigned long)j, s);
                ++g_failures;
            }
        }
    }
    /* Codes a later version may add, and nonsense, still get a string. */
    unknown = sm_status_string(9999);
    EXPECT(unknown != NULL && unknown[0] != '\0');
    unknown = sm_status_string(-1);
    EXPECT(unknown != NULL && unknown[0] != '\0');
    unknown = sm_status_string(INT32_MIN);
    EXPECT(unknown != NULL);
}

/* ------------------------------------------------------------------------ */

int main(void)
{
    int64_t live_t = -1, live_s = -1, live_st = -1;
    test_status_strings();
    test_memory_stats();
    test_device_by_value();
    test_negative_slices();
    test_split();
    test_stack_lifo();
    test_bad_handles();
    EXPECT_OK(sm_debug_live_handles(&live_t, &live_s, &live_st));
    EXPECT(live_t == 0 && live_s == 0 && live_st == 0);
    if (live_t || live_s || live_st)
        fprintf(stderr, "live handles: %ld tensors, %ld storages, %ld stacks\n", (long)live_t,
                (long)live_s, (long)live_st);
    if (g_failures) {
        fprintf(stderr, "test_c99_usage: %d failure(s)\n", g_failures);
        return 1;
    }
    printf("test_c99_usage: OK\n");
    return 0;
}
