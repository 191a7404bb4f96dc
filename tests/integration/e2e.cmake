# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the daemon: the Iggy test broker + Ceph RGW (fixture `rgw`) +
# `iggy-s3-sink` as a process, checked with Debian's awscli. tests/integration/e2e/*.py.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# iss_e2e_test(<test name> <script in e2e/> <case> <timeout s> [EXTRA_LABELS l...] [EXTRA_ENV v...])
# One CTest test running `e2e/<script> <case>` against the shared RGW fixture.
function(iss_e2e_test name script case timeout)
  cmake_parse_arguments(A "" "" "EXTRA_LABELS;EXTRA_ENV" ${ARGN})
  add_test(NAME ${name}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/${script} ${case})
  set(labels integration s3 iggy e2e ${A_EXTRA_LABELS})
  set(env ISS_BINARY_DIR=${CMAKE_BINARY_DIR} RGW_DIR=${CMAKE_BINARY_DIR}/rgw PYTHONDONTWRITEBYTECODE=1 ${A_EXTRA_ENV})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} FIXTURES_REQUIRED rgw
    ENVIRONMENT "${env}")
endfunction()

set(ISS_E2E_CASES
  exactly_once crash_restart idle_flush sigterm_flush s3_outage group_failover group_one_each stale_writer group_sigstop
  invalid_config lag_missing config_reload bad_message_fail bad_message_skip bad_message_dead_letter
  admin_metrics readyz systemd_notify verify_bucket probe_interrupted)
set(_e2e_g1_cases)
foreach(case ${ISS_E2E_CASES})
  set(timeout 300)
  if(case STREQUAL "crash_restart")
    set(timeout 900)
  endif()
  iss_e2e_test(e2e.${case} cases.py ${case} ${timeout})
  # invalid_config: no Iggy involved; the admin/notify cases test the daemon's service face,
  # and probe_interrupted the start-up probe, which do not depend on the transport.
  if(NOT case MATCHES "^(invalid_config|admin_metrics|readyz|systemd_notify|verify_bucket|probe_interrupted)$")
    list(APPEND _e2e_g1_cases g1:0.8:${case})
  endif()
endforeach()

# The same cases with the protocol pinned. The cases above run with the default
# `iggy.protocol: auto`, which finds G2 (protocol 0.11.0) on the test broker (it serves both
# generations on one port); these pin G1 (0.8) and G2 (0.9) explicitly, so the whole suite
# passes over both transports.
foreach(proto_case ${_e2e_g1_cases}
                   g2:0.9:exactly_once g2:0.9:sigterm_flush g2:0.9:group_failover g2:0.9:stale_writer
                   g2:0.9:crash_restart g2:0.9:group_sigstop g2:0.9:group_one_each)
  string(REPLACE ":" ";" _parts ${proto_case})
  list(GET _parts 0 _gen)
  list(GET _parts 1 _ver)
  list(GET _parts 2 _case)
  set(_timeout 300)
  if(_case STREQUAL "crash_restart")
    set(_timeout 900)
  endif()
  iss_e2e_test(e2e.${_gen}.${_case} cases.py ${_case} ${_timeout} EXTRA_ENV ISS_E2E_PROTOCOL=${_ver})
endforeach()

# performance.workers: the exactly-once cases with formatting on the event-loop thread (1) and
# on a pool of 4 threads; the cases above run with the default (one per core).
# Label workers on the pool of 4 (scripts/sanitize --thread runs them under ThreadSanitizer).
foreach(case exactly_once crash_restart group_failover stale_writer bad_message_skip)
  set(_timeout 300)
  if(case STREQUAL "crash_restart")
    set(_timeout 900)
  endif()
  foreach(_w 1 4)
    set(_labels)
    if(_w EQUAL 4)
      set(_labels workers)
    endif()
    iss_e2e_test(e2e.workers${_w}.${case} cases.py ${case} ${_timeout} EXTRA_ENV ISS_E2E_WORKERS=${_w}
      EXTRA_LABELS ${_labels})
  endforeach()
endforeach()
iss_e2e_test(e2e.workers4.parquet_crashes typed_cases.py parquet_crashes 900 EXTRA_ENV ISS_E2E_WORKERS=4
  EXTRA_LABELS workers)
iss_e2e_test(e2e.workers4.dst_crashes lake_cases.py dst_crashes 900 EXTRA_ENV ISS_E2E_WORKERS=4 EXTRA_LABELS workers)

# Typed formats end to end: Parquet and CSV objects read back by DuckDB (tests/readers),
# exactly-once through SIGKILLs with Parquet. tests/integration/e2e/typed_cases.py.
foreach(case parquet_queries csv_queries parquet_crashes)
  iss_e2e_test(e2e.${case} typed_cases.py ${case} 900)
endforeach()

# The lake layout end to end: keys from a tenant header and a payload time in Europe/Berlin
# across both DST switches, through 10 SIGKILLs, checked by an independent computation and by
# DuckDB with hive_partitioning (JSON Lines and Parquet). tests/integration/e2e/lake_cases.py.
foreach(case dst_crashes hive_parquet)
  iss_e2e_test(e2e.lake.${case} lake_cases.py ${case} 900)
endforeach()

# Short-lived AWS credentials end to end: the daemon gets 6-second credentials from
# aws-test-server (container endpoint through a password proxy; web identity + AssumeRole),
# which fronts RGW. tests/integration/e2e/aws_cases.py.
# aws_web_identity_exit: probe, run, lag and verify end with their documented exit codes with
# web identity credentials (issue 41; clean under scripts/sanitize too).
foreach(case aws_container_refresh aws_web_identity_refresh aws_web_identity_exit)
  iss_e2e_test(e2e.${case} aws_cases.py ${case} 300 EXTRA_LABELS aws)
endforeach()

# Scale: the memory budget over a backlog on 200 partitions, and 1 000 mostly idle partitions in
# one daemon (tests/integration/e2e/scale_cases.py; SCALE_* knobs there for bigger runs).
foreach(case memory_backlog many_partitions)
  iss_e2e_test(e2e.${case} scale_cases.py ${case} 900)
endforeach()

# The monitoring files against a running daemon: every series the Grafana dashboard and the
# alert rules (packaging/monitoring/) name is on /metrics. tests/integration/e2e/monitoring_cases.py.
iss_e2e_test(e2e.monitoring_series monitoring_cases.py series 300 EXTRA_LABELS aws monitoring)

# Issue 40 (docs/operations.md, Faults): point 4, the source changes under a running daemon
# (a topic or its whole stream deleted and created again, under a single consumer and under a
# group member: the *_recreated_group cases, the member answered 5000 as by Iggy 0.8; topic_gone:
# one of two topics deleted, left gone while the other goes on, then back);
# point 1, the spool directory fails (spool_faults, as root: it mounts a tmpfs); point 3, the store
# refuses writes (store_refuses); point 5, the clock steps 1 h forward and back (clock_steps,
# libfaketime); point 7, the admin port under hostile clients (admin_hostile):
# tests/integration/e2e/fault_cases.py.
foreach(case partitions_added_single partitions_added_group topic_recreated_fail stream_recreated_fail
        topic_recreated_group stream_recreated_group topic_gone spool_faults
        store_refuses admin_hostile clock_steps)
  iss_e2e_test(e2e.faults.${case} fault_cases.py ${case} 300)
endforeach()
# The group cases over G1 (Iggy 0.8), where the member's polls of the topic created again answer
# 5000 ConsumerGroupIdNotFound (G2 0.9 answers the member 5006): before the fix /readyz stayed 503
# `poll: ConsumerGroupIdNotFound (5000)` for ever.
foreach(case topic_recreated_group stream_recreated_group)
  iss_e2e_test(e2e.g1.${case} fault_cases.py ${case} 300 EXTRA_ENV ISS_E2E_PROTOCOL=0.8)
endforeach()
# Point 4, iggy.on_offset_reset: earliest (the stream created again is read from 0 under new keys).
iss_e2e_test(e2e.faults.stream_recreated_earliest reset_cases.py stream_recreated_earliest 300)

# Issue 40, point 2: the network to the store and to Iggy (silent_network: packets dropped without a
# reset). As root: the daemon runs in a network namespace of the test's own with nft rules
# (tests/integration/e2e/net_fault_cases.py, netns.py). Without root, `ip` or `nft` the case prints
# SKIP and exits 77 (CTest: skipped); with CI=true it fails instead.
foreach(case silent_network dns_fails tls_certificates)
  iss_e2e_test(e2e.faults.${case} net_fault_cases.py ${case} 300 EXTRA_ENV CI=$ENV{CI})
  set_tests_properties(e2e.faults.${case} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# The daemon against a real Iggy server that is already running, given by the environment
# (IGGY_TEST_SERVER=host:port, IGGY_TEST_USER, IGGY_TEST_PASSWORD, IGGY_TEST_PROTOCOL=0.8|0.9,
# and per case IGGY_TEST_RESTART_CMD, IGGY_TEST_HEARTBEAT, IGGY_TEST_TOKEN, IGGY_TEST_TLS_*;
# tests/integration/e2e/real_server_cases.py). Label real-server. Without IGGY_TEST_SERVER (or a
# case's own setting) each prints "SKIP real_server.CASE: why" and CTest reports it skipped.
foreach(case exactly_once sigkill6 server_restart group_sigstop pat_login tls tools protocol_auto)
  add_test(NAME real_server.${case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/real_server_cases.py ${case})
  set_tests_properties(real_server.${case} PROPERTIES LABELS "real-server;integration;s3;iggy" TIMEOUT 1200
    FIXTURES_REQUIRED rgw SKIP_RETURN_CODE 77
    ENVIRONMENT "ISS_BINARY_DIR=${CMAKE_BINARY_DIR};RGW_DIR=${CMAKE_BINARY_DIR}/rgw;PYTHONDONTWRITEBYTECODE=1")
endforeach()

# Reloads that change nothing in the pipeline (unchanged file, shutdown.grace only, a refused
# new store, an invalid file): no drain, no request to the running store, /readyz 200
# throughout; then a real change drains exactly once. tests/integration/e2e/reload_cases.py.
iss_e2e_test(e2e.reload_in_place reload_cases.py in_place 300)
# An s3 change refused while a reload drains: the waiting configuration still applies.
iss_e2e_test(e2e.reload_refused_during_drain reload_cases.py refused_during_drain 300)
