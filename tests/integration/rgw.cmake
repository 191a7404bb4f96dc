# SPDX-License-Identifier: Apache-2.0
# The `rgw` CTest fixture: one throwaway Ceph RGW for the whole test run (scripts/rgw).
# A test that needs S3 declares FIXTURES_REQUIRED rgw and reads ${ISS_RGW_DIR}/env
# (contract: tests/integration/README.md).
set(ISS_RGW_DIR ${CMAKE_BINARY_DIR}/rgw CACHE INTERNAL "run directory of the rgw fixture")
add_test(NAME rgw.start COMMAND ${CMAKE_SOURCE_DIR}/scripts/rgw start ${ISS_RGW_DIR})
set_tests_properties(rgw.start PROPERTIES FIXTURES_SETUP rgw LABELS "integration;s3" TIMEOUT 420)
add_test(NAME rgw.stop COMMAND ${CMAKE_SOURCE_DIR}/scripts/rgw stop ${ISS_RGW_DIR})
set_tests_properties(rgw.stop PROPERTIES FIXTURES_CLEANUP rgw LABELS "integration;s3" TIMEOUT 60)
