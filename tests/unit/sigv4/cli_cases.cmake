# SPDX-License-Identifier: Apache-2.0
# CTest tests that run `iggy-s3-sink sigv4` on every case of tests/data/sigv4 and
# compare its output byte for byte with the case's *-signed-request.txt (issue 5). The case
# folders are listed at configure time; rerun cmake after adding cases.
set(_sigv4_cli_script ${CMAKE_CURRENT_SOURCE_DIR}/run_cli_case.cmake)
set(_sigv4_cli_out ${CMAKE_CURRENT_BINARY_DIR}/cli_out)
file(MAKE_DIRECTORY ${_sigv4_cli_out})

function(_sigv4_cli_test name dir mode)
  add_test(NAME cli.sigv4.${name}.${mode}
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:iggy-s3-sink> -DCASE=${dir} -DMODE=${mode}
            -DOUT=${_sigv4_cli_out}/${name}.${mode}.txt -P ${_sigv4_cli_script})
  set_tests_properties(cli.sigv4.${name}.${mode} PROPERTIES LABELS "unit;sigv4;cli" TIMEOUT 30)
endfunction()

if(NOT IS_DIRECTORY "${SIGV4_TESTDATA_DIR}")
  message(FATAL_ERROR "SigV4 test vectors not found at ${SIGV4_TESTDATA_DIR} (SIGV4_TESTDATA_DIR; they live in tests/data/sigv4)")
endif()

file(GLOB _sigv4_cases LIST_DIRECTORIES true "${SIGV4_TESTDATA_DIR}/*")
foreach(dir IN LISTS _sigv4_cases)
  if(IS_DIRECTORY ${dir} AND EXISTS ${dir}/context.json)
    get_filename_component(name ${dir} NAME)
    _sigv4_cli_test(${name} ${dir} header)
    _sigv4_cli_test(${name} ${dir} query)
  endif()
endforeach()

# s3-docs: the documentation's own form byte for byte (--doc-form), and the suite form by value.
file(GLOB _sigv4_docs LIST_DIRECTORIES true "${SIGV4_TESTDATA_DIR}/s3-docs/*")
foreach(dir IN LISTS _sigv4_docs)
  if(IS_DIRECTORY ${dir} AND EXISTS ${dir}/context.json)
    get_filename_component(name ${dir} NAME)
    if(EXISTS ${dir}/header-signed-request.txt)
      _sigv4_cli_test(s3-docs.${name} ${dir} doc-header)
      _sigv4_cli_test(s3-docs.${name} ${dir} value-header)
    endif()
    if(EXISTS ${dir}/query-signed-request.txt)
      _sigv4_cli_test(s3-docs.${name} ${dir} doc-query)
      _sigv4_cli_test(s3-docs.${name} ${dir} value-query)
    endif()
  endif()
endforeach()

# Usage errors exit 64 (tests/unit/daemon/exit_codes_cli.sh checks the code); a request that
# cannot be signed exits 1.
add_test(NAME cli.sigv4.usage COMMAND iggy-s3-sink sigv4 --request)
set_tests_properties(cli.sigv4.usage PROPERTIES LABELS "unit;sigv4;cli" TIMEOUT 10 WILL_FAIL TRUE)
add_test(NAME cli.sigv4.help COMMAND iggy-s3-sink sigv4 --help)
set_tests_properties(cli.sigv4.help PROPERTIES LABELS "unit;sigv4;cli" TIMEOUT 10 PASS_REGULAR_EXPRESSION "--request FILE")

# Cross-check against botocore (the AWS SDK for Python, installed with awscli) on seeded random
# S3 requests, header and presigned form. Needs python3 + botocore, hence not a unit test.
add_test(NAME cli.sigv4.botocore_crosscheck
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/botocore_crosscheck.py $<TARGET_FILE:iggy-s3-sink> 20261130 200)
set_tests_properties(cli.sigv4.botocore_crosscheck PROPERTIES LABELS "integration;s3;sigv4" TIMEOUT 300
  SKIP_RETURN_CODE 77 ENVIRONMENT "CI=$ENV{CI}")
