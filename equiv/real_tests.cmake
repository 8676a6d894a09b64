# Tests of the real-arithmetic forms (real_form.h): online softmax against two-pass softmax, the
# exp homomorphism, erased rounding, the overflow gate's max pattern, and the limits.
ncverify_add_tests(equiv_real_tests unit LIBS ncv_equiv_real SOURCES tests/real_form_test.cpp)
