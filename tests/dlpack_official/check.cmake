# Builds consumer.c against the official <dlpack/dlpack.h> and our headers,
# then runs it: cmake -DCOMPILER=... [-DFLAGS="the build's compile and link
#   flags"] -DLANG=c|cxx -DORDER=0|1 -DSRC=consumer.c
#   -DINCLUDES="dir;dir" -DDLPACK_INCLUDE=dir -DLIB=libstridemem.so -DWORK=dir -P check.cmake
# The compile is part of the test (not of the build) so that a header clash
# shows up as this test failing, with the compiler's message, while the
# rest of the tree still builds and tests.
foreach(v COMPILER LANG ORDER SRC INCLUDES DLPACK_INCLUDE LIB WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check.cmake: -D${v}=... missing")
  endif()
endforeach()
if(LANG STREQUAL "c")
  set(flags -x c -std=c99)
elseif(LANG STREQUAL "cxx")
  set(flags -x c++ -std=c++17)
else()
  message(FATAL_ERROR "check.cmake: LANG must be c or cxx, not ${LANG}")
endif()
file(MAKE_DIRECTORY ${WORK})
set(exe ${WORK}/dlpack_official_${LANG}_${ORDER})
set(incs)
foreach(d ${INCLUDES})
  list(APPEND incs -I${d})
endforeach()
# -isystem /usr/include would reorder the compiler's own search path (and
# break libstdc++'s #include_next): a default directory is not passed.
if(NOT DLPACK_INCLUDE MATCHES "^/usr(/local)?/include/?$")
  list(APPEND incs -isystem ${DLPACK_INCLUDE})
endif()
separate_arguments(extra UNIX_COMMAND "${FLAGS}")
get_filename_component(libdir ${LIB} DIRECTORY)
execute_process(
  COMMAND ${COMPILER} ${extra} ${flags} -pedantic -Werror -Wall -Wextra -DSM_OFFICIAL_FIRST=${ORDER}
          ${incs} ${SRC} -x none -o ${exe} ${LIB}
          -Wl,-rpath,${libdir}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a ${LANG} program that includes <dlpack/dlpack.h> and stridemem_dlpack.h "
                      "(ORDER=${ORDER}; 1: the official header first) does not compile:\n${out}")
endif()
execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the ${LANG} DLPack consumer failed (exit ${rc})")
endif()
