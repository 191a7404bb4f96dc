# SPDX-License-Identifier: Apache-2.0
# Iceberg tables (issue 36): the `iceberg` CTest fixture (a real Iceberg REST catalog, the Apache
# Iceberg project's REST catalog server from Maven Central, started by tests/support/iceberg/catalog
# with its tables on the `rgw` fixture's RGW; about 2-3 s to start), and the catalog client's tests
# against it. Label `iceberg` (also `integration;s3`): in the default run.
set(ISS_ICEBERG_CATALOG_DIR ${CMAKE_BINARY_DIR}/iceberg-catalog CACHE INTERNAL "run directory of the iceberg fixture")
set(ISS_ICEBERG_PYTHON ${CMAKE_SOURCE_DIR}/.cache/iceberg-rest/venv/bin/python CACHE INTERNAL
  "PyIceberg's venv (scripts/install-deps)")
add_test(NAME iceberg.start
  COMMAND ${CMAKE_SOURCE_DIR}/tests/support/iceberg/catalog start ${ISS_ICEBERG_CATALOG_DIR} ${ISS_RGW_DIR})
set_tests_properties(iceberg.start PROPERTIES FIXTURES_SETUP iceberg FIXTURES_REQUIRED rgw
  LABELS "integration;iceberg;s3" TIMEOUT 120)
add_test(NAME iceberg.stop COMMAND ${CMAKE_SOURCE_DIR}/tests/support/iceberg/catalog stop ${ISS_ICEBERG_CATALOG_DIR})
set_tests_properties(iceberg.stop PROPERTIES FIXTURES_CLEANUP iceberg LABELS "integration;iceberg;s3" TIMEOUT 60)

add_executable(integration_iceberg_catalog ${CMAKE_CURRENT_LIST_DIR}/iceberg/catalog_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/iceberg/catalog_commit_test.cpp ${CMAKE_CURRENT_LIST_DIR}/iceberg/table_step_test.cpp)
target_link_libraries(integration_iceberg_catalog PRIVATE catch_main iss_warnings iceberg_catalog pipeline_adapters
  iss_s3_fault_front
  Boost::json)
target_compile_options(integration_iceberg_catalog PRIVATE -Wno-mismatched-new-delete)
add_test(NAME integration.iceberg.catalog COMMAND integration_iceberg_catalog)
set_tests_properties(integration.iceberg.catalog PROPERTIES
  LABELS "integration;iceberg;s3" TIMEOUT 300 FIXTURES_REQUIRED "rgw;iceberg" SKIP_RETURN_CODE 77
  ENVIRONMENT "RGW_DIR=${ISS_RGW_DIR};ICEBERG_DIR=${ISS_ICEBERG_CATALOG_DIR};ICEBERG_PYTHON=${ISS_ICEBERG_PYTHON};ICEBERG_READ_TABLE=${CMAKE_CURRENT_LIST_DIR}/iceberg/read_table.py;CI=$ENV{CI}")

# End to end with the daemon (tests/integration/e2e/iceberg_cases.py; label e2e and iceberg, in
# the default run): two daemons in one group committing to one table through 10 SIGKILLs, read
# back by PyIceberg; a table outside s3.bucket refused at start; many partition values; the
# manifests' column statistics and a scan pruned by them; a catalog of the case's own stopped
# mid-run and started again; a hand-over in a group that does not wait for the commit interval;
# a topic created again while stopped (an offset reset, not a resume); a table or catalog path
# named wrongly (exit 78) and a table dropped mid-run.
foreach(case kills_two_daemons bucket_mismatch many_partition_values column_stats catalog_down hand_over
    topic_recreated named_wrongly)
  iss_e2e_test(e2e.iceberg.${case} iceberg_cases.py ${case} 600 EXTRA_LABELS iceberg
    EXTRA_ENV ICEBERG_DIR=${ISS_ICEBERG_CATALOG_DIR} ICEBERG_PYTHON=${ISS_ICEBERG_PYTHON}
    ICEBERG_READ_TABLE=${CMAKE_CURRENT_LIST_DIR}/iceberg/read_table.py)
  set_tests_properties(e2e.iceberg.${case} PROPERTIES FIXTURES_REQUIRED "rgw;iceberg")
endforeach()
# verify on a table several topics share (a skipped bad message, another writer's append), and
# a catalog refusing commits for a while (tests/integration/e2e/iceberg_verify_cases.py).
foreach(case shared_table catalog_refuses)
  iss_e2e_test(e2e.iceberg.${case} iceberg_verify_cases.py ${case} 600 EXTRA_LABELS iceberg
    EXTRA_ENV ICEBERG_DIR=${ISS_ICEBERG_CATALOG_DIR} ICEBERG_PYTHON=${ISS_ICEBERG_PYTHON}
    ICEBERG_READ_TABLE=${CMAKE_CURRENT_LIST_DIR}/iceberg/read_table.py)
  set_tests_properties(e2e.iceberg.${case} PROPERTIES FIXTURES_REQUIRED "rgw;iceberg")
endforeach()
