// The record of which kernels and bug-catalogue entries a run judged, for the default test tier's
// coverage guard (README.md "Tests": every registered kernel and every catalogue entry must be
// judged by some default-tier test). Off unless the environment variable NCV_EXERCISED_LOG names
// a file; the test presets set it, so the command line run by a test records too.
#pragma once

#include <string_view>

namespace ncv::kernels {

// Appends `name` (a registered kernel, a catalogue entry, or whatever label a judged program
// carries) and a newline to $NCV_EXERCISED_LOG, once per name and process. Called where a
// verdict is computed: a check case (check_inputs) and an equivalence (equiv's run_equiv).
void note_exercised(std::string_view name);

}  // namespace ncv::kernels
