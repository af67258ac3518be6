/*
 * A halo exchange of a 2-D domain decomposition over 4 ranks (a 2 x 2 grid
 * of blocks, uneven sizes) matches a serial reference bit for bit.
 *
 * The domain: an (N + 2) x (M + 2) grid of doubles whose outer ring is a
 * fixed boundary; its N x M interior takes STEPS Jacobi steps
 *     u'[i][j] = (((u[i-1][j] + u[i+1][j]) + u[i][j-1]) + u[i][j+1]) * 0.25
 * computed with views and in-place ops (the four neighbour arrays are
 * narrowed views of u). Each rank holds one block of the interior plus a
 * ring of ghost cells; before each step it sends its outermost interior rows
 * and COLUMNS to its neighbours and receives theirs into its ghost rows and
 * columns, all as views sent and received in place (columns are strided
 * views: stride M / 2 + 2). Rank 0 also runs the same steps on the whole
 * domain in one tensor; the blocks, gathered into a global tensor by
 * receiving each block into a strided window of it, must equal that
 * reference byte for byte (the same IEEE operations in the same order on
 * every element), and the gather must leave the global tensor's boundary
 * ring as it was.
 */
#include <mpi.h>

#include "mpi_test_util.h"

enum { N = 38, M = 29, STEPS = 25 };

static const sm_device k_cpu = {SM_DEVICE_CPU, 0};

/* Initial value of global cell (i, j), ring included: an irregular pattern,
 * so any element that arrives in the wrong place changes the result. */
static double initial_value(int64_t i, int64_t j)
{
    uint64_t h = (uint64_t)(i * 7919 + j * 104729 + 17);
    h ^= h >> 13;
    h *= UINT64_C(0x9E3779B97F4A7C15);
    h ^= h >> 29;
    return (double)(h % 1000003) / 1000003.0 + (i == 0 || j == 0 ? 2.0 : 0.0);
}

/* The (rows x cols) window of t starting at (r0, c0): a view. */
static sm_status window(sm_tensor t, int64_t r0, int64_t rows, int64_t c0, int64_t cols,
                        sm_tensor* out)
{
    sm_tensor tmp = NULL;
    sm_status st = sm_narrow(t, 0, r0, rows, &tmp);
    if (st == SM_OK) st = sm_narrow(tmp, 1, c0, cols, out);
    sm_tensor_release(tmp);
    return st;
}

/* One Jacobi step over the interior of u ((rows + 2) x (cols + 2)) into
 * the interior of un: four neighbour views of u, in-place ops on un's. */
static sm_status jacobi_step(sm_tensor u, sm_tensor un, int64_t rows, int64_t cols)
{
    sm_tensor dst = NULL, up = NULL, down = NULL, left = NULL, right = NULL;
    sm_status st = window(un, 1, rows, 1, cols, &dst);
    if (st == SM_OK) st = window(u, 0, rows, 1, cols, &up);
    if (st == SM_OK) st = window(u, 2, rows, 1, cols, &down);
    if (st == SM_OK) st = window(u, 1, rows, 0, cols, &left);
    if (st == SM_OK) st = window(u, 1, rows, 2, cols, &right);
    if (st == SM_OK) st = sm_inplace_tensor(dst, SM_OP_FILL, up, 1.0);
    if (st == SM_OK) st = sm_inplace_tensor(dst, SM_OP_ADD, down, 1.0);
    if (st == SM_OK) st = sm_inplace_tensor(dst, SM_OP_ADD, left, 1.0);
    if (st == SM_OK) st = sm_inplace_tensor(dst, SM_OP_ADD, right, 1.0);
    if (st == SM_OK) st = sm_inplace_scalar(dst, SM_OP_MUL, 0.25, 0.0);
    sm_tensor_release(dst);
    sm_tensor_release(up);
    sm_tensor_release(down);
    sm_tensor_release(left);
    sm_tensor_release(right);
    return st;
}

/* A (rows + 2) x (cols + 2) tensor holding the initial values of the global
 * cells from (g_r0, g_c0). */
static sm_tensor make_block(int64_t g_r0, int64_t g_c0, int64_t rows, int64_t cols)
{
    int64_t shape[2], i, j;
    double* v;
    sm_tensor t = NULL;
    shape[0] = rows + 2;
    shape[1] = cols + 2;
    v = (double*)malloc(sizeof(double) * (size_t)(shape[0] * shape[1]));
    for (i = 0; i < shape[0]; ++i)
        for (j = 0; j < shape[1]; ++j) v[i * shape[1] + j] = initial_value(g_r0 + i, g_c0 + j);
    if (sm_from_host(v, shape, 2, SM_FLOAT64, k_cpu, &t) != SM_OK) {
        FAIL("sm_from_host: %s", sm_last_error());
        t = NULL;
    }
    free(v);
    return t;
}

/* Directions: the tag of a message is the direction it travels. */
enum { NORTH = 0, SOUTH = 1, WEST = 2, EAST = 3 };

typedef struct block {
    int64_t rows, cols, r0, c0; /* interior size; global cell of local (0, 0) */
    int neighbour[4];           /* rank, or MPI_PROC_NULL at the domain's edge */
} block;

/* The edge views of u: the interior row or column sent towards dir, and the
 * ghost row or column received from dir. */
static sm_status edge_views(sm_tensor u, const block* b, int dir, sm_tensor* send,
                            sm_tensor* recv)
{
    sm_tensor rows = NULL, cols = NULL;
    sm_status st;
    if (dir == NORTH || dir == SOUTH) {
        /* Rows: elements 1..cols of row k, contiguous. */
        st = sm_narrow(u, 1, 1, b->cols, &cols);
        if (st == SM_OK) st = sm_select(cols, 0, dir == NORTH ? 1 : b->rows, send);
        if (st == SM_OK) st = sm_select(cols, 0, dir == NORTH ? 0 : b->rows + 1, recv);
    } else {
        /* Columns: elements 1..rows of column k, stride cols + 2. */
        st = sm_narrow(u, 0, 1, b->rows, &rows);
        if (st == SM_OK) st = sm_select(rows, 1, dir == WEST ? 1 : b->cols, send);
        if (st == SM_OK) st = sm_select(rows, 1, dir == WEST ? 0 : b->cols + 1, recv);
    }
    sm_tensor_release(rows);
    sm_tensor_release(cols);
    return st;
}

static void exchange_halo(sm_tensor u, const block* b)
{
    static const int opposite[4] = {SOUTH, NORTH, EAST, WEST};
    sm_tensor send[4] = {NULL, NULL, NULL, NULL}, recv[4] = {NULL, NULL, NULL, NULL};
    MPI_Request req[8];
    int nreq = 0, dir;
    char why[256];
    for (dir = 0; dir < 4; ++dir) {
        sm_status st;
        if (b->neighbour[dir] == MPI_PROC_NULL) continue;
        if (edge_views(u, b, dir, &send[dir], &recv[dir]) != SM_OK) {
            FAIL("edge views: %s", sm_last_error());
            continue;
        }
        /* What arrives from dir travelled the opposite way. */
        st = sm_mpi_irecv(recv[dir], b->neighbour[dir], opposite[dir], MPI_COMM_WORLD, &req[nreq],
                          why, sizeof why);
        if (st == SM_OK) ++nreq;
        else FAIL("sm_mpi_irecv(ghost %d) -> %s: %s", dir, sm_mpi_status_string(st), why);
        st = sm_mpi_isend(send[dir], b->neighbour[dir], dir, MPI_COMM_WORLD, &req[nreq], why,
                          sizeof why);
        if (st == SM_OK) ++nreq;
        else FAIL("sm_mpi_isend(edge %d) -> %s: %s", dir, sm_mpi_status_string(st), why);
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    for (dir = 0; dir < 4; ++dir) {
        sm_tensor_release(send[dir]);
        sm_tensor_release(recv[dir]);
    }
}

static int64_t part_start(int64_t n, int p) { return p == 0 ? 0 : n / 2; }
static int64_t part_size(int64_t n, int p) { return p == 0 ? n / 2 : n - n / 2; }

int main(int argc, char** argv)
{
    int size = 0, step, rc, pr, pc;
    block b;
    sm_tensor u = NULL, un = NULL;
    char why[256];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (g_rank == 0) fprintf(stderr, "test_mpi_halo needs 4 ranks (a 2 x 2 grid), got %d\n", size);
        MPI_Finalize();
        return 1;
    }
    pr = g_rank / 2;
    pc = g_rank % 2;
    b.rows = part_size(N, pr);
    b.cols = part_size(M, pc);
    b.r0 = part_start(N, pr); /* global (ring included) row of local row 0 */
    b.c0 = part_start(M, pc);
    b.neighbour[NORTH] = pr == 0 ? MPI_PROC_NULL : g_rank - 2;
    b.neighbour[SOUTH] = pr == 1 ? MPI_PROC_NULL : g_rank + 2;
    b.neighbour[WEST] = pc == 0 ? MPI_PROC_NULL : g_rank - 1;
    b.neighbour[EAST] = pc == 1 ? MPI_PROC_NULL : g_rank + 1;

    u = make_block(b.r0, b.c0, b.rows, b.cols);
    un = make_block(b.r0, b.c0, b.rows, b.cols); /* its ring: the same fixed boundary */
    if (u == NULL || un == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    for (step = 0; step < STEPS; ++step) {
        sm_tensor tmp;
        exchange_halo(u, &b);
        if (jacobi_step(u, un, b.rows, b.cols) != SM_OK) FAIL("jacobi_step: %s", sm_last_error());
        tmp = u;
        u = un;
        un = tmp;
    }

    /* Gather every block's interior (a strided view) into a strided window
     * of one global tensor on rank 0. */
    if (g_rank != 0) {
        sm_tensor interior = NULL;
        sm_status st;
        if (window(u, 1, b.rows, 1, b.cols, &interior) != SM_OK) FAIL("window: %s", sm_last_error());
        st = sm_mpi_send(interior, 0, 100, MPI_COMM_WORLD, why, sizeof why);
        if (st != SM_OK) FAIL("sm_mpi_send(interior) -> %s: %s", sm_mpi_status_string(st), why);
        sm_tensor_release(interior);
    } else {
        int64_t gshape[2] = {N + 2, M + 2}, nbytes = (N + 2) * (M + 2) * 8, i;
        sm_tensor gathered = NULL, ref = NULL, refn = NULL, mine = NULL, dst = NULL;
        unsigned char *got = (unsigned char*)malloc((size_t)nbytes),
                      *want = (unsigned char*)malloc((size_t)nbytes);
        int src;
        /* -1.0 everywhere: the ring must still be -1.0 after the gather. */
        if (sm_full(gshape, 2, -1.0, SM_FLOAT64, k_cpu, &gathered) != SM_OK) {
            FAIL("sm_full: %s", sm_last_error());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        window(u, 1, b.rows, 1, b.cols, &mine);
        window(gathered, 1 + b.r0, b.rows, 1 + b.c0, b.cols, &dst);
        if (sm_copy_into(dst, mine) != SM_OK) FAIL("sm_copy_into: %s", sm_last_error());
        sm_tensor_release(dst);
        sm_tensor_release(mine);
        for (src = 1; src < 4; ++src) {
            int spr = src / 2, spc = src % 2;
            sm_status st;
            dst = NULL;
            window(gathered, 1 + part_start(N, spr), part_size(N, spr), 1 + part_start(M, spc),
                   part_size(M, spc), &dst);
            st = sm_mpi_recv(dst, src, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE, why, sizeof why);
            if (st != SM_OK) FAIL("sm_mpi_recv(block %d) -> %s: %s", src, sm_mpi_status_string(st), why);
            sm_tensor_release(dst);
        }

        /* The serial reference: the whole domain, the same steps. */
        ref = make_block(0, 0, N, M);
        refn = make_block(0, 0, N, M);
        for (step = 0; step < STEPS; ++step) {
            sm_tensor tmp;
            if (jacobi_step(ref, refn, N, M) != SM_OK) FAIL("jacobi_step: %s", sm_last_error());
            tmp = ref;
            ref = refn;
            refn = tmp;
        }
        sm_copy_to_host(gathered, got, (size_t)nbytes);
        sm_copy_to_host(ref, want, (size_t)nbytes);
        for (i = 0; i < (N + 2) * (M + 2); ++i) {
            int64_t r = i / (M + 2), c = i % (M + 2);
            int ring = r == 0 || c == 0 || r == N + 1 || c == M + 1;
            double g, w = -1.0;
            memcpy(&g, got + i * 8, 8);
            if (!ring) memcpy(&w, want + i * 8, 8);
            if (memcmp(&g, &w, 8) != 0) {
                FAIL("cell (%lld, %lld): gathered %.17g, %s %.17g", (long long)r, (long long)c, g,
                     ring ? "untouched ring" : "serial reference", w);
                break;
            }
        }
        /* The reference must have moved: the steps did something. */
        {
            double first, initial = initial_value(N / 2, M / 2);
            memcpy(&first, want + ((N / 2) * (M + 2) + M / 2) * 8, 8);
            if (first == initial) FAIL("the serial reference did not change");
        }
        printf("test_mpi_halo: %dx%d interior, 2x2 blocks, %d Jacobi steps, gathered blocks compared with the serial run\n",
               N, M, STEPS);
        free(got);
        free(want);
        sm_tensor_release(gathered);
        sm_tensor_release(ref);
        sm_tensor_release(refn);
    }
    sm_tensor_release(u);
    sm_tensor_release(un);
    rc = finish_test("test_mpi_halo");
    MPI_Finalize();
    return rc;
}
