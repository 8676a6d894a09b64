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

}  // namespace ncv::kernels
