// The schedule as a Chrome trace-event JSON file (PERFETTO: open it in ui.perfetto.dev or
// chrome://tracing): one process per core, one thread (track) per engine and DMA queue, one
// complete ("X") slice per instruction instance named by its op, with its operand regions and
// bytes as args, and a flow arrow from each dependency on another track to the instance that
// waited for it (starting inside the dependency's slice, where Perfetto binds it). Times are in
// microseconds.
#pragma once

#include <ostream>

#include "model/timing/timing.h"

namespace ncv {
inline namespace timing {

void write_chrome_trace(std::ostream& out, const Program& p, const Trace& trace, const Schedule& s);

}  // namespace timing
}  // namespace ncv
