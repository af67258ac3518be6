# Proves cmake/check_layers.cmake catches what it is for: on a copy of src/
# it must pass as the tree is, and fail, naming the file, when a lower layer
# includes a higher one, when a file includes another layer's internals (the
# engine reaching into a backend), or when two headers include each other.
#   cmake -DSRC=<src> -DCHECKER=<check_layers.cmake> -DWORK=<scratch dir> -P check_layers_test.cmake

function(run_checker dir expect_ok needle)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DSRC=${dir} -P "${CHECKER}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "the checker refused the real tree:\n${out}${err}")
  endif()
  if(NOT expect_ok)
    if(rc EQUAL 0)
      message(FATAL_ERROR "the checker accepted a tree with ${needle}")
    endif()
    string(FIND "${err}" "${needle}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "the checker failed without naming ${needle}:\n${err}")
    endif()
  endif()
endfunction()

function(fresh_copy name out)
  set(dir "${WORK}/${name}")
  file(REMOVE_RECURSE "${dir}")
  file(COPY "${SRC}/" DESTINATION "${dir}")
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

run_checker("${SRC}" TRUE "")

fresh_copy(up dir)
file(APPEND "${dir}/core/error.cpp" "#include \"engine/tensor.hpp\"\n")
run_checker("${dir}" FALSE "src/core/error.cpp: #include \"engine/tensor.hpp\": layer core may not include engine")

fresh_copy(internals dir)
file(APPEND "${dir}/engine/copies.cpp" "#include \"backend/cpu/thread_pool.hpp\"\n")
run_checker("${dir}" FALSE "layer engine may not include backend/cpu")

fresh_copy(abi_down dir)
file(APPEND "${dir}/abi/c_api_memory.cpp" "#include \"memory/allocator.hpp\"\n")
run_checker("${dir}" FALSE "layer abi may not include memory")

fresh_copy(cycle dir)
file(WRITE "${dir}/layout/cycle_a.hpp" "#pragma once\n#include \"layout/cycle_b.hpp\"\n")
file(WRITE "${dir}/layout/cycle_b.hpp" "#pragma once\n#include \"layout/cycle_a.hpp\"\n")
run_checker("${dir}" FALSE "include cycle")

fresh_copy(relative dir)
file(APPEND "${dir}/layout/coalesce.cpp" "#include \"../engine/tensor.hpp\"\n")
run_checker("${dir}" FALSE "write includes from src/")

file(REMOVE_RECURSE "${WORK}")
message(STATUS "check_layers refuses upward includes, reaching into internals, cycles and ../ paths")
