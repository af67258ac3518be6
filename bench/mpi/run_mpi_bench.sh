#!/usr/bin/env bash
# Runs the MPI halo benchmark as recorded in bench/RESULTS.md ("MPI views
# (issue 28)"): the C program and the NumPy + mpi4py script, 4 ranks on this
# host, with Open MPI's vader single copy (CMA) on (its default) and off (as
# the ctest runs, tests/mpi/mpi_run.cmake), then 2 ranks (no
# oversubscription on a 2-core machine) to tell the cost of the exchange
# from the cost of sharing cores.
#   bench/mpi/run_mpi_bench.sh [BUILD_DIR] [extra bench options, e.g. --iters 100]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
shift || true
bench="$build/bench/mpi/bench_mpi_halo"
py="$root/bench/mpi/mpi4py_halo.py"
[ -x "$bench" ] || { echo "no $bench: cmake --build $build --target bench_mpi_halo" >&2; exit 1; }
# As root mpirun needs both; ranks talk through shared memory only, the
# runtime on loopback; waiting ranks yield (--host localhost:4 declares 4
# slots, so Open MPI would not see the oversubscription and would spin).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_mpi_yield_when_idle=1
run() { echo; echo "\$ $*"; "$@"; }
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)  host: $(nproc) cores, $(uname -r)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
run mpirun --oversubscribe -np 4 --host localhost:4 "$bench" --shapes "$@"
run mpirun --oversubscribe -np 4 --host localhost:4 /usr/bin/python3 "$py" "$@"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
run mpirun --oversubscribe -np 4 --host localhost:4 "$bench" --shapes "$@"
run mpirun --oversubscribe -np 4 --host localhost:4 /usr/bin/python3 "$py" "$@"
unset OMPI_MCA_btl_vader_single_copy_mechanism
run mpirun -np 2 --host localhost:2 "$bench" --shapes "$@"
run mpirun -np 2 --host localhost:2 /usr/bin/python3 "$py" "$@"
echo; echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
