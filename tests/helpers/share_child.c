/* The other process of the sharing tests (tests/api/test_api_sharing.cpp):
 * started with posix_spawn, not forked, so it is a fresh program with its
 * own CUDA context, as a real worker would be. C99 against the public API.
 *
 *   share_child HEXDESC FD N
 *
 * HEXDESC: the sm_share_desc bytes in hex; FD: the inherited fd (-1 for
 * CUDA). Imports the storage, checks that its first N float32 elements are
 * 0, 1, ..., N-1 (on the device: copied to the host), multiplies them by 2
 * in place, synchronizes and exits 0. Any other exit status names the step
 * that failed; the library's message goes to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stridemem.h"

static int fail_at(int step, const char* what) {
    fprintf(stderr, "share_child: step %d (%s) failed: %s\n", step, what, sm_last_error());
    return step;
}

static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

int main(int argc, char** argv) {
    sm_share_desc desc;
    unsigned char* bytes = (unsigned char*)&desc;
    size_t i;
    int fd;
    int64_t n, shape[1];
    sm_storage s = NULL;
    sm_tensor t = NULL;
    sm_device dev;
    float* host;
    if (argc != 4 || strlen(argv[1]) != 2 * sizeof desc) {
        fprintf(stderr, "usage: share_child HEXDESC(%u bytes) FD N\n", (unsigned)sizeof desc);
        return 2;
    }
    for (i = 0; i < sizeof desc; ++i) {
        const int hi = hex(argv[1][2 * i]), lo = hex(argv[1][2 * i + 1]);
        if (hi < 0 || lo < 0) return 2;
        bytes[i] = (unsigned char)(hi * 16 + lo);
    }
    fd = atoi(argv[2]);
    n = atoll(argv[3]);
    if (sm_storage_import(&desc, fd, &s) != SM_OK) return fail_at(3, "sm_storage_import");
    shape[0] = n;
    if (sm_tensor_from_storage(s, shape, NULL, 1, 0, SM_FLOAT32, &t) != SM_OK)
        return fail_at(4, "sm_tensor_from_storage");
    host = (float*)malloc((size_t)n * sizeof(float));
    if (!host) return 5;
    if (sm_copy_to_host(t, host, (size_t)n * sizeof(float)) != SM_OK)
        return fail_at(6, "sm_copy_to_host");
    for (i = 0; i < (size_t)n; ++i)
        if (host[i] != (float)i) {
            fprintf(stderr, "share_child: element %u is %g, expected %u\n", (unsigned)i,
                    (double)host[i], (unsigned)i);
            return 7;
        }
    if (sm_inplace_scalar(t, SM_OP_MUL, 2.0, 0.0) != SM_OK) return fail_at(8, "sm_inplace_scalar");
    if (sm_device_of(t, &dev) != SM_OK) return fail_at(9, "sm_device_of");
    if (sm_synchronize(dev) != SM_OK) return fail_at(10, "sm_synchronize");
    free(host);
    sm_tensor_release(t);
    sm_storage_release(s);
    return 0;
}
