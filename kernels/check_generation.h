// The NeuronCore generation the registry-wide tests, the property suite and the bug catalogue run
// a variant on when they do not sweep generations: its default (Variant::generations' first when
// it does not run on trn1, else trn1), as a HwConfig.
#pragma once

#include "kernels/variant.h"
#include "model/hw/hw_config.h"

namespace ncv::kernels {

const HwConfig& check_generation(const Variant& v);

// Whether the registry-wide solver tests (solver/tests) prove v's option programs. Not
// attention_tkg: its 32 option programs take ~260 s to prove on the 2-core machine (beyond the
// default ctest budget), and the initialization class does not model the core-to-core writes of
// its LNC2 exchanges (those reads are unknown, not failed). `ncverify prove attention_tkg --gen
// trn2` proves it on demand (kernels/README.md).
bool in_registry_prove_tests(const Variant& v);

}  // namespace ncv::kernels
