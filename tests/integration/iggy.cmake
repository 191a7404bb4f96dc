# SPDX-License-Identifier: Apache-2.0
# ---- Iggy: lib/iggy's client against iggy-test-broker, captured requests replayed against
# the broker, and the iggy-produce CLI. One binary; one CTest test per tag so failures are
# reported by topic and each has its own TIMEOUT.
add_executable(integration_iggy ${CMAKE_CURRENT_LIST_DIR}/iggy_test.cpp)
target_link_libraries(integration_iggy PRIVATE catch_main iggy proto_server PkgConfig::XXHASH iss_warnings)
# GCC 12: false -Wmismatched-new-delete on inlined asio::awaitable frames (GCC bug 109224).
target_compile_options(integration_iggy PRIVATE -Wno-mismatched-new-delete)
target_compile_definitions(integration_iggy PRIVATE
  IGGY_TEST_BROKER="$<TARGET_FILE:iggy-test-broker>" IGGY_PRODUCE="$<TARGET_FILE:iggy-produce>")
add_dependencies(integration_iggy iggy-test-broker iggy-produce)
foreach(tag client bulk offsets group rebalance persist auth reconnect tls replay produce faults heartbeat errors evict)
  add_test(NAME integration.iggy.${tag} COMMAND integration_iggy "[${tag}]")
  set_tests_properties(integration.iggy.${tag} PROPERTIES LABELS "integration;iggy" TIMEOUT 180
    ENVIRONMENT "CI=$ENV{CI}")
endforeach()
