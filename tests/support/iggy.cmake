# ---- Iggy: the test broker (a test double of server 0.8.0) and the producer tool.
# iggy_broker_core: the broker's semantic core, no I/O but its --data files; unit-tested in
# tests/unit/iggy.
iss_library(iggy_broker_core
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/iggy_broker/broker_state.cpp
  PUBLIC common PkgConfig::XXHASH
  PRIVATE Boost::json)
target_include_directories(iggy_broker_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
