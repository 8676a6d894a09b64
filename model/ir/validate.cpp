// Static validation of a Program: the rules that hold for every parameter value and can be
// checked on the symbolic program. Shape rules that depend on parameter values are checked per
// instruction instance by the interpreter (model/interp/exec.cpp) and proved by the solver.
#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_set>

#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "model/ir/printer.h"

namespace ncv {
inline namespace ir {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Names the parser treats as keywords may not name anything.
bool is_reserved(const std::string& s) {
  static const std::set<std::string> kReserved = {
      "kernel",     "param", "require", "grid",   "input",      "output",     "scratch", "buffer",
      "for",        "in",    "range",   "affine", "sequential", "min",        "max",     "divides",
      "program_id", "nan",   "inf",     "at",     "bufs",       "multiple_of"};
  return kReserved.count(s) > 0;
}

class Validator {
 public:
  explicit Validator(const Program& p) : p_(p) {}

  void run() {
    if (!is_identifier(p_.name)) fail("kernel name '" + p_.name + "' is not an identifier");
    check_params();
    check_tensors();
    std::vector<const Loop*> loops;
    check_body(p_.body, loops, 0);
    for (const Tensor& t : p_.tensors) {
      if (t.kind == TensorKind::Buffer && !declared_.count(t.id)) {
        fail_tensor(t, "buffer is never declared in the body");
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& rule) {
    throw BuildError("kernel '" + p_.name + "': " + rule);
  }
  [[noreturn]] void fail_tensor(const Tensor& t, const std::string& rule) {
    throw BuildError("kernel '" + p_.name + "': tensor '" + t.name + "': " + rule, std::nullopt,
                     t.id);
  }
  [[noreturn]] void fail_ins(const InstrStmt& s, const std::string& rule) {
    std::string text;
    try {
      text = print_instruction(p_, s.ins);
    } catch (...) {
      text = std::string(op_name(s.ins)) + " (unprintable)";
    }
    throw BuildError("kernel '" + p_.name + "': instruction #" + std::to_string(s.id) + " `" +
                         text + "`: " + rule,
                     s.id);
  }

  void check_params() {
    std::set<std::string> names;
    for (const Param& prm : p_.params) {
      if (!is_identifier(prm.name) || is_reserved(prm.name)) {
        fail("param name '" + prm.name + "' is not a usable identifier");
      }
      if (!names.insert(prm.name).second) fail("param '" + prm.name + "' declared twice");
      if (prm.lo > prm.hi) fail("param '" + prm.name + "' has an empty range");
      if (prm.multiple_of < 1) fail("param '" + prm.name + "' needs multiple_of >= 1");
      // The distance from lo up to the first multiple, against the span hi - lo (unsigned: a
      // range may cover all of int64).
      const int64_t rem = ((prm.lo % prm.multiple_of) + prm.multiple_of) % prm.multiple_of;
      const auto gap = static_cast<uint64_t>(rem == 0 ? 0 : prm.multiple_of - rem);
      if (prm.lo <= prm.hi && gap > static_cast<uint64_t>(prm.hi) - static_cast<uint64_t>(prm.lo)) {
        fail("param '" + prm.name + "' has no multiple of " + std::to_string(prm.multiple_of) +
             " in [" + std::to_string(prm.lo) + ", " + std::to_string(prm.hi) + "]");
      }
      param_syms_.insert(intern_symbol(prm.name));
    }
    for (const Relation& r : p_.relations) {
      for (SymbolId s : r.lhs.symbols()) require_param(s, "relation " + r.str());
      for (SymbolId s : r.rhs.symbols()) require_param(s, "relation " + r.str());
    }
    for (SymbolId s : p_.grid.symbols()) require_param(s, "grid " + p_.grid.str());
    if (p_.grid.is_const() && p_.grid.const_value() < 1) fail("grid must be at least 1");
    if (p_.grid.is_const() && p_.grid.const_value() > kMaxGrid) {
      fail("grid " + p_.grid.str() + " exceeds " + std::to_string(kMaxGrid) +
           ": the model runs 1 to " + std::to_string(kMaxGrid) + " program instances");
    }
  }

  void require_param(SymbolId s, const std::string& where) {
    if (!param_syms_.count(s)) fail(where + " uses '" + symbol_name(s) + "', which is not a param");
  }

  void check_tensors() {
    std::set<std::string> names;
    for (const Tensor& t : p_.tensors) {
      if (!is_identifier(t.name) || is_reserved(t.name)) {
        fail_tensor(t, "name is not a usable identifier");
      }
      if (!names.insert(t.name).second) fail_tensor(t, "name declared twice");
      if (param_syms_.count(intern_symbol(t.name))) fail_tensor(t, "name is also a param");
      if (t.shape.empty()) fail_tensor(t, "a tensor needs at least one dimension");
      for (const Expr& e : t.shape) {
        for (SymbolId s : e.symbols()) {
          if (!param_syms_.count(s)) {
            fail_tensor(t, "shape uses '" + symbol_name(s) + "'; shapes may use params only");
          }
        }
        if (e.is_const() && e.const_value() < 1) fail_tensor(t, "a dimension is not positive");
      }
      bool hbm_kind = t.kind != TensorKind::Buffer;
      if (hbm_kind != (t.memory == Memory::HBM)) {
        fail_tensor(t, "inputs, outputs and scratch live in HBM; buffers in SBUF or PSUM");
      }
      if (t.on_chip()) {
        // LANG-OLD: SBUF/PSUM tiles are at least 2-D with the partition dimension first.
        if (t.shape.size() < 2) fail_tensor(t, "on-chip tensors need rank >= 2 ([P, ...])");
        if (t.shape[0].is_const() && t.shape[0].const_value() > kPartitions) {
          fail_tensor(t, "partition dimension " + t.shape[0].str() + " exceeds " +
                             std::to_string(kPartitions));
        }
        if (t.bufs < 1) fail_tensor(t, "bufs must be at least 1");
      } else {
        if (t.bufs != 1) fail_tensor(t, "bufs applies to on-chip buffers only");
        if (t.placement) fail_tensor(t, "only on-chip buffers have placements");
      }
      if (t.value_range) {
        if (t.kind != TensorKind::Input || !is_integer(t.dtype)) {
          fail_tensor(t, "a value range is declared on integer inputs only");
        }
        if (t.value_range->lo > t.value_range->hi) fail_tensor(t, "value range is empty");
      }
      if (!t.interface_shape.empty()) check_interface_shape(t);
      if (t.kind != TensorKind::Buffer && t.scope != 0) {
        fail_tensor(t, "HBM tensors are declared at kernel level");
      }
    }
  }

  // The kernel's own shape of an input or output declared with its dims refined: params only,
  // positive dims, and (when both are constants) as many elements as the declared shape. Element
  // counts that depend on params are compared where the arrays are handed in and out
  // (model/interp/npy.cpp).
  void check_interface_shape(const Tensor& t) {
    if (t.kind != TensorKind::Input && t.kind != TensorKind::Output) {
      fail_tensor(t, "only inputs and outputs have an interface shape");
    }
    // Element counts of constant shapes; -1 when a dim is not a positive constant or the
    // product leaves int64.
    const auto count = [](const std::vector<Expr>& shape) -> int64_t {
      int64_t n = 1;
      for (const Expr& e : shape) {
        if (!e.is_const() || e.const_value() < 1) return -1;
        if (__builtin_mul_overflow(n, e.const_value(), &n)) return -1;
      }
      return n;
    };
    for (const Expr& e : t.interface_shape) {
      for (SymbolId s : e.symbols()) {
        if (!param_syms_.count(s)) {
          fail_tensor(t,
                      "interface shape uses '" + symbol_name(s) + "'; shapes may use params only");
        }
      }
      if (e.is_const() && e.const_value() < 1) {
        fail_tensor(t, "a dimension of the interface shape is not positive");
      }
    }
    const int64_t declared = count(t.shape), interface = count(t.interface_shape);
    if (declared > 0 && interface > 0 && declared != interface) {
      fail_tensor(t, "interface shape has " + std::to_string(interface) +
                         " elements, the declared shape " + std::to_string(declared) +
                         " (an interface shape is the same elements with other dims)");
    }
  }

  // The parts of a placement that are constants name an address of some generation's memory.
  void check_constant_placement(const Tensor& t) {
    const Expr& part = t.placement->partition;
    if (part.is_const() && (part.const_value() < 0 || part.const_value() >= kPartitions)) {
      fail_tensor(t, "placed at partition " + part.str() + ", outside the " +
                         std::to_string(kPartitions) + " partitions [0, " +
                         std::to_string(kPartitions) + ")");
    }
    const Expr& off = t.placement->byte_offset;
    if (off.is_const() && (off.const_value() < 0 || off.const_value() >= kPlacementByteLimit)) {
      int64_t largest = 0;
      for (std::string_view gen : hw_config_names()) {
        const HwConfig& hw = *find_hw_config(gen);
        largest = std::max({largest, hw.sbuf_bytes_per_partition, hw.psum_bytes_per_partition});
      }
      fail_tensor(t, "placed at byte " + off.str() + ", outside [0, " +
                         std::to_string(kPlacementByteLimit) +
                         "): no generation's memory has such an address (the largest has " +
                         std::to_string(largest) + " bytes per partition)");
    }
  }

  bool symbol_visible(SymbolId s, const std::vector<const Loop*>& loops) const {
    if (param_syms_.count(s)) return true;
    if (symbol_name(s) == kProgramIdParam) return true;
    for (const Loop* l : loops) {
      if (intern_symbol(l->var) == s) return true;
    }
    return false;
  }

  void check_expr_vars(const Expr& e, const std::vector<const Loop*>& loops,
                       const std::string& what, const InstrStmt* ins) {
    for (SymbolId s : e.symbols()) {
      if (!symbol_visible(s, loops)) {
        std::string rule = what + " uses '" + symbol_name(s) +
                           "', which is neither a param nor an enclosing loop variable";
        if (ins) fail_ins(*ins, rule);
        fail(rule);
      }
    }
  }

  void check_body(const std::vector<Stmt>& body, std::vector<const Loop*>& loops, ScopeId scope) {
    for (const Stmt& s : body) {
      if (auto* d = std::get_if<DeclStmt>(&s.node)) {
        if (d->tensor >= p_.tensors.size()) fail("declaration of an unknown tensor");
        const Tensor& t = p_.tensors[d->tensor];
        if (t.kind != TensorKind::Buffer) fail_tensor(t, "only buffers are declared in the body");
        if (!declared_.insert(t.id).second) fail_tensor(t, "buffer declared twice");
        if (t.scope != scope) fail_tensor(t, "buffer's scope does not match where it is declared");
        if (t.placement) {
          check_expr_vars(t.placement->partition, loops, "placement of '" + t.name + "'", nullptr);
          check_expr_vars(t.placement->byte_offset, loops, "placement of '" + t.name + "'",
                          nullptr);
          check_constant_placement(t);
        }
        visible_.insert(t.id);
      } else if (auto* i = std::get_if<InstrStmt>(&s.node)) {
        check_instruction(*i, loops);
      } else if (auto* l = std::get_if<Loop>(&s.node)) {
        if (!is_identifier(l->var) || is_reserved(l->var)) {
          fail("loop variable '" + l->var + "' is not a usable identifier");
        }
        SymbolId v = intern_symbol(l->var);
        if (symbol_visible(v, loops)) {
          fail("loop variable '" + l->var + "' shadows a param or an enclosing loop variable");
        }
        if (p_.find_tensor(l->var)) fail("loop variable '" + l->var + "' is also a tensor name");
        if (l->step < 1) fail("loop '" + l->var + "' needs step >= 1");
        check_expr_vars(l->start, loops, "start of loop '" + l->var + "'", nullptr);
        check_expr_vars(l->stop, loops, "stop of loop '" + l->var + "'", nullptr);
        loops.push_back(l);
        std::set<TensorId> outer_visible = visible_;
        check_body(l->body, loops, l->scope);
        visible_ = std::move(outer_visible);  // buffers of the loop's scope end with it
        loops.pop_back();
      }
    }
  }

  // An operand of a plain DMA may name an on-chip tensor with its partition dim elsewhere than
  // first (nisa.dma_transpose from SBUF, ISA dma_transpose: "a tile in HBM or SBUF"): the DMA
  // engines move any element to any place. Not with indirect rows, oob_skip or dst_rmw, which
  // pair rows of the two sides.
  static bool moves_across_partitions(const InstrStmt& s, const Access& a) {
    const auto* dma = std::get_if<DmaCopy>(&s.ins);
    return dma && (&a == &dma->src || &a == &dma->dst) && !a.indirect && !dma->oob_skip &&
           !dma->dst_rmw;
  }

  void check_access(const Access& a, const std::vector<const Loop*>& loops, const InstrStmt& s,
                    const std::string& role) {
    if (a.tensor >= p_.tensors.size()) fail_ins(s, role + " names an unknown tensor");
    const Tensor& t = p_.tensors[a.tensor];
    std::string where = role + " '" + t.name + "'";
    if (t.kind == TensorKind::Buffer && !visible_.count(t.id)) {
      fail_ins(s, where + " is used outside the scope that declares it (or before it)");
    }
    if (a.dims.size() != t.shape.size()) {
      fail_ins(s, where + " has " + std::to_string(a.dims.size()) + " index dims, tensor rank is " +
                      std::to_string(t.shape.size()));
    }
    if (a.dims.size() > 1 + static_cast<size_t>(kMaxFreeDims)) {
      fail_ins(s, where + " has more than 5 dims (partition + 4 free, ARCH2)");
    }
    if (!a.perm.empty()) {
      std::vector<int> sorted = a.perm;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k) {
        if (sorted[k] != static_cast<int>(k) || a.perm.size() != a.dims.size()) {
          fail_ins(s, where + ": perm is not a permutation of the dims");
        }
      }
      if (t.on_chip() && a.perm[0] != 0 && !moves_across_partitions(s, a)) {
        fail_ins(s, where +
                        ": an on-chip view keeps the partition dim first (only a DMA "
                        "moves data across partitions)");
      }
    }
    for (size_t d = 0; d < a.dims.size(); ++d) {
      const AccessDim& ad = a.dims[d];
      check_expr_vars(ad.start, loops, where, &s);
      check_expr_vars(ad.size, loops, where, &s);
      if (ad.size.is_const() && ad.size.const_value() < 1) {
        fail_ins(s, where + ": dim " + std::to_string(d) + " has size < 1");
      }
      if (ad.step < 0) fail_ins(s, where + ": negative steps are not supported");
      if (d == 0 && t.on_chip() && ad.step != 1) {
        fail_ins(s, where + ": the partition dim cannot be strided (ARCH2)");
      }
    }
    if (a.core) {
      if (!t.on_chip()) fail_ins(s, where + ": `core` applies to on-chip tensors only");
      check_expr_vars(*a.core, loops, where + " core", &s);
    }
    if (a.indirect) {
      const Indirect& ind = *a.indirect;
      if (!ind.offsets) fail_ins(s, where + ": indirect access without offsets");
      if (ind.dim < 0 || static_cast<size_t>(ind.dim) >= a.dims.size()) {
        fail_ins(s, where + ": indirect dim out of range");
      }
      if (ind.lo > ind.hi) fail_ins(s, where + ": indirect offset range is empty");
      check_access(*ind.offsets, loops, s, "indirect offsets of " + where);
      const Tensor& ot = p_.tensors[ind.offsets->tensor];
      if (!ot.on_chip() || (ot.dtype != DType::int32 && ot.dtype != DType::uint32)) {
        fail_ins(s, where + ": indirect offsets must be an on-chip int32/uint32 [P, 1] column");
      }
      if (ind.offsets->indirect) fail_ins(s, where + ": nested indirect access");
    }
  }

  Memory mem(const Access& a) const { return p_.tensors[a.tensor].memory; }
  DType dt(const Access& a) const { return p_.tensors[a.tensor].dtype; }

  void require_on_chip(const InstrStmt& s, const Access& a, const std::string& role) {
    if (mem(a) == Memory::HBM) fail_ins(s, role + " must be in SBUF or PSUM (compute engines)");
  }
  void require_mem(const InstrStmt& s, const Access& a, Memory m, const std::string& role) {
    if (mem(a) != m) {
      fail_ins(s, role + " must be in " + std::string(memory_name(m)) + ", is in " +
                      std::string(memory_name(mem(a))));
    }
  }
  // An unpinned instruction (empty e) is never placed on GpSimd next to PSUM: the compiler-choice
  // rules pick a legal engine (model/compiler).
  void no_psum_on_gpsimd(const InstrStmt& s, EngineChoice e, const Access& a,
                         const std::string& role) {
    if (e == Engine::GpSimd && mem(a) == Memory::PSUM) {
      fail_ins(s, role + ": the GpSimd engine cannot access PSUM (ARCH2)");
    }
  }
  void check_operand(const InstrStmt& s, const Operand& o, const std::vector<const Loop*>& loops,
                     const std::string& role, EngineChoice e) {
    if (auto* a = std::get_if<Access>(&o)) {
      check_access(*a, loops, s, role);
      require_on_chip(s, *a, role);
      no_psum_on_gpsimd(s, e, *a, role);
    }
  }
  void bitwise_needs_ints(const InstrStmt& s, AluOp op, std::initializer_list<DType> dts) {
    if (!is_bitwise(op)) return;
    for (DType d : dts) {
      if (!is_integer(d)) {
        fail_ins(s, "bitwise op " + std::string(alu_op_name(op)) + " needs integer dtypes");
      }
    }
  }
  // The unary ALU operators (abs, square, relu, rsqrt, reciprocal) are documented as
  // tensor_scalar's and tensor_scalar_reduce's op0 only, with operand0 None or 0 (ISA-NEW
  // tensor_scalar / tensor_scalar_reduce pages); which input a reversed unary op0 reads, or what
  // one does elsewhere, is not documented.
  void no_unary(const InstrStmt& s, AluOp op, const std::string& role) {
    if (is_unary(op)) {
      fail_ins(s, "the unary ALU op " + std::string(alu_op_name(op)) + " cannot be " + role +
                      " (documented as tensor_scalar / tensor_scalar_reduce op0 only)");
    }
  }
  void unary_op0(const InstrStmt& s, AluOp op0, const Operand& operand0, bool reverse0) {
    if (!is_unary(op0)) return;
    const auto* imm = std::get_if<Imm>(&operand0);
    if (!imm || imm->value != 0.0f) {
      fail_ins(s, "a unary op0 (" + std::string(alu_op_name(op0)) +
                      ") takes operand0 0 (ISA-NEW: None or 0)");
    }
    if (reverse0) fail_ins(s, "a unary op0 cannot be reversed (undocumented)");
  }
  void constant_partitions_le_128(const InstrStmt& s, const Access& a, const std::string& role) {
    if (p_.tensors[a.tensor].on_chip() && a.dims[0].size.is_const() &&
        a.dims[0].size.const_value() > kPartitions) {
      fail_ins(s, role + " spans " + a.dims[0].size.str() + " partitions (> " +
                      std::to_string(kPartitions) + ")");
    }
  }

  void check_instruction(const InstrStmt& s, const std::vector<const Loop*>& loops) {
    for (const Access* a : written_accesses(s.ins)) {
      check_access(*a, loops, s, "destination");
      // Kernel inputs are read-only: a kernel that overwrites its inputs can fool a reference
      // run after it (KernelBench PR #82 found kernels doing it).
      if (p_.tensors[a->tensor].kind == TensorKind::Input) {
        fail_ins(s,
                 "writes kernel input '" + p_.tensors[a->tensor].name + "' (inputs are read-only)");
      }
    }
    check_mx_packed_use(s);
    std::visit([&](const auto& i) { check_specific(s, i, loops); }, s.ins);
    for (const Access* a : written_accesses(s.ins)) {
      constant_partitions_le_128(s, *a, "destination");
    }
  }

  // An MX packed dtype (four values per element) has no single value for an engine to compute
  // with: only the two MX instructions read or write it, and a DMA copies its bytes unchanged.
  void check_mx_packed_use(const InstrStmt& s) {
    if (std::holds_alternative<MatmulMx>(s.ins) || std::holds_alternative<QuantizeMx>(s.ins)) {
      return;
    }
    std::vector<const Access*> all = written_accesses(s.ins);
    for (const Access* a : read_accesses(s.ins)) all.push_back(a);
    bool packed = false;
    for (const Access* a : all) packed = packed || is_mx_packed(dt(*a));
    if (!packed) return;
    if (const auto* d = std::get_if<DmaCopy>(&s.ins)) {
      if (dt(d->dst) == dt(d->src) && !d->dst_rmw) return;
      fail_ins(s,
               "a DMA copies an MX packed dtype only into the same dtype, without dst_rmw "
               "(its four values have no single value to convert)");
    }
    fail_ins(s, std::string(op_name(s.ins)) +
                    " takes no MX packed dtype (only matmul_mx, quantize_mx and same-dtype DMA "
                    "copies do)");
  }

  // nisa.nc_matmul_mx (ISA docstring, "Memory types" and "Data types"): SBUF inputs, PSUM dst
  // in fp32 or bf16; packed fp8/fp4 data; uint8 scales (float8_e8m0fnu is not modelled).
  void check_specific(const InstrStmt& s, const MatmulMx& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.stationary, loops, s, "stationary");
    check_access(i.moving, loops, s, "moving");
    check_access(i.stationary_scale, loops, s, "stationary_scale");
    check_access(i.moving_scale, loops, s, "moving_scale");
    for (const Access* a : {&i.stationary, &i.moving, &i.stationary_scale, &i.moving_scale}) {
      require_mem(s, *a, Memory::SBUF, "matmul_mx input");
    }
    require_mem(s, i.dst, Memory::PSUM, "matmul_mx destination");
    if (dt(i.dst) != DType::fp32 && dt(i.dst) != DType::bf16) {
      fail_ins(s, "matmul_mx writes fp32 or bf16 PSUM");
    }
    if (!is_mx_packed(dt(i.stationary)) || !is_mx_packed(dt(i.moving))) {
      fail_ins(s, "matmul_mx multiplies fp8_e4m3fn_x4, fp8_e5m2_x4 or fp4_e2m1fn_x4 tiles");
    }
    if (dt(i.stationary_scale) != DType::uint8 || dt(i.moving_scale) != DType::uint8) {
      fail_ins(s, "matmul_mx's scales are uint8 (E8M0 bytes)");
    }
    for (const Access* a : {&i.stationary, &i.moving}) {
      constant_partitions_le_128(s, *a, "matmul_mx input");
    }
  }
  // nisa.quantize_mx (ISA docstring): src bf16/fp16, dst fp8 x4 (no fp4: "Quantize-MX does not
  // support an FP4 output", MX deep dive), scales uint8; all in SBUF.
  void check_specific(const InstrStmt& s, const QuantizeMx& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    check_access(i.dst_scale, loops, s, "dst_scale");
    for (const Access* a : {&i.src, &i.dst, &i.dst_scale}) {
      require_mem(s, *a, Memory::SBUF, "quantize_mx operand");
    }
    if (dt(i.src) != DType::bf16 && dt(i.src) != DType::fp16) {
      fail_ins(s, "quantize_mx reads bf16 or fp16");
    }
    if (dt(i.dst) != DType::fp8_e4m3fn_x4 && dt(i.dst) != DType::fp8_e5m2_x4) {
      fail_ins(s, "quantize_mx writes fp8_e4m3fn_x4 or fp8_e5m2_x4");
    }
    if (dt(i.dst_scale) != DType::uint8) fail_ins(s, "quantize_mx's scales are uint8 (E8M0 bytes)");
    constant_partitions_le_128(s, i.src, "quantize_mx source");
  }

  void check_specific(const InstrStmt& s, const DmaCopy& i, const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    if (mem(i.dst) == Memory::PSUM || mem(i.src) == Memory::PSUM) {
      fail_ins(s, "DMA moves between HBM and SBUF only, not PSUM (ISA-NEW dma_copy)");
    }
    if (i.queue < 0 || i.queue >= kDmaQueues) {
      fail_ins(s, "DMA queue must be in [0, " + std::to_string(kDmaQueues - 1) + "] (DMA)");
    }
    // ISA-OLD dma_copy: oob_mode.skip concerns the run-time indices of indirect accesses; the
    // read-modify-write supports add only, and with oob_mode.error only.
    if (i.oob_skip && !i.dst.indirect && !i.src.indirect) {
      fail_ins(s, "oob_skip needs an indirect source or destination (ISA-OLD dma_copy oob_mode)");
    }
    if (i.dst_rmw && *i.dst_rmw != AluOp::add) {
      fail_ins(s, "dst_rmw supports add only (ISA-OLD dma_copy dst_rmw_op)");
    }
    if (i.dst_rmw && i.oob_skip) {
      fail_ins(s, "dst_rmw allows oob_mode.error only, not oob_skip (ISA-OLD dma_copy dst_rmw_op)");
    }
  }
  void check_specific(const InstrStmt& s, const Matmul& i, const std::vector<const Loop*>& loops) {
    check_access(i.stationary, loops, s, "stationary");
    check_access(i.moving, loops, s, "moving");
    require_mem(s, i.stationary, Memory::SBUF, "stationary");
    require_mem(s, i.moving, Memory::SBUF, "moving");
    require_mem(s, i.dst, Memory::PSUM, "matmul destination");
    if (dt(i.dst) != DType::fp32 && dt(i.dst) != DType::bf16) {
      fail_ins(s, "matmul writes fp32 PSUM (bf16 on trn3 only)");
    }
    for (DType d : {dt(i.stationary), dt(i.moving)}) {
      if (!is_float(d)) fail_ins(s, "matmul inputs must be float types");
    }
    if ((dt(i.stationary) == DType::fp32) != (dt(i.moving) == DType::fp32)) {
      fail_ins(s, "an fp32 matmul input must pair with fp32 (ISA-NEW nc_matmul)");
    }
    for (const Access* a : {&i.stationary, &i.moving}) {
      constant_partitions_le_128(s, *a, "matmul input");
    }
  }
  void check_specific(const InstrStmt& s, const Transpose& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    if (i.engine == Engine::Tensor) {
      require_mem(s, i.src, Memory::SBUF, "tensor-engine transpose source");
      require_mem(s, i.dst, Memory::PSUM, "tensor-engine transpose destination");
      if (!is_float(dt(i.src)) || !is_float(dt(i.dst))) {
        fail_ins(s, "tensor-engine transpose is a matmul: float dtypes only");
      }
    } else if (i.engine == Engine::Vector) {
      require_on_chip(s, i.src, "source");
      require_on_chip(s, i.dst, "destination");
      if (dt(i.src) != dt(i.dst)) fail_ins(s, "vector transpose keeps the dtype");
    } else {
      fail_ins(s, "transpose runs on the tensor or vector engine");
    }
  }
  void check_specific(const InstrStmt& s, const Activation& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    check_operand(s, i.scale, loops, "scale", Engine::Scalar);
    if (i.bias) check_operand(s, *i.bias, loops, "bias", Engine::Scalar);
    if (i.reduce_res) require_on_chip(s, *i.reduce_res, "reduce_res");
    if (i.reduce_cmd == ReduceCmd::load_reduce) {
      fail_ins(s, "activation's accumulator takes idle, reset, reduce or reset_reduce");
    }
  }
  void check_specific(const InstrStmt& s, const TensorReduce& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    if (i.axes < 1 || static_cast<size_t>(i.axes) >= i.src.rank()) {
      fail_ins(s, "tensor_reduce reduces 1..rank-1 trailing free axes, never the partition axis");
    }
    static const std::set<AluOp> kReduceOps = {
        AluOp::add, AluOp::subtract,    AluOp::multiply,   AluOp::max,
        AluOp::min, AluOp::bitwise_and, AluOp::bitwise_or, AluOp::bitwise_xor};
    if (!kReduceOps.count(i.op)) {
      fail_ins(s, std::string(alu_op_name(i.op)) + " is not a legal reduction op (ISA-NEW)");
    }
    if (i.negate && is_bitwise(i.op)) fail_ins(s, "negate applies to arithmetic reductions only");
    bitwise_needs_ints(s, i.op, {dt(i.src), dt(i.dst)});
  }
  void check_specific(const InstrStmt& s, const TensorScalar& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    if (i.engine == Engine::Tensor || i.engine == Engine::Dma) {
      fail_ins(s, "tensor_scalar runs on the vector, scalar or gpsimd engine");
    }
    no_psum_on_gpsimd(s, i.engine, i.src, "source");
    no_psum_on_gpsimd(s, i.engine, i.dst, "destination");
    check_operand(s, i.operand0, loops, "operand0", i.engine);
    if (i.op1) check_operand(s, i.operand1, loops, "operand1", i.engine);
    if (i.op1 && is_bitwise(i.op0) != is_bitwise(*i.op1)) {
      fail_ins(s, "both tensor_scalar ops must be of the same class (ISA-NEW)");
    }
    if (is_bitwise(i.op0) && i.engine && *i.engine != Engine::Vector) {
      fail_ins(s, "bitwise ops run on the vector engine only (ISA-NEW)");
    }
    bitwise_needs_ints(s, i.op0, {dt(i.src), dt(i.dst)});
    unary_op0(s, i.op0, i.operand0, i.reverse0);
    if (i.op1) no_unary(s, *i.op1, "op1");
  }
  void check_specific(const InstrStmt& s, const TensorTensor& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src0, loops, s, "src0");
    check_access(i.src1, loops, s, "src1");
    for (const Access* a : {&i.src0, &i.src1, &i.dst}) require_on_chip(s, *a, "operand");
    if (i.engine && *i.engine != Engine::Vector && *i.engine != Engine::GpSimd) {
      fail_ins(s, "tensor_tensor runs on the vector or gpsimd engine");
    }
    if (mem(i.src0) == Memory::PSUM && mem(i.src1) == Memory::PSUM) {
      fail_ins(s, "tensor_tensor inputs cannot both be in PSUM (ISA-NEW)");
    }
    for (const Access* a : {&i.src0, &i.src1, &i.dst})
      no_psum_on_gpsimd(s, i.engine, *a, "operand");
    bitwise_needs_ints(s, i.op, {dt(i.src0), dt(i.src1), dt(i.dst)});
    no_unary(s, i.op, "tensor_tensor's op");
  }
  void check_specific(const InstrStmt& s, const TensorScalarReduce& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    require_on_chip(s, i.reduce_res, "reduce_res");
    check_operand(s, i.operand0, loops, "operand0", Engine::Vector);
    if (is_bitwise(i.op0)) fail_ins(s, "tensor_scalar_reduce takes an arithmetic op");
    static const std::set<AluOp> kOps = {AluOp::add, AluOp::multiply, AluOp::max, AluOp::min};
    if (!kOps.count(i.reduce_op)) fail_ins(s, "reduce op must be add, multiply, max or min");
    unary_op0(s, i.op0, i.operand0, i.reverse0);
  }
  void check_specific(const InstrStmt& s, const TensorCopy& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    if (i.engine == Engine::Tensor || i.engine == Engine::Dma) {
      fail_ins(s, "tensor_copy runs on the vector, scalar or gpsimd engine");
    }
    no_psum_on_gpsimd(s, i.engine, i.src, "source");
    no_psum_on_gpsimd(s, i.engine, i.dst, "destination");
  }
  void check_specific(const InstrStmt& s, const TensorCopyPredicated& i,
                      const std::vector<const Loop*>& loops) {
    check_operand(s, i.src, loops, "source", Engine::Vector);
    check_access(i.predicate, loops, s, "predicate");
    require_on_chip(s, i.predicate, "predicate");
    require_on_chip(s, i.dst, "destination");
    DType pd = dt(i.predicate);
    if (pd != DType::uint8 && pd != DType::uint16 && pd != DType::uint32 && pd != DType::int32) {
      fail_ins(s, "predicate must be uint8/uint16/uint32/int32 (ISA-NEW)");
    }
    if (auto* a = std::get_if<Access>(&i.src)) {
      if (mem(*a) == Memory::PSUM && mem(i.predicate) == Memory::PSUM) {
        fail_ins(s, "source and predicate cannot both be in PSUM (ISA-NEW)");
      }
      if (dt(*a) != dt(i.dst)) fail_ins(s, "predicated copy keeps the dtype (ISA-NEW)");
    }
  }
  void check_specific(const InstrStmt& s, const AffineSelect& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.on_true, loops, s, "on_true");
    require_mem(s, i.dst, Memory::SBUF, "affine_select destination");
    require_mem(s, i.on_true, Memory::SBUF, "affine_select on_true");
    check_expr_vars(i.offset, loops, "offset", &s);
    if (i.steps.size() + 1 != i.dst.rank()) {
      fail_ins(s, "affine_select needs one step per free dim of the destination");
    }
  }
  void check_specific(const InstrStmt& s, const Iota& i, const std::vector<const Loop*>& loops) {
    require_mem(s, i.dst, Memory::SBUF, "iota destination");
    check_expr_vars(i.offset, loops, "offset", &s);
    if (i.steps.size() + 1 != i.dst.rank()) {
      fail_ins(s, "iota needs one step per free dim of the destination");
    }
  }
  void check_specific(const InstrStmt& s, const Memset& i, const std::vector<const Loop*>&) {
    require_on_chip(s, i.dst, "destination");
    if (i.engine && *i.engine != Engine::Vector && *i.engine != Engine::GpSimd) {
      fail_ins(s, "memset runs on the vector or gpsimd engine");
    }
    no_psum_on_gpsimd(s, i.engine, i.dst, "destination");
  }
  void check_specific(const InstrStmt& s, const Reciprocal& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    if (i.engine && *i.engine != Engine::Vector && *i.engine != Engine::GpSimd) {
      fail_ins(s, "reciprocal runs on the vector or gpsimd engine");
    }
    no_psum_on_gpsimd(s, i.engine, i.src, "source");
    no_psum_on_gpsimd(s, i.engine, i.dst, "destination");
  }
  // The top-8 family and dropout (ISA-OLD max8, nc_find_index8, nc_match_replace8, dropout);
  // their shape rules (8 values per partition, elements per partition) are Rule::top8_values and
  // Rule::top8_source_size, checked per instance and proved by the solver.
  void check_specific(const InstrStmt& s, const Max8& i, const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
  }
  void check_specific(const InstrStmt& s, const FindIndex8& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.data, loops, s, "data");
    check_access(i.vals, loops, s, "vals");
    require_on_chip(s, i.data, "data");
    require_on_chip(s, i.vals, "vals");
    require_on_chip(s, i.dst, "destination");
    if (dt(i.dst) != DType::uint16 && dt(i.dst) != DType::uint32) {
      fail_ins(s, "nc_find_index8 writes uint16 or uint32 indices (ISA-OLD nc_find_index8)");
    }
  }
  void check_specific(const InstrStmt& s, const MatchReplace8& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.data, loops, s, "data");
    check_access(i.vals, loops, s, "vals");
    require_on_chip(s, i.data, "data");
    require_on_chip(s, i.vals, "vals");
    require_on_chip(s, i.dst, "destination");
    if (i.dst_idx) require_on_chip(s, *i.dst_idx, "dst_idx");
  }
  void check_specific(const InstrStmt& s, const Rand& i, const std::vector<const Loop*>&) {
    require_on_chip(s, i.dst, "destination");
    if (!is_float(dt(i.dst))) fail_ins(s, "rand draws values in [0, 1): a float destination");
  }
  void check_specific(const InstrStmt& s, const Dropout& i, const std::vector<const Loop*>& loops) {
    check_access(i.data, loops, s, "data");
    require_on_chip(s, i.data, "data");
    require_on_chip(s, i.dst, "destination");
    check_operand(s, i.prob, loops, "prob", Engine::Vector);
    if (is_integer(dt(i.data))) {
      if (dt(i.dst) != dt(i.data)) {
        fail_ins(s, "dropout of integer data keeps its dtype (ISA-OLD dropout)");
      }
      if (auto* a = std::get_if<Access>(&i.prob); a && dt(*a) != DType::fp32) {
        fail_ins(s, "dropout of integer data takes an fp32 prob (ISA-OLD dropout)");
      }
    }
    if (auto* a = std::get_if<Access>(&i.prob); a && !is_float(dt(*a))) {
      fail_ins(s, "dropout's prob is a float (ISA-OLD dropout)");
    }
  }
  // nisa.tensor_tensor_scan (NKI API reference): Vector engine; data0 and data1 not both in
  // PSUM; op0/op1 arithmetic operators (the engine computes in fp32).
  void check_specific(const InstrStmt& s, const TensorTensorScan& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src0, loops, s, "src0");
    check_access(i.src1, loops, s, "src1");
    for (const Access* a : {&i.src0, &i.src1, &i.dst}) require_on_chip(s, *a, "operand");
    if (mem(i.src0) == Memory::PSUM && mem(i.src1) == Memory::PSUM) {
      fail_ins(s, "tensor_tensor_scan inputs cannot both be in PSUM (nki.isa.tensor_tensor_scan)");
    }
    check_operand(s, i.initial, loops, "initial", Engine::Vector);
    if (is_bitwise(i.op0) || is_bitwise(i.op1)) {
      fail_ins(s, "tensor_tensor_scan takes arithmetic operators (nki.isa.tensor_tensor_scan)");
    }
    no_unary(s, i.op0, "tensor_tensor_scan's op0");
    no_unary(s, i.op1, "tensor_tensor_scan's op1");
  }
  // nisa.tensor_scalar_cumulative (NKI API reference): op0 arithmetic; op1 add, subtract,
  // multiply, max or min; src/dst not 32-bit integers; imm0/imm1 fp32; the accumulator starts by
  // reset_reduce, reduce or load_reduce, and imm1 is the value load_reduce loads.
  void check_specific(const InstrStmt& s, const TensorScalarCumulative& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    for (const Access* a : {&i.src, &i.dst}) {
      if (dt(*a) == DType::int32 || dt(*a) == DType::uint32) {
        fail_ins(s, "tensor_scalar_cumulative has no int32/uint32 input or output (ISA limit)");
      }
    }
    check_operand(s, i.imm0, loops, "imm0", Engine::Vector);
    if (i.imm1) check_operand(s, *i.imm1, loops, "imm1", Engine::Vector);
    for (const Operand* o : {&i.imm0, i.imm1 ? &*i.imm1 : nullptr}) {
      const auto* a = o ? std::get_if<Access>(o) : nullptr;
      if (a && dt(*a) != DType::fp32) fail_ins(s, "imm0/imm1 must be fp32");
    }
    if (is_bitwise(i.op0)) fail_ins(s, "tensor_scalar_cumulative's op0 must be arithmetic");
    no_unary(s, i.op0, "tensor_scalar_cumulative's op0");
    static const std::set<AluOp> kOps = {AluOp::add, AluOp::subtract, AluOp::multiply, AluOp::max,
                                         AluOp::min};
    if (!kOps.count(i.op1)) fail_ins(s, "op1 must be add, subtract, multiply, max or min");
    if (i.reduce_cmd != ReduceCmd::reset_reduce && i.reduce_cmd != ReduceCmd::reduce &&
        i.reduce_cmd != ReduceCmd::load_reduce) {
      fail_ins(s, "tensor_scalar_cumulative's reduce_cmd is reset_reduce, reduce or load_reduce");
    }
    if ((i.reduce_cmd == ReduceCmd::load_reduce) != i.imm1.has_value()) {
      fail_ins(s, "imm1 is given exactly when reduce_cmd is load_reduce (the value it loads)");
    }
  }

  // nisa.bn_stats / nisa.bn_aggr (NKI API reference, SDK 2.26): Vector engine, on-chip operands.
  // The sizes (at most 512 elements in, 6 out; 3k in, 2 out) are operand-shape rules, checked per
  // instance by the interpreter and the solver.
  void check_specific(const InstrStmt& s, const BnStats& i, const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
  }
  void check_specific(const InstrStmt& s, const BnAggr& i, const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
  }

  // nisa.local_gather (NKI API reference, SDK 2.26): GpSimd engine, so SBUF operands (ARCH2: the
  // GpSimd engine cannot access PSUM); uint16 indices; no dtype cast (dst has src's dtype);
  // num_elem_per_idx in {1, 2, 4, 8, 16, 32}; at most 4096 indices per core. The shapes
  // (partitions, a multiple of 16; dst's size) are checked per instance (exec_gather.cpp).
  void check_specific(const InstrStmt& s, const LocalGather& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    check_access(i.index, loops, s, "index");
    require_mem(s, i.src, Memory::SBUF, "local_gather source");
    require_mem(s, i.index, Memory::SBUF, "local_gather index");
    require_mem(s, i.dst, Memory::SBUF, "local_gather destination");
    if (dt(i.index) != DType::uint16) fail_ins(s, "local_gather's index must be uint16");
    if (dt(i.dst) != dt(i.src)) {
      fail_ins(s, "local_gather keeps src's dtype: no cast (dst must have src's dtype)");
    }
    const int64_t e = i.num_elem_per_idx;
    if (e < 1 || e > 32 || (e & (e - 1)) != 0) {
      fail_ins(s, "num_elem_per_idx must be 1, 2, 4, 8, 16 or 32");
    }
    if (i.num_valid_indices < 0 || i.num_valid_indices > kLocalGatherMaxIndices) {
      fail_ins(s, "num_valid_indices must be in [0, 4096] (0: all; at most 4096 per core)");
    }
  }
  // nisa.nc_stream_shuffle (SDK 2.26): Vector engine, SBUF or PSUM operands of one dtype; 32
  // mask entries, each a partition of the quadrant (0..31) or 255 (leave dst's partition).
  void check_specific(const InstrStmt& s, const StreamShuffle& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    require_on_chip(s, i.src, "source");
    require_on_chip(s, i.dst, "destination");
    if (dt(i.dst) != dt(i.src)) fail_ins(s, "nc_stream_shuffle's dst must have src's dtype");
    if (i.shuffle_mask.size() != static_cast<size_t>(kShuffleQuadrant)) {
      fail_ins(s, "shuffle_mask has " + std::to_string(i.shuffle_mask.size()) +
                      " entries; it takes 32 (one per partition of a quadrant)");
    }
    for (int64_t m : i.shuffle_mask) {
      if ((m < 0 || m >= kShuffleQuadrant) && m != kShuffleKeep) {
        fail_ins(s, "shuffle_mask entry " + std::to_string(m) +
                        " is neither a partition of the quadrant (0..31) nor 255");
      }
    }
  }
  // nl.gather_flattened (SDK 2.26): uint32 indices; run on the GpSimd engine (the ISA's
  // nc_n_gather), so SBUF operands.
  void check_specific(const InstrStmt& s, const GatherFlattened& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.data, loops, s, "data");
    check_access(i.indices, loops, s, "indices");
    require_mem(s, i.data, Memory::SBUF, "gather_flattened data");
    require_mem(s, i.indices, Memory::SBUF, "gather_flattened indices");
    require_mem(s, i.dst, Memory::SBUF, "gather_flattened destination");
    if (dt(i.indices) != DType::uint32) fail_ins(s, "gather_flattened's indices must be uint32");
  }
  // nisa.tensor_partition_reduce (NKI API reference, SDK 2.26): GpSimd engine (no PSUM, ARCH2);
  // op add, max, bitwise_or or bitwise_and; a bitwise op works on integer dtypes.
  void check_specific(const InstrStmt& s, const TensorPartitionReduce& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    for (const Access* a : {&i.src, &i.dst}) {
      require_on_chip(s, *a, "operand");
      no_psum_on_gpsimd(s, Engine::GpSimd, *a, "tensor_partition_reduce operand");
    }
    static const std::set<AluOp> kOps = {AluOp::add, AluOp::max, AluOp::bitwise_or,
                                         AluOp::bitwise_and};
    if (!kOps.count(i.op)) {
      fail_ins(s, "tensor_partition_reduce's op is add, max, bitwise_or or bitwise_and");
    }
    bitwise_needs_ints(s, i.op, {dt(i.src), dt(i.dst)});
  }
  // The accumulator commands of select_reduce / range_select (their pages): idle, reset_reduce
  // or reduce (range_select also reset); reduce_res is read out of an accumulator that reduced.
  void check_select_accumulator(const InstrStmt& s, ReduceCmd cmd, bool allow_reset,
                                const std::optional<Access>& reduce_res, const char* op) {
    const bool ok = cmd == ReduceCmd::idle || cmd == ReduceCmd::reset_reduce ||
                    cmd == ReduceCmd::reduce || (allow_reset && cmd == ReduceCmd::reset);
    if (!ok) {
      fail_ins(s, std::string(op) + "'s reduce_cmd is idle, reset_reduce or reduce" +
                      (allow_reset ? " (or reset)" : ""));
    }
    if (reduce_res) {
      require_on_chip(s, *reduce_res, "reduce_res");
      if (!is_float(dt(*reduce_res))) fail_ins(s, "reduce_res must be a float tile");
      if (cmd != ReduceCmd::reset_reduce && cmd != ReduceCmd::reduce) {
        fail_ins(s, std::string(op) + " writes reduce_res only when it reduces (reduce_cmd " +
                        "reset_reduce or reduce)");
      }
    }
  }
  // nisa.select_reduce (NKI API reference, SDK 2.26): Vector engine; on_true and predicate not
  // both in PSUM; on_true not int32/uint32; the predicate an 8/16-bit integer tile.
  void check_specific(const InstrStmt& s, const SelectReduce& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.predicate, loops, s, "predicate");
    check_access(i.on_true, loops, s, "on_true");
    for (const Access* a : {&i.predicate, &i.on_true, &i.dst}) require_on_chip(s, *a, "operand");
    if (mem(i.on_true) == Memory::PSUM && mem(i.predicate) == Memory::PSUM) {
      fail_ins(s, "select_reduce's on_true and predicate cannot both be in PSUM");
    }
    if (dt(i.on_true) == DType::int32 || dt(i.on_true) == DType::uint32) {
      fail_ins(s, "select_reduce's on_true cannot be int32 or uint32");
    }
    if (dt(i.predicate) != DType::uint8 && dt(i.predicate) != DType::uint16) {
      fail_ins(s, "select_reduce's predicate is an 8- or 16-bit integer tile");
    }
    check_operand(s, i.on_false, loops, "on_false", Engine::Vector);
    if (i.reduce_res) check_access(*i.reduce_res, loops, s, "reduce_res");
    check_select_accumulator(s, i.reduce_cmd, false, i.reduce_res, "select_reduce");
  }
  // nisa.sequence_bounds (NKI API reference, SDK 2.26): GpSimd engine; fp32 or int32 in and out.
  void check_specific(const InstrStmt& s, const SequenceBounds& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.src, loops, s, "source");
    for (const Access* a : {&i.src, &i.dst}) {
      require_on_chip(s, *a, "operand");
      no_psum_on_gpsimd(s, Engine::GpSimd, *a, "sequence_bounds operand");
      if (dt(*a) != DType::fp32 && dt(*a) != DType::int32) {
        fail_ins(s, "sequence_bounds reads and writes fp32 or int32");
      }
    }
  }
  // nisa.range_select (NKI API reference, SDK 2.26): Vector engine; float on_true; fp32 bounds;
  // comparisons eq, lt, le, gt, ge; on_false is fp32's lowest value (a hardware constraint).
  void check_specific(const InstrStmt& s, const RangeSelect& i,
                      const std::vector<const Loop*>& loops) {
    check_access(i.on_true, loops, s, "on_true");
    check_access(i.bound0, loops, s, "bound0");
    check_access(i.bound1, loops, s, "bound1");
    for (const Access* a : {&i.on_true, &i.bound0, &i.bound1, &i.dst}) {
      require_on_chip(s, *a, "operand");
    }
    if (!is_float(dt(i.on_true)) || !is_float(dt(i.dst))) {
      fail_ins(s, "range_select selects float values");
    }
    if (dt(i.bound0) != DType::fp32 || dt(i.bound1) != DType::fp32) {
      fail_ins(s, "range_select's bounds are fp32");
    }
    if (i.cmp0 == CmpOp::ne || i.cmp1 == CmpOp::ne) {
      fail_ins(s, "range_select compares with eq, lt, le, gt or ge");
    }
    if (!(i.on_false == RangeSelect{}.on_false)) {
      fail_ins(s, "range_select's on_false is fp32's lowest value -3.4028235e+38 (hardware)");
    }
    check_expr_vars(i.range_start, loops, "range_start", &s);
    if (i.reduce_res) check_access(*i.reduce_res, loops, s, "reduce_res");
    check_select_accumulator(s, i.reduce_cmd, true, i.reduce_res, "range_select");
  }

  const Program& p_;
  std::set<SymbolId> param_syms_;
  std::set<TensorId> declared_;
  std::set<TensorId> visible_;
};

}  // namespace

void validate_program(const Program& p) {
  Validator(p).run();
}

}  // namespace ir
}  // namespace ncv
