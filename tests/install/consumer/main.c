/* Installed-package consumer: links, runs, checks the version, and asks the
 * CUDA runtime (linked statically into libstridemem.a in a CUDA build) for
 * devices: any count, or SM_ERR_DEVICE where CUDA tensors cannot be made
 * (then it prints why, as the library says it). */
#include <stdio.h>
#include "stridemem.h"

int main(void) {
    int ma, mi, pa;
    int32_t gpus = -1;
    sm_tensor t;
    int64_t shape[2] = {2, 3}, n = 0;
    sm_device cpu = {SM_DEVICE_CPU, 0}, gpu = {SM_DEVICE_CUDA, 0};
    sm_status st;
    const char* why = NULL;
    if (sm_version(&ma, &mi, &pa) != SM_OK || ma != SM_VERSION_MAJOR || mi != SM_VERSION_MINOR) return 1;
    if (sm_zeros(shape, 2, SM_FLOAT32, cpu, &t) != SM_OK) return 1;
    if (sm_numel(t, &n) != SM_OK || n != 6) return 1;
    sm_tensor_release(t);
    if (sm_cuda_device_count(&gpus) != SM_OK || gpus < 0) return 1;
    st = sm_zeros(shape, 2, SM_FLOAT32, gpu, &t);
    if (gpus == 0 && st != SM_ERR_DEVICE) return 1;
    if (gpus == 0) why = sm_last_error();
    if (gpus > 0) {
        if (st != SM_OK) return 1;
        sm_tensor_release(t);
    }
    printf("consumer OK (stridemem %d.%d.%d, %d CUDA devices)\n", ma, mi, pa, (int)gpus);
    if (why) printf("  no CUDA device: %s\n", why);
    return 0;
}
