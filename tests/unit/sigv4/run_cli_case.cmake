# SPDX-License-Identifier: Apache-2.0
# Runs `iggy-s3-sink sigv4` on one test case and checks its output (cmake -P script).
#   BIN       the iggy-s3-sink binary
#   CASE      the case folder (request.txt, context.json, expected files)
#   MODE      header | query         suite form, stdout byte for byte = <MODE>-signed-request.txt;
#                                    header also checks --verbose's canonical request and string to sign
#             doc-header | doc-query --doc-form, stdout byte for byte = header-/query-signed-request.txt
#             value-header | value-query  suite form; the signature value equals <form>-signature.txt
#   OUT       where to write stdout
cmake_minimum_required(VERSION 3.25)
set(flags)
if(MODE MATCHES "query$")
  list(APPEND flags --query)
  set(form query)
else()
  set(form header)
endif()
if(MODE MATCHES "^doc-")
  list(APPEND flags --doc-form)
endif()
if(MODE STREQUAL "header")
  list(APPEND flags --verbose)
endif()
execute_process(
  COMMAND ${BIN} sigv4 --request ${CASE}/request.txt --context ${CASE}/context.json ${flags}
  OUTPUT_FILE ${OUT} ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "iggy-s3-sink sigv4 exited ${rc}: ${err}")
endif()

if(MODE MATCHES "^value-")
  file(READ ${OUT} got)
  file(READ ${CASE}/${form}-signature.txt sig)
  if(form STREQUAL "header")
    set(needle "Signature=${sig}\n")
  else()
    set(needle "X-Amz-Signature=${sig} ")
  endif()
  string(FIND "${got}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "signature ${sig} not found in the output:\n${got}")
  endif()
  return()
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${CASE}/${form}-signed-request.txt RESULT_VARIABLE differ)
if(differ)
  file(READ ${OUT} got)
  file(READ ${CASE}/${form}-signed-request.txt want)
  message(FATAL_ERROR "output differs from ${CASE}/${form}-signed-request.txt\n--- got\n${got}\n--- want\n${want}\n---")
endif()

if(MODE STREQUAL "header")
  file(READ ${CASE}/header-canonical-request.txt cr)
  file(READ ${CASE}/header-string-to-sign.txt sts)
  set(needle "--- canonical request (header form)\n${cr}\n--- string to sign\n${sts}\n")
  string(FIND "${err}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "--verbose did not print the expected canonical request and string to sign:\n${err}")
  endif()
endif()
