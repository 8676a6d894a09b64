#include "solver/isa_rules.h"

#include <optional>
#include <string>
#include <utility>

#include "model/ir/allocator.h"
#include "model/ir/printer.h"
#include "model/isa/rules.h"
#include "solver/program_solver.h"
#include "solver/z3_ops.h"

namespace ncv::solver {

namespace {

std::string num(int64_t v) {
  return std::to_string(v);
}

// What AccessResolver::resolve computes for one access, as Z3 terms over params and loop variables.
struct ViewTerms {
  const Access* access = nullptr;
  const Tensor* tensor = nullptr;
  std::string role;  // "source", "stationary", ... (the interpreter's role names)
  std::string text;  // the access in text form
  std::vector<z3::expr> start, size, last;  // per tensor dim
  z3::expr rows, free;                      // view rows and elements per partition
  z3::expr footprint;  // distinct elements per partition: zero-step (broadcast) dims count once
  std::vector<z3::expr> free_sizes;  // resolve's view.sizes: view dims 1.. in view order
  z3::expr sizes_positive;           // every size >= 1 (resolve checks it first)

  explicit ViewTerms(z3::context& c)
      : rows(c.int_val(0)),
        free(c.int_val(1)),
        footprint(c.int_val(1)),
        sizes_positive(c.bool_val(true)) {}

  std::string subject() const { return role + " " + text; }
};

// The product of terms, constant-folded so that constant shapes never reach Z3 as products.
z3::expr product(z3::context& c, const std::vector<z3::expr>& xs) {
  z3::expr p = c.int_val(1);
  for (const z3::expr& x : xs) p = p * x;
  return p.simplify();
}

class IsaProver {
 public:
  IsaProver(const Program& p, const ProveOptions& o)
      : p_(p),
        hw_(hw_of(o)),
        alloc_(allocate(p, hw_of(o))),
        z_(p, o),
        cutoff_(ObligationClass::isa_rules, "instructions", o) {}

  std::vector<Obligation> run() {
    for_each_stmt(p_, [&](const std::vector<const Loop*>& loops, const Stmt& s) {
      const auto* i = std::get_if<InstrStmt>(&s.node);
      if (i && !cutoff_.skip()) instruction(loops, *i);
    });
    cutoff_.report(out_);
    return std::move(out_);
  }

 private:
  z3::context& ctx() { return z_.ctx(); }
  Z3Ops ops() { return Z3Ops{z_.ctx()}; }

  void instruction(const std::vector<const Loop*>& loops, const InstrStmt& s) {
    loops_ = &loops;
    z_.enter_loops(loops);
    current_ = &s;
    text_ = print_instruction(p_, s.ins);
    assumed_ = ctx().bool_val(true);
    // resolve() rejects a size below 1 before any other rule of the access (shape_rule), and
    // concrete_shape a tensor dim below 1: every other rule is claimed only where both hold, and
    // the sizes themselves are obligations (sizes_rule).
    for (const Access* a : written_accesses(s.ins)) assume_resolvable(*a);
    for (const Access* a : read_accesses(s.ins)) assume_resolvable(*a);
    for (const Access* a : written_accesses(s.ins)) access_rules(*a, "write");
    for (const Access* a : read_accesses(s.ins)) access_rules(*a, "read");
    std::visit([&](const auto& i) { rules(i); }, s.ins);
    z_.leave_loops();
  }

  void assume_resolvable(const Access& a) {
    const ViewTerms v = view(a, "");
    assumed_ = assumed_ && v.sizes_positive;
    for (const Expr& e : p_.tensor(a.tensor).shape) assumed_ = assumed_ && z_.term(e) >= 1;
    if (a.indirect) assume_resolvable(*a.indirect->offsets);
  }

  // --- the view terms -------------------------------------------------------------------------

  ViewTerms view(const Access& a, const std::string& role) {
    const Tensor& t = p_.tensor(a.tensor);
    ViewTerms v(ctx());
    v.access = &a;
    v.tensor = &t;
    v.role = role;
    v.text = print_access(p_, a);
    for (const AccessDim& d : a.dims) {
      v.start.push_back(z_.term(d.start));
      v.size.push_back(z_.term(d.size));
      v.last.push_back(v.start.back() + (v.size.back() - 1) * ctx().int_val(d.step));
      v.sizes_positive = v.sizes_positive && access_size_ok(ops(), v.size.back());
    }
    // A view's rows are its first view dim, whichever tensor dim that is: on chip the partition
    // dim except in a DMA that moves data across partitions (validate: perm[0] != 0).
    v.rows = v.size[static_cast<size_t>(a.tensor_dim(0))];
    std::vector<z3::expr> distinct;
    for (size_t k = 1; k < a.rank(); ++k) {
      const auto td = static_cast<size_t>(a.tensor_dim(k));
      v.free_sizes.push_back(v.size[td]);
      if (a.dims[td].step != 0) distinct.push_back(v.size[td]);
    }
    v.free = product(ctx(), v.free_sizes);
    v.footprint = product(ctx(), distinct);
    return v;
  }

  // First partition of an on-chip view: the placement's partition plus the partition start.
  z3::expr partition_begin(const ViewTerms& v) {
    return z_.term(alloc_.placements.at(v.tensor->id)->partition) + v.start[0];
  }

  // Bytes [begin, end) of each partition an on-chip view covers (resolve's byte_begin/end):
  // the copy's offset plus the dims after the partition dim at their row-major element strides.
  // An indirect dim moves the range by its offsets, here any of the declared range [lo, hi].
  std::pair<z3::expr, z3::expr> byte_range(const ViewTerms& v, const z3::expr& copy) {
    const Tensor& t = *v.tensor;
    const BufferPlacement& bp = *alloc_.placements.at(t.id);
    const z3::expr coff = z_.term(bp.byte_offset) + copy * z_.term(bp.copy_stride);
    z3::expr begin = coff, end = coff + ctx().int_val(dsize(t));
    for (size_t d = 1; d < t.shape.size(); ++d) {
      const z3::expr stride = byte_stride(t, d);
      begin = begin + v.start[d] * stride;
      end = end + v.last[d] * stride;
    }
    if (const auto& ind = v.access->indirect) {
      const z3::expr stride = byte_stride(t, static_cast<size_t>(ind->dim));
      begin = begin + ctx().int_val(ind->lo) * stride;
      end = end + ctx().int_val(ind->hi) * stride;
    }
    return {begin.simplify(), end.simplify()};
  }

  static int64_t dsize(const Tensor& t) { return static_cast<int64_t>(dtype_size(t.dtype)); }

  // Bytes between consecutive indices of tensor dim d (row-major, like the interpreter's
  // estrides_ times the element size).
  z3::expr byte_stride(const Tensor& t, size_t d) {
    std::vector<z3::expr> inner;
    for (size_t j = d + 1; j < t.shape.size(); ++j) inner.push_back(z_.term(t.shape[j]));
    return product(ctx(), inner) * ctx().int_val(dsize(t));
  }

  // --- deciding ---------------------------------------------------------------------------------

  Obligation make(const std::string& rule, const ViewTerms* v, std::string subject = {}) {
    Obligation o;
    o.cls = ObligationClass::isa_rules;
    o.rule = rule;
    o.instruction = current_->id;
    o.instruction_text = text_;
    if (v) {
      o.subject = subject.empty() ? v->subject() : std::move(subject);
      o.tensor = v->tensor->name;
      o.role = v->role;
    } else {
      o.subject = std::move(subject);
    }
    return o;
  }

  // `holds` under the instruction's assumptions; a rule that constant-folds to true is proved
  // without asking Z3 (most shapes are constants).
  void decide(Obligation o, const z3::expr& holds, const ProgramSolver::Explain& explain,
              ProgramSolver::Expectation expect, const z3::expr& extra_assumed) {
    if (holds.simplify().is_true()) {
      o.verdict = Verdict::proved;
    } else {
      z_.settle(o, assumed_ && extra_assumed, holds, explain, expect);
    }
    out_.push_back(std::move(o));
  }
  void decide(Obligation o, const z3::expr& holds, const ProgramSolver::Explain& explain,
              Rule rule) {
    decide(std::move(o), holds, explain, {rule_info(rule).kind, false}, ctx().bool_val(true));
  }

  int64_t val(const z3::model& m, const z3::expr& e) { return z_.value(m, e); }
  std::string shape_of(const z3::model& m, const ViewTerms& v) {
    return "[" + num(val(m, v.rows)) + ", " + num(val(m, v.free)) + "]";
  }

  // --- rules of every access ---------------------------------------------------------------------

  void access_rules(const Access& a, const std::string& role) {
    sizes_rule(a, role);
    if (!a.indirect) return;
    indirect_rules(a, role);
    access_rules(*a.indirect->offsets, "indirect offsets of " + role);
  }

  // resolve(): every dim has size >= 1 (constant sizes are checked at build time).
  void sizes_rule(const Access& a, const std::string& role) {
    bool symbolic = false;
    for (const AccessDim& d : a.dims) symbolic = symbolic || !d.size.is_const();
    if (!symbolic) return;
    const ViewTerms v = view(a, role);
    auto explain = [this, v](const z3::model& m) {
      for (size_t d = 0; d < v.size.size(); ++d) {
        if (val(m, v.size[d]) < 1) return "dim " + num(d) + " has size " + num(val(m, v.size[d]));
      }
      return std::string("a size is below 1");
    };
    Obligation o = make(std::string(rule_info(Rule::access_size).name), &v);
    // Only the tensor dims need to be positive (concrete_shape); the other accesses' sizes are
    // not assumed, since this obligation is what establishes them.
    z3::expr dims = ctx().bool_val(true);
    for (const Expr& e : v.tensor->shape) dims = dims && z_.term(e) >= 1;
    z3::expr saved = assumed_;
    assumed_ = dims;
    decide(std::move(o), v.sizes_positive, explain, Rule::access_size);
    assumed_ = saved;
  }

  // resolve(): the offsets of an indirect dim are a [rows, 1] column matching the view's rows,
  // and an on-chip tensor is never indexed indirectly on its partition dim.
  void indirect_rules(const Access& a, const std::string& role) {
    const ViewTerms v = view(a, role);
    const ViewTerms off = view(*a.indirect->offsets, "indirect offsets");
    if (!indirect_dim_ok(v.tensor->on_chip(), a.indirect->dim)) {
      decide(
          make(std::string(rule_info(Rule::indirect_not_partition).name), &v),
          ctx().bool_val(false),
          [](const z3::model&) { return std::string("indirect offsets on the partition dim"); },
          Rule::indirect_not_partition);
    }
    auto explain = [this, v, off](const z3::model& m) {
      return "offsets view is " + shape_of(m, off) + ", needs [" + num(val(m, v.rows)) + ", 1]";
    };
    decide(make(std::string(rule_info(Rule::indirect_offsets_column).name), &v,
                v.subject() + " with offsets " + off.text),
           column_ok(ops(), off.rows, off.free, v.rows), explain, Rule::indirect_offsets_column);
  }

  // compute_operand(): the partition range and free size of an on-chip operand.
  ViewTerms operand(const Access& a, const std::string& role) {
    ViewTerms v = view(a, role);
    if (!v.tensor->on_chip()) return v;  // validate: compute operands are on chip
    partition_rule(v);
    free_limit_rule(v);
    return v;
  }

  // Rule::partition_start on the first partition and the partition count.
  void partition_rule(const ViewTerms& v) {
    const z3::expr s = partition_begin(v).simplify();
    const z3::expr ok = partition_start_ok(ops(), s, v.rows, hw_);
    auto explain = [this, v, s](const z3::model& m) {
      return num(val(m, v.rows)) + " partitions starting at partition " + num(val(m, s)) +
             " (P > 64 needs start 0, P <= 64 start 0 or 64, P <= 32 a multiple of 32; at most " +
             num(hw_.partitions) + " partitions)";
    };
    decide(make(std::string(rule_info(Rule::partition_start).name), &v), ok, explain,
           Rule::partition_start);
  }

  // Rule::free_size: elements per partition of an engine operand.
  void free_limit_rule(const ViewTerms& v) {
    const int64_t limit = free_size_limit(v.tensor->memory, hw_);
    auto explain = [this, v, limit](const z3::model& m) {
      return num(val(m, v.footprint)) + " elements per partition > " + num(limit);
    };
    // The tile's distinct elements, as the interpreter's check_free_limit (a broadcast read of a
    // smaller tile is within the tile limit).
    decide(make(free_size_label(v.tensor->memory, hw_), &v),
           within_limit(ops(), v.footprint, limit), explain, Rule::free_size);
  }

  // check_psum_bank(): the bytes a PSUM view covers in each partition lie in one bank. With
  // bufs > 1 the copy in use is (entries of the buffer's scope) mod bufs; the solver lets it be
  // any copy in [0, bufs - 1], an over-approximation (a loop that runs once only uses copy 0).
  void psum_bank_rule(const ViewTerms& v) {
    if (v.tensor->memory != Memory::PSUM) return;
    // A fresh solver scope, so that the copy index is quantified in this obligation only.
    z_.leave_loops();
    z_.enter_loops(*loops_);
    const bool copies = v.tensor->bufs > 1;
    const z3::expr copy = copies ? z_.extra("copy of '" + v.tensor->name + "'") : ctx().int_val(0);
    const z3::expr copy_ok =
        copies ? copy >= 0 && copy < ctx().int_val(v.tensor->bufs) : ctx().bool_val(true);
    // Named copies, not a structured binding: clang-14 (the fuzz build) cannot capture those.
    const std::pair<z3::expr, z3::expr> range = byte_range(v, copy);
    const z3::expr begin = range.first, end = range.second;
    auto explain = [this, begin, end](const z3::model& m) {
      return "bytes [" + num(val(m, begin)) + ", " + num(val(m, end)) +
             ") of each partition cross a " + num(hw_.psum_bank_bytes) + "-byte bank boundary";
    };
    // Run-time offsets may stay inside one bank where the declared range would not.
    decide(make(std::string(rule_info(Rule::psum_bank).name), &v),
           psum_bank_ok(ops(), begin, end, hw_), explain,
           {rule_info(Rule::psum_bank).kind, v.access->indirect.has_value()}, copy_ok);
    z_.leave_loops();
    z_.enter_loops(*loops_);
  }

  // same_shape(): partitions x elements per partition match.
  void same_shape_rule(const ViewTerms& a, const ViewTerms& b, const std::string& what) {
    auto explain = [this, a, b](const z3::model& m) {
      return "'" + a.tensor->name + "' is " + shape_of(m, a) + " but '" + b.tensor->name + "' is " +
             shape_of(m, b);
    };
    decide(make(same_shape_label(what), &a, a.subject() + " vs " + b.subject()),
           shape_is(ops(), a.rows, a.free, b.rows, b.free), explain, Rule::same_shape);
  }

  // column_shape(): a per-partition scalar operand is [rows, 1].
  void column_rule(const ViewTerms& col, const z3::expr& rows) {
    auto explain = [this, col, rows](const z3::model& m) {
      return "'" + col.tensor->name + "' is " + shape_of(m, col) + "; needs [" + num(val(m, rows)) +
             ", 1]";
    };
    decide(make(std::string(rule_info(Rule::column_operand).name), &col),
           column_ok(ops(), col.rows, col.free, rows), explain, Rule::column_operand);
  }

  void column_operand(const Operand& o, const std::string& role, const z3::expr& rows) {
    if (const auto* a = std::get_if<Access>(&o)) column_rule(operand(*a, role), rows);
  }

  // A rule of the generation that no param changes (engine_rule): refuted at the first reachable
  // instance when the generation lacks the feature.
  void generation_rule(Rule rule, bool ok, const std::string& why) {
    decide(
        make(std::string(rule_info(rule).name), nullptr), ctx().bool_val(ok),
        [why](const z3::model&) { return why; }, rule);
  }

  // --- rules of each instruction, in the interpreter's order ------------------------------------

  void rules(const DmaCopy& i) {
    const ViewTerms src = view(i.src, "source"), dst = view(i.dst, "destination");
    auto explain = [this, src, dst](const z3::model& m) {
      return num(val(m, src.rows * src.free)) + " elements from '" + src.tensor->name + "' into " +
             num(val(m, dst.rows * dst.free)) + " elements of '" + dst.tensor->name + "'";
    };
    decide(make(std::string(rule_info(Rule::dma_element_counts).name), &dst,
                src.subject() + " -> " + dst.subject()),
           dma_counts_ok(ops(), src.rows * src.free, dst.rows * dst.free), explain,
           Rule::dma_element_counts);
    if (!i.oob_skip && !i.dst_rmw) return;
    auto explain_rows = [this, src, dst](const z3::model& m) {
      return "source '" + src.tensor->name + "' has " + num(val(m, src.rows)) +
             " rows, destination '" + dst.tensor->name + "' has " + num(val(m, dst.rows));
    };
    decide(make(std::string(rule_info(Rule::dma_rows_paired).name), &dst,
                src.subject() + " -> " + dst.subject()),
           dma_rows_paired_ok(ops(), src.rows, dst.rows), explain_rows, Rule::dma_rows_paired);
  }

  // stationary and moving contract over the same partitions (nc_matmul and nc_matmul_mx).
  void contraction_rule(const ViewTerms& st, const ViewTerms& mv) {
    auto explain_k = [this, st, mv](const z3::model& m) {
      return "stationary has " + num(val(m, st.rows)) + " partitions, moving has " +
             num(val(m, mv.rows));
    };
    decide(make(std::string(rule_info(Rule::matmul_contraction).name), &mv,
                st.subject() + " vs " + mv.subject()),
           matmul_contraction_ok(ops(), st.rows, mv.rows), explain_k, Rule::matmul_contraction);
  }

  // The Tensor engine's limits; the PSUM bank rule applies where the destination lies in one
  // bank.
  void rules(const Matmul& i) {
    const ViewTerms st = operand(i.stationary, "stationary");
    const ViewTerms mv = operand(i.moving, "moving");
    const ViewTerms dst = operand(i.dst, "matmul destination");
    const z3::expr &K = st.rows, &M = st.free, &N = mv.free;
    contraction_rule(st, mv);
    limit_rule(Rule::matmul_k, st, K, hw_.matmul_max_k, "K");
    limit_rule(Rule::matmul_m, st, M, hw_.matmul_max_m, "M");
    limit_rule(Rule::matmul_n, mv, N, hw_.matmul_max_n, "N");
    auto explain_dst = [this, dst, M, N](const z3::model& m) {
      return "[M, N] = [" + num(val(m, M)) + ", " + num(val(m, N)) + "] but '" + dst.tensor->name +
             "' is " + shape_of(m, dst);
    };
    decide(make(std::string(rule_info(Rule::matmul_dst_shape).name), &dst),
           shape_is(ops(), dst.rows, dst.free, M, N), explain_dst, Rule::matmul_dst_shape);
    if (matmul_dst_in_one_bank(hw_)) psum_bank_rule(dst);
    if (p_.tensor(i.dst.tensor).dtype == DType::bf16) {
      generation_rule(Rule::matmul_bf16_psum,
                      matmul_dst_dtype_ok(p_.tensor(i.dst.tensor).dtype, hw_),
                      hw_.name + " accumulates to fp32 PSUM only (bf16 needs trn3)");
    }
  }

  void limit_rule(Rule rule, const ViewTerms& v, const z3::expr& x, int64_t limit,
                  const std::string& name) {
    auto explain = [this, x, limit, name](const z3::model& m) {
      return name + "=" + num(val(m, x)) + " > " + num(limit);
    };
    decide(make(rule_label(rule, limit), &v), within_limit(ops(), x, limit), explain, rule);
  }

  // Tensor engine: via the identity matmul, into one PSUM bank; vector engine: 32x32 blocks.
  void rules(const Transpose& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    const int64_t lim = transpose_limit(i.engine, hw_);
    auto explain = [this, src, lim](const z3::model& m) {
      return "transpose of " + shape_of(m, src) + " exceeds " + num(lim) + "x" + num(lim);
    };
    decide(make(rule_label(Rule::transpose_size, lim), &src),
           transpose_size_ok(ops(), src.rows, src.free, lim), explain, Rule::transpose_size);
    auto explain_dst = [this, src, dst](const z3::model& m) {
      return "transpose of " + shape_of(m, src) + " writes [" + num(val(m, src.free)) + ", " +
             num(val(m, src.rows)) + "] but '" + dst.tensor->name + "' is " + shape_of(m, dst);
    };
    decide(make(std::string(rule_info(Rule::transpose_dst_shape).name), &dst),
           shape_is(ops(), dst.rows, dst.free, src.free, src.rows), explain_dst,
           Rule::transpose_dst_shape);
    if (i.engine == Engine::Tensor) psum_bank_rule(dst);
  }

  void rules(const Activation& i) {
    const ViewTerms src = operand(i.src, "source");
    column_operand(i.scale, "scale", src.rows);
    if (i.bias) column_operand(*i.bias, "bias", src.rows);
    same_shape_rule(operand(i.dst, "destination"), src, "activation");
    if (i.reduce_res) column_rule(operand(*i.reduce_res, "reduce_res"), src.rows);
  }

  // The destination keeps the rows and the free dims that are not reduced (validate: 1 <= axes <
  // rank, so there is at least one reduced dim).
  void rules(const TensorReduce& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    const size_t kept_dims = src.free_sizes.size() - static_cast<size_t>(i.axes);
    const z3::expr kept = product(
        ctx(), std::vector<z3::expr>(src.free_sizes.begin(),
                                     src.free_sizes.begin() + static_cast<ptrdiff_t>(kept_dims)));
    auto explain = [this, src, dst, kept](const z3::model& m) {
      return "reduction of " + shape_of(m, src) + " writes [" + num(val(m, src.rows)) + ", " +
             num(val(m, kept)) + "] but '" + dst.tensor->name + "' is " + shape_of(m, dst);
    };
    decide(make(std::string(rule_info(Rule::reduce_dst_shape).name), &dst),
           shape_is(ops(), dst.rows, dst.free, src.rows, kept), explain, Rule::reduce_dst_shape);
  }

  void rules(const TensorScalar& i) {
    const ViewTerms src = operand(i.src, "source");
    column_operand(i.operand0, "operand0", src.rows);
    if (i.op1) column_operand(i.operand1, "operand1", src.rows);
    same_shape_rule(operand(i.dst, "destination"), src, "tensor_scalar");
  }

  void rules(const TensorTensor& i) {
    const ViewTerms a = operand(i.src0, "src0");
    const ViewTerms b = operand(i.src1, "src1");
    const ViewTerms dst = operand(i.dst, "destination");
    same_shape_rule(a, b, "tensor_tensor inputs");
    same_shape_rule(dst, a, "tensor_tensor");
  }

  void rules(const TensorScalarReduce& i) {
    const ViewTerms src = operand(i.src, "source");
    column_operand(i.operand0, "operand0", src.rows);
    const ViewTerms dst = operand(i.dst, "destination");
    const ViewTerms rr = operand(i.reduce_res, "reduce_res");
    same_shape_rule(dst, src, "tensor_scalar_reduce");
    column_rule(rr, src.rows);
  }

  void rules(const TensorCopy& i) {
    if (i.engine == Engine::Scalar) {
      generation_rule(Rule::scalar_tensor_copy, tensor_copy_engine_ok(*i.engine, hw_),
                      hw_.name + " has no scalar-engine tensor_copy (trn2 or later)");
    }
    const ViewTerms src = operand(i.src, "source");
    same_shape_rule(operand(i.dst, "destination"), src, "tensor_copy");
  }

  void rules(const TensorCopyPredicated& i) {
    const ViewTerms pred = operand(i.predicate, "predicate");
    std::optional<ViewTerms> src;
    if (const auto* a = std::get_if<Access>(&i.src)) src = operand(*a, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    same_shape_rule(dst, pred, "tensor_copy_predicated predicate");
    if (src) same_shape_rule(dst, *src, "tensor_copy_predicated");
  }

  void rules(const AffineSelect& i) {
    const ViewTerms on_true = operand(i.on_true, "on_true");
    const ViewTerms dst = operand(i.dst, "destination");
    same_shape_rule(dst, on_true, "affine_select");
    affine_pattern_rule(dst, i.offset, i.channel_multiplier, i.steps);
  }

  void rules(const Iota& i) {
    affine_pattern_rule(operand(i.dst, "destination"), i.offset, i.channel_multiplier, i.steps);
  }

  void rules(const Memset& i) { operand(i.dst, "destination"); }

  void rules(const Reciprocal& i) {
    const ViewTerms src = operand(i.src, "source");
    same_shape_rule(operand(i.dst, "destination"), src, "reciprocal");
  }

  // The top-8 family: Rule::top8_values on every 8-value operand, Rule::top8_source_size on the
  // data, as the interpreter checks them (exec_top8.cpp).
  void top8_values_rule(const ViewTerms& v, const z3::expr& rows, const char* what) {
    auto explain = [this, v, what](const z3::model& m) {
      return std::string(what) + " '" + v.tensor->name + "' is " + shape_of(m, v) +
             "; it must hold 8 values per partition";
    };
    decide(make(std::string(rule_info(Rule::top8_values).name), &v),
           shape_is(ops(), v.rows, v.free, rows, ops().lit(kTop8Values)), explain,
           Rule::top8_values);
  }
  void top8_source_rule(const ViewTerms& v, int64_t min_free) {
    auto explain = [this, v, min_free](const z3::model& m) {
      return "data '" + v.tensor->name + "' has " + num(val(m, v.free)) +
             " elements per partition, outside [" + num(min_free) + ", " + num(kTop8MaxSource) +
             "]";
    };
    decide(make(std::string(rule_info(Rule::top8_source_size).name), &v),
           top8_source_size_ok(ops(), v.free, min_free), explain, Rule::top8_source_size);
  }

  void rules(const Max8& i) {
    const ViewTerms src = operand(i.src, "source");
    top8_source_rule(src, kTop8MinSource);
    top8_values_rule(operand(i.dst, "destination"), src.rows, "max8 destination");
  }

  void rules(const FindIndex8& i) {
    const ViewTerms vals = operand(i.vals, "vals");
    const ViewTerms data = operand(i.data, "data");
    top8_source_rule(data, kTop8MinSource);
    top8_values_rule(vals, data.rows, "nc_find_index8 vals");
    top8_values_rule(operand(i.dst, "destination"), data.rows, "nc_find_index8 destination");
  }

  void rules(const MatchReplace8& i) {
    const ViewTerms vals = operand(i.vals, "vals");
    const ViewTerms data = operand(i.data, "data");
    const ViewTerms dst = operand(i.dst, "destination");
    top8_source_rule(data, 1);
    top8_values_rule(vals, data.rows, "nc_match_replace8 vals");
    same_shape_rule(dst, data, "nc_match_replace8");
    if (i.dst_idx) {
      top8_values_rule(operand(*i.dst_idx, "dst_idx"), data.rows, "nc_match_replace8 dst_idx");
    }
  }

  void rules(const Rand& i) { operand(i.dst, "destination"); }

  void rules(const Dropout& i) {
    const ViewTerms data = operand(i.data, "data");
    column_operand(i.prob, "prob", data.rows);
    same_shape_rule(operand(i.dst, "destination"), data, "dropout");
  }

  void rules(const TensorTensorScan& i) {
    const ViewTerms a = operand(i.src0, "src0");
    const ViewTerms b = operand(i.src1, "src1");
    column_operand(i.initial, "initial", a.rows);
    const ViewTerms dst = operand(i.dst, "destination");
    same_shape_rule(a, b, "tensor_tensor_scan inputs");
    same_shape_rule(dst, a, "tensor_tensor_scan");
  }

  void rules(const TensorScalarCumulative& i) {
    const ViewTerms src = operand(i.src, "source");
    column_operand(i.imm0, "imm0", src.rows);
    if (i.imm1) column_operand(*i.imm1, "imm1", src.rows);
    same_shape_rule(operand(i.dst, "destination"), src, "tensor_scalar_cumulative");
  }

  // bn_stats reads at most 512 elements per partition and writes [P, 6]; bn_aggr reads whole
  // (count, mean, variance * count) triples and writes [P, 2] (exec_stats.cpp, the same rules).
  void rules(const BnStats& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    limit_rule(Rule::free_size, src, src.free, kBnStatsMaxFree, "bn_stats elements per partition");
    stats_dst_rule(dst, src, 6, "bn_stats");
  }

  void rules(const BnAggr& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    auto explain = [this, src](const z3::model& m) {
      return "bn_aggr reads " + num(val(m, src.free)) +
             " elements per partition, not whole triples";
    };
    decide(make("bn_aggr input holds whole (count, mean, m2) triples", &src), src.free % 3 == 0,
           explain, Rule::free_size);
    stats_dst_rule(dst, src, 2, "bn_aggr");
  }

  // tensor_partition_reduce writes [1, F] for a [P, F] source (exec_select.cpp, the same rule).
  void rules(const TensorPartitionReduce& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    auto explain = [this, dst, src](const z3::model& m) {
      return "tensor_partition_reduce writes [1, " + num(val(m, src.free)) + "] but '" +
             dst.tensor->name + "' is " + shape_of(m, dst);
    };
    decide(make("tensor_partition_reduce destination is [1, F]", &dst),
           shape_is(ops(), dst.rows, dst.free, ops().lit(1), src.free), explain,
           Rule::reduce_dst_shape);
  }

  void rules(const SelectReduce& i) {
    const ViewTerms pred = operand(i.predicate, "predicate");
    const ViewTerms on_true = operand(i.on_true, "on_true");
    column_operand(i.on_false, "on_false", on_true.rows);
    const ViewTerms dst = operand(i.dst, "destination");
    same_shape_rule(pred, on_true, "select_reduce predicate");
    same_shape_rule(dst, on_true, "select_reduce");
    if (i.reduce_res) column_rule(operand(*i.reduce_res, "reduce_res"), on_true.rows);
  }

  // sequence_bounds reads one partition [1, n] and writes [1, 2n].
  void rules(const SequenceBounds& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    auto explain_src = [this, src](const z3::model& m) {
      return "'" + src.tensor->name + "' is " + shape_of(m, src) + "; segment ids are [1, n]";
    };
    decide(make("sequence_bounds reads one partition", &src), src.rows == ops().lit(1), explain_src,
           Rule::reduce_dst_shape);
    auto explain = [this, dst, src](const z3::model& m) {
      return "sequence_bounds writes [1, 2, " + num(val(m, src.free)) + "] but '" +
             dst.tensor->name + "' is " + shape_of(m, dst);
    };
    decide(make("sequence_bounds destination is [1, 2n]", &dst),
           shape_is(ops(), dst.rows, dst.free, ops().lit(1), src.free * 2), explain,
           Rule::reduce_dst_shape);
  }

  void rules(const RangeSelect& i) {
    generation_rule(Rule::range_select_generation, range_select_ok(hw_),
                    hw_.name + " has no range_select (NeuronCore-v3 or newer)");
    const ViewTerms on_true = operand(i.on_true, "on_true");
    column_rule(operand(i.bound0, "bound0"), on_true.rows);
    column_rule(operand(i.bound1, "bound1"), on_true.rows);
    const ViewTerms dst = operand(i.dst, "destination");
    same_shape_rule(dst, on_true, "range_select");
    if (i.reduce_res) column_rule(operand(*i.reduce_res, "reduce_res"), on_true.rows);
    // range_start + index within [-2^24, 2^24], where fp32 holds every integer (the page; the
    // interpreter raises undefined_result, exec_select.cpp).
    const z3::expr start = z_.term(i.range_start);
    const z3::expr limit = ctx().int_val(int64_t{1} << 24);
    const z3::expr last = start + on_true.free - 1;
    auto explain = [this, start, last](const z3::model& m) {
      return "indices " + num(val(m, start)) + " .. " + num(val(m, last)) + " leave [-2^24, 2^24]";
    };
    decide(make("range_select index within 2^24", &on_true), start >= -limit && last <= limit,
           explain, {CheckKind::undefined_result, false}, ctx().bool_val(true));
  }

  // nc_matmul_mx and quantize_mx (model/interp/exec_mx.cpp, the same rules in the same order).
  void mx_partitions_rule(const ViewTerms& v, const char* op) {
    auto explain = [this, v, op](const z3::model& m) {
      return std::string(op) + ": '" + v.tensor->name + "' spans " + num(val(m, v.rows)) +
             " partitions, not a multiple of 32 up to 128";
    };
    decide(make(std::string(op) + " partitions a multiple of 32, at most 128", &v),
           ops().mod(v.rows, 32) == ctx().int_val(0) && v.rows <= ctx().int_val(128), explain,
           Rule::mx_layout);
  }
  // With data on K partitions, K a multiple of 32 (the rule before), the last scale row is
  // mx_scale_row(K - 1) = K - 32 + 3: the scale operand needs K - 28 rows.
  void mx_scale_rule(const ViewTerms& scale, const z3::expr& k, const z3::expr& free,
                     const char* what) {
    auto explain = [this, scale, k, free, what](const z3::model& m) {
      return std::string(what) + " '" + scale.tensor->name + "' is " + shape_of(m, scale) +
             "; data on " + num(val(m, k)) + " partitions with " + num(val(m, free)) +
             " packed elements needs " + num(val(m, k)) + " - 28 rows and that many columns";
    };
    decide(make(std::string(what) + " covers its groups", &scale),
           scale.rows >= k - 28 && scale.free == free, explain, Rule::mx_layout);
  }

  void rules(const MatmulMx& i) {
    generation_rule(Rule::mx_generation, mx_ok(hw_),
                    hw_.name + " has no nc_matmul_mx (NeuronCore-v4 or newer)");
    const ViewTerms st = operand(i.stationary, "stationary");
    const ViewTerms mv = operand(i.moving, "moving");
    const ViewTerms ss = operand(i.stationary_scale, "stationary_scale");
    const ViewTerms ms = operand(i.moving_scale, "moving_scale");
    const ViewTerms dst = operand(i.dst, "matmul_mx destination");
    const z3::expr &K = st.rows, &M = st.free, &N = mv.free;
    contraction_rule(st, mv);
    mx_partitions_rule(st, "nc_matmul_mx");
    auto explain_m = [this, M](const z3::model& m) {
      return "stationary has " + num(val(m, M)) + " elements per partition, not even up to 128";
    };
    decide(make("nc_matmul_mx M even, at most 128", &st),
           ops().mod(M, 2) == ctx().int_val(0) && M <= ctx().int_val(128), explain_m,
           Rule::matmul_m);
    const bool bf16 = p_.tensor(i.dst.tensor).dtype == DType::bf16;
    limit_rule(Rule::matmul_n, mv, N, bf16 ? 8192 : 4096, "N");
    auto explain_dst = [this, dst, M, N](const z3::model& m) {
      return "[M, N] = [" + num(val(m, M)) + ", " + num(val(m, N)) + "] but '" + dst.tensor->name +
             "' is " + shape_of(m, dst);
    };
    decide(make(std::string(rule_info(Rule::matmul_dst_shape).name), &dst),
           shape_is(ops(), dst.rows, dst.free, M, N), explain_dst, Rule::matmul_dst_shape);
    mx_scale_rule(ss, K, M, "stationary_scale");
    mx_scale_rule(ms, K, N, "moving_scale");
  }

  void rules(const QuantizeMx& i) {
    generation_rule(Rule::mx_generation, mx_ok(hw_),
                    hw_.name + " has no quantize_mx (NeuronCore-v4 or newer)");
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    const ViewTerms sc = operand(i.dst_scale, "dst_scale");
    auto explain = [this, src](const z3::model& m) {
      return "quantize_mx: '" + src.tensor->name + "' is " + shape_of(m, src) +
             "; a multiple of 32 partitions up to 128 and of 4 elements per partition";
    };
    decide(make("quantize_mx source layout", &src),
           ops().mod(src.rows, 32) == ctx().int_val(0) && src.rows <= ctx().int_val(128) &&
               ops().mod(src.free, 4) == ctx().int_val(0),
           explain, Rule::mx_layout);
    auto explain_dst = [this, dst, src](const z3::model& m) {
      return "quantize_mx writes [" + num(val(m, src.rows)) + ", " + num(val(m, src.free)) +
             " / 4] but '" + dst.tensor->name + "' is " + shape_of(m, dst);
    };
    decide(make("quantize_mx destination is [P, F / 4]", &dst),
           shape_is(ops(), dst.rows * 4, dst.free * 4, src.rows * 4, src.free), explain_dst,
           Rule::mx_layout);
    mx_scale_rule(sc, src.rows, dst.free, "dst_scale");
  }

  void stats_dst_rule(const ViewTerms& dst, const ViewTerms& src, int64_t cols, const char* op) {
    auto explain = [this, dst, src, cols, op](const z3::model& m) {
      return std::string(op) + " writes [" + num(val(m, src.rows)) + ", " + num(cols) + "] but '" +
             dst.tensor->name + "' is " + shape_of(m, dst);
    };
    decide(make(std::string(op) + " destination is [P, " + std::to_string(cols) + "]", &dst),
           shape_is(ops(), dst.rows, dst.free, src.rows, ops().lit(cols)), explain,
           Rule::reduce_dst_shape);
  }

  // The gathers and the stream shuffle (exec_gather.cpp, the same rules in the same terms).
  // local_gather: index and dst on src's partitions (count and first partition), a multiple of
  // 16 of them; n indices per core within 16 * K and 4096; dst holds n * E per partition.
  void rules(const LocalGather& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms index = operand(i.index, "index");
    const ViewTerms dst = operand(i.dst, "destination");
    for (const ViewTerms* v : {&index, &dst}) {
      same_rows_rule(*v, src, "local_gather");
      const z3::expr begin = partition_begin(*v), want = partition_begin(src);
      auto explain = [this, v = *v, begin, want](const z3::model& m) {
        return "'" + v.tensor->name + "' starts at partition " + num(val(m, begin)) +
               " and the source at " + num(val(m, want));
      };
      decide(make("local_gather operands on the same partitions", v), begin == want, explain,
             Rule::partition_start);
    }
    auto explain16 = [this, src](const z3::model& m) {
      return num(val(m, src.rows)) + " partitions, not a multiple of 16";
    };
    decide(make("local_gather partitions a multiple of 16", &src),
           ops().mod(src.rows, kLocalGatherGroup) == ctx().int_val(0), explain16,
           Rule::partition_start);
    const z3::expr per_core = ctx().int_val(kLocalGatherGroup) * index.free;
    const z3::expr n =
        i.num_valid_indices > 0 ? ctx().int_val(i.num_valid_indices) : per_core.simplify();
    auto explain_n = [this, n, per_core](const z3::model& m) {
      return num(val(m, n)) + " indices per core; the index holds " + num(val(m, per_core)) +
             " per core and a core gathers at most " + num(kLocalGatherMaxIndices);
    };
    decide(make("local_gather indices per core <= 4096 and within the index", &index),
           n <= per_core && n <= ctx().int_val(kLocalGatherMaxIndices), explain_n,
           Rule::same_shape);
    const z3::expr want = n * ctx().int_val(i.num_elem_per_idx);
    auto explain_dst = [this, dst, want](const z3::model& m) {
      return "'" + dst.tensor->name + "' is " + shape_of(m, dst) + "; the gather writes " +
             num(val(m, want)) + " elements per partition";
    };
    decide(make(same_shape_label("local_gather"), &dst), dst.free == want, explain_dst,
           Rule::same_shape);
  }

  // nc_stream_shuffle: the same elements per partition; both start where num_active_partitions
  // (max partitions rounded up to 32) allows; every copying partition of dst names one of src.
  void rules(const StreamShuffle& i) {
    const ViewTerms src = operand(i.src, "source");
    const ViewTerms dst = operand(i.dst, "destination");
    auto explain = [this, src, dst](const z3::model& m) {
      return "'" + dst.tensor->name + "' is " + shape_of(m, dst) + " and '" + src.tensor->name +
             "' " + shape_of(m, src);
    };
    decide(make(same_shape_label("nc_stream_shuffle"), &dst), dst.free == src.free, explain,
           Rule::same_shape);
    const z3::expr widest = z3::ite(src.rows > dst.rows, src.rows, dst.rows);
    const int64_t q = kShuffleQuadrant;
    const z3::expr active = ops().div(widest + ctx().int_val(q - 1), q) * ctx().int_val(q);
    for (const ViewTerms* v : {&src, &dst}) {
      const z3::expr begin = partition_begin(*v);
      auto explain_start = [this, begin, active](const z3::model& m) {
        return "starts at partition " + num(val(m, begin)) + " with " + num(val(m, active)) +
               " active partitions (96/128: 0; 64: 0 or 64; 32: a multiple of 32)";
      };
      decide(make("nc_stream_shuffle start partition", v),
             partition_start_ok(ops(), begin, active, hw_), explain_start, Rule::partition_start);
    }
    z3::expr ok = ctx().bool_val(true);
    for (int64_t lane = 0; lane < q; ++lane) {
      const int64_t m = i.shuffle_mask[static_cast<size_t>(lane)];
      if (m == kShuffleKeep) continue;
      // The last quadrant that has this lane copies partition 32 * quadrant + m.
      const z3::expr last = ops().div(dst.rows - ctx().int_val(1 + lane), q);
      ok = ok && (dst.rows <= ctx().int_val(lane) ||
                  last * ctx().int_val(q) + ctx().int_val(m) < src.rows);
    }
    auto explain_src = [this, src, dst](const z3::model& m) {
      return "'" + dst.tensor->name + "' spans " + num(val(m, dst.rows)) + " partitions; the " +
             "mask copies a partition past the " + num(val(m, src.rows)) + " of '" +
             src.tensor->name + "'";
    };
    decide(make("nc_stream_shuffle reads partitions the source has", &dst), ok, explain_src,
           Rule::same_shape);
  }

  // gather_flattened: indices and dst on data's partitions; dst has the indices' shape.
  void rules(const GatherFlattened& i) {
    const ViewTerms data = operand(i.data, "data");
    const ViewTerms indices = operand(i.indices, "indices");
    const ViewTerms dst = operand(i.dst, "destination");
    same_rows_rule(indices, data, "gather_flattened");
    same_shape_rule(dst, indices, "gather_flattened");
  }

  void same_rows_rule(const ViewTerms& v, const ViewTerms& want, const char* op) {
    auto explain = [this, v, want](const z3::model& m) {
      return "'" + v.tensor->name + "' spans " + num(val(m, v.rows)) + " partitions and '" +
             want.tensor->name + "' " + num(val(m, want.rows));
    };
    decide(make(std::string(op) + " operands on the same partition count", &v), v.rows == want.rows,
           explain, Rule::same_shape);
  }

  // Rule::affine_pattern_int32: the pattern's largest magnitude over the view fits int32. The
  // step count matches the free dims by validation.
  void affine_pattern_rule(const ViewTerms& dst, const Expr& offset, int64_t cm,
                           const std::vector<int64_t>& steps) {
    const z3::expr m =
        affine_pattern_magnitude(ops(), z_.term(offset), cm, dst.rows, dst.free_sizes.data(),
                                 dst.free_sizes.size(), steps.data(), steps.size())
            .simplify();
    auto explain = [this, m](const z3::model& mdl) {
      return "pattern values reach magnitude " + num(val(mdl, m)) + " > 2147483647";
    };
    decide(make(std::string(rule_info(Rule::affine_pattern_int32).name), &dst),
           affine_pattern_ok(ops(), m), explain, Rule::affine_pattern_int32);
  }

  const Program& p_;
  const HwConfig& hw_;
  Allocation alloc_;
  ProgramSolver z_;
  const std::vector<const Loop*>* loops_ = nullptr;
  const InstrStmt* current_ = nullptr;
  std::string text_;
  z3::expr assumed_ = z_.ctx().bool_val(true);
  BudgetCutoff cutoff_;
  std::vector<Obligation> out_;
};

}  // namespace

std::vector<Obligation> prove_isa_rules(const Program& p, const ProveOptions& options) {
  return IsaProver(p, options).run();
}

}  // namespace ncv::solver
