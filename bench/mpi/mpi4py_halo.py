"""The column halo exchange of bench_mpi_halo.c, done with NumPy + mpi4py.

Run with Debian's python3 (NumPy, mpi4py) under mpiexec, e.g.
    mpirun --oversubscribe -np 4 --host localhost:4 /usr/bin/python3 bench/mpi/mpi4py_halo.py

The same ring of ranks, the same (n + 2) x (n + 2) float64 blocks, the same
exchange (first and last interior columns out west and east, into the ghost
columns), timed the same way (barrier, the slowest rank's time, median over
iterations, methods interleaved). Methods:
  contiguous   Isend/Irecv of n contiguous doubles (interior rows into ghost
               rows): the same bytes, the physical limit, measured in this run
  vector       the column as MPI.DOUBLE.Create_vector(n, 1, n + 2), built
               once, sent from and received into the block in place
  pack         np.ascontiguousarray(column) + Isend; Irecv into np.empty(n),
               then block[1:n+1, 0] = received
Each method is checked once per size: the ghost columns hold the neighbours'.

Options: --sizes 64,256,1024,4096  --iters N (300)  --warmup N (20)
         --quick (sizes 8,64, 5 iterations, 1 warm-up: the ctest run).
"""
import argparse
import sys

import numpy as np
from mpi4py import MPI

METHODS = ("contiguous", "vector", "pack")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,256,1024,4096")
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    iters, warmup = args.iters, args.warmup
    if args.quick:
        sizes, iters, warmup = [8, 64], 5, 1

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    west, east = (rank - 1) % size, (rank + 1) % size
    if rank == 0:
        print(f"mpi4py_halo: {size} ranks, NumPy {np.__version__}, mpi4py "
              f"{sys.modules['mpi4py'].__version__}, median of {iters} iterations "
              f"({warmup} warm-up), each the slowest rank's time")
        print("| n | column bytes | method | median us | p10 us | p90 us | / contiguous |")
        print("|---:|---:|---|---:|---:|---:|---:|")
    failed = False
    for n in sizes:
        ld = n + 2
        block = np.empty((ld, ld), dtype=np.float64)
        idx = np.arange(ld * ld, dtype=np.float64).reshape(ld, ld)
        block[...] = rank * 1e9 + idx
        flat = block.reshape(-1)  # a view: the vector type walks it from an offset
        col = MPI.DOUBLE.Create_vector(n, 1, ld).Commit()

        def exchange(method):
            if method == "contiguous":
                reqs = [comm.Irecv(block[0, 1:n + 1], west, 1),
                        comm.Irecv(block[n + 1, 1:n + 1], east, 0),
                        comm.Isend(block[1, 1:n + 1], west, 0),
                        comm.Isend(block[n, 1:n + 1], east, 1)]
                MPI.Request.Waitall(reqs)
            elif method == "vector":
                # Column c from row 1 starts at flat[ld + c].
                reqs = [comm.Irecv([flat[ld:], 1, col], west, 1),
                        comm.Irecv([flat[ld + n + 1:], 1, col], east, 0),
                        comm.Isend([flat[ld + 1:], 1, col], west, 0),
                        comm.Isend([flat[ld + n:], 1, col], east, 1)]
                MPI.Request.Waitall(reqs)
            else:
                rw, re = np.empty(n), np.empty(n)
                reqs = [comm.Irecv(rw, west, 1), comm.Irecv(re, east, 0)]
                pw = np.ascontiguousarray(block[1:n + 1, 1])
                pe = np.ascontiguousarray(block[1:n + 1, n])
                reqs += [comm.Isend(pw, west, 0), comm.Isend(pe, east, 1)]
                MPI.Request.Waitall(reqs)
                block[1:n + 1, 0] = rw
                block[1:n + 1, n + 1] = re

        for method in METHODS:
            block[0, :] = block[n + 1, :] = block[:, 0] = block[:, n + 1] = -1.0
            comm.Barrier()
            exchange(method)
            rows = np.arange(1, n + 1)
            if method == "contiguous":
                w_ok = np.array_equal(block[0, 1:n + 1], west * 1e9 + idx[n, 1:n + 1])
                e_ok = np.array_equal(block[n + 1, 1:n + 1], east * 1e9 + idx[1, 1:n + 1])
            else:
                w_ok = np.array_equal(block[rows, 0], west * 1e9 + idx[rows, n])
                e_ok = np.array_equal(block[rows, n + 1], east * 1e9 + idx[rows, 1])
            bad = comm.allreduce(0 if (w_ok and e_ok) else 1, op=MPI.MAX)
            if bad:
                failed = True
                if rank == 0:
                    print(f"n {n}, {method}: wrong ghost values", file=sys.stderr)

        times = {m: [] for m in METHODS}
        for it in range(-warmup, iters):
            for k in range(len(METHODS)):
                method = METHODS[(k + max(it, 0)) % len(METHODS)]
                comm.Barrier()
                t0 = MPI.Wtime()
                exchange(method)
                local = MPI.Wtime() - t0
                slowest = comm.allreduce(local, op=MPI.MAX)
                if it >= 0:
                    times[method].append(slowest)
        if rank == 0 and iters > 0:
            med = {m: float(np.median(times[m])) for m in METHODS}
            for m in METHODS:
                t = np.sort(times[m])
                print(f"| {n} | {n * 8} | {m} | {med[m] * 1e6:.1f} | {t[iters // 10] * 1e6:.1f} | "
                      f"{t[iters - 1 - iters // 10] * 1e6:.1f} | {med[m] / med['contiguous']:.2f} |")
        col.Free()
    if rank == 0:
        print("verification:", "FAILED" if failed else "every method delivered the neighbours' columns")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
