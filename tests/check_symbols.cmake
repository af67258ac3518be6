# The symbol rules of both libraries, one parse of nm and of the header:
#   KIND=shared  libstridemem.so exports exactly the sm_ functions the public
#                header declares (the version script hides the rest);
#   KIND=static  libstridemem.a cannot hide its internals, so they must at
#                least not collide with a consumer's: every strong global
#                symbol is sm_* or in C++ namespace sm (weak ones are inline or
#                template instances the linker merges); and the archive is
#                whole: it defines every sm_ function the header declares.
# -DLIB=<library> -DHEADER=<stridemem.h> -DKIND=shared|static
if(KIND STREQUAL "shared")
  set(nm_args -D --defined-only)
  set(kinds "^[^A]$")        # A: version nodes
  set(internal "^$")         # nothing but sm_ may leave the .so
elseif(KIND STREQUAL "static")
  set(nm_args -g --defined-only)
  set(kinds "^[TDBRCG]$")    # strong definitions only
  set(internal "^_Z[A-Z]*N[rVKRO]*2sm")  # sm::..., its vtables/typeinfo/guards
else()
  message(FATAL_ERROR "KIND must be shared or static, not '${KIND}'")
endif()
execute_process(COMMAND nm ${nm_args} ${LIB} OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}")
endif()
string(REPLACE "\n" ";" lines "${nm_out}")
set(defined "")
set(foreign "")
foreach(line ${lines})
  if(NOT line MATCHES "^[0-9a-f]+ ([A-Za-z]) (.+)$")
    continue()
  endif()
  set(kind "${CMAKE_MATCH_1}")
  set(sym "${CMAKE_MATCH_2}")
  # ASan's ODR indicators of our globals: clang names them __odr_asan_gen_<name>,
  # gcc __odr_asan.<name> (sm::kProbeSizes has one in a gcc ASan build).
  if(NOT kind MATCHES "${kinds}" OR sym MATCHES "^__(odr_asan_gen_|odr_asan[.]|asan_|tsan_|ubsan_|sanitizer_)")
    continue()  # not a definition of ours, or a sanitizer build's instrumentation
  endif()
  if(sym MATCHES "^sm_")
    list(APPEND defined "${sym}")
  elseif(NOT sym MATCHES "${internal}")
    list(APPEND foreign "${sym}")
  endif()
endforeach()
if(foreign)
  message(FATAL_ERROR "${LIB}: global symbols that are neither sm_ functions nor allowed "
                      "internals (${KIND}): ${foreign}")
endif()

file(READ ${HEADER} text)
string(REGEX MATCHALL "SM_API [^;]*[ *](sm_[a-z0-9_]+)\\(" decls "${text}")
set(missing "")
foreach(d ${decls})
  string(REGEX MATCH "(sm_[a-z0-9_]+)\\($" m "${d}")
  string(REGEX REPLACE "\\($" "" name "${m}")
  list(FIND defined "${name}" idx)
  if(idx EQUAL -1)
    list(APPEND missing "${name}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "declared in ${HEADER} but not defined by ${LIB}: ${missing}")
endif()
list(LENGTH defined n)
message(STATUS "${LIB}: ${n} sm_ functions, every declared one present")
