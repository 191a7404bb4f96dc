# SPDX-License-Identifier: Apache-2.0
# bench_format: formatting throughput (messages/s, MB/s of output and of payload) for 1 KiB
# JSON payloads: json_lines and raw, with and without gzip.
#   build/tests/bench/bench_format [seconds-per-measurement, default 2]
add_executable(bench_format ${CMAKE_CURRENT_LIST_DIR}/format_bench.cpp)
target_link_libraries(bench_format PRIVATE format iss_warnings fmt::fmt)
