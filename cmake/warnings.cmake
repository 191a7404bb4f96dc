# SPDX-License-Identifier: Apache-2.0
# The same warning flags in every build; -Werror with ISS_WERROR=ON, which scripts/test (and so
# CI) sets.
# Third-party headers are included as SYSTEM, so their warnings never trip -Werror.
add_library(iss_warnings INTERFACE)
target_compile_options(iss_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow=local -Wcast-align
  -Wimplicit-fallthrough -Wmissing-declarations -Wno-missing-field-initializers
  $<$<BOOL:${ISS_WERROR}>:-Werror>)

# iss_module(name SOURCES ...): a project library with our warnings and `lib/`-relative includes.
function(iss_library name)
  cmake_parse_arguments(A "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/lib ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${A_PUBLIC} PRIVATE iss_warnings ${A_PRIVATE})
endfunction()
