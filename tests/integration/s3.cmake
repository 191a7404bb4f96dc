# SPDX-License-Identifier: Apache-2.0
# S3 client integration tests (owner: s3): lib/s3 + lib/http against the real Ceph RGW of the
# `rgw` fixture, directly and through the fault-injecting front.
# daemon/s3_wiring.cpp (s3.* -> client options) and daemon/s3_setup.cpp (client + probe at
# start) are compiled in: the integrity-default tests run the daemon's own start-up path.
add_executable(integration_s3 ${CMAKE_CURRENT_LIST_DIR}/s3_test.cpp ${CMAKE_SOURCE_DIR}/daemon/s3_wiring.cpp
  ${CMAKE_SOURCE_DIR}/daemon/s3_setup.cpp)
target_link_libraries(integration_s3 PRIVATE catch_main iss_warnings s3 pipeline_adapters iss_s3_fault_front config)
target_compile_options(integration_s3 PRIVATE -Wno-mismatched-new-delete)
add_test(NAME integration.s3 COMMAND integration_s3)
set_tests_properties(integration.s3 PROPERTIES
  LABELS "integration;s3" TIMEOUT 900 FIXTURES_REQUIRED rgw SKIP_RETURN_CODE 77
  ENVIRONMENT "RGW_DIR=${ISS_RGW_DIR};CI=$ENV{CI}")
# The probe subcommand against RGW: usable store, conditional Put honoured, Complete not (RGW 16);
# rejected TLS certificates of the store and of Iggy (a test broker over TLS): exit 1, not retried.
add_test(NAME integration.s3.probe_cli
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/probe_cli.sh $<TARGET_FILE:iggy-s3-sink> ${ISS_RGW_DIR}
          $<TARGET_FILE:iggy-test-broker>)
set_tests_properties(integration.s3.probe_cli PROPERTIES
  LABELS "integration;s3" TIMEOUT 180 FIXTURES_REQUIRED rgw)

# lib/aws against RGW: renewal of 3-second credentials during uploads (through the loopback
# credential server's re-signing front), RGW's own STS as a real issuer, and s3.tags /
# s3.storage_class read back from RGW (GetObjectTagging, HEAD).
add_executable(integration_aws ${CMAKE_CURRENT_LIST_DIR}/aws_test.cpp)
target_link_libraries(integration_aws PRIVATE catch_main iss_warnings s3 aws iss_aws_test_server Boost::json)
target_compile_options(integration_aws PRIVATE -Wno-mismatched-new-delete)
add_test(NAME integration.aws COMMAND integration_aws)
set_tests_properties(integration.aws PROPERTIES
  LABELS "integration;s3;aws" TIMEOUT 300 FIXTURES_REQUIRED rgw SKIP_RETURN_CODE 77
  ENVIRONMENT "RGW_DIR=${ISS_RGW_DIR};CI=$ENV{CI}")
# The sink's uploads through a real proxy (tinyproxy): absolute form, CONNECT, NO_PROXY.
add_test(NAME integration.s3.proxy_cli
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/proxy_cli.sh $<TARGET_FILE:iggy-s3-sink> ${ISS_RGW_DIR})
set_tests_properties(integration.s3.proxy_cli PROPERTIES
  LABELS "integration;s3" TIMEOUT 180 FIXTURES_REQUIRED rgw SKIP_RETURN_CODE 77 ENVIRONMENT "CI=$ENV{CI}")
