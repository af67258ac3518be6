/* SM_VERSION_NUMBER: usable in #if (C99 preprocessor arithmetic), the
 * documented packing of SM_VERSION_MAJOR/MINOR/PATCH, and what the library
 * says at run time with sm_version. */
#include <stdio.h>

#include "stridemem.h"

#if !defined(SM_VERSION_NUMBER)
#error "SM_VERSION_NUMBER is not defined"
#endif
#if SM_VERSION_NUMBER != SM_VERSION_MAJOR * 10000 + SM_VERSION_MINOR * 100 + SM_VERSION_PATCH
#error "SM_VERSION_NUMBER is not MAJOR * 10000 + MINOR * 100 + PATCH"
#endif
/* The feature test a user writes: this test came with 0.2.0. */
#if SM_VERSION_NUMBER >= 200
#define HAVE_0_2 1
#else
#define HAVE_0_2 0
#endif

int main(void) {
    int major = -1, minor = -1, patch = -1;
    long run_time;
    if (!HAVE_0_2) {
        printf("FAIL: #if SM_VERSION_NUMBER >= 200 is false for %s\n", SM_VERSION_STRING);
        return 1;
    }
    if (SM_VERSION_MINOR > 99 || SM_VERSION_PATCH > 99) {
        printf("FAIL: minor/patch over 99 do not pack\n");
        return 1;
    }
    if (sm_version(&major, &minor, &patch) != SM_OK) {
        printf("FAIL: sm_version: %s\n", sm_last_error());
        return 1;
    }
    run_time = major * 10000L + minor * 100L + patch;
    if (run_time != SM_VERSION_NUMBER) {
        printf("FAIL: sm_version gives %ld, SM_VERSION_NUMBER is %ld\n", run_time,
               (long)SM_VERSION_NUMBER);
        return 1;
    }
    printf("SM_VERSION_NUMBER %ld = sm_version %d.%d.%d\n", (long)SM_VERSION_NUMBER, major, minor,
           patch);
    return 0;
}
