// The capacity frontier: with every other param fixed, the largest value
// of one param (seqlen) up to which the kernel's allocation fits a generation's SBUF and PSUM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/ir/program.h"

namespace ncv::solver {

struct FrontierQuery {
  std::string param = "seqlen";
  ParamValues fixed;  // a value for every other param
  // The search runs over the param's declared lower bound and multiple_of up to this value, which
  // may lie beyond the declared upper bound (how far the kernel could be widened); 0: the
  // declared upper bound.
  int64_t search_hi = 0;
  const HwConfig* hw = nullptr;  // default trn1
  unsigned timeout_ms = 10'000;  // per Z3 query
  // Z3's resource limit per query (its `rlimit` count of internal steps), 0: none. Unlike the
  // timeout it stops a query at the same step on any machine and under any load. (A 1 ms timeout
  // on a loaded machine fired only after Z3 had entered polynomial arithmetic that does not look
  // at its cancel flag, and the query then ran for half an hour.)
  unsigned resource_limit = 0;
};

struct FrontierResult {
  enum class Status : uint8_t {
    fits,          // every value up to `largest_fitting` fits; `first_failing` (if any) does not
    fits_nowhere,  // not even the least value fits
    unknown,       // a Z3 query timed out or returned unknown: no frontier is claimed
  };
  Status status = Status::unknown;
  int64_t lo = 0, step = 1, searched_hi = 0, declared_hi = 0;
  // Every value v of the param with lo <= v <= largest_fitting (and v a multiple of step) fits;
  // meaningful when status == fits.
  int64_t largest_fitting = 0;
  // The least value that does not fit (the next one after largest_fitting); nullopt when
  // everything up to searched_hi fits.
  std::optional<int64_t> first_failing;
  std::string why_failing;  // for first_failing: the capacity rule it breaks, with numbers
  // first_failing gives a tensor a dimension below 1 (why_failing names it): the program cannot
  // run there, so there is no memory to show.
  bool first_failing_ill_formed = false;
  std::string unknown_reason;
  int queries = 0;  // Z3 checks made
};

// Computed by Z3: a binary search for the least value with a capacity violation (each step asks
// whether some value <= m violates a capacity rule, which is monotone in m), so the answer is
// exact whether or not fitting is monotone in the param. The rules are those of
// capacity_violation (solver/allocation.h: partitions, peaks, explicit placements for every loop
// iteration and copy), and a value that gives a tensor a dimension below 1 does not fit (the
// program cannot run there); overlapping placements and bufs copies are not capacity limits and
// are left to prove_allocation. Throws std::invalid_argument when q.param is not a param of p,
// another param has no fixed value or one outside its declared domain, or no multiple of the step
// lies in [lo, search_hi].
FrontierResult capacity_frontier(const Program& p, const FrontierQuery& q);

}  // namespace ncv::solver
