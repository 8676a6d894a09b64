#include "fuzz/support/program_decoder.h"

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <sstream>
#include <string_view>

#include "fuzz/support/byte_reader.h"
#include "model/hw/hw_config.h"
#include "model/ir/builder.h"
#include "model/nkir/parse.h"

namespace ncv::fuzz {
namespace {

// Tile sizes: partition counts hit the alignment rules (32/64/128) and free sizes stay tiny.
constexpr int64_t kRows[] = {1, 2, 4, 8, 32, 64, 128, 3};
constexpr int64_t kFree[] = {1, 2, 4, 8, 3};
// Immediates that matter for the ALU: signed zeros, infinities, NaN, rounding boundaries.
constexpr float kImms[] = {0.0f,
                           1.0f,
                           -1.0f,
                           0.5f,
                           2.0f,
                           -0.0f,
                           3.0f,
                           65504.0f,
                           1e-30f,
                           std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};

struct TensorInfo {
  TensorRef ref;
  Memory mem;
  DType dtype;
  std::vector<int64_t> shape;  // concrete, at the decoded params
  bool input = false;
};

class Decoder {
 public:
  Decoder(ByteReader& r) : r_(r), b_("fz") {}

  std::optional<DecodedCase> run() {
    DecodedCase c;
    const uint8_t flags = r_.byte();
    c.prove = (flags & 0x7) == 0x5;
    c.hw = flags & 0x8 ? (flags & 0x10 ? &hw_config_trn3() : &hw_config_trn2()) : nullptr;
    hw_ = c.hw ? c.hw : &hw_config_trn1();
    boundary_buffer_ = (flags & 0xc0) == 0x40;  // a quarter of the inputs
    c.seed = r_.byte();
    decode_params(c.params);
    for (auto& [name, v] : c.params) env_.set(name, v);
    scopes_.push_back({});
    if (flags & 0x20) {
      dataflow_skeleton();
    } else {
      const int64_t n_hbm = r_.in_range(0, 3);
      for (int64_t k = 0; k < n_hbm; ++k) declare_hbm();
      const int64_t n_buf = r_.in_range(1, 4);
      for (int64_t k = 0; k < n_buf; ++k) declare_buffer(0);
    }
    const int64_t n_stmt = r_.in_range(1, 12);
    for (int64_t k = 0; k < n_stmt && !r_.empty(); ++k) statement();
    while (!loop_vars_.empty()) close_loop();
    if (output_) {
      // The skeleton's store: the output holds a tile the random statements computed on.
      std::vector<size_t> tiles;
      for (size_t k : scopes_[0]) {
        if (tensors_[k].mem == Memory::SBUF) tiles.push_back(k);  // DMA cannot read PSUM
      }
      b_.dma_copy(tensors_[*output_].ref(), tensors_[tiles[r_.pick(tiles.size())]].ref());
    }
    c.program = b_.finish();
    return c;
  }

 private:
  void decode_params(ParamValues& out) {
    const int64_t n = r_.in_range(0, 2);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t mult = r_.in_range(1, 2);
      const int64_t lo = mult * r_.in_range(1, 3);
      const int64_t hi = lo + mult * r_.in_range(0, 2);
      const std::string name = "n" + std::to_string(k);
      params_.push_back(b_.param(name, lo, hi, mult));
      out[name] = lo + mult * r_.in_range(0, (hi - lo) / mult);
    }
  }

  int64_t value(const Expr& e) { return eval(e, env_); }

  // Most random programs fail a dynamic check before writing a whole output, and outputs are
  // only returned by clean runs, so values would rarely reach the fast-vs-reference comparison.
  // The skeleton makes clean runs common: one [R, F] tile shape for everything, an input, tiles
  // initialised by memset or a load, the random statements (in bounds at start 0), and a store
  // of one tile to the output.
  void dataflow_skeleton() {
    tile_ = {kRows[r_.pick(std::size(kRows))], kFree[r_.pick(std::size(kFree))]};
    const std::vector<Expr> shape = {Expr(tile_->first), Expr(tile_->second)};
    const DType in_dt = dtype();
    tensors_.push_back(info(b_.input("x", in_dt, shape), Memory::HBM, in_dt, true));
    visible_hbm_.push_back(tensors_.size() - 1);
    const DType out_dt = dtype();
    tensors_.push_back(info(b_.output("y", out_dt, shape), Memory::HBM, out_dt));
    output_ = tensors_.size() - 1;
    const int64_t n = r_.in_range(1, 4);
    for (int64_t k = 0; k < n; ++k) {
      const bool psum = k > 0 && r_.pick(4) == 0;
      const DType dt = psum ? DType::fp32 : dtype();
      const std::string name = "t" + std::to_string(k);
      TensorRef t = psum ? b_.psum(name, dt, shape) : b_.sbuf(name, dt, shape);
      tensors_.push_back(info(t, psum ? Memory::PSUM : Memory::SBUF, dt));
      scopes_[0].push_back(tensors_.size() - 1);
      if (!psum && r_.flag()) {
        b_.dma_copy(t(), tensors_[0].ref());
      } else {
        b_.memset(t(), imm().value,
                  psum ? Engine::Vector : engine({Engine::Vector, Engine::GpSimd}));
      }
    }
  }

  // A dimension: mostly a constant from `table`, sometimes a param (or a multiple of one).
  Expr dim(std::span<const int64_t> table) {
    if (!params_.empty() && r_.in_range(0, 5) == 0) {
      const Expr p = params_[r_.pick(params_.size())];
      return r_.flag() ? p : p * Expr(table[r_.pick(table.size())]);
    }
    return Expr(table[r_.pick(table.size())]);
  }

  DType dtype() {
    // fp32 and bf16 dominate, as in the kernels; every dtype stays reachable.
    const size_t k = r_.pick(17);
    if (k < 6) return DType::fp32;
    if (k < 9) return DType::bf16;
    return kAllDTypes[k - 7];  // fp16 .. uint32
  }

  std::vector<Expr> shape(bool on_chip) {
    const int64_t rank = r_.in_range(on_chip ? 2 : 1, 3);
    std::vector<Expr> s;
    for (int64_t d = 0; d < rank; ++d) s.push_back(d == 0 && on_chip ? dim(kRows) : dim(kFree));
    return s;
  }

  TensorInfo info(TensorRef ref, Memory mem, DType dt, bool input = false) {
    TensorInfo t{ref, mem, dt, {}, input};
    for (const Expr& e : ref.shape()) t.shape.push_back(value(e));
    return t;
  }

  void declare_hbm() {
    const std::string name = "h" + std::to_string(tensors_.size());
    const DType dt = dtype();
    std::vector<Expr> s = shape(false);
    switch (r_.pick(3)) {
      case 0:
        tensors_.push_back(info(b_.input(name, dt, s), Memory::HBM, dt, true));
        break;
      case 1:
        tensors_.push_back(info(b_.output(name, dt, s), Memory::HBM, dt));
        break;
      default:
        tensors_.push_back(info(b_.scratch(name, dt, s), Memory::HBM, dt));
    }
    visible_hbm_.push_back(tensors_.size() - 1);
  }

  void declare_buffer(size_t depth) {
    const std::string name = "b" + std::to_string(tensors_.size());
    const bool psum = r_.pick(4) == 0;
    const DType dt = psum ? (r_.pick(4) == 0 ? DType::bf16 : DType::fp32) : dtype();
    BufferOptions o;
    o.bufs = r_.in_range(1, 3);
    // Explicit placement: partition and byte offset, possibly rotating with a loop variable.
    // Rare, because a program with one makes the interpreter allocate and poison the whole SBUF
    // (24 MiB on trn1, ~20 ms) instead of the allocator's peak (model/interp/interpreter.cpp).
    if (r_.pick(32) == 0) {
      Expr off = Expr(r_.in_range(0, psum ? 2047 : 4095) & ~int64_t{3});
      if (!loop_vars_.empty() && r_.flag()) {
        off = off + Expr::mod(loop_vars_.back(), r_.in_range(1, 4)) * Expr(psum ? 2048 : 512);
      }
      const int64_t part = std::array<int64_t, 4>{0, 32, 64, 96}[r_.pick(4)];
      o.placement = Placement{Expr(part), off};
    }
    std::vector<Expr> s = shape(true);
    if (boundary_buffer_) {
      // The first buffer fills its memory to within a few elements of capacity, so the peak rules
      // (the interpreter's, and solver/allocation.h's that fuzz_program holds them to) are decided
      // at their edge: the other buffers, `bufs` and alignment tip it either way. Shapes are
      // tiny otherwise, and no program would ever reach a peak.
      boundary_buffer_ = false;
      const int64_t cap =
          psum ? hw_->psum_bytes_per_partition : hw_->sbuf_usable_bytes_per_partition();
      const int64_t fit = cap / (static_cast<int64_t>(dtype_size(dt)) * o.bufs);
      s = {s[0], Expr(fit - r_.in_range(-2, 48))};
    }
    TensorRef ref = psum ? b_.psum(name, dt, s, o) : b_.sbuf(name, dt, s, o);
    tensors_.push_back(info(ref, psum ? Memory::PSUM : Memory::SBUF, dt));
    scopes_[depth].push_back(tensors_.size() - 1);
  }

  // A visible tensor, preferring the given memories (the rest stay reachable so that the
  // validator's rules are exercised too).
  const TensorInfo& tensor(std::initializer_list<Memory> prefer) {
    std::vector<size_t> all = visible_hbm_, good;
    for (const auto& sc : scopes_) all.insert(all.end(), sc.begin(), sc.end());
    for (size_t k : all) {
      if (std::find(prefer.begin(), prefer.end(), tensors_[k].mem) != prefer.end()) {
        good.push_back(k);
      }
    }
    const std::vector<size_t>& from = good.empty() || r_.pick(16) == 0 ? all : good;
    return tensors_[from[r_.pick(from.size())]];
  }

  // A start index for a view of `size` elements with `step` in a dim of `extent`: mostly in
  // bounds, sometimes driven by a loop variable, rarely anything.
  Expr start(int64_t extent, int64_t size, int64_t step) {
    const int64_t span = (size - 1) * step + 1;
    const int64_t room = std::max<int64_t>(extent - span, 0);
    switch (r_.pick(tile_ ? 32 : 8)) {
      case 0:
        if (!loop_vars_.empty()) {
          const Expr v = loop_vars_[r_.pick(loop_vars_.size())];
          return v * Expr(r_.in_range(1, 4)) + Expr(r_.in_range(0, 2));
        }
        return Expr(0);
      case 1:
        return Expr(r_.in_range(0, extent + 1));
      default:
        return Expr(r_.in_range(0, room));
    }
  }

  // A view of `t` of shape [rows, 1.., free] (rank-1 HBM tensors: [rows*free]).
  Access view(const TensorInfo& t, int64_t rows, int64_t free) {
    if (r_.pick(8) == 0) return t.ref();  // the whole tensor, symbolic sizes included
    Access a;
    a.tensor = t.ref.id();
    const size_t rank = t.shape.size();
    for (size_t d = 0; d < rank; ++d) {
      int64_t size = 1, step = 1;
      if (rank == 1) {
        size = rows * free;
      } else if (d == 0) {
        size = rows;
      } else if (d + 1 == rank) {
        size = free;
        const size_t k = r_.pick(8);
        step = k == 0 ? 0 : (k == 1 ? 2 : 1);
      }
      if (d == 0 && t.mem != Memory::HBM) step = 1;
      a.dims.push_back(AccessDim{start(t.shape[d], size, std::max<int64_t>(step, 1)), size, step});
    }
    if (rank == 2 && t.mem == Memory::HBM && r_.pick(8) == 0) {
      std::swap(a.dims[0], a.dims[1]);  // transposing load: view dim 0 is tensor dim 1
      a.perm = {1, 0};
    }
    return a;
  }

  int64_t rows() { return tile_ ? tile_->first : kRows[r_.pick(std::size(kRows))]; }
  int64_t free() { return tile_ ? tile_->second : kFree[r_.pick(std::size(kFree))]; }

  Operand operand(int64_t rows) {
    if (r_.pick(3) == 0) return view(tensor({Memory::SBUF}), rows, 1);
    return imm();
  }
  Imm imm() {
    if (r_.pick(8) == 0) return Imm{r_.f32_bits()};
    return Imm{kImms[r_.pick(std::size(kImms))]};
  }
  AluOp alu() { return static_cast<AluOp>(r_.pick(static_cast<size_t>(AluOp::shift_right) + 1)); }
  // tensor_scalar's and tensor_scalar_reduce's op0: every operator, the unary ones (abs, square,
  // relu, rsqrt, reciprocal: op0 only) included.
  AluOp alu_op0() {
    return static_cast<AluOp>(r_.pick(static_cast<size_t>(AluOp::reciprocal) + 1));
  }
  Engine engine(std::initializer_list<Engine> es) { return es.begin()[r_.pick(es.size())]; }
  std::vector<int64_t> steps(size_t n) {
    std::vector<int64_t> s;
    for (size_t k = 0; k < n; ++k) s.push_back(r_.in_range(-3, 3));
    return s;
  }

  void open_loop() {
    const std::string var = "i" + std::to_string(next_loop_++);
    Expr stop = r_.pick(4) == 0 && !params_.empty() ? params_[r_.pick(params_.size())]
                                                    : Expr(r_.in_range(0, 3));
    const int64_t step = r_.in_range(1, 2);
    const LoopKind kind = r_.flag() ? LoopKind::sequential : LoopKind::affine;
    loop_vars_.push_back(b_.begin_loop(var, Expr(0), stop, step, kind));
    scopes_.push_back({});
  }
  void close_loop() {
    b_.end_loop();
    loop_vars_.pop_back();
    scopes_.pop_back();
  }

  void statement() {
    const size_t k = r_.pick(16);
    if (k == 0 && loop_vars_.size() < 2) return open_loop();
    if (k == 1 && !loop_vars_.empty()) return close_loop();
    if (k == 2 && !tile_) return declare_buffer(scopes_.size() - 1);
    instruction();
  }

  void instruction() {
    const int64_t R = rows(), F = free();
    const Memory S = Memory::SBUF, P = Memory::PSUM, H = Memory::HBM;
    switch (r_.pick(14)) {
      case 0: {
        const bool load = r_.flag();
        Access dst = view(tensor({load ? S : H}), R, F);
        Access src = view(tensor({load ? H : S}), R, F);
        b_.dma_copy(dst, src, static_cast<int>(r_.in_range(0, 15)));
        break;
      }
      case 1: {
        const int64_t K = rows(), N = free();
        Access dst = view(tensor({P}), R, N);
        Access st = view(tensor({S}), K, R);
        Access mv = view(tensor({S}), K, N);
        b_.matmul(dst, st, mv, r_.flag());
        break;
      }
      case 2: {
        const bool te = r_.pick(3) != 0;
        Access dst = view(tensor({te ? P : S}), F, R);
        Access src = view(tensor({S}), R, F);
        b_.transpose(dst, src, te ? Engine::Tensor : Engine::Vector);
        break;
      }
      case 3: {
        ActivationArgs a;
        Access dst = view(tensor({S, P}), R, F);
        Access src = view(tensor({S, P}), R, F);
        a.func = static_cast<ActFunc>(r_.pick(static_cast<size_t>(ActFunc::abs) + 1));
        a.scale = operand(R);
        if (r_.flag()) a.bias = operand(R);
        a.reduce_cmd = static_cast<ReduceCmd>(r_.pick(4));
        if (r_.flag()) a.reduce_res = view(tensor({S}), R, 1);
        b_.activation(dst, src, a);
        break;
      }
      case 4: {
        Access dst = view(tensor({S}), R, 1);
        Access src = view(tensor({S, P}), R, F);
        const AluOp ops[] = {AluOp::add,      AluOp::max,      AluOp::min,
                             AluOp::multiply, AluOp::subtract, AluOp::bitwise_or};
        b_.tensor_reduce(dst, src, ops[r_.pick(std::size(ops))], 1, r_.flag());
        break;
      }
      case 5: {
        Access dst = view(tensor({S}), R, F);
        Access src = view(tensor({S, P}), R, F);
        const AluOp op0 = alu_op0();
        std::optional<AluOp> op1;
        if (r_.flag()) op1 = alu();
        Operand a0 = operand(R);
        const Operand a1 = operand(R);
        bool rev0 = r_.flag();
        const bool rev1 = r_.flag();
        if (is_unary(op0)) {  // the documented form (validate.cpp unary_op0): operand0 0, in order
          a0 = Imm{0.0f};
          rev0 = false;
        }
        b_.tensor_scalar(dst, src, op0, a0, rev0, op1, a1, rev1,
                         engine({Engine::Vector, Engine::Scalar, Engine::GpSimd}));
        break;
      }
      case 6: {
        Access dst = view(tensor({S}), R, F);
        Access a = view(tensor({S}), R, F);
        Access c = view(tensor({S, P}), R, F);
        b_.tensor_tensor(dst, a, c, alu(), engine({Engine::Vector, Engine::GpSimd}));
        break;
      }
      case 7: {
        Access dst = view(tensor({S}), R, F);
        Access src = view(tensor({S, P}), R, F);
        const AluOp op0 = alu_op0();
        Operand a0 = operand(R);
        const AluOp red = r_.flag() ? AluOp::add : AluOp::max;
        Access res = view(tensor({S}), R, 1);
        bool rev0 = r_.flag();
        if (is_unary(op0)) {
          a0 = Imm{0.0f};
          rev0 = false;
        }
        b_.tensor_scalar_reduce(dst, src, op0, a0, red, res, rev0);
        break;
      }
      case 8: {
        Access dst = view(tensor({S, P}), R, F);
        Access src = view(tensor({S, P}), R, F);
        b_.tensor_copy(dst, src, engine({Engine::Vector, Engine::Scalar, Engine::GpSimd}));
        break;
      }
      case 9: {
        Access dst = view(tensor({S}), R, F);
        Operand src = r_.flag() ? Operand(view(tensor({S}), R, F)) : Operand(imm());
        Access pred = view(tensor({S}), R, F);
        b_.tensor_copy_predicated(dst, src, pred, r_.flag());
        break;
      }
      case 10: {
        Access dst = view(tensor({S}), R, F);
        Access on_true = view(tensor({S}), R, F);
        const Expr off(r_.in_range(-8, 8));
        const int64_t cm = r_.in_range(-2, 2);
        const auto st = steps(dst.rank() - 1);
        const CmpOp cmp = static_cast<CmpOp>(r_.pick(6));
        b_.affine_select(dst, on_true, off, cm, st, cmp, imm().value);
        break;
      }
      case 11: {
        Access dst = view(tensor({S}), R, F);
        const Expr off(r_.in_range(-8, 8));
        const int64_t cm = r_.in_range(-2, 2);
        b_.iota(dst, off, cm, steps(dst.rank() - 1));
        break;
      }
      case 12: {
        Access dst = view(tensor({S, P}), R, F);
        b_.memset(dst, imm().value, engine({Engine::Vector, Engine::GpSimd}));
        break;
      }
      default: {
        Access dst = view(tensor({S}), R, F);
        Access src = view(tensor({S, P}), R, F);
        b_.reciprocal(dst, src, engine({Engine::Vector, Engine::Scalar}));
      }
    }
  }

  ByteReader& r_;
  Builder b_;
  Env env_;
  std::vector<Expr> params_;
  std::vector<TensorInfo> tensors_;
  std::vector<size_t> visible_hbm_;
  std::vector<std::vector<size_t>> scopes_;  // buffers visible per open scope (body first)
  std::vector<Expr> loop_vars_;
  int next_loop_ = 0;
  std::optional<std::pair<int64_t, int64_t>> tile_;  // dataflow skeleton: the one tile shape
  std::optional<size_t> output_;                     // dataflow skeleton: the output tensor
  const HwConfig* hw_ = nullptr;                     // the generation the case runs on
  bool boundary_buffer_ = false;  // the next buffer declared is sized to the capacity boundary
};

std::optional<DecodedCase> decode_text(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nl = all.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  DecodedCase c;
  std::istringstream header{std::string(all.substr(0, nl))};
  std::string kv;
  while (header >> kv) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) return std::nullopt;
    int64_t v = 0;
    try {
      v = std::stoll(kv.substr(eq + 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    c.params[kv.substr(0, eq)] = v;
  }
  try {
    c.program = parse_program(all.substr(nl + 1));
  } catch (const ParseError&) {
    return std::nullopt;
  }
  return c;
}

}  // namespace

std::optional<DecodedCase> decode_case(const uint8_t* data, size_t size) {
  if (size == 0) return std::nullopt;
  std::optional<DecodedCase> c;
  if (data[0] == kTextMode) {
    c = decode_text(data + 1, size - 1);
  } else {
    ByteReader r(data + 1, size - 1);
    try {
      c = Decoder(r).run();
    } catch (const BuildError&) {
      return std::nullopt;
    } catch (const EvalError&) {
      return std::nullopt;  // a shape that overflows or uses an unbound variable
    }
  }
  if (!c) return std::nullopt;
  try {
    check_params(c->program, c->params);
  } catch (const InputError&) {
    return std::nullopt;
  }
  return c;
}

std::vector<uint8_t> encode_text_case(const std::string& nkir, const ParamValues& params) {
  std::string s(1, static_cast<char>(kTextMode));
  bool first = true;
  for (const auto& [name, v] : params) {
    s += (first ? "" : " ") + name + "=" + std::to_string(v);
    first = false;
  }
  s += "\n" + nkir;
  return {s.begin(), s.end()};
}

}  // namespace ncv::fuzz
