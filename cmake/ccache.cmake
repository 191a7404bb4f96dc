# SPDX-License-Identifier: Apache-2.0
# ccache when present; CCACHE_BASEDIR makes a fresh clone in another folder hit the cache (docs/architecture.md §7).
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_C_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=1 ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_C_COMPILER_LAUNCHER})
  message(STATUS "ccache: ${CCACHE_PROGRAM}")
endif()
