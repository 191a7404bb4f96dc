# SPDX-License-Identifier: Apache-2.0
# The version comes from project(); the binary prints it with --version.
set(ISS_VERSION "${PROJECT_VERSION}")
# The commit (build_info{commit}, --version): `git rev-parse --short HEAD` where the tree has
# its .git; a build without it (docker/Dockerfile: .git is not in the context) passes it as
# -DISS_GIT_REV=<commit>.
set(ISS_GIT_REV "" CACHE STRING "Commit of the sources when they carry no .git (empty: asked from git)")
find_package(Git QUIET)
if(NOT ISS_GIT_REV AND GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE ISS_GIT_REV
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/version.hpp.in ${CMAKE_BINARY_DIR}/generated/common/version.hpp @ONLY)
