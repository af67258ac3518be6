/* Installed-package consumer: links, runs, checks the version. */
#include <stdio.h>
#include "stridemem.h"

int main(void) {
    int ma, mi, pa;
    sm_tensor t;
    int64_t shape[2] = {2, 3}, n = 0;
    sm_device cpu = {SM_DEVICE_CPU, 0};
    if (sm_version(&ma, &mi, &pa) != SM_OK || ma != SM_VERSION_MAJOR || mi != SM_VERSION_MINOR) return 1;
    if (sm_zeros(shape, 2, SM_FLOAT32, cpu, &t) != SM_OK) return 1;
    if (sm_numel(t, &n) != SM_OK || n != 6) return 1;
    sm_tensor_release(t);
    printf("consumer OK (stridemem %d.%d.%d)\n", ma, mi, pa);
    return 0;
}
