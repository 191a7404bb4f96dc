# SPDX-License-Identifier: Apache-2.0
# ISS_SANITIZE: builds every target (libraries, the daemon, tests, test servers) with GCC's or
# clang's sanitizers: `address`, `undefined`, `address,undefined` (leak detection comes with
# address), or `thread` (alone: ThreadSanitizer excludes the others). scripts/sanitize makes
# such a build in its own build dir and runs the tests under it (docs/testing.md).
#
# Every finding is fatal (-fno-sanitize-recover): a UBSan report stops the process instead of
# scrolling past. Frame pointers stay, so reports and leak stacks are complete.
set(ISS_SANITIZE "" CACHE STRING "Sanitizers for every target: address, undefined, address,undefined, or thread")

if(ISS_SANITIZE)
  string(REPLACE "," ";" _iss_san_list "${ISS_SANITIZE}")
  foreach(_s IN LISTS _iss_san_list)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "ISS_SANITIZE=${ISS_SANITIZE}: '${_s}' is not one of address, undefined, thread")
    endif()
  endforeach()
  if("thread" IN_LIST _iss_san_list AND NOT ISS_SANITIZE STREQUAL "thread")
    message(FATAL_ERROR "ISS_SANITIZE=${ISS_SANITIZE}: thread cannot be combined with another sanitizer")
  endif()
  set(_iss_san_flags -fsanitize=${ISS_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(${_iss_san_flags})
  add_link_options(${_iss_san_flags})
  message(STATUS "sanitizers: ${ISS_SANITIZE}")
endif()
