// The `ncverify` subcommands. Each lives in its own cmd_<name>.cpp and registers itself here;
// main.cpp lists them in kCommands. Adding a subcommand = one new file + one line in each.
#pragma once

#include "tools/cli_common.h"

namespace ncv::cli {

void register_run(CLI::App& app, Action& action);        // cmd_run.cpp
void register_dump(CLI::App& app, Action& action);       // cmd_dump.cpp
void register_oracle(CLI::App& app, Action& action);     // cmd_oracle.cpp
void register_list(CLI::App& app, Action& action);       // cmd_list.cpp
void register_check(CLI::App& app, Action& action);      // cmd_check.cpp
void register_report(CLI::App& app, Action& action);     // cmd_report.cpp
void register_bench(CLI::App& app, Action& action);      // cmd_bench.cpp
void register_calibrate(CLI::App& app, Action& action);  // cmd_calibrate.cpp
void register_bugs(CLI::App& app, Action& action);       // cmd_bugs.cpp
void register_prove(CLI::App& app, Action& action);      // cmd_prove.cpp
void register_frontier(CLI::App& app, Action& action);   // cmd_frontier.cpp
void register_import(CLI::App& app, Action& action);     // cmd_import.cpp
void register_equiv(CLI::App& app, Action& action);      // cmd_equiv.cpp
void register_adopt(CLI::App& app, Action& action);      // cmd_adopt.cpp

}  // namespace ncv::cli
