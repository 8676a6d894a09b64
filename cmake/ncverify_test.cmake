# ncverify_add_tests(NAME LABEL LIBS ... SOURCES ... [TIMEOUT S]): one gtest executable per
# folder's tests/, registered test by test with ctest labels: the area LABEL (unit, property,
# solver, hostile, frontend, report) and the tier.
#
# Tiers (README.md "Tests"; `ci/test --list-tiers`): a test whose gtest name starts with "Deep" (a
# suite named Deep..., or an instantiation prefixed Deep/) is in the deep tier, label `deep`; every
# other test is in the default tier, label `default`. `ctest --preset default` runs the default
# tier, `ctest --preset deep` both. The name carries the tier so that a reader of the test, of
# ctest's output and of a JUnit file sees it without looking up a list.
#
# JUnit XML for the whole run comes from `ctest --output-junit` (ci/test writes
# build/default/ctest-junit.xml).
function(ncverify_add_tests name label)
  if(NCVERIFY_FUZZ_ONLY)
    return()  # a fuzzing build has no tests (and no GoogleTest)
  endif()
  cmake_parse_arguments(ARG "" "TIMEOUT" "LIBS;SOURCES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  # GoogleTest (and nlohmann/json, which most test files use) parsed once per executable instead
  # of once per file, for executables of more than one file.
  list(LENGTH ARG_SOURCES n_sources)
  if(NCVERIFY_PCH AND n_sources GREATER 1)
    target_precompile_headers(${name} PRIVATE <gtest/gtest.h> <nlohmann/json.hpp> <string>
                              <vector> <map>)
    # With the standard headers parsed first, GCC 12 inlines std::string copies differently and
    # reports its known false -Wstringop-overflow / -Warray-bounds inside char_traits (GCC bugs
    # 105329, 105651).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${name} PRIVATE -Wno-stringop-overflow -Wno-array-bounds
                             -Wno-stringop-overread)
    endif()
  endif()
  set(properties)
  if(ARG_TIMEOUT)  # seconds per test: a hang fails the test instead of stalling the run
    set(properties PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  endif()
  # Discovered twice with complementary filters, each list named for its tier.
  gtest_discover_tests(${name} TEST_FILTER "-Deep*" TEST_LIST ${name}_default_TESTS
                       DISCOVERY_TIMEOUT 60 ${properties})
  gtest_discover_tests(${name} TEST_FILTER "Deep*" TEST_LIST ${name}_deep_TESTS
                       DISCOVERY_TIMEOUT 60 ${properties})
  # The labels are set by a file ctest includes after the discovered tests: a list value passed
  # through gtest_discover_tests's PROPERTIES loses its separator (CMake 3.25).
  set(tier_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_tiers.cmake)
  file(WRITE ${tier_file}
       "foreach(t IN LISTS ${name}_default_TESTS)\n"
       "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${label};default\")\n"
       "endforeach()\n"
       "foreach(t IN LISTS ${name}_deep_TESTS)\n"
       "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${label};deep\")\n"
       "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${tier_file})
endfunction()

# ncverify_set_test_labels(TESTS test... LABELS label...): the labels of a test added with add_test (the
# fuzz replays, the lint checks), with its tier: `default` unless the list says `deep`.
function(ncverify_set_test_labels)
  cmake_parse_arguments(ARG "" "" "TESTS;LABELS" ${ARGN})
  set(labels ${ARG_LABELS})
  if(NOT "deep" IN_LIST labels)
    list(APPEND labels default)
  endif()
  set_tests_properties(${ARG_TESTS} PROPERTIES LABELS "${labels}")
endfunction()
