// The NeuronCore generation the registry-wide tests, the property suite and the bug catalogue run
// a variant on when they do not sweep generations: the interpreter's default trn1, except for a
// variant that needs NeuronCore-v3 (attention_tkg: the source uses dma_transpose and sendrecv,
// and its PE transposes of -inf are exact only from v3 on), which runs on trn2. A stopgap until
// Variant::generations (helper D) names the generations each variant supports; this is the one
// place that then reads it.
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
