# End-to-end tests of the daemon (issue 8): the Iggy test broker + Ceph RGW (fixture `rgw`) +
# `iggy-s3-sink` as a process, checked with Debian's awscli. tests/integration/e2e/cases.py.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(ISS_E2E_CASES
  exactly_once crash_restart idle_flush sigterm_flush s3_outage group_failover stale_writer
  invalid_config bad_message_fail bad_message_skip bad_message_dead_letter)
foreach(case ${ISS_E2E_CASES})
  add_test(NAME e2e.${case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/cases.py ${case})
  set(timeout 300)
  if(case STREQUAL "crash_restart")
    set(timeout 900)
  endif()
  set_tests_properties(e2e.${case} PROPERTIES
    LABELS "integration;s3;iggy;e2e" TIMEOUT ${timeout}
    FIXTURES_REQUIRED rgw
    ENVIRONMENT "ISS_BINARY_DIR=${CMAKE_BINARY_DIR};RGW_DIR=${CMAKE_BINARY_DIR}/rgw;PYTHONDONTWRITEBYTECODE=1")
endforeach()
