# SPDX-License-Identifier: Apache-2.0
# iceberg_catalog: the Iceberg REST catalog client (catalog_protocol.cpp without I/O, catalog.cpp
# over lib/http), authenticated with none, bearer, OAuth2 client credentials or SigV4 (lib/sigv4
# with the lib/aws credential chain). Included by lib/iceberg/CMakeLists.txt.
iss_library(iceberg_catalog
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/catalog_protocol.cpp ${CMAKE_CURRENT_LIST_DIR}/catalog.cpp
    ${CMAKE_CURRENT_LIST_DIR}/catalog_commit.cpp
  PUBLIC common http sigv4 aws
  PRIVATE Boost::json)
# GCC 12 false positive on Asio coroutine frames (operator new/delete of awaitable_frame).
target_compile_options(iceberg_catalog PRIVATE -Wno-mismatched-new-delete)
