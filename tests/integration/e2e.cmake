# End-to-end tests of the daemon (issue 8): the Iggy test broker + Ceph RGW (fixture `rgw`) +
# `iggy-s3-sink` as a process, checked with Debian's awscli. tests/integration/e2e/cases.py.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(ISS_E2E_CASES
  exactly_once crash_restart idle_flush sigterm_flush s3_outage group_failover stale_writer group_sigstop
  invalid_config lag_missing_and_sighup bad_message_fail bad_message_skip bad_message_dead_letter
  admin_metrics readyz systemd_notify verify_bucket probe_interrupted)
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

set(_e2e_g1_cases)
foreach(case ${ISS_E2E_CASES})
  # invalid_config: no Iggy involved; the admin/notify cases test the daemon's service face,
  # and probe_interrupted the start-up probe, which do not depend on the transport.
  if(NOT case MATCHES "^(invalid_config|admin_metrics|readyz|systemd_notify|verify_bucket|probe_interrupted)$")
    list(APPEND _e2e_g1_cases g1:0.8:${case})
  endif()
endforeach()

# ---- issue 9: the same cases with the protocol pinned. The cases above run with the default
# `iggy.protocol: auto`, which finds G2 (protocol 0.11.0) on the test broker (it serves both
# generations on one port); these pin G1 (0.8) and G2 (0.9) explicitly.
# Every case also runs pinned to G1, so the whole suite passes over both transports (issue 9).
foreach(proto_case ${_e2e_g1_cases}
                   g2:0.9:exactly_once g2:0.9:sigterm_flush g2:0.9:group_failover g2:0.9:stale_writer
                   g2:0.9:crash_restart g2:0.9:group_sigstop)
  string(REPLACE ":" ";" _parts ${proto_case})
  list(GET _parts 0 _gen)
  list(GET _parts 1 _ver)
  list(GET _parts 2 _case)
  set(_timeout 300)
  if(_case STREQUAL "crash_restart")
    set(_timeout 900)
  endif()
  add_test(NAME e2e.${_gen}.${_case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/cases.py ${_case})
  set_tests_properties(e2e.${_gen}.${_case} PROPERTIES
    LABELS "integration;s3;iggy;e2e" TIMEOUT ${_timeout}
    FIXTURES_REQUIRED rgw
    ENVIRONMENT "ISS_BINARY_DIR=${CMAKE_BINARY_DIR};RGW_DIR=${CMAKE_BINARY_DIR}/rgw;PYTHONDONTWRITEBYTECODE=1;ISS_E2E_PROTOCOL=${_ver}")
endforeach()

# Typed formats end to end: Parquet and CSV objects read back by DuckDB (tests/readers),
# exactly-once through SIGKILLs with Parquet. tests/integration/e2e/typed_cases.py.
foreach(case parquet_queries csv_queries parquet_crashes)
  add_test(NAME e2e.${case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/typed_cases.py ${case})
  set_tests_properties(e2e.${case} PROPERTIES
    LABELS "integration;s3;iggy;e2e" TIMEOUT 900
    FIXTURES_REQUIRED rgw
    ENVIRONMENT "ISS_BINARY_DIR=${CMAKE_BINARY_DIR};RGW_DIR=${CMAKE_BINARY_DIR}/rgw;PYTHONDONTWRITEBYTECODE=1")
endforeach()

# The lake layout end to end: keys from a tenant header and a payload time in Europe/Berlin
# across both DST switches, through 10 SIGKILLs, checked by an independent computation and by
# DuckDB with hive_partitioning (JSON Lines and Parquet). tests/integration/e2e/lake_cases.py.
foreach(case dst_crashes hive_parquet)
  add_test(NAME e2e.lake.${case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/lake_cases.py ${case})
  set_tests_properties(e2e.lake.${case} PROPERTIES
    LABELS "integration;s3;iggy;e2e" TIMEOUT 900
    FIXTURES_REQUIRED rgw
    ENVIRONMENT "ISS_BINARY_DIR=${CMAKE_BINARY_DIR};RGW_DIR=${CMAKE_BINARY_DIR}/rgw;PYTHONDONTWRITEBYTECODE=1")
endforeach()

# Short-lived AWS credentials end to end: the daemon gets 6-second credentials from
# aws-test-server (container endpoint through a password proxy; web identity + AssumeRole),
# which fronts RGW. tests/integration/e2e/aws_cases.py.
foreach(case aws_container_refresh aws_web_identity_refresh)
  add_test(NAME e2e.${case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/aws_cases.py ${case})
  set_tests_properties(e2e.${case} PROPERTIES
    LABELS "integration;s3;iggy;e2e;aws" TIMEOUT 300
    FIXTURES_REQUIRED rgw
    ENVIRONMENT "ISS_BINARY_DIR=${CMAKE_BINARY_DIR};RGW_DIR=${CMAKE_BINARY_DIR}/rgw;PYTHONDONTWRITEBYTECODE=1")
endforeach()

# Scale: the memory budget over a backlog on 200 partitions, and 1 000 mostly idle partitions in
# one daemon (tests/integration/e2e/scale_cases.py; SCALE_* knobs there for bigger runs).
foreach(case memory_backlog many_partitions)
  add_test(NAME e2e.${case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/scale_cases.py ${case})
  set_tests_properties(e2e.${case} PROPERTIES
    LABELS "integration;s3;iggy;e2e" TIMEOUT 900
    FIXTURES_REQUIRED rgw
    ENVIRONMENT "ISS_BINARY_DIR=${CMAKE_BINARY_DIR};RGW_DIR=${CMAKE_BINARY_DIR}/rgw;PYTHONDONTWRITEBYTECODE=1")
endforeach()
