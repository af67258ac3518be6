/*
 * The README's C example, kept compiling and correct: the lines between the
 * two README markers in main() are pasted verbatim into README.md. After
 * them, the test asserts what the example's comments claim.
 */
#include <stdio.h>
#include <string.h>

#include "stridemem.h"

#define CHECK(call)                                                            \
    do {                                                                       \
        sm_status st_ = (call);                                                \
        if (st_ != SM_OK) {                                                    \
            fprintf(stderr, "%s: %s: %s\n", #call, sm_status_string(st_),      \
                    sm_last_error());                                          \
            return 1;                                                          \
        }                                                                      \
    } while (0)

static int g_failures = 0;

#define EXPECT(cond)                                                           \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            ++g_failures;                                                      \
        }                                                                      \
    } while (0)

int main(void)
{
    static const float want_at[3][2] = {{1, 14}, {2, 15}, {3, 16}};
    static const float want_r[6] = {1, 4, 2, 5, 3, 6};
    int64_t live_t = -1, live_s = -1, live_st = -1;
    int i, j;

    /* README-BEGIN */
    /* CHECK(call): on a status other than SM_OK, print sm_last_error() and return 1 */
    float data[2][3] = {{1, 2, 3}, {4, 5, 6}}, out[3][2], flat_out[6];
    int64_t shape[2] = {2, 3}, flat[1] = {6};
    sm_device cpu = {SM_DEVICE_CPU, 0};
    sm_tensor a, at, v = NULL, r, row;
    int same = 0, copied = 0;
    CHECK(sm_from_host(data, shape, 2, SM_FLOAT32, cpu, &a));
    CHECK(sm_transpose(a, 0, 1, &at));              /* 3x2 view, strides {1, 3}: no copy */
    CHECK(sm_same_storage(a, at, &same));            /* same == 1 */
    sm_status st = sm_view(at, flat, 1, &v);         /* refused: SM_ERR_SHAPE, v untouched */
    printf("sm_view: %s\n", sm_last_error());        /* names the dims, suggests sm_reshape */
    CHECK(sm_reshape(at, flat, 1, &r, &copied));     /* copied == 1: reshape had to copy */
    CHECK(sm_select(a, 0, 1, &row));                 /* row 1 of a, a view */
    CHECK(sm_inplace_scalar(row, SM_OP_ADD, 10, 0)); /* writes through it into a */
    CHECK(sm_copy_to_host(at, out, sizeof out));     /* {{1, 14}, {2, 15}, {3, 16}} */
    CHECK(sm_copy_to_host(r, flat_out, sizeof flat_out)); /* the copy kept {1, 4, 2, 5, 3, 6} */
    sm_tensor_release(row);
    sm_tensor_release(r);
    sm_tensor_release(at); /* a's storage lives until its last view goes */
    sm_tensor_release(a);
    /* README-END */

    EXPECT(same == 1);
    EXPECT(st == SM_ERR_SHAPE);
    EXPECT(v == NULL);
    EXPECT(strstr(sm_last_error(), "sm_reshape") != NULL);
    EXPECT(copied == 1);
    for (i = 0; i < 3; ++i)
        for (j = 0; j < 2; ++j) EXPECT(out[i][j] == want_at[i][j]);
    for (i = 0; i < 6; ++i) EXPECT(flat_out[i] == want_r[i]);
    CHECK(sm_debug_live_handles(&live_t, &live_s, &live_st));
    EXPECT(live_t == 0 && live_s == 0 && live_st == 0);

    if (g_failures) {
        fprintf(stderr, "test_readme_example: %d failure(s)\n", g_failures);
        return 1;
    }
    printf("test_readme_example: OK\n");
    return 0;
}
