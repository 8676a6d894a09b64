# ncverify_add_tests(NAME LABEL LIBS ... SOURCES ...): one gtest executable per folder's tests/,
# registered test by test with a ctest label. JUnit XML for the whole run comes from
# `ctest --output-junit` (ci/test writes build/default/ctest-junit.xml).
function(ncverify_add_tests name label)
  if(NCVERIFY_FUZZ_ONLY)
    return()  # a fuzzing build has no tests (and no GoogleTest)
  endif()
  cmake_parse_arguments(ARG "" "TIMEOUT" "LIBS;SOURCES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  if(ARG_TIMEOUT)  # seconds per test: a hang fails the test instead of stalling the run
    gtest_discover_tests(${name} PROPERTIES LABELS ${label} TIMEOUT ${ARG_TIMEOUT}
                         DISCOVERY_TIMEOUT 60)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
