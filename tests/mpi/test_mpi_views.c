/*
 * Random views of every dtype travel between ranks in place, through the
 * datatypes of stridemem_mpi.h, and arrive equal byte for byte to the
 * sender's view; a receive into a strided view writes its elements and no
 * other byte of its storage.
 *
 * Run by mpirun with 4 ranks. For each dtype and iteration, rank r builds a
 * random view (slices with any step, negative ones included, permutes,
 * flips, selects, narrows, unfolds, diagonals, as_strided, expands, squeezes)
 * over a tensor of random bytes and sends it twice to rank r + 1. Rank r + 1
 * replays the same generator (same seed) to build the very same view
 * itself, so it knows the shape and the bytes to expect, and receives the
 * two messages:
 *   - into a fresh row-major tensor (sm_empty), compared with the sender's
 *     view read out by sm_copy_to_host;
 *   - into a strided view (random memory order of the dims, padding, flipped
 *     dims, a storage offset) of another tensor filled with a sentinel
 *     pattern: the whole storage is read back and must hold the expected
 *     bytes at the view's elements and the sentinel everywhere else.
 * Random bytes make NaNs with payloads, bool bytes other than 0/1 and
 * float16 bit patterns of every kind: they must arrive unchanged.
 * The sender also packs its view with MPI_Pack and its datatype: the packed
 * bytes must equal the view in row-major order (the type map, checked
 * without a message), and MPI_Type_size must equal sm_nbytes.
 *
 * Built twice: as is, and with SM_MPI_MAX_COUNT 3 (mpi.views_split_counts),
 * so that every dim and run longer than 3 goes through the split into
 * chunks that real dims of more than INT_MAX elements take.
 *
 * Options: --iters N (per dtype, default 40; ctest runs 300), --seed S.
 */
#include <mpi.h>

#include "mpi_test_util.h"

static const sm_device k_cpu = {SM_DEVICE_CPU, 0};

/* Appends to a description of how a view was made (printed on failure). */
static void say(char* desc, size_t len, const char* fmt, ...) SM_MPI_IMPL_PRINTF(3, 4);
static void say(char* desc, size_t len, const char* fmt, ...)
{
    size_t used = strlen(desc);
    va_list ap;
    if (used + 1 >= len) return;
    va_start(ap, fmt);
    vsnprintf(desc + used, len - used, fmt, ap);
    va_end(ap);
}

static void say_layout(char* desc, size_t len, sm_tensor t)
{
    int32_t nd = 0, d;
    int64_t shape[SM_MAX_DIMS], strides[SM_MAX_DIMS], off = 0;
    if (sm_ndim(t, &nd) != SM_OK || sm_shape(t, shape, SM_MAX_DIMS) != SM_OK ||
        sm_strides(t, strides, SM_MAX_DIMS) != SM_OK || sm_storage_offset(t, &off) != SM_OK) {
        say(desc, len, " (layout unreadable)");
        return;
    }
    say(desc, len, " => shape [");
    for (d = 0; d < nd; ++d) say(desc, len, "%s%lld", d ? "," : "", (long long)shape[d]);
    say(desc, len, "] strides [");
    for (d = 0; d < nd; ++d) say(desc, len, "%s%lld", d ? "," : "", (long long)strides[d]);
    say(desc, len, "] offset %lld", (long long)off);
}

/* Replaces *t by *next (the new view the op wrote), or keeps *t when the op
 * failed. next is read here, after the op has run (the order in which a
 * call's arguments are evaluated is unspecified). */
static int take(sm_tensor* t, sm_status st, sm_tensor* next, const char* what, const char* desc)
{
    if (st != SM_OK) {
        FAIL("view op %s refused (%s: %s) after:%s", what, sm_status_string(st), sm_last_error(),
             desc);
        return 0;
    }
    sm_tensor_release(*t);
    *t = *next;
    *next = NULL;
    return 1;
}

/* A random view over a new tensor of random bytes, the same on every rank
 * for the same generator state. NULL (and a counted failure) only if the
 * library refuses an op the generator thought valid. */
static sm_tensor make_view(test_rng* r, sm_dtype dtype, char* desc, size_t len)
{
    int64_t shape[SM_MAX_DIMS], strides[SM_MAX_DIMS], numel = 1, i;
    int32_t nd = (int32_t)rng_range(r, 0, 4), d, ops, k;
    size_t es = sm_dtype_size(dtype);
    unsigned char* bytes;
    sm_tensor t = NULL, next = NULL;
    sm_status st;

    desc[0] = '\0';
    for (d = 0; d < nd; ++d) {
        shape[d] = rng_range(r, 0, 24) == 0 ? 0 : rng_range(r, 1, 7);
        numel *= shape[d];
    }
    bytes = (unsigned char*)malloc((size_t)numel * es + 1);
    for (i = 0; i < numel * (int64_t)es; ++i) bytes[i] = (unsigned char)rng_next(r);
    st = sm_from_host(bytes, shape, nd, dtype, k_cpu, &t);
    free(bytes);
    if (st != SM_OK) {
        FAIL("sm_from_host: %s", sm_last_error());
        return NULL;
    }
    say(desc, len, "%s base", sm_dtype_name(dtype));
    say_layout(desc, len, t);

    ops = (int32_t)rng_range(r, 0, 4);
    for (k = 0; k < ops; ++k) {
        int kind = (int)rng_range(r, 0, 10);
        sm_ndim(t, &nd);
        sm_shape(t, shape, SM_MAX_DIMS);
        if (nd == 0 && kind != 8 && kind != 9) continue; /* only as_strided / expand fit a 0-d view */
        d = nd > 0 ? (int32_t)rng_range(r, 0, nd - 1) : 0;
        switch (kind) {
            case 0: { /* slice with any step, Python bounds (clamped, negative, None) */
                static const int64_t steps[6] = {-3, -2, -1, 1, 2, 3};
                int64_t step = steps[rng_range(r, 0, 5)];
                int64_t start = rng_range(r, 0, 3) == 0 ? SM_SLICE_NONE
                                                        : rng_range(r, -shape[d] - 1, shape[d] + 1);
                int64_t stop = rng_range(r, 0, 3) == 0 ? SM_SLICE_NONE
                                                       : rng_range(r, -shape[d] - 1, shape[d] + 1);
                say(desc, len, " | slice(%d, %lld, %lld, %lld)", (int)d, (long long)start,
                    (long long)stop, (long long)step);
                if (!take(&t, sm_slice(t, d, start, stop, step, &next), &next, "slice", desc))
                    goto fail;
                break;
            }
            case 1: { /* permute */
                int32_t perm[SM_MAX_DIMS], j;
                for (j = 0; j < nd; ++j) perm[j] = j;
                for (j = nd - 1; j > 0; --j) {
                    int32_t m = (int32_t)rng_range(r, 0, j), tmp = perm[j];
                    perm[j] = perm[m];
                    perm[m] = tmp;
                }
                say(desc, len, " | permute(");
                for (j = 0; j < nd; ++j) say(desc, len, "%s%d", j ? "," : "", (int)perm[j]);
                say(desc, len, ")");
                if (!take(&t, sm_permute(t, perm, nd, &next), &next, "permute", desc)) goto fail;
                break;
            }
            case 2: { /* flip a nonempty set of dims */
                int32_t dims[SM_MAX_DIMS], n = 0, j;
                for (j = 0; j < nd; ++j)
                    if (rng_range(r, 0, 1)) dims[n++] = j;
                if (n == 0) dims[n++] = d;
                say(desc, len, " | flip(");
                for (j = 0; j < n; ++j) say(desc, len, "%s%d", j ? "," : "", (int)dims[j]);
                say(desc, len, ")");
                if (!take(&t, sm_flip(t, dims, n, &next), &next, "flip", desc)) goto fail;
                break;
            }
            case 3: { /* select, negative indices included */
                int64_t idx;
                if (shape[d] == 0) break;
                idx = rng_range(r, -shape[d], shape[d] - 1);
                say(desc, len, " | select(%d, %lld)", (int)d, (long long)idx);
                if (!take(&t, sm_select(t, d, idx, &next), &next, "select", desc)) goto fail;
                break;
            }
            case 4: { /* narrow, start from either end */
                int64_t start = shape[d] == 0 ? 0 : rng_range(r, 0, shape[d]);
                int64_t length = rng_range(r, 0, shape[d] - start);
                if (start < shape[d] && rng_range(r, 0, 1)) start -= shape[d];
                say(desc, len, " | narrow(%d, %lld, %lld)", (int)d, (long long)start,
                    (long long)length);
                if (!take(&t, sm_narrow(t, d, start, length, &next), &next, "narrow", desc))
                    goto fail;
                break;
            }
            case 5: { /* unfold: windows may overlap (step < size) */
                int64_t size, step;
                if (shape[d] == 0) break;
                size = rng_range(r, 1, shape[d]);
                step = rng_range(r, 1, 3);
                say(desc, len, " | unfold(%d, %lld, %lld)", (int)d, (long long)size,
                    (long long)step);
                if (!take(&t, sm_unfold(t, d, size, step, &next), &next, "unfold", desc))
                    goto fail;
                break;
            }
            case 6: { /* diagonal */
                int32_t d2;
                int64_t off = rng_range(r, -2, 2);
                if (nd < 2) break;
                d2 = (int32_t)((d + rng_range(r, 1, nd - 1)) % nd);
                say(desc, len, " | diagonal(%lld, %d, %d)", (long long)off, (int)d, (int)d2);
                if (!take(&t, sm_diagonal(t, off, d, d2, &next), &next, "diagonal", desc))
                    goto fail;
                break;
            }
            case 7: { /* transpose */
                int32_t d2;
                if (nd < 2) break;
                d2 = (int32_t)rng_range(r, 0, nd - 1);
                say(desc, len, " | transpose(%d, %d)", (int)d, (int)d2);
                if (!take(&t, sm_transpose(t, d, d2, &next), &next, "transpose", desc))
                    goto fail;
                break;
            }
            case 8: { /* as_strided anywhere inside the storage, any stride sign, 0 included */
                int64_t storage_bytes = 0, storage_numel, lo = 0, hi = 0, off;
                int32_t n = (int32_t)rng_range(r, 0, 3), j;
                sm_storage_nbytes(t, &storage_bytes);
                storage_numel = storage_bytes / (int64_t)es;
                for (j = 0; j < n; ++j) {
                    shape[j] = rng_range(r, 1, 4);
                    strides[j] = rng_range(r, -3, 5);
                    if (strides[j] < 0) lo += strides[j] * (shape[j] - 1);
                    else hi += strides[j] * (shape[j] - 1);
                }
                if (storage_numel == 0 || -lo > storage_numel - 1 - hi) break;
                off = rng_range(r, -lo, storage_numel - 1 - hi);
                say(desc, len, " | as_strided([");
                for (j = 0; j < n; ++j) say(desc, len, "%s%lld", j ? "," : "", (long long)shape[j]);
                say(desc, len, "], [");
                for (j = 0; j < n; ++j) say(desc, len, "%s%lld", j ? "," : "", (long long)strides[j]);
                say(desc, len, "], %lld)", (long long)off);
                if (!take(&t, sm_as_strided(t, shape, strides, n, off, &next), &next, "as_strided", desc))
                    goto fail;
                break;
            }
            case 9: { /* expand a new dim: stride 0 (elements repeat: send only) */
                int64_t eshape[SM_MAX_DIMS];
                int32_t at = (int32_t)rng_range(r, 0, nd), j;
                int64_t times = rng_range(r, 2, 3);
                say(desc, len, " | unsqueeze(%d) expand(%lld)", (int)at, (long long)times);
                if (!take(&t, sm_unsqueeze(t, at, &next), &next, "unsqueeze", desc)) goto fail;
                for (j = 0; j <= nd; ++j) eshape[j] = j == at ? times : -1;
                if (!take(&t, sm_expand(t, eshape, nd + 1, &next), &next, "expand", desc))
                    goto fail;
                break;
            }
            default: /* squeeze every size-1 dim */
                say(desc, len, " | squeeze()");
                if (!take(&t, sm_squeeze(t, NULL, 0, &next), &next, "squeeze", desc)) goto fail;
                break;
        }
    }
    say_layout(desc, len, t);
    return t;
fail:
    sm_tensor_release(t);
    return NULL;
}

/* The view's elements in row-major order. */
static unsigned char* host_bytes(sm_tensor t, int64_t* nbytes)
{
    unsigned char* out;
    if (sm_nbytes(t, nbytes) != SM_OK) return NULL;
    out = (unsigned char*)malloc((size_t)*nbytes + 1);
    if (sm_copy_to_host(t, out, (size_t)*nbytes) != SM_OK) {
        FAIL("sm_copy_to_host: %s", sm_last_error());
        free(out);
        return NULL;
    }
    return out;
}

/* MPI_Pack of the view with its datatype gives the view's row-major bytes. */
static void check_pack(sm_tensor view, const char* desc)
{
    void* buf = NULL;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    char why[512];
    int64_t nbytes = 0;
    unsigned char *want = host_bytes(view, &nbytes), *packed;
    int pack_size = 0, pos = 0, type_size = -1;
    sm_status st = sm_mpi_view_type(view, SM_MPI_SEND, &buf, &type, why, sizeof why);
    if (want == NULL) return;
    if (st != SM_OK) {
        FAIL("sm_mpi_view_type(SEND) -> %s: %s; view: %s", sm_mpi_status_string(st), why, desc);
        free(want);
        return;
    }
    MPI_Type_size(type, &type_size);
    if (type_size != nbytes) FAIL("MPI_Type_size %d, sm_nbytes %lld; view: %s", type_size,
                                  (long long)nbytes, desc);
    MPI_Pack_size(1, type, MPI_COMM_WORLD, &pack_size);
    packed = (unsigned char*)malloc((size_t)pack_size + 1);
    MPI_Pack(buf, 1, type, packed, pack_size, &pos, MPI_COMM_WORLD);
    if (pos != nbytes || memcmp(packed, want, (size_t)nbytes) != 0) {
        FAIL("MPI_Pack of the view's datatype differs from its elements (%d of %lld bytes); "
             "view: %s",
             pos, (long long)nbytes, desc);
    }
    free(packed);
    free(want);
    sm_mpi_type_free(&type, NULL, 0);
}

/* A strided target of `shape` inside a 1-D storage of sentinel bytes: the
 * dims in a random memory order, padded, some flipped, at an offset. */
typedef struct strided_target {
    sm_tensor storage; /* 1-D, every byte the sentinel before the receive */
    sm_tensor view;
    int64_t strides[SM_MAX_DIMS];
    int64_t offset;
    int64_t storage_numel;
} strided_target;

static unsigned char sentinel_byte(int64_t i) { return (unsigned char)(i * 131 + 7); }

static int make_target(test_rng* r, const int64_t* shape, int32_t nd, sm_dtype dtype,
                       strided_target* out)
{
    int32_t order[SM_MAX_DIMS], j;
    int64_t running = 1, lead = rng_range(r, 0, 3), tail = rng_range(r, 0, 3), i, total;
    size_t es = sm_dtype_size(dtype);
    unsigned char* bytes;
    memset(out, 0, sizeof *out);
    for (j = 0; j < nd; ++j) order[j] = j;
    for (j = nd - 1; j > 0; --j) {
        int32_t m = (int32_t)rng_range(r, 0, j), tmp = order[j];
        order[j] = order[m];
        order[m] = tmp;
    }
    out->offset = lead;
    for (j = 0; j < nd; ++j) { /* order[0] innermost */
        int32_t dim = order[j];
        int64_t padded = shape[dim] + rng_range(r, 0, 2);
        if (padded < 1) padded = 1;
        out->strides[dim] = running;
        if (rng_range(r, 0, 1) && shape[dim] > 0) {
            out->strides[dim] = -running;
            out->offset += running * (shape[dim] - 1);
        }
        running *= padded;
    }
    total = lead + running + tail;
    out->storage_numel = total;
    bytes = (unsigned char*)malloc((size_t)total * es);
    for (i = 0; i < total * (int64_t)es; ++i) bytes[i] = sentinel_byte(i);
    if (sm_from_host(bytes, &total, 1, dtype, k_cpu, &out->storage) != SM_OK ||
        sm_as_strided(out->storage, shape, out->strides, nd, out->offset, &out->view) != SM_OK) {
        FAIL("strided target: %s", sm_last_error());
        free(bytes);
        sm_tensor_release(out->storage);
        return 0;
    }
    free(bytes);
    return 1;
}

/* The whole storage: expected bytes at the view's elements, the sentinel
 * at every other byte. */
static void check_target(const strided_target* tg, const int64_t* shape, int32_t nd,
                         size_t es, const unsigned char* want, const char* desc)
{
    int64_t nbytes = tg->storage_numel * (int64_t)es, i, numel = 1, k;
    unsigned char* got = (unsigned char*)malloc((size_t)nbytes);
    unsigned char* expect = (unsigned char*)malloc((size_t)nbytes);
    signed char* in_view = (signed char*)calloc((size_t)nbytes, 1);
    int64_t idx[SM_MAX_DIMS];
    int32_t d;
    for (i = 0; i < nbytes; ++i) expect[i] = sentinel_byte(i);
    for (d = 0; d < nd; ++d) {
        numel *= shape[d];
        idx[d] = 0;
    }
    for (k = 0; k < numel; ++k) { /* row-major index k -> storage element p */
        int64_t p = tg->offset;
        for (d = 0; d < nd; ++d) p += idx[d] * tg->strides[d];
        memcpy(expect + p * (int64_t)es, want + k * (int64_t)es, es);
        memset(in_view + p * (int64_t)es, 1, es);
        for (d = nd - 1; d >= 0; --d) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    if (sm_copy_to_host(tg->storage, got, (size_t)nbytes) != SM_OK) {
        FAIL("sm_copy_to_host(storage): %s", sm_last_error());
    } else {
        for (i = 0; i < nbytes; ++i) {
            if (got[i] != expect[i]) {
                FAIL("strided receive: storage byte %lld (%s the view) is 0x%02x, expected "
                     "0x%02x; view: %s",
                     (long long)i, in_view[i] ? "inside" : "OUTSIDE", got[i], expect[i], desc);
                break;
            }
        }
    }
    free(got);
    free(expect);
    free(in_view);
}

int main(int argc, char** argv)
{
    int size = 0, iters = 40, a;
    uint64_t seed = 20261127;
    int32_t dtype;
    long long messages = 0;
    double t0;
    for (a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--iters") == 0) iters = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--seed") == 0) seed = strtoull(argv[a + 1], NULL, 10);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    t0 = MPI_Wtime();
    if (g_rank == 0) {
        printf("test_mpi_views: %d ranks, seed %llu, %d views per dtype, SM_MPI_MAX_COUNT %lld\n",
               size, (unsigned long long)seed, iters, (long long)SM_MPI_MAX_COUNT);
    }
    for (dtype = 0; dtype < SM_NUM_DTYPES; ++dtype) {
        int it;
        for (it = 0; it < iters; ++it) {
            int right = (g_rank + 1) % size, left = (g_rank + size - 1) % size;
            int tag = (dtype * iters + it) * 2;
            char mine_desc[2048], theirs_desc[2048], why[512];
            test_rng rm = rng_seeded(seed, (uint64_t)g_rank, (uint64_t)(dtype * 100000 + it));
            test_rng rt = rng_seeded(seed, (uint64_t)left, (uint64_t)(dtype * 100000 + it));
            test_rng rtarget = rng_seeded(seed ^ 0xABCDEFu, (uint64_t)g_rank,
                                          (uint64_t)(dtype * 100000 + it));
            sm_tensor mine = make_view(&rm, dtype, mine_desc, sizeof mine_desc);
            sm_tensor theirs = make_view(&rt, dtype, theirs_desc, sizeof theirs_desc);
            sm_tensor fresh = NULL;
            strided_target tg;
            MPI_Request req[4];
            int nreq = 0, have_target = 0;
            int64_t shape[SM_MAX_DIMS], want_bytes = 0;
            int32_t nd = 0;
            unsigned char* want = NULL;

            if (mine != NULL) {
                sm_status st;
                check_pack(mine, mine_desc);
                st = sm_mpi_isend(mine, right, tag, MPI_COMM_WORLD, &req[nreq], why, sizeof why);
                if (st == SM_OK) ++nreq;
                else FAIL("sm_mpi_isend -> %s: %s; view: %s", sm_mpi_status_string(st), why, mine_desc);
                st = sm_mpi_isend(mine, right, tag + 1, MPI_COMM_WORLD, &req[nreq], why, sizeof why);
                if (st == SM_OK) ++nreq;
                else FAIL("sm_mpi_isend -> %s: %s; view: %s", sm_mpi_status_string(st), why, mine_desc);
                messages += 2;
            }
            if (theirs != NULL) {
                sm_status st;
                sm_ndim(theirs, &nd);
                sm_shape(theirs, shape, SM_MAX_DIMS);
                want = host_bytes(theirs, &want_bytes);
                if (sm_empty(shape, nd, dtype, k_cpu, &fresh) != SM_OK) {
                    FAIL("sm_empty: %s", sm_last_error());
                } else {
                    st = sm_mpi_irecv(fresh, left, tag, MPI_COMM_WORLD, &req[nreq], why, sizeof why);
                    if (st == SM_OK) ++nreq;
                    else FAIL("sm_mpi_irecv(fresh) -> %s: %s; view: %s", sm_mpi_status_string(st), why,
                              theirs_desc);
                }
                have_target = make_target(&rtarget, shape, nd, dtype, &tg);
                if (have_target) {
                    st = sm_mpi_irecv(tg.view, left, tag + 1, MPI_COMM_WORLD, &req[nreq], why,
                                      sizeof why);
                    if (st == SM_OK) ++nreq;
                    else FAIL("sm_mpi_irecv(strided) -> %s: %s; view: %s", sm_mpi_status_string(st),
                              why, theirs_desc);
                }
            }
            MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
            if (want != NULL && fresh != NULL) {
                int64_t got_bytes = 0;
                unsigned char* got = host_bytes(fresh, &got_bytes);
                if (got != NULL && (got_bytes != want_bytes || memcmp(got, want, (size_t)want_bytes))) {
                    FAIL("fresh receive differs from the sender's view: %s", theirs_desc);
                }
                free(got);
            }
            if (want != NULL && have_target) {
                check_target(&tg, shape, nd, sm_dtype_size(dtype), want, theirs_desc);
            }
            if (have_target) {
                sm_tensor_release(tg.view);
                sm_tensor_release(tg.storage);
            }
            free(want);
            sm_tensor_release(fresh);
            sm_tensor_release(theirs);
            sm_tensor_release(mine);
        }
    }
    {
        int64_t live_t = -1, live_s = -1, live_k = -1;
        sm_debug_live_handles(&live_t, &live_s, &live_k);
        if (live_t != 0 || live_s != 0) FAIL("leaked handles: %lld tensors, %lld storages",
                                              (long long)live_t, (long long)live_s);
    }
    if (g_rank == 0) {
        printf("rank 0: %lld messages sent in %.2f s\n", messages, MPI_Wtime() - t0);
    }
    a = finish_test("test_mpi_views");
    MPI_Finalize();
    return a;
}
