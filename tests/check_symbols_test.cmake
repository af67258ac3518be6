# check_symbols.cmake must fail on what it guards against: a foreign global
# symbol in either library, and a header function the library lacks.
# -DCHECKER=<check_symbols.cmake> -DHEADER=<stridemem.h> -DCC=<C compiler> -DAR=<ar> -DWORK=<dir>
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/leak.c "int leaked_helper(void) { return 1; }\nint sm_status_string(void) { return 0; }\n")
function(run_or_die)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN} failed: ${out}")
  endif()
endfunction()
run_or_die(${CC} -fPIC -c ${WORK}/leak.c -o ${WORK}/leak.o)
run_or_die(${AR} rcs ${WORK}/libleak.a ${WORK}/leak.o)
run_or_die(${CC} -shared ${WORK}/leak.o -o ${WORK}/libleak.so)
foreach(kind static shared)
  if(kind STREQUAL "static")
    set(lib ${WORK}/libleak.a)
  else()
    set(lib ${WORK}/libleak.so)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -DLIB=${lib} -DHEADER=${HEADER} -DKIND=${kind}
                          -P ${CHECKER}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "leaked_helper")
    message(FATAL_ERROR "${kind}: the foreign symbol leaked_helper was not reported: ${out}")
  endif()
endforeach()
# Only sm_status_string defined: every other header function is missing.
file(WRITE ${WORK}/partial.c "int sm_status_string(void) { return 0; }\n")
run_or_die(${CC} -fPIC -c ${WORK}/partial.c -o ${WORK}/partial.o)
run_or_die(${AR} rcs ${WORK}/libpartial.a ${WORK}/partial.o)
execute_process(COMMAND ${CMAKE_COMMAND} -DLIB=${WORK}/libpartial.a -DHEADER=${HEADER} -DKIND=static
                        -P ${CHECKER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0 OR NOT out MATCHES "not defined by" OR NOT out MATCHES "sm_last_error"
   OR out MATCHES "sm_status_string;")
  message(FATAL_ERROR "an archive lacking header functions was not reported as it should: ${out}")
endif()
message(STATUS "check_symbols.cmake reports foreign symbols (both kinds) and missing functions")
