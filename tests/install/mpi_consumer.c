/* Installed-package consumer of stridemem_mpi.h: compiled with mpicc against
 * the installed headers and library only, run as a single MPI process. The
 * column of a 3 x 4 matrix packs (MPI_Pack) as the column's values. */
#include <stdio.h>

#include <mpi.h>
#include <stridemem_mpi.h>

int main(int argc, char** argv)
{
    float m[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, out[3] = {0, 0, 0};
    int64_t shape[2] = {3, 4};
    sm_device cpu = {SM_DEVICE_CPU, 0};
    sm_tensor t = NULL, col = NULL;
    void* buf = NULL;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    char why[256];
    int pos = 0, ok;
    MPI_Init(&argc, &argv);
    if (sm_from_host(m, shape, 2, SM_FLOAT32, cpu, &t) != SM_OK || sm_select(t, 1, 2, &col) != SM_OK ||
        sm_mpi_view_type(col, SM_MPI_SEND, &buf, &type, why, sizeof why) != SM_OK) {
        fprintf(stderr, "mpi_consumer: %s %s\n", why, sm_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Pack(buf, 1, type, out, (int)sizeof out, &pos, MPI_COMM_WORLD);
    ok = pos == 12 && out[0] == 2 && out[1] == 6 && out[2] == 10;
    sm_mpi_type_free(&type, NULL, 0);
    sm_tensor_release(col);
    sm_tensor_release(t);
    MPI_Finalize();
    if (!ok) fprintf(stderr, "mpi_consumer: the column packed as %g %g %g\n", out[0], out[1], out[2]);
    return ok ? 0 : 1;
}
