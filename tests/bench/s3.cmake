# SPDX-License-Identifier: Apache-2.0
# bench_s3: uploads every file of a directory to RGW with lib/s3 (PutObject, or multipart
# above s3 part size), N in flight; prints one JSON line (seconds, CPU seconds, bytes).
# s3_compare.py runs it (signed and unsigned payload) next to Debian's awscli and rclone on
# the same files and server and prints the table:
#   tests/bench/s3_compare.py --build build            (starts its own RGW)
add_executable(bench_s3 ${CMAKE_CURRENT_LIST_DIR}/s3_bench.cpp)
target_link_libraries(bench_s3 PRIVATE s3 iss_warnings fmt::fmt)
target_compile_options(bench_s3 PRIVATE -Wno-mismatched-new-delete)
