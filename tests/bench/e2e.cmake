# SPDX-License-Identifier: Apache-2.0
# End-to-end benchmark (issue 8 point 8): broker -> iggy-s3-sink -> S3, 1 KiB JSON messages,
# json_lines and raw, gzip on and off, against discard-s3 (below: measures the daemon, not
# the store) and a real Ceph RGW. Built by the default build, never run by ctest:
#   tests/bench/e2e_bench.py --build build          (prints a markdown table)
add_executable(discard-s3 ${CMAKE_CURRENT_LIST_DIR}/discard_s3.cpp)
target_link_libraries(discard-s3 PRIVATE common_net s3 OpenSSL::SSL iss_warnings fmt::fmt)
# GCC 12 false positive on Asio coroutine frames (operator new/delete of awaitable_frame).
target_compile_options(discard-s3 PRIVATE -Wno-mismatched-new-delete)
# The plumbing of the benchmark's peers (--peer-cmd templates, --dry-run, the crash runs'
# count of missing and duplicated messages); fast, nothing started (issue 35).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME bench.peers COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/e2e_peers_test.py)
set_tests_properties(bench.peers PROPERTIES LABELS "unit;bench" TIMEOUT 120
                     FAIL_REGULAR_EXPRESSION "FAIL ")
