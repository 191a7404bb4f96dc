# ---- Pipeline (issue 8): the consumer loop and the Iggy adapters against iggy-test-broker,
# with an in-memory object store (the fakes of the unit tests): the group hand-over, the
# failover and explicit-offset polling as the 0.8.0 server semantics make them happen.
add_executable(integration_pipeline ${CMAKE_CURRENT_LIST_DIR}/pipeline_broker_test.cpp)
target_link_libraries(integration_pipeline PRIVATE catch_main pipeline_adapters iss_warnings)
target_include_directories(integration_pipeline PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit/pipeline)
target_compile_options(integration_pipeline PRIVATE -Wno-mismatched-new-delete)  # GCC bug 109224
target_compile_definitions(integration_pipeline PRIVATE IGGY_TEST_BROKER="$<TARGET_FILE:iggy-test-broker>")
add_dependencies(integration_pipeline iggy-test-broker)
foreach(tag single handover failover)
  add_test(NAME integration.pipeline.${tag} COMMAND integration_pipeline "[${tag}]")
  set_tests_properties(integration.pipeline.${tag} PROPERTIES LABELS "integration;iggy" TIMEOUT 180
    ENVIRONMENT "CI=$ENV{CI}")
endforeach()
