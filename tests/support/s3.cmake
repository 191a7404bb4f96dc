# SPDX-License-Identifier: Apache-2.0
# S3 test doubles (owner: s3): the fault-injecting S3 front (tests/support/s3/fault_front.hpp).
add_library(iss_s3_fault_front STATIC ${CMAKE_CURRENT_LIST_DIR}/s3/fault_front.cpp)
target_include_directories(iss_s3_fault_front PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(iss_s3_fault_front PUBLIC http PRIVATE s3 iss_warnings)
# GCC 12 false positive on Asio coroutine frames (operator new/delete of awaitable_frame).
target_compile_options(iss_s3_fault_front PRIVATE -Wno-mismatched-new-delete)

# s3-fault-front: the same front as a process, rules added and cleared on stdin
# (tests/support/s3/main.cpp), for runs of the daemon as a process (tests/soak/soak.py).
add_executable(s3-fault-front ${CMAKE_CURRENT_LIST_DIR}/s3/main.cpp)
target_link_libraries(s3-fault-front PRIVATE iss_s3_fault_front Boost::json iss_warnings)
target_compile_options(s3-fault-front PRIVATE -Wno-mismatched-new-delete)
