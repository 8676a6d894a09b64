// Internal to the timing model: cost pieces shared by the scheduler (timing.cpp) and the cost
// function (costs.cpp).
#pragma once

#include "model/timing/timing.h"

namespace ncv {
inline namespace timing {

int dma_engines_used(const CostTable& t, const TraceEvent& ev);
// A DMA whose every contiguous run is one element (a transposing load or store).
bool element_wise_dma(const TraceEvent& ev);
// Time the transfer's data takes on the engines it uses, and the share of the core's whole DMA
// bandwidth it occupies.
double dma_transfer_ns(const CostTable& t, const TraceEvent& ev);
double dma_pool_ns(const CostTable& t, const TraceEvent& ev);
double matmul_ns(const CostTable& t, const TraceEvent& ev);
double load_stationary_ns(const CostTable& t, const TraceEvent& ev);

}  // namespace timing
}  // namespace ncv
