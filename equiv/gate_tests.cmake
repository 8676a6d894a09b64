# Tests of the gate: the Autocomp chain, the bug catalogue, harmless and precision-changing
# rewrites written as .nkir (label equiv). Included from equiv/CMakeLists.txt.
ncverify_add_tests(equiv_gate_tests equiv TIMEOUT 300 LIBS ncv_equiv ncv_properties SOURCES
  tests/chain_test.cpp
  tests/catalogue_test.cpp
  tests/rewrites_test.cpp
  tests/link_status_test.cpp
  tests/random_values_test.cpp
  tests/undefined_result_test.cpp
  tests/canonical_form_test.cpp
  tests/tutorial_links_test.cpp)
if(TARGET equiv_gate_tests)
  target_compile_definitions(equiv_gate_tests PRIVATE
    NCV_EQUIV_DATA_DIR="${PROJECT_SOURCE_DIR}/equiv/tests/data")
endif()
