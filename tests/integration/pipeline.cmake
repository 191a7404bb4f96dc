# SPDX-License-Identifier: Apache-2.0
# ---- Pipeline (issue 8): the consumer loop and the Iggy adapters against iggy-test-broker,
# with an in-memory object store (the fakes of the unit tests): the group hand-over, the
# failover and explicit-offset polling as the 0.8.0 server semantics make them happen.
add_executable(integration_pipeline ${CMAKE_CURRENT_LIST_DIR}/pipeline_broker_test.cpp)
target_link_libraries(integration_pipeline PRIVATE catch_main pipeline_adapters iss_warnings)
target_include_directories(integration_pipeline PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/pipeline)
target_compile_options(integration_pipeline PRIVATE -Wno-mismatched-new-delete)  # GCC bug 109224
target_compile_definitions(integration_pipeline PRIVATE IGGY_TEST_BROKER="$<TARGET_FILE:iggy-test-broker>")
add_dependencies(integration_pipeline iggy-test-broker)
foreach(tag single handover failover evict)
  add_test(NAME integration.pipeline.${tag} COMMAND integration_pipeline "[${tag}]")
  set_tests_properties(integration.pipeline.${tag} PROPERTIES LABELS "integration;iggy" TIMEOUT 180
    ENVIRONMENT "CI=$ENV{CI}")
endforeach()
# The same loop with the real S3 path (lib/s3 through the fault front to the `rgw` fixture):
# the broker evicts the member while the front holds its upload, over G1 and G2.
add_executable(integration_pipeline_evict_upload ${CMAKE_CURRENT_LIST_DIR}/pipeline_evict_upload_test.cpp)
target_link_libraries(integration_pipeline_evict_upload PRIVATE catch_main pipeline_adapters iss_s3_fault_front
  iss_warnings)
target_include_directories(integration_pipeline_evict_upload PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/pipeline)
target_compile_options(integration_pipeline_evict_upload PRIVATE -Wno-mismatched-new-delete)  # GCC bug 109224
target_compile_definitions(integration_pipeline_evict_upload PRIVATE IGGY_TEST_BROKER="$<TARGET_FILE:iggy-test-broker>")
add_dependencies(integration_pipeline_evict_upload iggy-test-broker)
add_test(NAME integration.pipeline.evict_upload COMMAND integration_pipeline_evict_upload "[evict_upload]")
set_tests_properties(integration.pipeline.evict_upload PROPERTIES LABELS "integration;iggy;s3" TIMEOUT 240
  FIXTURES_REQUIRED rgw SKIP_RETURN_CODE 77 ENVIRONMENT "RGW_DIR=${CMAKE_BINARY_DIR}/rgw;CI=$ENV{CI}")
