# SPDX-License-Identifier: Apache-2.0
# bench_proto: poll replies of 1000 x 1 KiB messages decoded into views (messages/s, GB/s), with
# and without checksum verification and through the frame assembler; SendMessages encoding.
#   build/tests/bench/bench_proto [seconds-per-measurement, default 1]
add_executable(bench_proto ${CMAKE_CURRENT_LIST_DIR}/proto_bench.cpp)
target_link_libraries(bench_proto PRIVATE proto_server iss_warnings fmt::fmt)
