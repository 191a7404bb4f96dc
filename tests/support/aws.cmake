# SPDX-License-Identifier: Apache-2.0
# AWS credential endpoint doubles (owner: aws): IMDSv2, the container endpoint, STS and a
# re-signing S3 front on one loopback server (tests/support/aws/aws_test_server.hpp).
add_library(iss_aws_test_server STATIC ${CMAKE_CURRENT_LIST_DIR}/aws/aws_test_server.cpp)
target_include_directories(iss_aws_test_server PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(iss_aws_test_server PUBLIC http sigv4 PRIVATE iss_warnings)
target_compile_options(iss_aws_test_server PRIVATE -Wno-mismatched-new-delete)

# aws-test-server: the same doubles as a process (tests/support/aws/main.cpp), for the daemon's
# end-to-end runs (tests/integration/e2e/aws_cases.py).
add_executable(aws-test-server ${CMAKE_CURRENT_LIST_DIR}/aws/main.cpp)
target_link_libraries(aws-test-server PRIVATE iss_aws_test_server Boost::json iss_warnings)
target_compile_options(aws-test-server PRIVATE -Wno-mismatched-new-delete)
