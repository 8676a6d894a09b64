// The schedule as a Chrome trace-event JSON file (PERFETTO: open it in ui.perfetto.dev or
// chrome://tracing): one process per core, one thread (track) per engine and DMA queue in a fixed
// order (tensor, vector, scalar, gpsimd, dma q0, q1, ...), one complete ("X") slice per
// instruction instance named by its op and loop indices ("matmul [i=3, j=5]"), with the indices,
// operand regions and bytes as args, and a flow arrow from each dependency on another track to the
// instance that waited for it (starting inside the dependency's slice, where Perfetto binds it).
// Times are in microseconds, rounded so that slices on one track never overlap as printed.
#pragma once

#include <ostream>

#include "model/timing/timing.h"

namespace ncv {
inline namespace timing {

void write_chrome_trace(std::ostream& out, const Program& p, const Trace& trace, const Schedule& s);

}  // namespace timing
}  // namespace ncv
