// fuzz_solver (fuzz/README.md): the solver's static verdicts against exhaustive
// interpretation. The bytes decode to a small symbolic Program (1-3 params with tiny domains,
// HBM tensors and on-chip buffers whose shapes are affine Exprs over the params, 0-2 nested
// loops, a few instructions whose starts and sizes are affine Exprs of params and loop vars,
// sometimes explicit placements) on a generation whose capacities may be shrunk so that they
// bite. solver::prove_program decides every obligation; the interpreter runs every param
// combination of the domain. The oracle:
//   1. every obligation proved  =>  no combination raises an error of a kind the solver proves;
//   2. a combination raises such an error  =>  some obligation is not proved, and (when none is
//      unknown) the lexicographically least counterexample is no larger than the least failing
//      combination (each counterexample is the smallest failing params of its rule);
//   3. every counterexample lies in the domain, and its params make the interpreter raise an
//      error (of any kind: the interpreter stops at its first error, which may mask the
//      obligation's) unless the rule is data-dependent (overlapping placements show only when a
//      read follows the other buffer's write).
// Unknown verdicts (timeouts) make 1 and 2 inconclusive, never a failure.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/support/byte_reader.h"
#include "fuzz/support/fuzz_check.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "model/ir/printer.h"
#include "solver/prove.h"

namespace ncv::fuzz {
namespace {

constexpr const char* kTarget = "fuzz_solver";
constexpr int64_t kMaxCombinations = 96;  // interpreter runs per input: keeps an exec < ~1 s

// --- the program generator ------------------------------------------------------------------

struct Buffer {
  TensorRef ref;
  Memory mem = Memory::SBUF;
  size_t level = 0;  // loop depth of its scope (0: the kernel body)
};

class Generator {
 public:
  explicit Generator(ByteReader& r) : r_(r) {}

  Program build(bool& has_placement) {
    Builder b("fuzz_solver");
    declare_params(b);
    x_ = b.input("x", DType::fp32, {shape_dim(true), shape_dim(false)});
    y_ = b.output("y", DType::fp32, {shape_dim(true), shape_dim(false)});
    const size_t depth = r_.pick(3);
    body_level(b, 0, depth);
    has_placement = has_placement_;
    return b.finish();
  }

 private:
  void declare_params(Builder& b) {
    const size_t n = 1 + r_.pick(3);
    int64_t combos = 1;
    for (size_t k = 0; k < n; ++k) {
      const int64_t mult = std::vector<int64_t>{1, 1, 1, 2, 4}[r_.pick(5)];
      const int64_t lo = mult * r_.in_range(1, 3);
      // Keep the whole domain within kMaxCombinations interpreter runs.
      const int64_t max_count =
          std::max<int64_t>(1, std::min<int64_t>(8, kMaxCombinations / combos));
      const int64_t count = r_.in_range(1, max_count);
      combos *= count;
      const std::string name(1, static_cast<char>('a' + k));
      params_.push_back(b.param(name, lo, lo + (count - 1) * mult, mult));
    }
    if (n >= 2 && r_.pick(4) == 0) {
      const RelationKind kind = r_.flag() ? RelationKind::LE : RelationKind::Divides;
      b.require(kind, params_[0], params_[1]);
    }
  }

  // A variable in scope: a param (>= 1) or an enclosing loop variable (>= its start >= 0).
  Expr var() {
    const size_t n = params_.size() + (shape_ ? 0 : loop_vars_.size());
    const size_t k = r_.pick(n);
    return k < params_.size() ? params_[k] : loop_vars_[k - params_.size()];
  }

  // An Expr that is >= 0 at every point of the domain and every iteration: the operators of
  // model/ir/expr.h over non-negative operands with non-negative constants.
  Expr nonneg(int depth) {
    switch (depth <= 0 ? r_.pick(3) : r_.pick(9)) {
      case 0:
        return Expr(r_.in_range(0, 4));
      case 1:
        return var();
      case 2:
        return var() * r_.in_range(1, 4);
      case 3:
        return nonneg(depth - 1) + nonneg(depth - 1);
      case 4:
        return Expr::floordiv(nonneg(depth - 1), r_.in_range(1, 4));
      case 5:
        return Expr::mod(nonneg(depth - 1), r_.in_range(2, 5));
      case 6:
        return Expr::min(nonneg(depth - 1), nonneg(depth - 1));
      case 7:
        return Expr::max(nonneg(depth - 1), nonneg(depth - 1));
      default:
        return nonneg(depth - 1) * r_.in_range(1, 8);
    }
  }

  // A tensor dimension, mostly >= 1 everywhere. Partition dims reach past 128 now and then; free
  // dims are scaled so that a shrunk SBUF or PSUM fills up. Now and then a degenerate one: below
  // 1 at some params, or so large that the byte size leaves int64 (both well_formed failures the
  // solver must refute at the same params).
  Expr shape_dim(bool partition) {
    shape_ = true;  // shapes may use params only (validate_program)
    const Expr e = shape_dim_of_params(partition);
    shape_ = false;
    return e;
  }
  Expr shape_dim_of_params(bool partition) {
    const int64_t base = r_.in_range(1, 4);
    // Rare, since a program has 10 to 20 dims: about one program in ten gets one. Triggered by
    // the last value, not 0: an exhausted input reads zeros, and short inputs would otherwise
    // end in nothing but degenerate dims.
    if (r_.pick(128) == 127) {
      return r_.flag() ? var() - r_.in_range(1, 3) : var() * (int64_t{1} << 62);
    }
    switch (r_.pick(4)) {
      case 0:
        return Expr(base);
      case 1:
        return var() *
                   (partition ? std::vector<int64_t>{1, 16, 32}[r_.pick(3)] : r_.in_range(1, 64)) +
               base - 1;
      case 2:
        return Expr::max(nonneg(1), Expr(base));
      default:
        return nonneg(1) + base;
    }
  }

  // A loop bound of `level`: the loop variables of outer loops are in scope.
  void open_loop(Builder& b, size_t level) {
    const Expr start = r_.pick(3) == 0 ? nonneg(0) : Expr(0);
    // The stop is at or past the start (an empty loop now and then); now and then a stop below
    // the start at some params instead (a negative trip count, well_formed).
    const Expr stop =
        r_.pick(24) == 23 ? start - var() : start + Expr::max(nonneg(1) + r_.in_range(-2, 2), 0);
    const int64_t step = r_.in_range(1, 2);
    const LoopKind kind = r_.flag() ? LoopKind::affine : LoopKind::sequential;
    loop_vars_.push_back(
        b.begin_loop(std::string(1, static_cast<char>('i' + level)), start, stop, step, kind));
  }

  void body_level(Builder& b, size_t level, size_t depth) {
    const size_t nbuf = r_.pick(3) + (level == depth ? 1 : 0);
    for (size_t k = 0; k < nbuf; ++k) declare_buffer(b, level);
    emit_some(b, level);
    if (level < depth) {
      open_loop(b, level);
      body_level(b, level + 1, depth);
      b.end_loop();
      loop_vars_.pop_back();
      emit_some(b, level);
    }
    std::erase_if(buffers_, [&](const Buffer& x) { return x.level == level; });
  }

  void declare_buffer(Builder& b, size_t level) {
    Buffer buf;
    buf.level = level;
    buf.mem = r_.pick(3) == 0 ? Memory::PSUM : Memory::SBUF;
    BufferOptions opts;
    opts.bufs = r_.in_range(1, 2);
    if (r_.pick(3) == 0) {
      has_placement_ = true;
      const Expr partition = r_.pick(3) == 0 ? nonneg(0) * 32 : Expr(0);
      opts.placement =
          Placement{partition, nonneg(1) * std::vector<int64_t>{4, 64, 256}[r_.pick(3)]};
    }
    const std::string name = "t" + std::to_string(next_buffer_++);
    // PSUM tiles wide enough to cross a 2 KiB bank (512 fp32) now and then.
    const Expr free =
        buf.mem == Memory::PSUM && r_.flag() ? shape_dim(false) * 128 : shape_dim(false);
    const std::vector<Expr> shape{shape_dim(true), free};
    buf.ref = buf.mem == Memory::PSUM ? b.psum(name, DType::fp32, shape, opts)
                                      : b.sbuf(name, DType::fp32, shape, opts);
    buffers_.push_back(buf);
  }

  std::optional<Buffer> buffer_in(Memory mem) {
    std::vector<Buffer> in;
    for (const Buffer& x : buffers_) {
      if (x.mem == mem) in.push_back(x);
    }
    if (in.empty()) return std::nullopt;
    return in[r_.pick(in.size())];
  }

  // A view size: the dim minus the start (fits exactly), off by one either way, or free.
  Expr view_size(const Expr& dim, const Expr& start) {
    switch (r_.pick(5)) {
      case 0:
        return dim - start;
      case 1:
        return dim - start + 1;
      case 2:
        return dim - start - 1;
      case 3:
        return Expr(r_.in_range(1, 4));
      default:
        return nonneg(1) + 1;
    }
  }
  // Partition starts are mostly 0: any other start must be 32-aligned (partition_rule), which
  // would otherwise mask the rules after it.
  Expr view_start(bool partition) { return r_.pick(partition ? 4 : 2) != 0 ? Expr(0) : nonneg(1); }

  // A 2-D view of `t`; `rows`/`cols` given: that size (operands that must match), else a
  // view size of its own.
  Access view(const TensorRef& t, std::optional<Expr> rows = std::nullopt,
              std::optional<Expr> cols = std::nullopt) {
    const Expr s0 = view_start(true), s1 = view_start(false);
    const Expr n0 = rows ? *rows : view_size(t.shape()[0], s0);
    const Expr n1 = cols ? *cols : view_size(t.shape()[1], s1);
    return t({ds(s0, n0), ds(s1, n1)});
  }
  // Two views with the same shape (mostly: sometimes the second picks its own).
  std::pair<Access, Access> matching(const TensorRef& dst, const TensorRef& src) {
    const Expr s0 = view_start(true), s1 = view_start(false);
    const Expr rows = view_size(dst.shape()[0], s0), cols = view_size(dst.shape()[1], s1);
    const Access d = dst({ds(s0, rows), ds(s1, cols)});
    return {d, r_.pick(6) == 0 ? view(src) : view(src, rows, cols)};
  }

  void emit_some(Builder& b, size_t) {
    const size_t n = r_.pick(4);
    for (size_t k = 0; k < n; ++k) emit_one(b);
  }

  void emit_one(Builder& b) {
    const std::optional<Buffer> sb = buffer_in(Memory::SBUF), sb2 = buffer_in(Memory::SBUF),
                                ps = buffer_in(Memory::PSUM);
    // One byte: its low 3 bits pick the kind (as pick(8) did, so the seeds decode as before),
    // the high 5 turn about a third (10 of 32) of the SBUF copies into unary tensor_scalars.
    const uint8_t choice = r_.byte();
    switch (choice % 8) {
      case 0:  // load
        if (sb) {
          auto [d, s] = matching(sb->ref, x_);
          b.dma_copy(d, s);
        }
        return;
      case 1:  // store
        if (sb) {
          auto [d, s] = matching(y_, sb->ref);
          b.dma_copy(d, s);
        }
        return;
      case 2:
        if (sb && sb2) {
          auto [d, s] = matching(sb->ref, sb2->ref);
          if (const int u = choice >> 3; u < 10) {
            // A unary ALU op0 (abs, square, relu, rsqrt, reciprocal) in its documented form,
            // operand0 0 (validate.cpp unary_op0), on the Vector or the GpSimd engine.
            const AluOp unary[] = {AluOp::abs, AluOp::square, AluOp::relu, AluOp::rsqrt,
                                   AluOp::reciprocal};
            b.tensor_scalar(d, s, unary[u % 5], Imm{0.0f}, false, std::nullopt, Imm{0.0f}, false,
                            u < 5 ? Engine::Vector : Engine::GpSimd);
          } else {
            b.tensor_copy(d, s);
          }
        }
        return;
      case 3:  // ScalarE reads SBUF or PSUM
        if (sb && (ps || sb2)) {
          auto [d, s] = matching(sb->ref, ps && r_.flag() ? ps->ref : sb2->ref);
          b.activation(d, s, {.func = ActFunc::exp});
        }
        return;
      case 4:
        if (sb || ps) b.memset(view(sb && (!ps || r_.flag()) ? sb->ref : ps->ref), 0.0f);
        return;
      case 5:
        emit_matmul(b, sb, sb2, ps);
        return;
      case 6:  // TensorE transpose: [P, F] -> [F, P] in PSUM
        if (sb && ps) {
          const Access s = view(sb->ref);
          b.transpose(view(ps->ref, s.dims[1].size, s.dims[0].size), s);
        }
        return;
      default:  // PSUM read-out
        if (sb && ps) {
          auto [d, s] = matching(sb->ref, ps->ref);
          b.tensor_copy(d, s);
        }
        return;
    }
  }

  // stationary [K, M], moving [K, N] in SBUF, dst [M, N] in PSUM.
  void emit_matmul(Builder& b, const std::optional<Buffer>& st, const std::optional<Buffer>& mv,
                   const std::optional<Buffer>& ps) {
    if (!st || !mv || !ps) return;
    const Access a = view(st->ref);
    const Access m = view(mv->ref, a.dims[0].size);
    b.matmul(view(ps->ref, a.dims[1].size, m.dims[1].size), a, m, r_.flag());
  }

  ByteReader& r_;
  std::vector<Expr> params_, loop_vars_;
  std::vector<Buffer> buffers_;
  TensorRef x_, y_;
  int next_buffer_ = 0;
  bool has_placement_ = false;
  bool shape_ = false;  // generating a shape: no loop variables
};

// trn1..3, or trn1 with SBUF and PSUM shrunk so that tiny programs reach the capacities. The
// prover and the interpreter get the same config.
HwConfig decode_hw(ByteReader& r) {
  switch (r.pick(5)) {
    case 0:
      return hw_config_trn2();
    case 1:
      return hw_config_trn3();
    case 2: {
      HwConfig h = hw_config_trn1();
      h.name = "trn1-small";
      h.sbuf_bytes_per_partition = 1024 + h.sbuf_reserved_bytes_per_partition;
      h.psum_banks = 2;
      h.psum_bytes_per_partition = h.psum_banks * h.psum_bank_bytes;
      return h;
    }
    default:
      return hw_config_trn1();
  }
}

// --- the oracle -----------------------------------------------------------------------------

// The kinds the solver proves (bounds, ISA rules, allocation). Not proved at all, so the
// interpreter may raise them without any static counterexample: uninitialized_read and
// output_not_written (which writes happen is not modelled), value_range and indirect_range
// (run-time values), carried_dependency (affine-loop dataflow). clobbered_read is proved
// ("placements disjoint", "bufs copies disjoint") but only a run that computes values sees it.
bool solver_proves(CheckKind k, bool compute_values) {
  switch (k) {
    case CheckKind::out_of_bounds:
    case CheckKind::partition_rule:
    case CheckKind::psum_bank:
    case CheckKind::shape_rule:
    case CheckKind::engine_rule:
    case CheckKind::capacity:
    case CheckKind::well_formed:
      return true;
    case CheckKind::clobbered_read:
      return compute_values;
    default:
      return false;
  }
}

// Rules whose failure the interpreter sees only with particular run-time values: overlapping
// placements clobber only when a read follows the other buffer's write (solver/allocation.h).
bool data_dependent(const solver::Obligation& o) {
  return o.rule == "placements disjoint" || o.rule == "bufs copies disjoint" || o.indirect_dim;
}

// NCV_FUZZ_SOLVER_STATS=1: one line per input saying what it exercised (how often programs
// are statically illegal, how many verdicts go each way), to keep the generator balanced.
void stats_line(const std::string& line) {
  static const bool on = std::getenv("NCV_FUZZ_SOLVER_STATS") != nullptr;
  if (on) std::fprintf(stderr, "fuzz_solver: %s\n", line.c_str());
}

struct Outcome {
  ParamValues params;
  std::optional<DynamicError> error;
};

// Every combination of the params' domains (declaration order, lexicographic), in the domain.
std::vector<ParamValues> domain_points(const Program& p) {
  std::vector<ParamValues> out{{}};
  for (const Param& prm : p.params) {
    std::vector<ParamValues> next;
    for (const ParamValues& pv : out) {
      for (int64_t v = prm.lo; v <= prm.hi; v += prm.multiple_of) {
        ParamValues q = pv;
        q[prm.name] = v;
        next.push_back(q);
      }
    }
    out = std::move(next);
  }
  std::erase_if(out, [&](const ParamValues& pv) {
    try {
      check_params(p, pv);
      return false;
    } catch (const InputError&) {
      return true;
    }
  });
  return out;
}

std::vector<int64_t> key(const Program& p, const ParamValues& pv) {
  std::vector<int64_t> k;
  for (const Param& prm : p.params) k.push_back(pv.at(prm.name));
  return k;
}

std::string str(const ParamValues& pv) {
  std::string s;
  for (const auto& [n, v] : pv) s += (s.empty() ? "" : ", ") + n + "=" + std::to_string(v);
  return s;
}

std::string context(const Program& p, const HwConfig& hw) {
  return "\non " + hw.name + ", program:\n" + print_program(p);
}

std::vector<Outcome> run_all(const Program& p, const HwConfig& hw, bool compute_values) {
  RunOptions ro;
  ro.hw = &hw;
  ro.compute_values = compute_values;
  ro.record_trace = false;
  ro.strict_reads = true;  // the obligations are about the reads themselves (solver/replay.cpp)
  std::vector<Outcome> out;
  for (ParamValues& pv : domain_points(p)) {
    Outcome o{pv, std::nullopt};
    try {
      o.error = run_program(p, pv, random_inputs(p, pv, 1), ro).error;
    } catch (const InputError& e) {
      // Shapes are tiny or overflow int64 by construction: the interpreter must accept every
      // point or find it ill-formed, never refuse it as too large.
      NCV_FUZZ_CHECK(false, kTarget, "interpreter refused " + str(pv) + ": " + e.message);
    } catch (const DynamicError& e) {
      o.error = e;  // a dimension below 1 or a size beyond int64 (well_formed)
    }
    out.push_back(std::move(o));
  }
  return out;
}

void check(const Program& p, const HwConfig& hw, bool compute_values) {
  const std::vector<Outcome> runs = run_all(p, hw, compute_values);
  solver::ProveOptions po;
  po.timeout_ms = 200;
  po.replay = false;  // the exhaustive runs below replay every counterexample and more
  po.hw = &hw;
  if (runs.empty()) {
    // The relations exclude every point: prove must refuse rather than prove vacuously.
    bool refused = false;
    try {
      solver::prove_program(p, po);
    } catch (const std::invalid_argument&) {
      refused = true;
    }
    NCV_FUZZ_CHECK(refused, kTarget, "prove accepted an empty domain" + context(p, hw));
    return;
  }
  const std::vector<solver::Obligation> obs = solver::prove_program(p, po);

  bool unknown = false;
  std::optional<std::vector<int64_t>> least_cex;
  std::optional<std::vector<Outcome>> value_runs;
  for (const solver::Obligation& o : obs) {
    unknown |= o.verdict == solver::Verdict::unknown;
    if (o.verdict != solver::Verdict::counterexample) continue;
    NCV_FUZZ_CHECK(o.counterexample.has_value(), kTarget, "counterexample without values");
    const ParamValues& cp = o.counterexample->params;
    // The interpreter sees an uninitialized read only in a run that computes values: replay an
    // initialization counterexample's program that way.
    const bool needs_values = o.cls == solver::ObligationClass::initialization && !compute_values;
    if (needs_values && !value_runs) value_runs = run_all(p, hw, true);
    const std::vector<Outcome>& pool = needs_values ? *value_runs : runs;
    const auto it =
        std::find_if(pool.begin(), pool.end(), [&](const Outcome& r) { return r.params == cp; });
    NCV_FUZZ_CHECK(it != pool.end(), kTarget,
                   "counterexample outside the domain: " + o.describe() + context(p, hw));
    NCV_FUZZ_CHECK(it->error || data_dependent(o), kTarget,
                   "the interpreter runs the counterexample's params cleanly: " + o.describe() +
                       context(p, hw));
    const std::vector<int64_t> k = key(p, cp);
    if (!least_cex || k < *least_cex) least_cex = k;
  }

  size_t cex = 0, unknowns = 0, failing_runs = 0;
  for (const solver::Obligation& o : obs) {
    cex += o.verdict == solver::Verdict::counterexample;
    if (o.verdict == solver::Verdict::counterexample) stats_line("counterexample: " + o.rule);
    unknowns += o.verdict == solver::Verdict::unknown;
  }
  std::string kinds;
  for (const Outcome& r : runs) {
    failing_runs += r.error.has_value();
    if (r.error && kinds.find(check_kind_name(r.error->kind)) == std::string::npos) {
      kinds += " " + std::string(check_kind_name(r.error->kind));
    }
  }
  stats_line(std::to_string(runs.size()) + " points (" + std::to_string(failing_runs) +
             " raise:" + kinds + "), " + std::to_string(obs.size()) + " obligations (" +
             std::to_string(cex) + " counterexamples, " + std::to_string(unknowns) + " unknown)");
  const auto failing = std::find_if(runs.begin(), runs.end(), [&](const Outcome& r) {
    return r.error && solver_proves(r.error->kind, compute_values);
  });
  if (failing == runs.end()) return;  // oracle 1 holds trivially; oracle 3 was checked above
  if (unknown && !least_cex) return;  // inconclusive: the failing rule may be the unknown one
  NCV_FUZZ_CHECK(least_cex.has_value(), kTarget,
                 "every obligation proved, but the interpreter raises at " + str(failing->params) +
                     ": " + failing->error->message + context(p, hw));
  // runs are in lexicographic order, so `failing` is the least failing combination.
  NCV_FUZZ_CHECK(unknown || *least_cex <= key(p, failing->params), kTarget,
                 "the least counterexample is larger than the least failing params " +
                     str(failing->params) + " (" + failing->error->message + ")" + context(p, hw));
}

}  // namespace
}  // namespace ncv::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ncv;
  fuzz::ByteReader r(data, size);
  const HwConfig hw = fuzz::decode_hw(r);
  fuzz::Generator g(r);
  bool has_placement = false;
  Program p;
  try {
    p = g.build(has_placement);
  } catch (const BuildError& e) {
    fuzz::stats_line("build error: " + e.message.substr(0, 160));
    return 0;  // statically illegal: not the solver's business
  }
  // Overlapping placements show only as clobbered reads, which only a value run tracks.
  fuzz::check(p, hw, has_placement);
  return 0;
}
