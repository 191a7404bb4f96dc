# SPDX-License-Identifier: Apache-2.0
# ---- Iggy G2 (issue 9): lib/iggy's client in `0.9` / `auto` mode against iggy-test-broker in
# G2 mode. One binary; one CTest test per tag.
add_executable(integration_iggy_g2 ${CMAKE_CURRENT_LIST_DIR}/iggy_g2_test.cpp)
target_link_libraries(integration_iggy_g2 PRIVATE catch_main iggy proto iss_warnings)
# GCC 12: false -Wmismatched-new-delete on inlined asio::awaitable frames (GCC bug 109224).
target_compile_options(integration_iggy_g2 PRIVATE -Wno-mismatched-new-delete)
target_compile_definitions(integration_iggy_g2 PRIVATE IGGY_TEST_BROKER="$<TARGET_FILE:iggy-test-broker>")
add_dependencies(integration_iggy_g2 iggy-test-broker)
foreach(tag client group auto version retry auth replay rejection evict)
  add_test(NAME integration.iggy.g2.${tag} COMMAND integration_iggy_g2 "[g2][${tag}]")
  set_tests_properties(integration.iggy.g2.${tag} PROPERTIES LABELS "integration;iggy" TIMEOUT 120
    ENVIRONMENT "CI=$ENV{CI}")
endforeach()
