# AWS credential endpoint doubles (owner: aws): IMDSv2, the container endpoint, STS and a
# re-signing S3 front on one loopback server (tests/support/aws/aws_test_server.hpp).
add_library(iss_aws_test_server STATIC ${CMAKE_CURRENT_LIST_DIR}/aws/aws_test_server.cpp)
target_include_directories(iss_aws_test_server PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(iss_aws_test_server PUBLIC http sigv4 PRIVATE iss_warnings)
target_compile_options(iss_aws_test_server PRIVATE -Wno-mismatched-new-delete)
