// fuzz_program (fuzz/README.md): random programs (fuzz/support/program_decoder.h) through the
// interpreter, with differential oracles:
//   1. fast vs reference: ExecMode::fast and ExecMode::reference give the same error, the same
//      outputs bit for bit and the same trace (semantics.h promises bit-identical paths);
//   2. trace-only vs values: a compute_values=false run gives the same trace and error, except
//      that an error only value runs can see (uninitialized or clobbered reads, unwritten
//      outputs, value checks) ends the value run early, so its trace is a prefix;
//   3. capacity: the solver's concrete capacity rules (solver/allocation.h) fail exactly when
//      the run can fail on capacity: a capacity error ⇒ a violation; a violation ⇒ some error;
//   4. static vs dynamic (Z3, when the bytes ask for it on a small program): every obligation
//      proved ⇒ no dynamic error of a class the solver covers; no counterexample's replay is a
//      disagreement.
// Plus ASan/UBSan/LeakSanitizer for crashes, UB and leaks in every path. The trace-only run
// comes first; oracles 1 and 2 run only within the work budgets of fuzz/support/run_budget.h.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz/support/fuzz_check.h"
#include "fuzz/support/program_decoder.h"
#include "fuzz/support/run_budget.h"
#include "model/interp/interpreter.h"
#include "model/ir/printer.h"
#include "solver/allocation.h"
#include "solver/prove.h"

namespace {

using namespace ncv;
constexpr const char* kTarget = "fuzz_program";

// Errors that need values: a trace-only run walks past them. undefined_result mostly does (an
// int32 add on GpSimd that overflows, a top-8 value the data lacks); range_select's, from its
// shape alone, stops both runs at the same instruction, a prefix too.
bool value_only(CheckKind k) {
  return k == CheckKind::uninitialized_read || k == CheckKind::clobbered_read ||
         k == CheckKind::output_not_written || k == CheckKind::value_range ||
         k == CheckKind::indirect_range || k == CheckKind::carried_dependency ||
         k == CheckKind::undefined_result;
}

// Errors whose absence the solver's obligations (bounds, ISA rules, allocation) prove.
bool solver_covers(CheckKind k) {
  return k == CheckKind::out_of_bounds || k == CheckKind::partition_rule ||
         k == CheckKind::psum_bank || k == CheckKind::shape_rule || k == CheckKind::engine_rule ||
         k == CheckKind::capacity;
}

std::string err_text(const RunResult& r) {
  return r.error ? r.error->message : "(no error)";
}

bool same_outputs(const RunResult& a, const RunResult& b) {
  if (a.outputs.size() != b.outputs.size()) return false;
  for (const auto& [name, t] : a.outputs) {
    auto it = b.outputs.find(name);
    if (it == b.outputs.end()) return false;
    const HostTensor& u = it->second;
    if (t.dtype != u.dtype || t.shape != u.shape || t.bytes != u.bytes) return false;
  }
  return true;
}

bool is_prefix(const Trace& a, const Trace& b) {
  if (a.events.size() > b.events.size()) return false;
  for (size_t k = 0; k < a.events.size(); ++k) {
    if (!(a.events[k] == b.events[k])) return false;
    const TraceEvent& e = a.events[k];
    for (uint32_t j = 0; j < uint32_t{e.num_reads} + e.num_writes; ++j) {
      if (!(a.regions[e.region_begin + j] == b.regions[b.events[k].region_begin + j])) {
        return false;
      }
    }
  }
  return true;
}

// Z3 costs ~100 ms per small program: prove at most once per this many execs.
constexpr uint64_t kProveEvery = 4000;

void check_static(const fuzz::DecodedCase& c, const RunResult& run) {
  solver::ProveOptions po;
  po.timeout_ms = 2000;
  po.hw = c.hw;
  bool all_proved = true;
  for (const solver::Obligation& ob : solver::prove_program(c.program, po)) {
    if (ob.verdict != solver::Verdict::proved) all_proved = false;
    NCV_FUZZ_CHECK(!(ob.replay && ob.replay->disagreement), kTarget,
                   "counterexample not reproduced by the interpreter: " + ob.describe() + "\n" +
                       print_program(c.program));
  }
  NCV_FUZZ_CHECK(!(all_proved && run.error && solver_covers(run.error->kind)), kTarget,
                 "every obligation proved, yet the run fails: " + err_text(run) + "\n" +
                     print_program(c.program));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<fuzz::DecodedCase> c = fuzz::decode_case(data, size);
  if (!c) return 0;
  const Program& p = c->program;
  RunOptions o;
  o.hw = c->hw;
  o.max_steps = 20'000;  // keeps one exec in the microseconds; longer runs are skipped
  o.memory_budget_bytes = int64_t{64} << 20;

  RunResult fast, ref, shape_only;
  bool values_run = false;
  try {
    o.compute_values = false;  // a trace-only run reads no input values
    shape_only = run_program(p, c->params, {}, o);
    const uint64_t work = fuzz::element_work(shape_only.trace);
    if (fuzz::value_run_work(p, c->params, shape_only.trace) <= fuzz::kMaxValueWork) {
      values_run = true;
      o.compute_values = true;
      const auto inputs = random_inputs(p, c->params, c->seed, o.memory_budget_bytes);
      fast = run_program(p, c->params, inputs, o);
      if (work <= fuzz::kMaxReferenceWork) {
        o.mode = ExecMode::reference;
        ref = run_program(p, c->params, inputs, o);
        o.mode = ExecMode::fast;
      } else {
        ref = fast;  // too slow to compare; the other oracles still run
      }
    }
  } catch (const InputError&) {
    return 0;  // over the step or memory budget
  } catch (const DynamicError&) {
    return 0;  // a shape below 1 at these params (well_formed): nothing runs to compare
  }
  // Built only when a check fails: printing every program would cost more than running it.
  const auto where = [&] { return "\nprogram:\n" + print_program(p); };
  if (values_run) {
    NCV_FUZZ_CHECK(err_text(fast) == err_text(ref), kTarget,
                   "fast and reference runs disagree on the error:\n  fast: " + err_text(fast) +
                       "\n  reference: " + err_text(ref) + where());
    NCV_FUZZ_CHECK(same_outputs(fast, ref), kTarget,
                   "fast and reference outputs differ (" + err_text(fast) + ")" + where());
    NCV_FUZZ_CHECK(fast.trace == ref.trace, kTarget, "fast and reference traces differ" + where());
    if (fast.error && value_only(fast.error->kind)) {
      NCV_FUZZ_CHECK(is_prefix(fast.trace, shape_only.trace), kTarget,
                     "value run's trace is not a prefix of the trace-only run's (" +
                         err_text(fast) + ")" + where());
    } else {
      NCV_FUZZ_CHECK(err_text(fast) == err_text(shape_only), kTarget,
                     "trace-only run disagrees on the error:\n  values: " + err_text(fast) +
                         "\n  trace-only: " + err_text(shape_only) + where());
      NCV_FUZZ_CHECK(fast.trace == shape_only.trace, kTarget,
                     "trace-only and value runs record different traces" + where());
    }
  }

  std::optional<std::string> cap;
  try {
    cap = solver::capacity_violation(p, o.hw ? *o.hw : hw_config_trn1(), c->params);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  NCV_FUZZ_CHECK(
      !(shape_only.error && shape_only.error->kind == CheckKind::capacity && !cap), kTarget,
      "run fails on capacity, the capacity rules hold: " + err_text(shape_only) + where());
  NCV_FUZZ_CHECK(!(cap && !shape_only.error), kTarget,
                 "capacity rules fail (" + *cap + ") but the run completes" + where());

  // Z3 costs 10^3 execs' worth: prove at most once per kProveEvery execs. The first flagged input
  // of a process always proves, so a failing input found this way reproduces when replayed on its
  // own.
  static uint64_t execs_since_prove = kProveEvery;
  ++execs_since_prove;
  if (c->prove && p.num_instructions <= 6 && execs_since_prove >= kProveEvery) {
    execs_since_prove = 0;
    check_static(*c, shape_only);  // the solver covers no value-only error
  }
  return 0;
}
