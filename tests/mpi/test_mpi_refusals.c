/*
 * Every refusal of stridemem_mpi.h: a clear status, a message in the
 * caller's buffer naming the function, nothing written to the
 * out-parameters, nothing sent or received, no MPI object left behind.
 *  - before MPI_Init and after MPI_Finalize: SM_MPI_ERR (the element type,
 *    which calls no MPI, works before MPI_Init);
 *  - released, forged and NULL handles: the library's SM_ERR_INVALID_HANDLE
 *    with its sm_last_error() text after the helper's name;
 *  - dtypes this header does not know, intents that are neither SEND nor
 *    RECV, NULL out-parameters, bad layouts (ndim, NULL arrays, negative
 *    sizes, strides whose bytes overflow);
 *  - an expanded (stride-0) view is sent (its elements repeated) but a
 *    receive into it is refused, by sm_mpi_view_type, sm_mpi_recv and
 *    sm_mpi_irecv, without consuming the message, which a later receive
 *    into a fresh tensor gets; the expanded view's storage is unchanged;
 *  - a read-only tensor (a read-only DLPack import) is sent, not received into;
 *  - sm_mpi_type_free: NULL, MPI_DATATYPE_NULL (no-ops), a predefined type
 *    (refused: MPI would fail the job);
 *  - the message buffer: NULL, too short (cut, NUL-terminated), "" on success;
 *  - MPI's own errors (an invalid rank or tag) with MPI_ERRORS_RETURN:
 *    SM_MPI_ERR with MPI_Error_string's text.
 */
#include <mpi.h>

#include "mpi_test_util.h"
#include "stridemem_dlpack.h"

static const sm_device k_cpu = {SM_DEVICE_CPU, 0};

/* Distinct non-NULL values that no call may write over on failure. */
#define UNTOUCHED_BUF ((void*)&g_failures)
static MPI_Datatype untouched_type(void) { return MPI_BYTE; }

#define EXPECT_MSG(msg, text)                                                        \
    do {                                                                             \
        if (strstr((msg), (text)) == NULL)                                           \
            FAIL("message \"%s\" does not mention \"%s\"", (msg), (text));           \
    } while (0)

/* A view call that must fail with want, write nothing and say why. */
static void expect_view_refused(sm_tensor t, sm_mpi_intent intent, sm_status want,
                                const char* mention, const char* what)
{
    void* buf = UNTOUCHED_BUF;
    MPI_Datatype type = untouched_type();
    char msg[512];
    sm_status st;
    msg[0] = '\0';
    st = sm_mpi_view_type(t, intent, &buf, &type, msg, sizeof msg);
    if (st != want) {
        FAIL("%s: sm_mpi_view_type -> %s, expected %s (%s)", what, sm_mpi_status_string(st),
             sm_mpi_status_string(want), msg);
    }
    if (buf != UNTOUCHED_BUF || type != untouched_type()) FAIL("%s: out-parameters written", what);
    if (strncmp(msg, "sm_mpi_view_type: ", 18) != 0) FAIL("%s: message \"%s\" does not name the call", what, msg);
    EXPECT_MSG(msg, mention);
}

static void check_before_init(void)
{
    float v = 1.0f;
    sm_tensor t = NULL;
    MPI_Datatype type = untouched_type(), null_type = MPI_DATATYPE_NULL;
    int64_t shape[1] = {1}, strides[1] = {1};
    char msg[256];
    SM_OK_OR_RETURN(sm_from_host(&v, shape, 1, SM_FLOAT32, k_cpu, &t));
    EXPECT_STATUS(sm_mpi_element_type(SM_FLOAT32, &type, NULL, 0), SM_OK);
    EXPECT_TRUE(type == MPI_FLOAT);
    expect_view_refused(t, SM_MPI_SEND, SM_MPI_ERR, "not initialized", "before MPI_Init");
    type = untouched_type();
    EXPECT_STATUS(sm_mpi_layout_type(shape, strides, 1, SM_FLOAT32, SM_MPI_SEND, &type, msg, sizeof msg),
                  SM_MPI_ERR);
    EXPECT_MSG(msg, "sm_mpi_layout_type: MPI is not initialized");
    EXPECT_TRUE(type == untouched_type());
    EXPECT_STATUS(sm_mpi_send(t, 0, 0, MPI_COMM_WORLD, msg, sizeof msg), SM_MPI_ERR);
    EXPECT_MSG(msg, "sm_mpi_send: MPI is not initialized");
    EXPECT_STATUS(sm_mpi_type_free(&null_type, msg, sizeof msg), SM_OK); /* calls no MPI */
    sm_tensor_release(t);
}

static void check_handles_and_arguments(void)
{
    float v[6] = {0, 1, 2, 3, 4, 5};
    int64_t shape[2] = {2, 3}, strides[2] = {3, 1};
    sm_tensor t = NULL, released = NULL;
    sm_tensor forged = (sm_tensor)(uintptr_t)0x5eed0001u;
    MPI_Datatype type = untouched_type();
    MPI_Request req = MPI_REQUEST_NULL;
    void* buf = UNTOUCHED_BUF;
    char msg[512];
    const sm_dtype bad_dtypes[4] = {-1, SM_NUM_DTYPES, 99, 1000};
    const sm_mpi_intent bad_intents[3] = {0, 3, -1};
    int k;

    SM_OK_OR_RETURN(sm_from_host(v, shape, 2, SM_FLOAT32, k_cpu, &t));
    SM_OK_OR_RETURN(sm_from_host(v, shape, 2, SM_FLOAT32, k_cpu, &released));
    sm_tensor_release(released);

    /* Handles: the library's status and text, after the helper's name. */
    expect_view_refused(released, SM_MPI_SEND, SM_ERR_INVALID_HANDLE, "sm_ndim", "released");
    expect_view_refused(forged, SM_MPI_RECV, SM_ERR_INVALID_HANDLE, "sm_ndim", "forged");
    expect_view_refused(NULL, SM_MPI_SEND, SM_ERR_INVALID_HANDLE, "sm_ndim", "NULL");
    EXPECT_STATUS(sm_mpi_send(released, 1, 0, MPI_COMM_WORLD, msg, sizeof msg), SM_ERR_INVALID_HANDLE);
    EXPECT_MSG(msg, "sm_mpi_send: ");
    EXPECT_STATUS(sm_mpi_recv(forged, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, msg, sizeof msg),
                  SM_ERR_INVALID_HANDLE);
    EXPECT_MSG(msg, "sm_mpi_recv: ");
    EXPECT_STATUS(sm_mpi_isend(NULL, 1, 0, MPI_COMM_WORLD, &req, msg, sizeof msg), SM_ERR_INVALID_HANDLE);
    EXPECT_MSG(msg, "sm_mpi_isend: ");
    EXPECT_STATUS(sm_mpi_irecv(released, 1, 0, MPI_COMM_WORLD, &req, msg, sizeof msg),
                  SM_ERR_INVALID_HANDLE);
    EXPECT_MSG(msg, "sm_mpi_irecv: ");
    EXPECT_TRUE(req == MPI_REQUEST_NULL);

    /* Dtypes this header does not know. */
    for (k = 0; k < 4; ++k) {
        char num[32];
        type = untouched_type();
        snprintf(num, sizeof num, "dtype %d", (int)bad_dtypes[k]);
        EXPECT_STATUS(sm_mpi_element_type(bad_dtypes[k], &type, msg, sizeof msg), SM_ERR_DTYPE);
        EXPECT_MSG(msg, "sm_mpi_element_type: ");
        EXPECT_MSG(msg, num);
        EXPECT_TRUE(type == untouched_type());
        EXPECT_STATUS(sm_mpi_layout_type(shape, strides, 2, bad_dtypes[k], SM_MPI_SEND, &type, msg,
                                         sizeof msg),
                      SM_ERR_DTYPE);
        EXPECT_MSG(msg, "sm_mpi_layout_type: ");
        EXPECT_MSG(msg, num);
        EXPECT_TRUE(type == untouched_type());
    }
    /* Intents. */
    for (k = 0; k < 3; ++k) {
        expect_view_refused(t, bad_intents[k], SM_ERR_INVALID_ARGUMENT, "intent", "bad intent");
        EXPECT_STATUS(sm_mpi_layout_type(shape, strides, 2, SM_FLOAT32, bad_intents[k], &type, msg,
                                         sizeof msg),
                      SM_ERR_INVALID_ARGUMENT);
        EXPECT_MSG(msg, "intent");
    }
    /* NULL out-parameters. */
    EXPECT_STATUS(sm_mpi_view_type(t, SM_MPI_SEND, NULL, &type, msg, sizeof msg), SM_ERR_INVALID_ARGUMENT);
    EXPECT_MSG(msg, "buf is NULL");
    EXPECT_STATUS(sm_mpi_view_type(t, SM_MPI_SEND, &buf, NULL, msg, sizeof msg), SM_ERR_INVALID_ARGUMENT);
    EXPECT_MSG(msg, "type is NULL");
    EXPECT_STATUS(sm_mpi_layout_type(shape, strides, 2, SM_FLOAT32, SM_MPI_SEND, NULL, msg, sizeof msg),
                  SM_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(sm_mpi_element_type(SM_FLOAT32, NULL, msg, sizeof msg), SM_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(sm_mpi_isend(t, 1, 0, MPI_COMM_WORLD, NULL, msg, sizeof msg), SM_ERR_INVALID_ARGUMENT);
    EXPECT_MSG(msg, "request is NULL");
    EXPECT_STATUS(sm_mpi_irecv(t, 1, 0, MPI_COMM_WORLD, NULL, msg, sizeof msg), SM_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(buf == UNTOUCHED_BUF && type == untouched_type());

    /* Layouts. */
    {
        int64_t neg[2] = {2, -3}, big_stride[1] = {INT64_MAX / 2}, three[1] = {3};
        int64_t min_stride[1] = {INT64_MIN}, huge[2] = {(int64_t)1 << 32, (int64_t)1 << 32},
                zeros[2] = {0, 0};
        EXPECT_STATUS(sm_mpi_layout_type(shape, strides, -1, SM_FLOAT32, SM_MPI_SEND, &type, msg, sizeof msg),
                      SM_ERR_INVALID_ARGUMENT);
        EXPECT_MSG(msg, "ndim -1");
        EXPECT_STATUS(sm_mpi_layout_type(shape, strides, SM_MAX_DIMS + 1, SM_FLOAT32, SM_MPI_SEND, &type,
                                         msg, sizeof msg),
                      SM_ERR_INVALID_ARGUMENT);
        EXPECT_STATUS(sm_mpi_layout_type(NULL, strides, 2, SM_FLOAT32, SM_MPI_SEND, &type, msg, sizeof msg),
                      SM_ERR_INVALID_ARGUMENT);
        EXPECT_STATUS(sm_mpi_layout_type(shape, NULL, 2, SM_FLOAT32, SM_MPI_SEND, &type, msg, sizeof msg),
                      SM_ERR_INVALID_ARGUMENT);
        EXPECT_STATUS(sm_mpi_layout_type(neg, strides, 2, SM_FLOAT32, SM_MPI_SEND, &type, msg, sizeof msg),
                      SM_ERR_SHAPE);
        EXPECT_MSG(msg, "shape[1] is -3");
        EXPECT_STATUS(sm_mpi_layout_type(three, big_stride, 1, SM_FLOAT64, SM_MPI_SEND, &type, msg,
                                         sizeof msg),
                      SM_ERR_OVERFLOW);
        EXPECT_STATUS(sm_mpi_layout_type(three, min_stride, 1, SM_FLOAT64, SM_MPI_SEND, &type, msg,
                                         sizeof msg),
                      SM_ERR_OVERFLOW);
        /* A reach of exactly INT64_MAX elements: one more than int64 counts. */
        {
            int64_t two[1] = {2}, max_stride[1] = {INT64_MAX};
            EXPECT_STATUS(sm_mpi_layout_type(two, max_stride, 1, SM_UINT8, SM_MPI_SEND, &type, msg,
                                             sizeof msg),
                          SM_ERR_OVERFLOW);
            EXPECT_MSG(msg, "overflows int64");
        }
        EXPECT_STATUS(sm_mpi_layout_type(huge, zeros, 2, SM_UINT8, SM_MPI_SEND, &type, msg, sizeof msg),
                      SM_ERR_OVERFLOW);
        EXPECT_MSG(msg, "number of elements");
        EXPECT_TRUE(type == untouched_type());
    }
    sm_tensor_release(t);
}

/* Rank 0 sends an expanded view; rank 1 is refused a receive into one,
 * three ways, then receives the message into a fresh tensor. */
static void check_expanded(void)
{
    float row[3] = {1.5f, -2.0f, 7.25f};
    int64_t n3[1] = {3}, e23[2] = {2, 3};
    sm_tensor base = NULL, expanded = NULL;
    char msg[512];
    SM_OK_OR_RETURN(sm_from_host(row, n3, 1, SM_FLOAT32, k_cpu, &base));
    SM_OK_OR_RETURN(sm_expand(base, e23, 2, &expanded)); /* strides (0, 1) */
    if (g_rank == 0) {
        EXPECT_STATUS(sm_mpi_send(expanded, 1, 7, MPI_COMM_WORLD, msg, sizeof msg), SM_OK);
        EXPECT_TRUE(msg[0] == '\0');
    } else if (g_rank == 1) {
        MPI_Request req = MPI_REQUEST_NULL;
        float got[6], after[3];
        sm_tensor fresh = NULL;
        int i;
        expect_view_refused(expanded, SM_MPI_RECV, SM_ERR_OVERLAP, "overlap", "expanded receive");
        EXPECT_STATUS(sm_mpi_recv(expanded, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, msg, sizeof msg),
                      SM_ERR_OVERLAP);
        EXPECT_MSG(msg, "sm_mpi_recv: cannot receive into a view whose elements overlap");
        EXPECT_MSG(msg, "stride 0");
        EXPECT_STATUS(sm_mpi_irecv(expanded, 0, 7, MPI_COMM_WORLD, &req, msg, sizeof msg), SM_ERR_OVERLAP);
        EXPECT_TRUE(req == MPI_REQUEST_NULL);
        /* The same view may be sent (to itself here: count the bytes). */
        {
            void* buf = NULL;
            MPI_Datatype t = MPI_DATATYPE_NULL;
            int size = 0;
            EXPECT_STATUS(sm_mpi_view_type(expanded, SM_MPI_SEND, &buf, &t, msg, sizeof msg), SM_OK);
            MPI_Type_size(t, &size);
            EXPECT_EQ_I64(size, 24);
            sm_mpi_type_free(&t, NULL, 0);
        }
        /* The message is still there, for a tensor that can take it. */
        SM_OK_OR_RETURN(sm_empty(e23, 2, SM_FLOAT32, k_cpu, &fresh));
        EXPECT_STATUS(sm_mpi_recv(fresh, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, msg, sizeof msg), SM_OK);
        sm_copy_to_host(fresh, got, sizeof got);
        for (i = 0; i < 6; ++i)
            if (got[i] != row[i % 3]) FAIL("expanded send: element %d is %g, expected %g", i, got[i], row[i % 3]);
        sm_copy_to_host(base, after, sizeof after);
        EXPECT_TRUE(memcmp(after, row, sizeof row) == 0);
        sm_tensor_release(fresh);
    }
    /* An unfold with step < size overlaps too. */
    {
        sm_tensor windows = NULL;
        SM_OK_OR_RETURN(sm_unfold(base, 0, 2, 1, &windows));
        expect_view_refused(windows, SM_MPI_RECV, SM_ERR_OVERLAP, "overlap", "unfold receive");
        sm_tensor_release(windows);
    }
    sm_tensor_release(expanded);
    sm_tensor_release(base);
}

/* A read-only import: a DLPack 1.x tensor flagged READ_ONLY over our array. */
static float g_ro_data[4] = {1, 2, 3, 4};
static int64_t g_ro_shape[1] = {4};
static int g_ro_deleted = 0;
static void ro_deleter(struct sm_DLManagedTensorVersioned* self)
{
    (void)self;
    ++g_ro_deleted;
}

static void check_read_only(void)
{
    static sm_DLManagedTensorVersioned m;
    sm_tensor t = NULL;
    void* buf = NULL;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    char msg[512];
    memset(&m, 0, sizeof m);
    m.version.major = SM_DLPACK_MAJOR_VERSION;
    m.version.minor = SM_DLPACK_MINOR_VERSION;
    m.deleter = ro_deleter;
    m.flags = SM_DLPACK_FLAG_BITMASK_READ_ONLY;
    m.dl_tensor.data = g_ro_data;
    m.dl_tensor.device.device_type = sm_kDLCPU;
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype.code = sm_kDLFloat;
    m.dl_tensor.dtype.bits = 32;
    m.dl_tensor.dtype.lanes = 1;
    m.dl_tensor.shape = g_ro_shape;
    SM_OK_OR_RETURN(sm_from_dlpack(&m, 1, &t));
    EXPECT_STATUS(sm_mpi_view_type(t, SM_MPI_SEND, &buf, &type, msg, sizeof msg), SM_OK);
    EXPECT_TRUE(buf == (void*)g_ro_data);
    sm_mpi_type_free(&type, NULL, 0);
    expect_view_refused(t, SM_MPI_RECV, SM_ERR_READ_ONLY, "read-only", "read-only receive");
    EXPECT_STATUS(sm_mpi_recv(t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, msg, sizeof msg), SM_ERR_READ_ONLY);
    sm_tensor_release(t);
    EXPECT_EQ_I64(g_ro_deleted, 1);
}

static void check_type_free_and_messages(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, dbl = MPI_DOUBLE;
    int64_t shape[1] = {4}, strides[1] = {2};
    char msg[64], tiny[10];
    int size = 0;
    EXPECT_STATUS(sm_mpi_type_free(NULL, msg, sizeof msg), SM_OK);
    EXPECT_STATUS(sm_mpi_type_free(&t, msg, sizeof msg), SM_OK);
    EXPECT_STATUS(sm_mpi_type_free(&dbl, msg, sizeof msg), SM_ERR_INVALID_ARGUMENT);
    EXPECT_MSG(msg, "predefined");
    EXPECT_TRUE(dbl == MPI_DOUBLE);
    MPI_Type_size(MPI_DOUBLE, &size);
    EXPECT_EQ_I64(size, 8);
    /* Success clears the message; a freed type becomes MPI_DATATYPE_NULL. */
    strcpy(msg, "stale");
    EXPECT_STATUS(sm_mpi_layout_type(shape, strides, 1, SM_INT16, SM_MPI_RECV, &t, msg, sizeof msg), SM_OK);
    EXPECT_TRUE(msg[0] == '\0');
    strcpy(msg, "stale");
    EXPECT_STATUS(sm_mpi_type_free(&t, msg, sizeof msg), SM_OK);
    EXPECT_TRUE(t == MPI_DATATYPE_NULL);
    EXPECT_TRUE(msg[0] == '\0');
    EXPECT_STATUS(sm_mpi_type_free(&t, msg, sizeof msg), SM_OK); /* twice: a no-op */
    /* Messages: no buffer, a zero-length one (untouched), a short one (cut). */
    EXPECT_STATUS(sm_mpi_element_type(77, &t, NULL, 0), SM_ERR_DTYPE);
    strcpy(tiny, "keep");
    EXPECT_STATUS(sm_mpi_element_type(77, &t, tiny, 0), SM_ERR_DTYPE);
    EXPECT_TRUE(strcmp(tiny, "keep") == 0);
    memset(tiny, 'x', sizeof tiny);
    EXPECT_STATUS(sm_mpi_element_type(77, &t, tiny, sizeof tiny), SM_ERR_DTYPE);
    EXPECT_TRUE(tiny[sizeof tiny - 1] == '\0' && strcmp(tiny, "sm_mpi_el") == 0);
    EXPECT_STATUS(sm_mpi_element_type(77, &t, tiny, 1), SM_ERR_DTYPE);
    EXPECT_TRUE(tiny[0] == '\0');
    /* Status strings. */
    EXPECT_MSG(sm_mpi_status_string(SM_MPI_ERR), "MPI");
    EXPECT_TRUE(strcmp(sm_mpi_status_string(SM_ERR_OVERLAP), sm_status_string(SM_ERR_OVERLAP)) == 0);
    EXPECT_TRUE(strcmp(sm_mpi_status_string(SM_OK), sm_status_string(SM_OK)) == 0);
    /* Debian's Open MPI is built without CUDA: it says so. */
#if defined(MPIX_CUDA_AWARE_SUPPORT) && !MPIX_CUDA_AWARE_SUPPORT
    EXPECT_EQ_I64(sm_mpi_cuda_aware(), 0);
#else
    if (g_rank == 0) printf("sm_mpi_cuda_aware() = %d (not checked: no CUDA-less Open MPI)\n", sm_mpi_cuda_aware());
#endif
}

/* MPI's own failures, returned instead of fatal. */
static void check_mpi_errors(void)
{
    float v[2] = {1, 2};
    int64_t n2[1] = {2};
    int size = 0;
    sm_tensor t = NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    char msg[512];
    SM_OK_OR_RETURN(sm_from_host(v, n2, 1, SM_FLOAT32, k_cpu, &t));
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    EXPECT_STATUS(sm_mpi_send(t, size + 5, 0, MPI_COMM_WORLD, msg, sizeof msg), SM_MPI_ERR);
    EXPECT_MSG(msg, "sm_mpi_send: MPI_Send failed with MPI error");
    EXPECT_STATUS(sm_mpi_recv(t, size + 5, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, msg, sizeof msg),
                  SM_MPI_ERR);
    EXPECT_MSG(msg, "sm_mpi_recv: MPI_Recv failed");
    EXPECT_STATUS(sm_mpi_isend(t, 0, -7, MPI_COMM_WORLD, &req, msg, sizeof msg), SM_MPI_ERR);
    EXPECT_MSG(msg, "sm_mpi_isend: MPI_Isend failed");
    EXPECT_STATUS(sm_mpi_irecv(t, size + 5, 0, MPI_COMM_WORLD, &req, msg, sizeof msg), SM_MPI_ERR);
    EXPECT_MSG(msg, "sm_mpi_irecv: MPI_Irecv failed");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    sm_tensor_release(t);
}

int main(int argc, char** argv)
{
    int rc, before_finalize;
    float v[2] = {1, 2};
    int64_t n2[1] = {2};
    sm_tensor t = NULL;
    MPI_Datatype kept = MPI_DATATYPE_NULL;
    void* buf = NULL;
    char msg[256];

    check_before_init();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    check_handles_and_arguments();
    check_expanded();
    check_read_only();
    check_type_free_and_messages();
    check_mpi_errors();
    sm_from_host(v, n2, 1, SM_FLOAT32, k_cpu, &t);
    EXPECT_STATUS(sm_mpi_view_type(t, SM_MPI_SEND, &buf, &kept, msg, sizeof msg), SM_OK);
    rc = finish_test("test_mpi_refusals (before MPI_Finalize)");
    before_finalize = g_failures;
    MPI_Finalize();
    /* After MPI_Finalize: refused, not a crash inside MPI. */
    EXPECT_STATUS(sm_mpi_view_type(t, SM_MPI_SEND, &buf, &kept, msg, sizeof msg), SM_MPI_ERR);
    EXPECT_MSG(msg, "finalized");
    EXPECT_STATUS(sm_mpi_type_free(&kept, msg, sizeof msg), SM_MPI_ERR);
    EXPECT_MSG(msg, "sm_mpi_type_free: MPI is already finalized");
    sm_tensor_release(t);
    if (g_failures != before_finalize) {
        fprintf(stderr, "[rank %d] test_mpi_refusals: %d failure(s) after MPI_Finalize\n", g_rank,
                g_failures - before_finalize);
        rc = 1;
    }
    return rc;
}
