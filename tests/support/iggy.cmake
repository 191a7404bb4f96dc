# SPDX-License-Identifier: Apache-2.0
# ---- Iggy: the test broker (a test double of server 0.8.0) and the producer tool.
# iggy_broker_core: the broker's semantic core, no I/O but its --data files; unit-tested in
# tests/unit/iggy.
iss_library(iggy_broker_core
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/broker_state.cpp
          ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/broker_auth.cpp
          ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/broker_offsets.cpp
          ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/broker_groups.cpp
          ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/broker_persistence.cpp
          ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/users.cpp
  PUBLIC common proto_server PkgConfig::XXHASH Boost::json)

# iggy_broker_wire: the broker's request handling above the core, sans-io (G2 side, admin
# commands and their codecs); unit-tested in tests/unit/iggy.
iss_library(iggy_broker_wire
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/admin_wire.cpp
          ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/admin_handler.cpp
          ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/g2_handler.cpp
  PUBLIC iggy_broker_core proto_server)
target_include_directories(iggy_broker_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})

# iggy-test-broker: the G1 server around the core (Asio via common_net, codecs from proto and
# its server side, proto_server).
add_executable(iggy-test-broker ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/main.cpp)
target_link_libraries(iggy-test-broker PRIVATE iggy_broker_wire iggy_broker_core proto_server common_net iss_warnings)

# iggy-produce: producer CLI over lib/iggy (demo, smoke tests, benchmarks).
add_executable(iggy-produce ${CMAKE_CURRENT_LIST_DIR}/iggy_produce/main.cpp)
target_link_libraries(iggy-produce PRIVATE iggy iss_warnings)
# GCC 12 reports a false -Wmismatched-new-delete on inlined asio::awaitable frames
# (GCC bug 109224): coroutine code turns it off, nothing else.
target_compile_options(iggy-produce PRIVATE -Wno-mismatched-new-delete)
target_compile_options(iggy-test-broker PRIVATE -Wno-mismatched-new-delete)
