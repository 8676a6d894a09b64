# Tests of the term layer (term store rules, symbolic executor self-check against the
# interpreter, evaluation). Included from equiv/CMakeLists.txt.
ncverify_add_tests(equiv_terms_tests unit LIBS ncv_equiv_terms ncv_kernels SOURCES
  tests/term_executor_test.cpp
  tests/term_rules_test.cpp
  tests/exp_bound_test.cpp)
if(TARGET equiv_terms_tests)
  target_compile_definitions(equiv_terms_tests PRIVATE
    NCV_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/model/examples")
endif()
