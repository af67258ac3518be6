/*
 * What the datatypes of stridemem_mpi.h are, case by case (the random
 * views of test_mpi_views.c check that they move the right bytes; this
 * checks the promises about their form and the edges):
 *  - the element type of every dtype, and its size;
 *  - a contiguous view is one MPI_Type_contiguous block (size-1 dims
 *    dropped, flipped-contiguous dims merged), a column one hvector of single
 *    elements, a sub-block one hvector of runs; 0-d and size-0 views;
 *  - dims of more than INT_MAX elements (an expanded view, a long contiguous
 *    or flipped byte run) get a type of the right size and bounds;
 *  - flipped 1-byte dims, whose byte stride is -1 (Open MPI reads an extent
 *    of -1 as "the type's own extent"), pack in the right order;
 *  - the exact overlap check of receives: layouts that no cheap rule settles
 *    (interleaved strides), with a bitmap and with a sorted offset list,
 *    each way round, and a layout too large to settle;
 *  - a receive into an interleaved (non-overlapping) view writes exactly its
 *    elements; a message needs the same dtype and element count on both
 *    sides, not the same shape (a [4, 6] block arrives in a [24] tensor and
 *    in a transposed [6, 4] view in row-major order of the sender's index).
 * Local checks run on rank 0; the messages go between ranks 0 and 1.
 */
#include <mpi.h>

#include "mpi_test_util.h"

static const sm_device k_cpu = {SM_DEVICE_CPU, 0};

/* The type's constructor and its integers and addresses (contents). */
typedef struct type_form {
    int combiner;
    int ints[8];
    MPI_Aint addrs[4];
    MPI_Datatype inner; /* the first inner type; predefined ones need no freeing */
} type_form;

static type_form form_of(MPI_Datatype t)
{
    type_form f;
    int ni = 0, na = 0, nt = 0;
    MPI_Datatype types[4];
    memset(&f, 0, sizeof f);
    f.inner = MPI_DATATYPE_NULL;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &f.combiner);
    if (f.combiner == MPI_COMBINER_NAMED || ni > 8 || na > 4 || nt > 4) return f;
    MPI_Type_get_contents(t, ni, na, nt, f.ints, f.addrs, types);
    if (nt > 0) f.inner = types[0];
    {
        int k;
        for (k = 1; k < nt; ++k) {
            int a, b, c, comb;
            MPI_Type_get_envelope(types[k], &a, &b, &c, &comb);
            if (comb != MPI_COMBINER_NAMED) MPI_Type_free(&types[k]);
        }
    }
    return f;
}

static void drop_form(type_form* f)
{
    int a, b, c, comb;
    if (f->inner == MPI_DATATYPE_NULL) return;
    MPI_Type_get_envelope(f->inner, &a, &b, &c, &comb);
    if (comb != MPI_COMBINER_NAMED) MPI_Type_free(&f->inner);
}

static MPI_Datatype view_type_or_fail(sm_tensor t, sm_mpi_intent intent, void** buf)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    char why[512];
    sm_status st = sm_mpi_view_type(t, intent, buf, &type, why, sizeof why);
    if (st != SM_OK) FAIL("sm_mpi_view_type -> %s: %s", sm_mpi_status_string(st), why);
    return type;
}

static void check_element_types(void)
{
    /* Filled at run time: MPI's handles need not be compile-time constants. */
    MPI_Datatype expected[SM_NUM_DTYPES];
    int d;
    expected[SM_BOOL] = MPI_UINT8_T;
    expected[SM_UINT8] = MPI_UINT8_T;
    expected[SM_INT8] = MPI_INT8_T;
    expected[SM_INT16] = MPI_INT16_T;
    expected[SM_INT32] = MPI_INT32_T;
    expected[SM_INT64] = MPI_INT64_T;
    expected[SM_FLOAT16] = MPI_UINT16_T;
    expected[SM_BFLOAT16] = MPI_UINT16_T;
    expected[SM_FLOAT32] = MPI_FLOAT;
    expected[SM_FLOAT64] = MPI_DOUBLE;
    expected[SM_UINT16] = MPI_UINT16_T;
    expected[SM_UINT32] = MPI_UINT32_T;
    expected[SM_UINT64] = MPI_UINT64_T;
    expected[SM_COMPLEX64] = MPI_C_FLOAT_COMPLEX;
    expected[SM_COMPLEX128] = MPI_C_DOUBLE_COMPLEX;
    for (d = 0; d < SM_NUM_DTYPES; ++d) {
        MPI_Datatype got = MPI_DATATYPE_NULL;
        int size = 0;
        EXPECT_STATUS(sm_mpi_element_type(d, &got, NULL, 0), SM_OK);
        if (got != expected[d]) FAIL("sm_mpi_element_type(%s) is not the documented type",
                                     sm_dtype_name(d));
        MPI_Type_size(got, &size);
        if ((size_t)size != sm_dtype_size(d)) FAIL("%s: MPI size %d, dtype size %zu",
                                                   sm_dtype_name(d), size, sm_dtype_size(d));
    }
}

/* A contiguous view is one contiguous block; size-1 dims never matter;
 * dims merge through negative strides; a column is one vector. */
static void check_forms(void)
{
    int64_t s2[2] = {4, 5}, s3[3] = {1, 5, 1}, s86[2] = {8, 6}, s234[3] = {2, 3, 4}, z[2] = {3, 0};
    sm_tensor a = NULL, b = NULL, c = NULL, v = NULL, w = NULL, zero = NULL, scalar = NULL;
    MPI_Datatype t;
    type_form f;
    void* buf = NULL;
    int size = -1;

    SM_OK_OR_RETURN(sm_zeros(s2, 2, SM_FLOAT32, k_cpu, &a));
    t = view_type_or_fail(a, SM_MPI_RECV, &buf);
    f = form_of(t);
    EXPECT_EQ_I64(f.combiner, MPI_COMBINER_CONTIGUOUS);
    EXPECT_EQ_I64(f.ints[0], 20);
    EXPECT_TRUE(f.inner == MPI_FLOAT);
    drop_form(&f);
    sm_mpi_type_free(&t, NULL, 0);
    EXPECT_TRUE(t == MPI_DATATYPE_NULL);

    SM_OK_OR_RETURN(sm_zeros(s3, 3, SM_FLOAT32, k_cpu, &b)); /* [1, 5, 1] */
    t = view_type_or_fail(b, SM_MPI_RECV, &buf);
    f = form_of(t);
    EXPECT_EQ_I64(f.combiner, MPI_COMBINER_CONTIGUOUS);
    EXPECT_EQ_I64(f.ints[0], 5);
    drop_form(&f);
    sm_mpi_type_free(&t, NULL, 0);

    /* Flipped in both dims: strides (-5, -1) merge into one dim of 20,
     * stride -1: one hvector of single elements going down. */
    {
        int32_t both[2] = {0, 1};
        SM_OK_OR_RETURN(sm_flip(a, both, 2, &v));
        t = view_type_or_fail(v, SM_MPI_RECV, &buf);
        f = form_of(t);
        EXPECT_EQ_I64(f.combiner, MPI_COMBINER_HVECTOR);
        EXPECT_EQ_I64(f.ints[0], 20);
        EXPECT_EQ_I64(f.ints[1], 1);
        EXPECT_EQ_I64(f.addrs[0], -4);
        drop_form(&f);
        sm_mpi_type_free(&t, NULL, 0);
        sm_tensor_release(v);
        v = NULL;
    }

    /* Column 2 of an [8, 6] double matrix: MPI_Type_vector(8, 1, 6)'s form. */
    SM_OK_OR_RETURN(sm_zeros(s86, 2, SM_FLOAT64, k_cpu, &c));
    SM_OK_OR_RETURN(sm_select(c, 1, 2, &v));
    t = view_type_or_fail(v, SM_MPI_RECV, &buf);
    f = form_of(t);
    EXPECT_EQ_I64(f.combiner, MPI_COMBINER_HVECTOR);
    EXPECT_EQ_I64(f.ints[0], 8);
    EXPECT_EQ_I64(f.ints[1], 1);
    EXPECT_EQ_I64(f.addrs[0], 48);
    EXPECT_TRUE(f.inner == MPI_DOUBLE);
    drop_form(&f);
    sm_mpi_type_free(&t, NULL, 0);
    sm_tensor_release(v);
    v = NULL;

    /* Rows 1..4, columns 1..3: one vector of 4 runs of 3. */
    SM_OK_OR_RETURN(sm_narrow(c, 0, 1, 4, &w));
    SM_OK_OR_RETURN(sm_narrow(w, 1, 1, 3, &v));
    t = view_type_or_fail(v, SM_MPI_RECV, &buf);
    f = form_of(t);
    EXPECT_EQ_I64(f.combiner, MPI_COMBINER_HVECTOR);
    EXPECT_EQ_I64(f.ints[0], 4);
    EXPECT_EQ_I64(f.ints[1], 3);
    EXPECT_EQ_I64(f.addrs[0], 48);
    EXPECT_TRUE(f.inner == MPI_DOUBLE);
    drop_form(&f);
    sm_mpi_type_free(&t, NULL, 0);
    sm_tensor_release(v);
    sm_tensor_release(w);
    v = w = NULL;

    /* A permuted [2, 3, 4] (shape 4, 2, 3, strides 1, 12, 4): the last two
     * dims are one run of 6 elements 4 apart (12 = 3 * 4), so two nested
     * hvectors: 4 of stride 1 element around 6 of stride 4 elements. */
    {
        int32_t perm[3] = {2, 0, 1};
        sm_tensor base = NULL;
        type_form g;
        SM_OK_OR_RETURN(sm_zeros(s234, 3, SM_FLOAT32, k_cpu, &base));
        SM_OK_OR_RETURN(sm_permute(base, perm, 3, &v));
        t = view_type_or_fail(v, SM_MPI_RECV, &buf);
        f = form_of(t);
        EXPECT_EQ_I64(f.combiner, MPI_COMBINER_HVECTOR);
        EXPECT_EQ_I64(f.ints[0], 4);
        EXPECT_EQ_I64(f.addrs[0], 4);
        g = form_of(f.inner);
        EXPECT_EQ_I64(g.combiner, MPI_COMBINER_HVECTOR);
        EXPECT_EQ_I64(g.ints[0], 6);
        EXPECT_EQ_I64(g.ints[1], 1);
        EXPECT_EQ_I64(g.addrs[0], 16);
        EXPECT_TRUE(g.inner == MPI_FLOAT);
        drop_form(&g);
        drop_form(&f);
        sm_mpi_type_free(&t, NULL, 0);
        sm_tensor_release(v);
        sm_tensor_release(base);
        v = NULL;
    }

    /* 0-d: one element; size 0: nothing (and MPI never reads buf). */
    {
        float one = 3.5f;
        SM_OK_OR_RETURN(sm_from_host(&one, NULL, 0, SM_FLOAT32, k_cpu, &scalar));
        t = view_type_or_fail(scalar, SM_MPI_RECV, &buf);
        f = form_of(t);
        EXPECT_EQ_I64(f.combiner, MPI_COMBINER_CONTIGUOUS);
        EXPECT_EQ_I64(f.ints[0], 1);
        drop_form(&f);
        sm_mpi_type_free(&t, NULL, 0);
    }
    SM_OK_OR_RETURN(sm_zeros(z, 2, SM_COMPLEX128, k_cpu, &zero));
    t = view_type_or_fail(zero, SM_MPI_RECV, &buf);
    MPI_Type_size(t, &size);
    EXPECT_EQ_I64(size, 0);
    sm_mpi_type_free(&t, NULL, 0);

    sm_tensor_release(a);
    sm_tensor_release(b);
    sm_tensor_release(c);
    sm_tensor_release(zero);
    sm_tensor_release(scalar);
}

/* Dims beyond INT_MAX: type sizes and bounds (types only: nothing is sent,
 * and sm_mpi_layout_type needs no memory). */
static void check_large_counts(void)
{
    const int64_t big = (int64_t)INT_MAX + 4; /* 2^31 + 3 */
    int64_t shape1[1], strides1[1], shape2[2], strides2[2];
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Count size = 0;
    MPI_Aint lb = 0, extent = 0;
    char why[256];

    /* An expanded float32 view of 2^31 + 3 elements (stride 0). */
    {
        float one = 1.0f;
        int64_t eshape[1];
        sm_tensor x = NULL, e = NULL;
        void* buf = NULL;
        eshape[0] = big;
        SM_OK_OR_RETURN(sm_from_host(&one, NULL, 0, SM_FLOAT32, k_cpu, &x));
        SM_OK_OR_RETURN(sm_expand(x, eshape, 1, &e));
        EXPECT_STATUS(sm_mpi_view_type(e, SM_MPI_SEND, &buf, &t, why, sizeof why), SM_OK);
        MPI_Type_size_x(t, &size);
        MPI_Type_get_true_extent(t, &lb, &extent);
        EXPECT_EQ_I64(size, big * 4);
        EXPECT_EQ_I64(lb, 0);
        EXPECT_EQ_I64(extent, 4);
        sm_mpi_type_free(&t, NULL, 0);
        sm_tensor_release(e);
        sm_tensor_release(x);
    }
    /* A contiguous run of 2^31 + 3 bytes, forward and flipped (the flipped
     * one also goes through the -1 byte stride pairs). */
    shape1[0] = big;
    strides1[0] = 1;
    EXPECT_STATUS(sm_mpi_layout_type(shape1, strides1, 1, SM_UINT8, SM_MPI_RECV, &t, why, sizeof why),
                  SM_OK);
    MPI_Type_size_x(t, &size);
    MPI_Type_get_true_extent(t, &lb, &extent);
    EXPECT_EQ_I64(size, big);
    EXPECT_EQ_I64(lb, 0);
    EXPECT_EQ_I64(extent, big);
    sm_mpi_type_free(&t, NULL, 0);
    strides1[0] = -1;
    EXPECT_STATUS(sm_mpi_layout_type(shape1, strides1, 1, SM_INT8, SM_MPI_RECV, &t, why, sizeof why),
                  SM_OK);
    MPI_Type_size_x(t, &size);
    MPI_Type_get_true_extent(t, &lb, &extent);
    EXPECT_EQ_I64(size, big);
    EXPECT_EQ_I64(lb, -(big - 1));
    EXPECT_EQ_I64(extent, big);
    sm_mpi_type_free(&t, NULL, 0);
    /* [2, 2^31 + 3] int16 rows 2^31 + 5 apart: runs too long for a block
     * length, so the inner dim is split too. */
    shape2[0] = 2;
    shape2[1] = big;
    strides2[0] = big + 2;
    strides2[1] = 1;
    EXPECT_STATUS(sm_mpi_layout_type(shape2, strides2, 2, SM_INT16, SM_MPI_RECV, &t, why, sizeof why),
                  SM_OK);
    MPI_Type_size_x(t, &size);
    MPI_Type_get_true_extent(t, &lb, &extent);
    EXPECT_EQ_I64(size, 2 * big * 2);
    EXPECT_EQ_I64(lb, 0);
    EXPECT_EQ_I64(extent, (big + 2 + big) * 2);
    sm_mpi_type_free(&t, NULL, 0);
}

/* Packs the view with its send type; compares with the expected bytes. */
static void expect_pack(sm_tensor v, const unsigned char* want, int n, const char* what)
{
    void* buf = NULL;
    MPI_Datatype t = view_type_or_fail(v, SM_MPI_SEND, &buf);
    unsigned char out[64];
    int pos = 0, i;
    if (t == MPI_DATATYPE_NULL) return;
    MPI_Pack(buf, 1, t, out, (int)sizeof out, &pos, MPI_COMM_WORLD);
    if (pos != n) FAIL("%s: packed %d bytes, expected %d", what, pos, n);
    for (i = 0; i < n && i < pos; ++i) {
        if (out[i] != want[i]) {
            FAIL("%s: packed byte %d is %d, expected %d", what, i, out[i], want[i]);
            break;
        }
    }
    sm_mpi_type_free(&t, NULL, 0);
}

/* Flipped 1-byte dims: byte stride -1. */
static void check_minus_one_byte_stride(void)
{
    unsigned char data[8] = {10, 11, 12, 13, 14, 15, 16, 17};
    int64_t n5[1] = {5}, n4[1] = {4}, n8[1] = {8};
    int32_t dim0 = 0;
    sm_dtype dtypes[3] = {SM_UINT8, SM_INT8, SM_BOOL};
    int k;
    {
        /* Whether this MPI has the flaw worked around (information only). */
        MPI_Datatype raw;
        unsigned char out[4];
        int pos = 0;
        MPI_Type_create_hvector(4, 1, -1, MPI_UINT8_T, &raw);
        MPI_Type_commit(&raw);
        MPI_Pack(data + 3, 1, raw, out, 4, &pos, MPI_COMM_WORLD);
        printf("this MPI packs MPI_Type_create_hvector(4, 1, -1, MPI_UINT8_T) as %d %d %d %d "
               "(right: 13 12 11 10)%s\n",
               out[0], out[1], out[2], out[3],
               out[0] == 13 && out[1] == 12 ? "" : ": the flaw stridemem_mpi.h works around");
        MPI_Type_free(&raw);
    }
    for (k = 0; k < 3; ++k) {
        sm_tensor x5 = NULL, x4 = NULL, f5 = NULL, f4 = NULL, x8 = NULL, o = NULL;
        const unsigned char rev5[5] = {14, 13, 12, 11, 10}, rev4[4] = {13, 12, 11, 10};
        /* as_strided [3, 2] strides [-1, 1] from offset 2: overlapping
         * rows (12 13) (11 12) (10 11): blocks of 2 going down by 1 byte. */
        const unsigned char rows[6] = {12, 13, 11, 12, 10, 11};
        int64_t sh[2] = {3, 2}, st[2] = {-1, 1};
        SM_OK_OR_RETURN(sm_from_host(data, n5, 1, dtypes[k], k_cpu, &x5));
        SM_OK_OR_RETURN(sm_from_host(data, n4, 1, dtypes[k], k_cpu, &x4));
        SM_OK_OR_RETURN(sm_from_host(data, n8, 1, dtypes[k], k_cpu, &x8));
        SM_OK_OR_RETURN(sm_flip(x5, &dim0, 1, &f5));
        SM_OK_OR_RETURN(sm_flip(x4, &dim0, 1, &f4));
        SM_OK_OR_RETURN(sm_as_strided(x8, sh, st, 2, 2, &o));
        expect_pack(f5, rev5, 5, "flipped 5 bytes (odd count)");
        expect_pack(f4, rev4, 4, "flipped 4 bytes (even count)");
        expect_pack(o, rows, 6, "rows of 2 bytes, -1 byte apart");
        sm_tensor_release(x5);
        sm_tensor_release(x4);
        sm_tensor_release(x8);
        sm_tensor_release(f5);
        sm_tensor_release(f4);
        sm_tensor_release(o);
    }
}

/* Layouts no cheap rule settles: the exact walk decides. */
static void check_overlap_walk(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    char why[512];
    /* (3, 2) strides (2, 3): offsets 0 3 2 5 4 7, distinct (bitmap). */
    int64_t sh32[2] = {3, 2}, st23[2] = {2, 3};
    /* (3, 4) strides (3, 2): (2, 0) and (0, 3) both land on 6 (bitmap). */
    int64_t sh34[2] = {3, 4}, st32[2] = {3, 2};
    /* The same two far apart: a sorted list of offsets decides. */
    const int64_t K = (int64_t)1 << 35;
    int64_t st23k[2], st32k[2];
    /* Too large to settle within SM_MPI_OVERLAP_CHECK_MAX_BYTES. */
    int64_t shbig[3] = {3, 2, (int64_t)1 << 22}, stbig[3] = {(int64_t)1 << 28, 3 * ((int64_t)1 << 27), 1};
    st23k[0] = 2 * K;
    st23k[1] = 3 * K;
    st32k[0] = 3 * K;
    st32k[1] = 2 * K;

    EXPECT_STATUS(sm_mpi_layout_type(sh32, st23, 2, SM_INT32, SM_MPI_RECV, &t, why, sizeof why), SM_OK);
    sm_mpi_type_free(&t, NULL, 0);
    EXPECT_STATUS(sm_mpi_layout_type(sh34, st32, 2, SM_INT32, SM_MPI_RECV, &t, why, sizeof why),
                  SM_ERR_OVERLAP);
    EXPECT_TRUE(strstr(why, "overlap") != NULL);
    EXPECT_TRUE(t == MPI_DATATYPE_NULL);
    EXPECT_STATUS(sm_mpi_layout_type(sh34, st32, 2, SM_INT32, SM_MPI_SEND, &t, why, sizeof why), SM_OK);
    sm_mpi_type_free(&t, NULL, 0);
    EXPECT_STATUS(sm_mpi_layout_type(sh32, st23k, 2, SM_UINT8, SM_MPI_RECV, &t, why, sizeof why), SM_OK);
    sm_mpi_type_free(&t, NULL, 0);
    EXPECT_STATUS(sm_mpi_layout_type(sh34, st32k, 2, SM_UINT8, SM_MPI_RECV, &t, why, sizeof why),
                  SM_ERR_OVERLAP);
    EXPECT_STATUS(sm_mpi_layout_type(shbig, stbig, 3, SM_INT8, SM_MPI_RECV, &t, why, sizeof why),
                  SM_ERR_UNSUPPORTED);
    EXPECT_TRUE(strstr(why, "SM_MPI_OVERLAP_CHECK_MAX_BYTES") != NULL);
    EXPECT_TRUE(t == MPI_DATATYPE_NULL);
    EXPECT_STATUS(sm_mpi_layout_type(shbig, stbig, 3, SM_INT8, SM_MPI_SEND, &t, why, sizeof why), SM_OK);
    sm_mpi_type_free(&t, NULL, 0);
}

/* Messages between ranks 0 and 1. */
static void check_messages(void)
{
    char why[512];
    if (g_rank == 1) {
        /* Six values for the interleaved view; then a [4, 4] block of an
         * [8, 6] matrix, twice. */
        int32_t six[6] = {10, 11, 12, 13, 14, 15};
        int64_t n6[1] = {6}, s86[2] = {8, 6};
        float m[48];
        int i;
        sm_tensor t6 = NULL, mat = NULL, cols = NULL, block = NULL;
        for (i = 0; i < 48; ++i) m[i] = (float)i;
        SM_OK_OR_RETURN(sm_from_host(six, n6, 1, SM_INT32, k_cpu, &t6));
        EXPECT_STATUS(sm_mpi_send(t6, 0, 1, MPI_COMM_WORLD, why, sizeof why), SM_OK);
        /* Rows 2..5, columns 1..4: a [4, 4] view with row stride 6. */
        SM_OK_OR_RETURN(sm_from_host(m, s86, 2, SM_FLOAT32, k_cpu, &mat));
        SM_OK_OR_RETURN(sm_narrow(mat, 1, 1, 4, &cols));
        SM_OK_OR_RETURN(sm_narrow(cols, 0, 2, 4, &block));
        EXPECT_STATUS(sm_mpi_send(block, 0, 2, MPI_COMM_WORLD, why, sizeof why), SM_OK);
        EXPECT_STATUS(sm_mpi_send(block, 0, 3, MPI_COMM_WORLD, why, sizeof why), SM_OK);
        sm_tensor_release(t6);
        sm_tensor_release(mat);
        sm_tensor_release(cols);
        sm_tensor_release(block);
    } else if (g_rank == 0) {
        /* Into (3, 2) strides (2, 3) of an 8-element storage of -1. */
        int32_t fill[8] = {-1, -1, -1, -1, -1, -1, -1, -1}, got[8];
        const int32_t want[8] = {10, -1, 12, 11, 14, 13, -1, 15};
        int64_t n8[1] = {8}, sh[2] = {3, 2}, st[2] = {2, 3}, n16[1] = {16}, s44[2] = {4, 4};
        float flat[16], tr[16];
        int i, j;
        sm_tensor storage = NULL, inter = NULL, f16 = NULL, sq = NULL, sqt = NULL;
        SM_OK_OR_RETURN(sm_from_host(fill, n8, 1, SM_INT32, k_cpu, &storage));
        SM_OK_OR_RETURN(sm_as_strided(storage, sh, st, 2, 0, &inter));
        EXPECT_STATUS(sm_mpi_recv(inter, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, why, sizeof why),
                      SM_OK);
        sm_copy_to_host(storage, got, sizeof got);
        if (memcmp(got, want, sizeof want) != 0) {
            FAIL("interleaved receive: storage %d %d %d %d %d %d %d %d", got[0], got[1], got[2],
                 got[3], got[4], got[5], got[6], got[7]);
        }
        /* The [4, 4] block (rows 2..5, columns 1..4 of 0..47 row-major)
         * into a [16] tensor, then into the transpose of a [4, 4]. */
        SM_OK_OR_RETURN(sm_empty(n16, 1, SM_FLOAT32, k_cpu, &f16));
        EXPECT_STATUS(sm_mpi_recv(f16, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, why, sizeof why), SM_OK);
        sm_copy_to_host(f16, flat, sizeof flat);
        for (i = 0; i < 4; ++i)
            for (j = 0; j < 4; ++j)
                if (flat[i * 4 + j] != (float)((2 + i) * 6 + 1 + j))
                    FAIL("flat[%d] = %g, expected %d", i * 4 + j, flat[i * 4 + j], (2 + i) * 6 + 1 + j);
        SM_OK_OR_RETURN(sm_zeros(s44, 2, SM_FLOAT32, k_cpu, &sq));
        SM_OK_OR_RETURN(sm_transpose(sq, 0, 1, &sqt));
        EXPECT_STATUS(sm_mpi_recv(sqt, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, why, sizeof why), SM_OK);
        /* sqt[i][j] = block[i][j], so sq (row-major) holds the transpose. */
        sm_copy_to_host(sq, tr, sizeof tr);
        for (i = 0; i < 4; ++i)
            for (j = 0; j < 4; ++j)
                if (tr[j * 4 + i] != (float)((2 + i) * 6 + 1 + j))
                    FAIL("sq[%d][%d] = %g, expected %d", j, i, tr[j * 4 + i], (2 + i) * 6 + 1 + j);
        sm_tensor_release(storage);
        sm_tensor_release(inter);
        sm_tensor_release(f16);
        sm_tensor_release(sq);
        sm_tensor_release(sqt);
    }
}

int main(int argc, char** argv)
{
    int rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    if (g_rank == 0) {
        check_element_types();
        check_forms();
        check_large_counts();
        check_minus_one_byte_stride();
        check_overlap_walk();
    }
    check_messages();
    rc = finish_test("test_mpi_types");
    MPI_Finalize();
    return rc;
}
