# SPDX-License-Identifier: Apache-2.0
# bench_iggy: lib/iggy poll throughput from iggy-test-broker on loopback (1 KiB messages,
# batches of 1000: messages/s, MB/s, client CPU seconds) and iggy-produce throughput.
#   build/tests/bench/bench_iggy [messages, default 200000] [message bytes, default 1024]
add_executable(bench_iggy ${CMAKE_CURRENT_LIST_DIR}/iggy_bench.cpp)
target_link_libraries(bench_iggy PRIVATE iggy iss_warnings fmt::fmt)
# GCC 12: false -Wmismatched-new-delete on inlined asio::awaitable frames (GCC bug 109224).
target_compile_options(bench_iggy PRIVATE -Wno-mismatched-new-delete)
target_compile_definitions(bench_iggy PRIVATE
  IGGY_TEST_BROKER="$<TARGET_FILE:iggy-test-broker>" IGGY_PRODUCE="$<TARGET_FILE:iggy-produce>")
add_dependencies(bench_iggy iggy-test-broker iggy-produce)
