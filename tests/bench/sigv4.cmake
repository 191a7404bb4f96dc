# SPDX-License-Identifier: Apache-2.0
# bench_sigv4: signatures per second (header, presign, with and without the key cache),
# SHA-256 of signed payloads (GB/s), aws-chunked signing (GB/s), URI encoding.
#   build/tests/bench/bench_sigv4 [seconds-per-measurement, default 1]
add_executable(bench_sigv4 ${CMAKE_CURRENT_LIST_DIR}/sigv4_bench.cpp)
target_link_libraries(bench_sigv4 PRIVATE sigv4 iss_warnings fmt::fmt)
