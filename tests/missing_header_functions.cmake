# sm_missing_header_functions(<header> <list of defined symbols> <out var>):
# the sm_ functions <header> declares (SM_API ... sm_name(...)) that are not in
# the list. One parse of the header for the symbol checks of both libraries
# (check_exports.cmake: the shared one, check_static_symbols.cmake: the archive).
function(sm_missing_header_functions header defined out)
  file(READ ${header} text)
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
  set(${out} "${missing}" PARENT_SCOPE)
endfunction()
