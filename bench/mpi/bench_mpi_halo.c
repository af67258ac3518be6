/*
 * Column halo exchange through stridemem_mpi.h's datatypes, against packing
 * and against sending the same bytes contiguously (bench/RESULTS.md,
 * "MPI views (issue 28)").
 *
 * The ranks form a periodic ring along x (a 1 x P decomposition of a 2-D
 * domain). Each rank holds an (n + 2) x (n + 2) block of doubles, row-major,
 * with a ring of ghost cells. One exchange: every rank sends its first
 * interior column (1..n of column 1) west and its last (column n) east, and
 * receives its neighbours' into its ghost columns 0 and n + 1: 2 messages of
 * n doubles out and 2 in per rank, each column a strided view (stride n + 2).
 *
 * Methods, each timed on the same blocks, interleaved iteration by iteration
 * (the order rotates), so the ratios come from one run:
 *   contiguous       MPI_Isend/Irecv of n contiguous doubles (interior rows
 *                    into ghost rows): the same bytes and messages, no
 *                    datatype: the physical limit of this exchange
 *   datatype         sm_mpi_isend / sm_mpi_irecv of the column views: the
 *                    type built and freed per message, as a user writes it
 *   datatype-reused  the column types built once (sm_mpi_view_type), then
 *                    MPI_Isend/Irecv with them
 *   mpi-vector       MPI_Type_vector(n, 1, n + 2, MPI_DOUBLE) built by hand:
 *                    what hand-written MPI code sends
 *   pack             sm_contiguous(column) + MPI_Isend; MPI_Irecv into a
 *                    fresh [n] tensor + sm_copy_into(ghost column view)
 *   (--shapes) the column as other type shapes, built once by hand:
 *                    MPI_Type_contiguous(n) of MPI_DOUBLE resized to the row
 *                    pitch; MPI_Type_create_hindexed_block with n
 *                    displacements; an hvector of MPI_Type_contiguous(1):
 *                    whether Open MPI packs any shape faster than a vector
 *   strided copies only   no message: the two columns gathered (sm_contiguous)
 *                    and scattered into the ghost columns (sm_copy_into) on
 *                    each rank, what touching the strided elements costs
 *                    before any MPI (each element of a column of a 4096-wide
 *                    block sits on a page of its own)
 * One iteration = barrier, then the exchange timed on every rank; its time is
 * the slowest rank's (MPI_Allreduce MAX, outside the timed part). Reported:
 * the median over the iterations, and each method's median over
 * contiguous's. Every method is checked once per size before timing: the
 * ghost columns must hold the neighbours' columns.
 *
 * Options: --sizes 64,256,1024,4096 (n), --iters N (300), --warmup N (20),
 * --hugepages (madvise(MADV_HUGEPAGE) on each block before it is first
 * touched, where transparent huge pages are "madvise": a column of a
 * 4096-wide block then crosses a 2 MiB page every 64 elements instead of a
 * 4 KiB page at every element), --quick (sizes 8,64, 5 iterations, 1
 * warm-up: the ctest run that keeps this program working), --shapes (the
 * three other type shapes above).
 */
#define _DEFAULT_SOURCE /* madvise */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stridemem.h"
#include "stridemem_mpi.h"

enum {
    CONTIG, DATATYPE, DATATYPE_REUSED, MPI_VECTOR, PACK, COPY_ONLY,
    /* --shapes: the same column as other MPI type shapes */
    SHAPE_RESIZED, SHAPE_HINDEXED, SHAPE_HVEC_CONTIG,
    NUM_METHODS
};
static const char* const k_names[NUM_METHODS] = {
    "contiguous", "datatype", "datatype-reused", "mpi-vector", "pack", "strided copies only",
    "shape: contiguous(n) of resized double", "shape: hindexed_block", "shape: hvector of contiguous(1)"};
static const sm_device k_cpu = {SM_DEVICE_CPU, 0};
static int g_rank = 0, g_size = 1, g_hugepages = 0;

#define CHECK_SM(call)                                                                       \
    do {                                                                                     \
        sm_status st_ = (call);                                                              \
        if (st_ != SM_OK) {                                                                  \
            fprintf(stderr, "[rank %d] %s:%d: %s -> %s: %s\n", g_rank, __FILE__, __LINE__, #call, \
                    sm_mpi_status_string(st_), sm_last_error());                             \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                    \
        }                                                                                    \
    } while (0)

/* The block and its views, and what each method keeps between iterations. */
typedef struct halo {
    int64_t n;
    sm_tensor block;                  /* (n + 2) x (n + 2) float64 */
    sm_tensor send_w, send_e;         /* interior columns 1 and n, rows 1..n */
    sm_tensor ghost_w, ghost_e;       /* ghost columns 0 and n + 1, rows 1..n */
    double *row_first, *row_last;     /* interior rows 1 and n, columns 1..n */
    double *ghost_top, *ghost_bottom; /* ghost rows 0 and n + 1, columns 1..n */
    void *buf_sw, *buf_se, *buf_gw, *buf_ge;
    MPI_Datatype t_sw, t_se, t_gw, t_ge; /* datatype-reused */
    MPI_Datatype vec;                    /* mpi-vector */
    MPI_Datatype shapes[3];              /* --shapes */
    int west, east;
} halo;

static sm_tensor column(sm_tensor block, int64_t n, int64_t col)
{
    sm_tensor rows = NULL, out = NULL;
    CHECK_SM(sm_narrow(block, 0, 1, n, &rows));
    CHECK_SM(sm_select(rows, 1, col, &out));
    sm_tensor_release(rows);
    return out;
}

static void halo_init(halo* h, int64_t n)
{
    int64_t shape[2], i, j;
    double* data = NULL;
    char why[256];
    memset(h, 0, sizeof *h);
    h->n = n;
    shape[0] = shape[1] = n + 2;
    CHECK_SM(sm_empty(shape, 2, SM_FLOAT64, k_cpu, &h->block));
    CHECK_SM(sm_data_ptr(h->block, (void**)&data));
    if (g_hugepages) {
        /* The whole 2 MiB pages inside the block, before the first write. */
        const uintptr_t huge = (uintptr_t)2 << 20;
        uintptr_t lo = ((uintptr_t)data + huge - 1) & ~(huge - 1);
        uintptr_t hi = ((uintptr_t)(data + (n + 2) * (n + 2))) & ~(huge - 1);
        if (hi > lo && madvise((void*)lo, hi - lo, MADV_HUGEPAGE) != 0 && g_rank == 0) {
            perror("madvise(MADV_HUGEPAGE)");
        }
    }
    /* Interior: values that name the rank and the cell; ghosts: -1. */
    for (i = 0; i < n + 2; ++i)
        for (j = 0; j < n + 2; ++j)
            data[i * (n + 2) + j] = (i == 0 || j == 0 || i == n + 1 || j == n + 1)
                                        ? -1.0
                                        : (double)g_rank * 1e9 + (double)(i * (n + 2) + j);
    h->send_w = column(h->block, n, 1);
    h->send_e = column(h->block, n, n);
    h->ghost_w = column(h->block, n, 0);
    h->ghost_e = column(h->block, n, n + 1);
    h->row_first = data + (n + 2) + 1;
    h->row_last = data + n * (n + 2) + 1;
    h->ghost_top = data + 1;
    h->ghost_bottom = data + (n + 1) * (n + 2) + 1;
    if (sm_mpi_view_type(h->send_w, SM_MPI_SEND, &h->buf_sw, &h->t_sw, why, sizeof why) != SM_OK ||
        sm_mpi_view_type(h->send_e, SM_MPI_SEND, &h->buf_se, &h->t_se, why, sizeof why) != SM_OK ||
        sm_mpi_view_type(h->ghost_w, SM_MPI_RECV, &h->buf_gw, &h->t_gw, why, sizeof why) != SM_OK ||
        sm_mpi_view_type(h->ghost_e, SM_MPI_RECV, &h->buf_ge, &h->t_ge, why, sizeof why) != SM_OK) {
        fprintf(stderr, "[rank %d] %s\n", g_rank, why);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Type_vector((int)n, 1, (int)(n + 2), MPI_DOUBLE, &h->vec);
    MPI_Type_commit(&h->vec);
    {
        MPI_Datatype pitch, one;
        MPI_Aint* displs = (MPI_Aint*)malloc(sizeof(MPI_Aint) * (size_t)n);
        for (i = 0; i < n; ++i) displs[i] = (MPI_Aint)(i * (n + 2) * 8);
        MPI_Type_create_resized(MPI_DOUBLE, 0, (MPI_Aint)((n + 2) * 8), &pitch);
        MPI_Type_contiguous((int)n, pitch, &h->shapes[0]);
        MPI_Type_create_hindexed_block((int)n, 1, displs, MPI_DOUBLE, &h->shapes[1]);
        MPI_Type_contiguous(1, MPI_DOUBLE, &one);
        MPI_Type_create_hvector((int)n, 1, (MPI_Aint)((n + 2) * 8), one, &h->shapes[2]);
        for (i = 0; i < 3; ++i) MPI_Type_commit(&h->shapes[i]);
        MPI_Type_free(&pitch);
        MPI_Type_free(&one);
        free(displs);
    }
    h->west = (g_rank + g_size - 1) % g_size;
    h->east = (g_rank + 1) % g_size;
}

static void halo_free(halo* h)
{
    sm_mpi_type_free(&h->t_sw, NULL, 0);
    sm_mpi_type_free(&h->t_se, NULL, 0);
    sm_mpi_type_free(&h->t_gw, NULL, 0);
    sm_mpi_type_free(&h->t_ge, NULL, 0);
    MPI_Type_free(&h->vec);
    MPI_Type_free(&h->shapes[0]);
    MPI_Type_free(&h->shapes[1]);
    MPI_Type_free(&h->shapes[2]);
    sm_tensor_release(h->send_w);
    sm_tensor_release(h->send_e);
    sm_tensor_release(h->ghost_w);
    sm_tensor_release(h->ghost_e);
    sm_tensor_release(h->block);
}

/* Tags: a message travelling west is tag 0, east tag 1. So the west ghost
 * receives what travelled east (tag 1) from the west neighbour. */
static void exchange(halo* h, int method)
{
    MPI_Request req[4];
    int n = (int)h->n;
    char why[256];
    switch (method) {
        case CONTIG:
            MPI_Irecv(h->ghost_top, n, MPI_DOUBLE, h->west, 1, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(h->ghost_bottom, n, MPI_DOUBLE, h->east, 0, MPI_COMM_WORLD, &req[1]);
            MPI_Isend(h->row_first, n, MPI_DOUBLE, h->west, 0, MPI_COMM_WORLD, &req[2]);
            MPI_Isend(h->row_last, n, MPI_DOUBLE, h->east, 1, MPI_COMM_WORLD, &req[3]);
            MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
            break;
        case DATATYPE:
            if (sm_mpi_irecv(h->ghost_w, h->west, 1, MPI_COMM_WORLD, &req[0], why, sizeof why) ||
                sm_mpi_irecv(h->ghost_e, h->east, 0, MPI_COMM_WORLD, &req[1], why, sizeof why) ||
                sm_mpi_isend(h->send_w, h->west, 0, MPI_COMM_WORLD, &req[2], why, sizeof why) ||
                sm_mpi_isend(h->send_e, h->east, 1, MPI_COMM_WORLD, &req[3], why, sizeof why)) {
                fprintf(stderr, "[rank %d] %s\n", g_rank, why);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
            break;
        case DATATYPE_REUSED:
            MPI_Irecv(h->buf_gw, 1, h->t_gw, h->west, 1, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(h->buf_ge, 1, h->t_ge, h->east, 0, MPI_COMM_WORLD, &req[1]);
            MPI_Isend(h->buf_sw, 1, h->t_sw, h->west, 0, MPI_COMM_WORLD, &req[2]);
            MPI_Isend(h->buf_se, 1, h->t_se, h->east, 1, MPI_COMM_WORLD, &req[3]);
            MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
            break;
        case MPI_VECTOR:
        case SHAPE_RESIZED:
        case SHAPE_HINDEXED:
        case SHAPE_HVEC_CONTIG: {
            MPI_Datatype t = method == MPI_VECTOR ? h->vec : h->shapes[method - SHAPE_RESIZED];
            MPI_Irecv(h->buf_gw, 1, t, h->west, 1, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(h->buf_ge, 1, t, h->east, 0, MPI_COMM_WORLD, &req[1]);
            MPI_Isend(h->buf_sw, 1, t, h->west, 0, MPI_COMM_WORLD, &req[2]);
            MPI_Isend(h->buf_se, 1, t, h->east, 1, MPI_COMM_WORLD, &req[3]);
            MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
            break;
        }
        case COPY_ONLY: {
            sm_tensor pw = NULL, pe = NULL;
            CHECK_SM(sm_contiguous(h->send_w, SM_CONTIGUOUS, &pw, NULL));
            CHECK_SM(sm_contiguous(h->send_e, SM_CONTIGUOUS, &pe, NULL));
            CHECK_SM(sm_copy_into(h->ghost_e, pw));
            CHECK_SM(sm_copy_into(h->ghost_w, pe));
            sm_tensor_release(pw);
            sm_tensor_release(pe);
            break;
        }
        default: { /* PACK */
            int64_t shape[1];
            sm_tensor pw = NULL, pe = NULL, rw = NULL, re = NULL;
            void *dpw, *dpe, *drw, *dre;
            shape[0] = h->n;
            CHECK_SM(sm_empty(shape, 1, SM_FLOAT64, k_cpu, &rw));
            CHECK_SM(sm_empty(shape, 1, SM_FLOAT64, k_cpu, &re));
            CHECK_SM(sm_data_ptr(rw, &drw));
            CHECK_SM(sm_data_ptr(re, &dre));
            MPI_Irecv(drw, n, MPI_DOUBLE, h->west, 1, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(dre, n, MPI_DOUBLE, h->east, 0, MPI_COMM_WORLD, &req[1]);
            CHECK_SM(sm_contiguous(h->send_w, SM_CONTIGUOUS, &pw, NULL));
            CHECK_SM(sm_contiguous(h->send_e, SM_CONTIGUOUS, &pe, NULL));
            CHECK_SM(sm_data_ptr(pw, &dpw));
            CHECK_SM(sm_data_ptr(pe, &dpe));
            MPI_Isend(dpw, n, MPI_DOUBLE, h->west, 0, MPI_COMM_WORLD, &req[2]);
            MPI_Isend(dpe, n, MPI_DOUBLE, h->east, 1, MPI_COMM_WORLD, &req[3]);
            MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
            CHECK_SM(sm_copy_into(h->ghost_w, rw));
            CHECK_SM(sm_copy_into(h->ghost_e, re));
            sm_tensor_release(pw);
            sm_tensor_release(pe);
            sm_tensor_release(rw);
            sm_tensor_release(re);
            break;
        }
    }
}

/* After one exchange by `method` on ghosts reset to -1, the ghosts hold the
 * neighbours' columns (or, for contiguous, the neighbours' rows). */
static int verify(halo* h, int method)
{
    int64_t n = h->n, i;
    double* data = NULL;
    int bad = 0, all = 0;
    CHECK_SM(sm_data_ptr(h->block, (void**)&data));
    for (i = 1; i <= n; ++i) {
        data[i * (n + 2)] = data[i * (n + 2) + n + 1] = -1.0;
        data[i] = data[(n + 1) * (n + 2) + i] = -1.0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    exchange(h, method);
    for (i = 1; i <= n && !bad; ++i) {
        double w, e;
        if (method == CONTIG) {
            w = data[i];                      /* row 0 <- west's row n */
            e = data[(n + 1) * (n + 2) + i];  /* row n + 1 <- east's row 1 */
            bad = w != (double)h->west * 1e9 + (double)(n * (n + 2) + i) ||
                  e != (double)h->east * 1e9 + (double)((n + 2) + i);
        } else {
            w = data[i * (n + 2)];            /* column 0 <- west's column n */
            e = data[i * (n + 2) + n + 1];    /* column n + 1 <- east's column 1 */
            bad = w != (double)h->west * 1e9 + (double)(i * (n + 2) + n) ||
                  e != (double)h->east * 1e9 + (double)(i * (n + 2) + 1);
        }
    }
    if (bad) fprintf(stderr, "[rank %d] %s, n %lld: wrong ghost values\n", g_rank, k_names[method], (long long)n);
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

static int cmp_double(const void* a, const void* b);

/* What building a column's type costs, on rank 0 alone (the others wait at
 * a barrier): sm_mpi_view_type + sm_mpi_type_free, against MPI_Type_vector +
 * commit + free by hand. The median of 21 batches of 2000. */
static void type_cost(void)
{
    int64_t shape[2] = {1026, 1026};
    sm_tensor t = NULL, col = NULL;
    double ours[21], hand[21];
    int b, i;
    if (g_rank == 0) {
        CHECK_SM(sm_empty(shape, 2, SM_FLOAT64, k_cpu, &t));
        col = column(t, 1024, 1);
        for (b = 0; b < 21; ++b) {
            double t0 = MPI_Wtime();
            for (i = 0; i < 2000; ++i) {
                void* buf;
                MPI_Datatype ty;
                sm_mpi_view_type(col, SM_MPI_SEND, &buf, &ty, NULL, 0);
                sm_mpi_type_free(&ty, NULL, 0);
            }
            ours[b] = (MPI_Wtime() - t0) / 2000;
            t0 = MPI_Wtime();
            for (i = 0; i < 2000; ++i) {
                MPI_Datatype ty;
                MPI_Type_vector(1024, 1, 1026, MPI_DOUBLE, &ty);
                MPI_Type_commit(&ty);
                MPI_Type_free(&ty);
            }
            hand[b] = (MPI_Wtime() - t0) / 2000;
        }
        qsort(ours, 21, sizeof(double), cmp_double);
        qsort(hand, 21, sizeof(double), cmp_double);
        printf("type of a column: sm_mpi_view_type + sm_mpi_type_free %.0f ns, MPI_Type_vector + "
               "commit + free by hand %.0f ns (rank 0 alone, median of 21 x 2000)\n",
               ours[10] * 1e9, hand[10] * 1e9);
        sm_tensor_release(col);
        sm_tensor_release(t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

int main(int argc, char** argv)
{
    int64_t sizes[16] = {64, 256, 1024, 4096};
    int nsizes = 4, iters = 300, warmup = 20, a, s, failed = 0, cma = -1, shapes = 0;
    int methods[NUM_METHODS], nmethods = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--quick") == 0) {
            sizes[0] = 8;
            sizes[1] = 64;
            nsizes = 2;
            iters = 5;
            warmup = 1;
        } else if (strcmp(argv[a], "--shapes") == 0) {
            shapes = 1;
        } else if (strcmp(argv[a], "--hugepages") == 0) {
            g_hugepages = 1;
        } else if (strcmp(argv[a], "--iters") == 0 && a + 1 < argc) {
            iters = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--warmup") == 0 && a + 1 < argc) {
            warmup = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--sizes") == 0 && a + 1 < argc) {
            char* p = argv[++a];
            nsizes = 0;
            while (*p && nsizes < 16) {
                sizes[nsizes++] = strtoll(p, &p, 10);
                if (*p == ',') ++p;
            }
        } else {
            if (g_rank == 0) fprintf(stderr, "usage: %s [--sizes n,n,...] [--iters N] [--warmup N] [--hugepages] [--shapes] [--quick]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    for (a = 0; a < NUM_METHODS; ++a)
        if (shapes || a < SHAPE_RESIZED) methods[nmethods++] = a;
    /* 4 ranks on few cores: the library's worker threads would only contend. */
    sm_set_num_threads(1);
    {
        const char* env = getenv("OMPI_MCA_btl_vader_single_copy_mechanism");
        cma = env == NULL ? 1 : strcmp(env, "none") != 0;
    }
    if (g_rank == 0) {
        printf("bench_mpi_halo: %d ranks in a periodic ring, (n+2)^2 float64 blocks, 2 columns out and 2 "
               "in per rank per exchange; median of %d iterations (%d warm-up), each the slowest "
               "rank's time; vader single copy (CMA) %s; blocks on %s pages\n",
               g_size, iters, warmup, cma ? "default (on)" : "off",
               g_hugepages ? "2 MiB (madvise)" : "default");
    }
    type_cost();
    if (g_rank == 0) {
        printf("| n | column bytes | method | median us | p10 us | p90 us | / contiguous | / mpi-vector |\n");
        printf("|---:|---:|---|---:|---:|---:|---:|---:|\n");
    }
    for (s = 0; s < nsizes; ++s) {
        halo h;
        double* times[NUM_METHODS];
        double med[NUM_METHODS];
        int m, it;
        halo_init(&h, sizes[s]);
        for (m = 0; m < NUM_METHODS; ++m) {
            times[m] = (double*)malloc(sizeof(double) * (size_t)(iters > 0 ? iters : 1));
        }
        for (m = 0; m < nmethods; ++m) {
            if (methods[m] != COPY_ONLY) failed |= verify(&h, methods[m]); /* it moves no neighbour's data */
        }
        for (it = -warmup; it < iters; ++it) {
            for (m = 0; m < nmethods; ++m) {
                int method = methods[(m + (it < 0 ? 0 : it)) % nmethods];
                double t0, local, slowest = 0;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                exchange(&h, method);
                local = MPI_Wtime() - t0;
                MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (it >= 0) times[method][it] = slowest;
            }
        }
        for (a = 0; a < nmethods && iters > 0; ++a) {
            m = methods[a];
            qsort(times[m], (size_t)iters, sizeof(double), cmp_double);
            med[m] = times[m][iters / 2];
        }
        for (a = 0; a < nmethods && iters > 0 && g_rank == 0; ++a) {
            m = methods[a];
            printf("| %lld | %lld | %s | %.1f | %.1f | %.1f | %.2f | %.2f |\n", (long long)sizes[s],
                   (long long)sizes[s] * 8, k_names[m], med[m] * 1e6, times[m][iters / 10] * 1e6,
                   times[m][iters - 1 - iters / 10] * 1e6, med[m] / med[CONTIG],
                   med[m] / med[MPI_VECTOR]);
        }
        for (m = 0; m < NUM_METHODS; ++m) free(times[m]);
        halo_free(&h);
    }
    if (g_rank == 0) printf("verification: %s\n", failed ? "FAILED" : "every method delivered the neighbours' columns");
    MPI_Finalize();
    return failed ? 1 : 0;
}
