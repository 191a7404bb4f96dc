# SPDX-License-Identifier: Apache-2.0
# unit_iceberg_catalog: the REST catalog protocol without I/O (lib/iceberg/catalog_protocol.hpp).
# Included by tests/unit/iceberg/CMakeLists.txt.
iss_unit_test(iceberg_catalog
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/catalog_protocol_test.cpp
  LIBS iceberg_catalog
  LABELS iceberg
  TIMEOUT 60)
