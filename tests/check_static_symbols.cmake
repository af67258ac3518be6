# libstridemem.a cannot hide its internals the way the shared library's
# version script does, so they must at least not collide with a consumer's:
# every strong global symbol is sm_* or in C++ namespace sm (weak ones are
# inline/template instances the linker merges). And the archive is whole: it
# defines every sm_ function the public header declares.
include(${CMAKE_CURRENT_LIST_DIR}/missing_header_functions.cmake)
execute_process(COMMAND nm -g --defined-only ${LIB} OUTPUT_VARIABLE nm_out
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}")
endif()
string(REPLACE "\n" ";" lines "${nm_out}")
set(defined "")
set(foreign "")
foreach(line ${lines})
  if(line MATCHES "^[0-9a-f]+ ([A-Za-z]) (.+)$")
    set(kind "${CMAKE_MATCH_1}")
    set(sym "${CMAKE_MATCH_2}")
    if(NOT kind MATCHES "^[TDBRCG]$")
      continue()
    endif()
    if(sym MATCHES "^__(odr_asan_gen_|asan_|tsan_|ubsan_|sanitizer_)")
      continue()  # a sanitizer build's instrumentation, not ours
    endif()
    if(sym MATCHES "^sm_")
      list(APPEND defined "${sym}")
    elseif(NOT sym MATCHES "^_Z[A-Z]*N[rVKRO]*2sm")  # sm::..., its vtables/typeinfo/guards
      list(APPEND foreign "${sym}")
    endif()
  endif()
endforeach()
if(foreign)
  message(FATAL_ERROR "global symbols outside sm_/namespace sm in ${LIB}: ${foreign}")
endif()
sm_missing_header_functions(${HEADER} "${defined}" missing)
if(missing)
  message(FATAL_ERROR "declared but not in ${LIB}: ${missing}")
endif()
list(LENGTH defined n)
message(STATUS "${n} sm_ symbols defined, the rest in namespace sm")
