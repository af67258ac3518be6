# How the MPI tests and the MPI benchmark are run (included by tests/mpi and
# bench/mpi): finds MPI once and defines sm_add_mpi_run() / sm_add_mpi_test().
#
# Every MPI program runs as `mpiexec -n 4` on this host only. With Open MPI
# (Debian's openmpi-bin) it also gets:
#   --oversubscribe --host localhost:4   4 ranks on a machine with fewer cores
#                                        (CI has 2), and never another host;
# and, through the test's environment:
#   OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1   mpirun refuses to start as root
#                                        without both (CI runs as root);
#   OMPI_MCA_btl=self,vader              ranks talk through shared memory
#                                        only: no TCP, no network device;
#   OMPI_MCA_oob_tcp_if_include=lo       the runtime's own wire-up stays on
#                                        the loopback interface;
#   OMPI_MCA_mpi_yield_when_idle=1       a rank waiting for a message yields
#                                        its core: --host localhost:4 declares
#                                        4 slots, so Open MPI does not see the
#                                        oversubscription and would spin, and
#                                        on 2 cores each exchange then waits
#                                        for scheduler ticks (24 ms instead of
#                                        7 us per halo exchange, measured);
#   OMPI_MCA_btl_vader_single_copy_mechanism=none
#                                        no cross-memory attach
#                                        (process_vm_readv), which containers
#                                        without CAP_SYS_PTRACE forbid
#                                        (open-mpi/ompi#4948: "Read -1,
#                                        expected ..." and a failed job);
#                                        correctness does not depend on it.
# The benchmark's recorded runs (bench/RESULTS.md) say which of these they used.
if(DEFINED SM_MPI_RUN_INCLUDED)
  return()
endif()
set(SM_MPI_RUN_INCLUDED ON)

find_package(MPI COMPONENTS C)
set(SM_MPI_USABLE OFF)
if(MPI_C_FOUND AND MPIEXEC_EXECUTABLE)
  set(SM_MPI_USABLE ON)
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version
                  OUTPUT_VARIABLE _sm_mpiexec_version ERROR_QUIET)
  set(SM_MPIEXEC_FLAGS "")
  set(SM_MPI_TEST_ENV "")
  if(_sm_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(SM_MPIEXEC_FLAGS --oversubscribe --host localhost:4)
    set(SM_MPI_TEST_ENV
      "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
      "OMPI_MCA_btl=self,vader" "OMPI_MCA_oob_tcp_if_include=lo" "OMPI_MCA_mpi_yield_when_idle=1"
      "OMPI_MCA_btl_vader_single_copy_mechanism=none")
  endif()
endif()

# sm_add_mpi_run(<test name> <program> [args...]): runs <program> (a path,
# or a generator expression) on 4 ranks.
function(sm_add_mpi_run name program)
  add_test(NAME ${name}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${SM_MPIEXEC_FLAGS}
            ${MPIEXEC_PREFLAGS} ${program} ${MPIEXEC_POSTFLAGS} ${ARGN})
  # Each test takes seconds; a rank that waits for a message that never
  # comes must fail the test, not hang CI. One mpiexec at a time (ctest -j):
  # Open MPI 4.1's launchers race to create their per-user session directory
  # (/tmp/ompi.<host>.<uid>: "mkdir ... File exists", orte_init fails), seen
  # here once in four parallel runs; and 4 ranks already fill 2 cores. Other
  # tests that start mpiexec should take the same RESOURCE_LOCK.
  set_tests_properties(${name} PROPERTIES TIMEOUT 120 ENVIRONMENT "${SM_MPI_TEST_ENV}"
                       RESOURCE_LOCK mpiexec)
  if(STRIDEMEM_SANITIZE STREQUAL "address" OR CMAKE_C_FLAGS MATCHES "-fsanitize=[^ ]*address")
    # Open MPI's own allocations are not ours to leak-check, and LeakSanitizer
    # cannot even name them (their plugins are unloaded by MPI_Finalize):
    # the rest of ASan and UBSan stays on. The tests count the library's
    # live handles themselves.
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append::detect_leaks=0")
  endif()
endfunction()

# sm_add_mpi_test(<test name> <target> [args...]): runs the executable target.
function(sm_add_mpi_test name target)
  sm_add_mpi_run(${name} $<TARGET_FILE:${target}> ${ARGN})
endfunction()
