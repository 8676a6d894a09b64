// The bug catalogue: each entry edits one registered kernel's Program (the instruction or loop
// named in its `what`) to plant a bug that attention-kernel authors, Autocomp-style searches or
// LLM rewrites actually produce. The edits go through program_edit.h, so a change to a base
// kernel's structure makes the edit throw instead of planting a different bug.
#include "properties/bug_catalogue.h"

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "properties/program_edit.h"

namespace ncv::props {

namespace {

// The partial-max column's value when nothing writes the sink there: its memset (fp32.min).
constexpr float kSinkDroppedMax = std::numeric_limits<float>::lowest();

// ---- Causal masking -------------------------------------------------------------------------

// Moves the causal predicate `offset + p - f >= 0` of the score tile's affine_select by `shift`:
// +1 keeps key f = p + 1 (one future key leaks), -1 drops f = p (the diagonal is masked).
Program shift_causal_mask(const Program& base, const std::string& scores, int64_t shift) {
  Program p = base;
  auto& sel =
      instruction_as<AffineSelect>(find_instruction(p, {.op = "affine_select", .writes = scores}));
  sel.offset = sel.offset + Expr(shift);
  return finish_edit(std::move(p));
}

// masked_fill(~causal, 0.0): the masked scores become 0 instead of -9984, so every future key
// still gets weight exp(0 - max).
Program mask_fills_zero(const Program& base) {
  Program p = base;
  auto& sel = instruction_as<AffineSelect>(
      find_instruction(p, {.op = "affine_select", .writes = "p2_masked"}));
  if (sel.on_false == Imm{0.0f}) throw std::logic_error("the mask already writes 0");
  sel.on_false = Imm{0.0f};
  return finish_edit(std::move(p));
}

// ---- Softmax --------------------------------------------------------------------------------

// The exp activation writing `p_tile` loses its bias (-rowmax): exp(s) instead of exp(s - max),
// which overflows to inf once a logit exceeds ~88.7.
Program drop_max_subtraction(const Program& base, const std::string& p_tile) {
  Program p = base;
  auto& act =
      instruction_as<Activation>(find_instruction(p, {.op = "activation", .writes = p_tile}));
  if (act.func != ActFunc::exp || !act.bias) {
    throw std::logic_error("the activation writing '" + p_tile + "' is not exp with a bias");
  }
  act.bias.reset();
  return finish_edit(std::move(p));
}

// Q is already multiplied by 0.125 at the load; the exp activation is also given scale=0.125,
// so the kernel computes softmax(s / 64) instead of softmax(s / 8).
Program scale_exp_again(const Program& base, const std::string& p_tile) {
  Program p = base;
  auto& act =
      instruction_as<Activation>(find_instruction(p, {.op = "activation", .writes = p_tile}));
  if (!(act.scale == Operand{Imm{1.0f}})) {
    throw std::logic_error("the exp activation writing '" + p_tile + "' already has a scale");
  }
  act.scale = Imm{0.125f};
  return finish_edit(std::move(p));
}

// `sum_reciprocal = 1 / sum` written as a plain copy of the sum: the output is multiplied by the
// row sum instead of divided by it.
Program skip_reciprocal(const Program& base) {
  Program p = base;
  const StmtSite site = find_instruction(p, {.op = "reciprocal", .writes = "sum_reciprocal"});
  const auto& r = instruction_as<Reciprocal>(site);
  site.instr().ins = TensorCopy{r.dst, r.src, r.engine};
  return finish_edit(std::move(p));
}

// ---- Loops and indices ----------------------------------------------------------------------

// The loop over `var` that holds the accumulating PV matmul into `acc` stops one tile early.
Program drop_last_k_tile(const Program& base, const std::string& var, const std::string& acc) {
  Program p = base;
  Loop& loop = find_loop(p, var, {.op = "matmul", .writes = acc}).loop();
  loop.stop = loop.stop - Expr(1);
  return finish_edit(std::move(p));
}

// ceil(seqlen / 128): the tile count of a kernel that handles a partial last tile.
Expr ceil_tiles_of_seqlen() {
  return Expr::floordiv(Expr::var("seqlen") + Expr(127), 128);
}

// Every loop over ceil(seqlen / 128) tiles runs over seqlen // 128: the partial last tile of
// query rows and of keys is ignored.
Program ignore_seqlen_tail(const Program& base) {
  Program p = base;
  const Expr ceil_tiles = ceil_tiles_of_seqlen();
  int edited = 0;
  for (const StmtSite& s : all_loops(p)) {
    Loop& loop = s.loop();
    if (loop.stop == ceil_tiles) {
      loop.stop = Expr::floordiv(Expr::var("seqlen"), 128);
      ++edited;
    }
  }
  if (edited == 0) {
    throw std::logic_error("kernel '" + p.name +
                           "': no loop runs to ceil(seqlen / 128) = " + ceil_tiles.str());
  }
  return finish_edit(std::move(p));
}

// Only the loop over `var` that accumulates PV into `acc` runs to seqlen // 128 instead of
// ceil(seqlen / 128): the keys of the partial last tile enter the row sums but not the output.
Program ignore_tail_keys(const Program& base, const std::string& var, const std::string& acc) {
  Program p = base;
  Loop& loop = find_loop(p, var, {.op = "matmul", .writes = acc}).loop();
  if (!(loop.stop == ceil_tiles_of_seqlen())) {
    throw std::logic_error("the loop over '" + var + "' does not run to ceil(seqlen / 128)");
  }
  loop.stop = Expr::floordiv(Expr::var("seqlen"), 128);
  return finish_edit(std::move(p));
}

// The QK^T matmul's K operand indexed by the q-tile variable (a copy-paste of the Q index):
// every key tile is the diagonal one.
Program k_indexed_by_q_tile(const Program& base) {
  Program p = base;
  const StmtSite site = find_instruction(p, {.op = "matmul", .writes = "qk_psum"});
  substitute(access_to(p, site.instr().ins, "k_local"), Expr::var("i_k_seq_tile"),
             Expr::var("i_q_seq_tile"));
  return finish_edit(std::move(p));
}

// V's tile loaded with its axes swapped (load_transpose2d where a plain load was meant): the
// shapes agree when d_head = 128, so nothing but the values gives it away.
Program transpose_v_load(const Program& base) {
  Program p = base;
  const StmtSite site = find_instruction(p, {.op = "dma_copy", .writes = "trans_v"});
  Access& v = access_to(p, site.instr().ins, "v");
  if (!v.perm.empty()) throw std::logic_error("the V load already permutes its axes");
  v.perm = {1, 0};
  return finish_edit(std::move(p));
}

// ---- PSUM accumulation ----------------------------------------------------------------------

// The accumulating PV matmuls in the loop over `var` overwrite instead: PSUM ends up holding the
// last key tile's contribution only.
Program pv_overwrites(const Program& base, const std::string& var, const std::string& acc) {
  Program p = base;
  auto& mm = instruction_as<Matmul>(
      find_instruction(p, {.op = "matmul", .writes = acc, .innermost_loop = var}));
  if (!mm.accumulate) throw std::logic_error("the PV matmul in the loop does not accumulate");
  mm.accumulate = false;
  return finish_edit(std::move(p));
}

// The first matmul of the PV accumulation group (peeled out of the loop over key tiles, directly
// in the q-tile loop) accumulates onto PSUM nothing has zeroed.
Program pv_group_starts_accumulating(const Program& base, const std::string& acc) {
  Program p = base;
  auto& mm = instruction_as<Matmul>(
      find_instruction(p, {.op = "matmul", .writes = acc, .innermost_loop = "i_q_seq_tile"}));
  if (mm.accumulate) throw std::logic_error("the first PV matmul already accumulates");
  mm.accumulate = true;
  return finish_edit(std::move(p));
}

// PV accumulated outside PSUM: every matmul overwrites the PSUM tile `acc`, the first result is
// copied into a new SBUF accumulator of `dtype` and the loop over key tiles adds each later one
// to it (tensor_tensor add), in a loop of `kind`; the consumer of `acc` reads the accumulator.
// In bf16 the accumulator rounds after every tile; in an affine loop each iteration reads what
// the previous one wrote (a carried dependency other than PSUM +=).
Program accumulate_pv_in_sbuf(const Program& base, const std::string& acc, DType dtype,
                              LoopKind kind) {
  Program p = base;
  const InstrQuery first_pv{.op = "matmul", .writes = acc, .innermost_loop = "i_q_seq_tile"};
  Tensor sbuf_acc = find_tensor(p, acc);
  sbuf_acc.name = "pv_acc_sbuf";
  sbuf_acc.memory = Memory::SBUF;
  sbuf_acc.dtype = dtype;
  sbuf_acc.placement.reset();
  const Tensor& declared = p.tensors.at(declare_buffer(p, find_instruction(p, first_pv), sbuf_acc));
  const Access whole_acc = whole(declared);
  const Access whole_psum = whole(find_tensor(p, acc));

  // The consumer (eviction or normalisation) reads the accumulator instead of PSUM.
  const StmtSite consumer = find_instruction(p, {.reads = acc, .innermost_loop = "i_q_seq_tile"});
  access_to(p, consumer.instr().ins, acc) = whole_acc;
  insert_after(find_instruction(p, first_pv), instruction_stmt(TensorCopy{whole_acc, whole_psum}));

  Loop& loop = find_loop(p, "i_k_seq_tile", {.op = "matmul", .writes = acc}).loop();
  loop.kind = kind;
  const StmtSite pv =
      find_instruction(p, {.op = "matmul", .writes = acc, .innermost_loop = "i_k_seq_tile"});
  instruction_as<Matmul>(pv).accumulate = false;
  insert_after(pv, instruction_stmt(TensorTensor{whole_acc, whole_acc, whole_psum, AluOp::add}));
  return finish_edit(std::move(p));
}

// The eviction of the transposed-P PSUM tile moved above the loop of transposes that fill it:
// it copies whatever the rotating bank held before this iteration's transposes.
Program evict_before_transposes(const Program& base) {
  Program p = base;
  const StmtSite copy = find_instruction(p, {.op = "tensor_copy", .reads = "local_tp_buf"});
  move_before(copy, find_loop(p, "i_offset", {.op = "matmul", .writes = "local_tp_buf"}));
  return finish_edit(std::move(p));
}

// ---- Allocation -----------------------------------------------------------------------------

// neg_max_res given qk_res_buf's byte offset (the trace-time address counter not advanced past
// qk_res_buf): the per-tile row maxima land on top of the first score columns.
Program overlap_neg_max_with_scores(const Program& base) {
  Program p = base;
  Tensor& moved = find_tensor(p, "neg_max_res");
  const Tensor& scores = find_tensor(p, "qk_res_buf");
  if (!moved.placement || !scores.placement) {
    throw std::logic_error("neg_max_res and qk_res_buf need explicit placements");
  }
  moved.placement = scores.placement;
  return finish_edit(std::move(p));
}

// ---- The tutorial chain (attn_fwd) ------------------------------------------------------------

// The one loop over `var` containing `containing` that sits inside the software-pipelined
// steady-state loop over `outer` (the prologue and epilogue hold copies of the same stage).
StmtSite stage_in_steady_state(Program& p, std::string_view var, const InstrQuery& containing,
                               std::string_view outer) {
  std::vector<StmtSite> inside;
  for (const StmtSite& s : find_loops(p, var, containing)) {
    for (const Loop* l : s.loops) {
      if (l->var == outer) inside.push_back(s);
    }
  }
  if (inside.size() != 1) {
    throw std::logic_error("expected one " + std::string(var) + " loop holding " +
                           containing.describe() + " inside the " + std::string(outer) +
                           " loop, found " + std::to_string(inside.size()));
  }
  return inside.front();
}

// v10's steady state runs exp_row_sum(i + 1) after fused_qkmax_and_pv(i) instead of before it:
// the exp of q tile i + 1 subtracts q tile i + 2's row max, which fused(i) has just written.
Program pipelined_exp_after_next_max(const Program& base) {
  Program p = base;
  const StmtSite exp =
      stage_in_steady_state(p, "i_tile_kv", {.op = "activation", .writes = "exp_row"}, "i_tile_q");
  // the first statement after the fused stage: transpose_scores(i + 1)'s loop
  const StmtSite transposes = stage_in_steady_state(
      p, "i_tile_kv", {.op = "tensor_copy", .writes = "scores_sbuf_t"}, "i_tile_q");
  move_before(exp, transposes);
  return finish_edit(std::move(p));
}

// v10's write_back(i) in the steady state reads the partial row sums from slot (i + 1) % 2, the
// slot exp_row_sum(i + 1) has just filled, instead of slot i % 2: q tile i is normalised by
// q tile i + 1's row sums (a double-buffer slot off by one).
Program pipelined_sum_slot_off_by_one(const Program& base) {
  Program p = base;
  std::vector<StmtSite> inside;
  for (const StmtSite& s : find_instructions(
           p, {.op = "tensor_reduce", .writes = "sum_row", .reads = "sum_row_tiles"})) {
    for (const Loop* l : s.loops) {
      if (l->var == "i_tile_q") inside.push_back(s);
    }
  }
  if (inside.size() != 1) throw std::logic_error("expected one write_back sum inside i_tile_q");
  const Expr i = Expr::var("i_tile_q");
  substitute(access_to(p, inside.front().instr().ins, "sum_row_tiles"), i, i + 1);
  return finish_edit(std::move(p));
}

// v3's PV loop loads the P^T tile scores_t[i_tile_q, i_tile_kv] although the transposes stored
// it at [i_tile_kv, i_tile_q]: the two block indices of the HBM scratch swapped.
Program scratch_block_indices_swapped(const Program& base) {
  Program p = base;
  const std::vector<StmtSite> loads = find_instructions(p, {.op = "dma_copy", .reads = "scores_t"});
  if (loads.empty()) throw std::logic_error("no dma_copy reads 'scores_t'");
  for (const StmtSite& site : loads) {
    Access& a = access_to(p, site.instr().ins, "scores_t");
    std::swap(a.dims[0], a.dims[1]);
  }
  return finish_edit(std::move(p));
}

// ---- Scale, mask fill and row max (the bugs that need inputs built to expose them) -----------

// Q's load-time scaling `q_local = t * 0.125` written with a softmax scale 2% off (0.1275): with
// near-uniform attention the output barely moves; with peaked rows it moves beyond the bound.
Program scale_off_by_2pct(const Program& base) {
  Program p = base;
  auto& mul = instruction_as<TensorScalar>(
      find_instruction(p, {.op = "tensor_scalar", .writes = "q_local"}));
  if (mul.op0 != AluOp::multiply || !(mul.operand0 == Operand{Imm{0.125f}})) {
    throw std::logic_error("the scaling writing q_local is not a multiply by 0.125");
  }
  mul.operand0 = Imm{0.1275f};
  return finish_edit(std::move(p));
}

// The causal affine_select on `scores` fills masked scores with -30 instead of -9984: exp(-30 -
// max) is negligible while the row max is above ~-10, and dominates once the visible logits all
// lie below -30.
Program mask_fill_minus_30(const Program& base, const std::string& scores) {
  Program p = base;
  auto& sel =
      instruction_as<AffineSelect>(find_instruction(p, {.op = "affine_select", .writes = scores}));
  if (!(sel.on_false == Imm{-9984.0f})) throw std::logic_error("the mask does not fill -9984");
  sel.on_false = Imm{-30.0f};
  return finish_edit(std::move(p));
}

// The final reduction of the per-tile maxima `partials` [128, tiles] into `final` reads only
// column 0: the row max is that of the first key tile. Softmax is shift-invariant, so this only
// shows when a later tile's logits exceed the first tile's max by ~89 and exp overflows.
Program row_max_first_tile_only(const Program& base, const std::string& final_max,
                                const std::string& partials) {
  Program p = base;
  const StmtSite site = find_instruction(p, {.op = "tensor_reduce", .writes = final_max});
  Access& src = access_to(p, site.instr().ins, partials);
  if (src.dims.size() != 2) throw std::logic_error("the row max reduction does not read [P, T]");
  src.dims[1].size = Expr(1);
  return finish_edit(std::move(p));
}

// ---- Stores and contractions ----------------------------------------------------------------

// The output store of q tile `var` writes tile min(var, tiles - 2): a row offset clamped as if
// there were one tile fewer, so the last tile overwrites the one before it and its own rows are
// never written (with a single tile it stores to tile -1).
Program last_store_one_tile_early(const Program& base, const std::string& var) {
  Program p = base;
  const StmtSite site = find_instruction(p, {.op = "dma_copy", .writes = "out"});
  const Expr tiles = Expr::floordiv(Expr::var("seqlen"), 128);
  substitute(access_to(p, site.instr().ins, "out"), Expr::var(var),
             Expr::min(Expr::var(var), tiles - Expr(2)));
  return finish_edit(std::move(p));
}

// Every PV matmul writing `acc` contracts over partitions 0..126 of its [128, ...] operands (an
// off-by-one partition range): key 127 of every key tile is in the row sum but never in the
// output.
Program pv_skips_last_partition(const Program& base, const std::string& acc) {
  Program p = base;
  const std::vector<StmtSite> sites = find_instructions(p, {.op = "matmul", .writes = acc});
  if (sites.empty()) throw std::logic_error("no matmul writes '" + acc + "'");
  for (const StmtSite& site : sites) {
    auto& mm = instruction_as<Matmul>(site);
    for (Access* a : {&mm.stationary, &mm.moving}) {
      const int d0 = a->tensor_dim(0);
      if (!(a->dims[static_cast<size_t>(d0)].size == Expr(128))) {
        throw std::logic_error("a PV operand does not span 128 partitions");
      }
      a->dims[static_cast<size_t>(d0)].size = Expr(127);
    }
  }
  return finish_edit(std::move(p));
}

// ---- The catalogue --------------------------------------------------------------------------

// ---- flash_fwd (online softmax, masks as loop bounds, GQA) -----------------------------------

// alpha = exp(m_prev - m) computed from the updated max twice: exp(m - m) = 1, so o keeps the
// scale of an earlier, smaller max once a later large tile raises it.
Program flash_rescale_missing(const Program& base) {
  Program p = base;
  auto& act =
      instruction_as<Activation>(find_instruction(p, {.op = "activation", .writes = "alpha"}));
  if (act.func != ActFunc::exp || !act.bias) {
    throw std::logic_error("the activation writing 'alpha' is not exp with a bias");
  }
  act.bias = Operand{act.src};
  return finish_edit(std::move(p));
}

// The window predicate k_pos > q_pos - w shifted to k_pos > q_pos - w - 1: one key more.
Program flash_window_off_by_one(const Program& base) {
  Program p = base;
  int edited = 0;
  for (const StmtSite& s : find_instructions(p, {.op = "affine_select", .writes = "qk_res_buf"})) {
    auto& sel = instruction_as<AffineSelect>(s);
    if (sel.channel_multiplier != -1) continue;  // the causal select has +1
    sel.offset = sel.offset + Expr(1);
    ++edited;
  }
  if (edited != 1) throw std::logic_error("expected one sliding-window affine_select");
  return finish_edit(std::move(p));
}

// q head i_q_h * kv_heads + head_id instead of head_id * group + i_q_h (interleaved instead of
// grouped GQA): in the q load and the output store, so each q head reads another kv head.
Program flash_gqa_interleaved(const Program& base) {
  Program p = base;
  const Expr grouped = Expr::var("head_id") * Expr::var("group") + Expr::var("i_q_h");
  const Expr interleaved = Expr::var("i_q_h") * Expr::var("kv_heads") + Expr::var("head_id");
  for (const char* t : {"q", "o"}) {
    const bool load = std::string(t) == "q";
    const StmtSite s =
        find_instruction(p, {.op = "dma_copy", .writes = load ? "" : t, .reads = load ? t : ""});
    substitute(access_to(p, s.instr().ins, t), grouped, interleaved);
  }
  return finish_edit(std::move(p));
}

// The causal (i, j) guard `i*128 >= j*L` written as `>`: the first q tile of each large tile is
// skipped although its rows see the tile's first keys (rows 0..127 see no key at all).
Program flash_skip_guard_strict(const Program& base) {
  Program p = base;
  Loop& loop = find_loop(p, "i1", {.op = "matmul"}).loop();
  loop.start = loop.start + Expr(1);
  loop.stop = Expr::max(loop.start, loop.stop);
  return finish_edit(std::move(p));
}

// lse = log(exp(lse - m) + sum) without the + m: the final exp(m - lse) is off by exp(m).
Program flash_lse_drops_max(const Program& base) {
  Program p = base;
  const StmtSite s = find_instruction(p, {.op = "tensor_tensor", .writes = "l_buffer"});
  auto& add = instruction_as<TensorTensor>(s);
  s.instr().ins = TensorCopy{add.dst, add.src1, add.engine};
  return finish_edit(std::move(p));
}

// Re-materialisation: the output store indexes its q tile by i1 (the tile within the pass)
// instead of i0 * T + i1, so every pass after the first overwrites the first pass's rows and the
// later rows are never written. Invisible with one pass (attn_core_tile_size 256 at the modelled
// lengths).
Program flash_remat_store_ignores_pass(const Program& base) {
  Program p = base;
  const StmtSite s = find_instruction(p, {.op = "dma_copy", .writes = "o"});
  substitute(access_to(p, s.instr().ins, "o"), Expr::var("i0"), Expr(0));
  return finish_edit(std::move(p));
}

// Training mode: after q tile i's output store, l_buffer[:, i] -= m_buffer[:, i1], so the lse
// store writes log(sum) without the max (the l - m a kernel keeps relative to its running max);
// o was already computed from the right l, so only the lse output is wrong.
Program flash_lse_store_off_by_max(const Program& base) {
  Program p = base;
  const StmtSite scale = find_instruction(p, {.op = "activation", .writes = "exp"});
  const auto& act = instruction_as<Activation>(scale);
  if (!act.bias || !std::holds_alternative<Access>(*act.bias)) {
    throw std::logic_error("the activation writing 'exp' has no m_buffer bias");
  }
  TensorTensor sub{act.src, act.src, std::get<Access>(*act.bias), AluOp::subtract};
  insert_after(find_instruction(p, {.op = "dma_copy", .writes = "o"}),
               instruction_stmt(std::move(sub)));
  return finish_edit(std::move(p));
}

// logit_bias read as [Sk, Sq]: the load of q tile i and large tile j reads the block at key rows
// j*L.. and query columns i*128.. through a transposing view, so score (q, k) gets bias[k][q].
Program flash_bias_transposed(const Program& base) {
  Program p = base;
  const StmtSite s = find_instruction(p, {.op = "dma_copy", .reads = "logit_bias"});
  Access& a = access_to(p, s.instr().ins, "logit_bias");
  if (!a.perm.empty()) throw std::logic_error("the logit_bias load is already transposed");
  std::swap(a.dims[2], a.dims[3]);
  a.perm = {0, 1, 3, 2};
  return finish_edit(std::move(p));
}

// Causal: the diagonal 512-key tile copies the scores out of PSUM without adding the bias (the
// left tiles still add it), as if the bias add were written for the left tiles only.
Program flash_bias_dropped_on_diagonal(const Program& base) {
  Program p = base;
  const std::vector<StmtSite> adds = find_instructions(
      p, {.op = "tensor_tensor", .writes = "qk_res_buf", .reads = "logit_bias_tile"});
  if (adds.size() != 2) throw std::logic_error("expected the left and the diagonal bias adds");
  const auto& add = instruction_as<TensorTensor>(adds[1]);  // program order: left, diagonal
  adds[1].instr().ins = TensorCopy{add.dst, add.src0, add.engine};
  return finish_edit(std::move(p));
}

// ---- pipelined_attention (two KV sections merged through HBM, groups pipelined) --------------

// write_back's merge scalar_tensor_tensor(prev_output, multiply, scaling_factor, add, mm2_sbuf)
// without the multiply (source line 294): section 0's partial keeps the scale of its own max
// when section 1 raises it. In the model the multiply is the tensor_scalar writing stt_product.
Program pipelined_merge_rescale_missing(const Program& base) {
  Program p = base;
  // one per write_back of section 1: the steady state's and the epilogue's two
  const auto sites = find_instructions(p, {.op = "tensor_scalar", .writes = "stt_product"});
  if (sites.empty()) throw std::logic_error("no tensor_scalar writes stt_product");
  for (const StmtSite& s : sites) {
    auto& mul = instruction_as<TensorScalar>(s);
    if (mul.op0 != AluOp::multiply) throw std::logic_error("stt_product is not a multiply");
    s.instr().ins = TensorCopy{mul.dst, mul.src, mul.engine};
  }
  return finish_edit(std::move(p));
}

// running_sum = prev_running_sum + collect without the scaling_factor multiply (source line
// 285): section 0's row sum keeps the scale of its own max.
Program pipelined_sum_rescale_missing(const Program& base) {
  Program p = base;
  const auto sites = find_instructions(p, {.op = "tensor_scalar", .writes = "running_sum"});
  if (sites.empty()) throw std::logic_error("no tensor_scalar writes running_sum");
  for (const StmtSite& s : sites) {
    auto& ts = instruction_as<TensorScalar>(s);
    if (ts.op0 != AluOp::multiply || ts.op1 != AluOp::add ||
        !std::holds_alternative<Access>(ts.operand1)) {
      throw std::logic_error("running_sum is not prev * scaling_factor + collect");
    }
    s.instr().ins =
        TensorTensor{ts.dst, ts.src, std::get<Access>(ts.operand1), AluOp::add, ts.engine};
  }
  return finish_edit(std::move(p));
}

// final_reduce_sum_b given one slot instead of num_free_tiles=(2,) (source line 158): in the
// steady state exp(g + 1) writes its partial row sums over group g's before write_back(g) reads
// them, so group g is normalised by group g + 1's sums.
Program pipelined_sum_slot_shared(const Program& base) {
  Program p = base;
  int edited = 0;
  // The activations writing the sums, then the tensor_reduce reading them: slot (g % 2) -> 0.
  for (const InstrQuery& q :
       {InstrQuery{.writes = "final_reduce_sum_b"}, InstrQuery{.reads = "final_reduce_sum_b"}}) {
    for (const StmtSite& s : find_instructions(p, q)) {
      for (Access* a : accesses_to(p, s.instr().ins, "final_reduce_sum_b")) {
        a->dims.at(1).start = Expr(0);
        ++edited;
      }
    }
  }
  if (edited == 0) throw std::logic_error("no access to final_reduce_sum_b");
  return finish_edit(std::move(p));
}

// ---- attention_tkg (decode attention against a KV cache) --------------------------------------

// The instructions of every FA tile's copy of a per-tile buffer (gen_mask's buffers carry the
// tile's suffix "_fa0", "_fa1").
std::vector<StmtSite> per_tile(Program& p, InstrQuery q) {
  std::vector<StmtSite> out;
  const std::string base = q.writes.empty() ? q.reads : q.writes;
  for (const char* suffix : {"_fa0", "_fa1"}) {
    (q.writes.empty() ? q.reads : q.writes) = base + suffix;
    for (const StmtSite& s : find_instructions(p, q)) out.push_back(s);
  }
  if (out.empty()) throw std::logic_error("no " + q.op + " on " + base + "_fa*");
  return out;
}

// gen_mask_tkg's standard compare `iota < pos[b, 0]` (gen_mask_tkg.py line 411) made `<=`: the
// stale cache slot at the position becomes visible to every query of the batch.
Program tkg_position_off_by_one(const Program& base) {
  Program p = base;
  for (const StmtSite& s : per_tile(p, {.op = "tensor_scalar", .writes = "cur_mask"})) {
    auto& ts = instruction_as<TensorScalar>(s);
    if (ts.op0 != AluOp::is_lt) throw std::logic_error("cur_mask is not iota < pos");
    ts.op0 = AluOp::is_le;
  }
  return finish_edit(std::move(p));
}

// gen_mask_tkg compares with the last active token's position pos[b, s_a - 1] instead of the
// first's (gen_mask_tkg.py line 405: `pos_ids[:, b * s_a]`): the stale slots [P_b, P_b + s_a - 1)
// past the cache's end become visible.
Program tkg_stale_cache_read(const Program& base) {
  Program p = base;
  for (const StmtSite& s : per_tile(p, {.op = "tensor_scalar", .writes = "cur_mask"})) {
    auto& ts = instruction_as<TensorScalar>(s);
    auto* pos = std::get_if<Access>(&ts.operand0);
    if (pos == nullptr || pos->dims.size() != 3) throw std::logic_error("no position column");
    pos->dims[2].start = pos->dims[2].start + Expr::var("s_active") - Expr(1);
  }
  return finish_edit(std::move(p));
}

// should_prep_sink forced False (attention_tkg.py line 2088): the sink enters neither the max
// nor the denominator. In the model the sink load becomes a memset of -inf (exp(-inf - m) = 0,
// max(m, -inf) = m), the same effect without restructuring the reduction buffers.
Program tkg_sink_ignored(const Program& base) {
  Program p = base;
  const StmtSite s = find_instruction(p, {.op = "dma_copy", .writes = "sink_sb"});
  const auto& load = instruction_as<DmaCopy>(s);
  s.instr().ins = Memset{load.dst, Imm{-std::numeric_limits<float>::infinity()}, std::nullopt};
  return finish_edit(std::move(p));
}

// LNC2 batch split: the K and V cache loads index batch i_b instead of global_batch_offset + i_b
// (attention_tkg.py lines 1741, 2753): core 1 attends its queries to core 0's caches.
Program tkg_kv_batch_offset_dropped(const Program& base) {
  Program p = base;
  const Expr pid = Expr::var(kProgramIdParam);
  for (const char* cache : {"k_prior", "v_prior"}) {
    const StmtSite s = find_instruction(p, {.op = "dma_copy", .reads = cache});
    substitute(access_to(p, s.instr().ins, cache), pid, Expr(0));
  }
  return finish_edit(std::move(p));
}

// The block table's SBUF layout [folds, bs] read as [bs, folds] (attention_tkg.py line 1632:
// batch_pos = i_fold_rel * bs + i_b written i_b * num_folds + i_fold_rel): planted on the table
// load's side (the same mismatch): the DMA fills the [128, folds * bs] table in the [bs, folds]
// order (its HBM view permuted (2, 0, 1) instead of (2, 1, 0)) while the K and V loads read
// column fold * bs + i_b. With two or more batches and folds, a batch's fold gathers the blocks
// of another batch or fold.
Program tkg_block_table_wrong_stride(const Program& base) {
  Program p = base;
  const StmtSite s = find_instruction(
      p, {.op = "dma_copy", .writes = "active_blocks_sb", .reads = "active_blocks_table"});
  Access& src = access_to(p, s.instr().ins, "active_blocks_table");
  if (src.perm != std::vector<int>{2, 1, 0}) {
    throw std::logic_error("the block table load is not the [128, folds, bs] view");
  }
  src.perm = {2, 0, 1};
  return finish_edit(std::move(p));
}

// gen_mask_tkg's SWA comparison `iota >= start` (gen_mask_tkg.py line 497) made `>`: the first
// slot of every window is dropped.
Program tkg_swa_window_start_dropped(const Program& base) {
  Program p = base;
  int edited = 0;
  for (const StmtSite& s : per_tile(p, {.op = "tensor_scalar", .writes = "swa_ge"})) {
    auto& ts = instruction_as<TensorScalar>(s);
    if (ts.op0 != AluOp::is_ge) continue;  // the other tensor_scalar scales by is_wrap
    ts.op0 = AluOp::is_gt;
    ++edited;
  }
  if (edited == 0) throw std::logic_error("no swa_ge >= start comparison");
  return finish_edit(std::move(p));
}

// out_in_sb under the LNC2 batch split without the sendrecv that swaps the halves of the SBUF
// output (attention_tkg.py lines 3023-3033; the HBM store needs no exchange, each core storing
// its own batches): each core holds only its own batches' columns, and the test wrapper's copy
// of the whole SBUF output to HBM reads the peer's columns unwritten.
Program tkg_out_in_sb_halves_not_swapped(const Program& base) {
  Program p = base;
  int removed = 0;
  for (const StmtSite& s : find_instructions(p, {.op = "dma_copy", .writes = "out_sb"})) {
    if (!instruction_as<DmaCopy>(s).dst.core) continue;  // the tensor_copy's local columns
    s.body->erase(s.body->begin() + static_cast<std::ptrdiff_t>(s.index));
    ++removed;
    break;  // the sites after it are stale
  }
  if (removed == 0) throw std::logic_error("no cross-core dma_copy into out_sb");
  return finish_edit(std::move(p));
}

// ---- attention_cte (nki-library prefill: rows folded, GQA by kv row, static masks) -----------

// _q_to_kv_batch_id as batch_id % bs_kv instead of batch_id // (bs // bs_kv) (source line 1551):
// the K and V loads of q row b = kv_batch * group + q_in_group read kv row b % bs_kv. With
// bs_kv <= 2 (the modelled cap) that is (b mod 2) * (bs_kv - 1): exact for bs_kv 1 and 2.
Program cte_gqa_mapping_modulo(const Program& base) {
  Program p = base;
  const Expr kvb = Expr::var("kv_batch");
  const Expr row = kvb * Expr::var("group") + Expr::var("q_in_group");
  const Expr modulo = Expr::mod(row, 2) * (Expr::var("bs_kv") - Expr(1));
  for (const char* t : {"k", "v"}) {
    const StmtSite s = find_instruction(p, {.op = "dma_copy", .reads = t});
    substitute(access_to(p, s.instr().ins, t), kvb, modulo);
  }
  return finish_edit(std::move(p));
}

// The causal affine_select's offset g*128 - k_start written g*128 - k_start - 1 (source line
// 2694): the diagonal key is masked too, and the first row of a diagonal tile sees nothing.
Program cte_causal_diagonal_shifted(const Program& base) {
  Program p = base;
  int edited = 0;
  for (const StmtSite& s :
       find_instructions(p, {.op = "affine_select", .writes = "mm1_affine_select_output"})) {
    auto& sel = instruction_as<AffineSelect>(s);
    if (sel.channel_multiplier != 1) continue;  // the window's select has -1
    sel.offset = sel.offset - Expr(1);
    ++edited;
  }
  if (edited == 0)
    throw std::logic_error("no causal affine_select writes mm1_affine_select_output");
  return finish_edit(std::move(p));
}

// The sink neither in the row max nor in the row sum (source lines 2133, 2307): the copy of
// sink_sb into the partial maxima and its exp into the partial sums are dropped, so the columns
// keep their memset values (fp32.min, 0).
Program cte_sink_ignored(const Program& base) {
  Program p = base;
  // one update_max and one exp per call site of the software pipeline
  const auto copies = find_instructions(p, {.op = "tensor_copy", .reads = "sink_sb"});
  const auto exps = find_instructions(p, {.op = "activation", .reads = "sink_sb"});
  if (copies.empty() || exps.empty()) throw std::logic_error("no sink copy or sink exp");
  for (const StmtSite& s : copies) {
    s.instr().ins = Memset{instruction_as<TensorCopy>(s).dst, Imm{kSinkDroppedMax}, {}};
  }
  for (const StmtSite& s : exps) {
    s.instr().ins = Memset{instruction_as<Activation>(s).dst, Imm{0.0f}, {}};
  }
  return finish_edit(std::move(p));
}

// The window's affine_select offset k_start + W - 1 - g*128 written with W (source lines 1155,
// 1167, 2704): keys q - W .. q, one key more than the window.
Program cte_swa_window_off_by_one(const Program& base) {
  Program p = base;
  int edited = 0;
  for (const StmtSite& s :
       find_instructions(p, {.op = "affine_select", .writes = "mm1_affine_select_output"})) {
    auto& sel = instruction_as<AffineSelect>(s);
    if (sel.channel_multiplier != -1) continue;  // the causal select has +1
    sel.offset = sel.offset + Expr(1);
    ++edited;
  }
  if (edited == 0) throw std::logic_error("no sliding-window affine_select");
  return finish_edit(std::move(p));
}

const kernels::Options kCausal = {{"use_causal_mask", "true"}};

std::vector<BugEntry> make_catalogue() {
  return {
      {"causal_mask_off_by_one",
       "the causal affine_select on qk_res_buf keeps key f = p + 1: one future key leaks into "
       "every row",
       "sd_attention", kCausal,
       [](const Program& b) { return shift_causal_mask(b, "qk_res_buf", +1); }},
      {"causal_mask_excludes_diagonal",
       "the causal affine_select on qk_res_buf also masks key f = p: no row sees its own key "
       "(the first row sees nothing)",
       "sd_attention_step1", kCausal,
       [](const Program& b) { return shift_causal_mask(b, "qk_res_buf", -1); }},
      {"causal_mask_fills_zero",
       "the masking pass writes 0.0 instead of -9984 into masked scores, so future keys keep "
       "weight exp(-max)",
       "naive_attention", kCausal, mask_fills_zero},
      {"last_k_tile_dropped",
       "the PV accumulation loop over key tiles stops at seqlen // 128 - 1: the last key tile "
       "never reaches the output",
       "sd_attention_step5",
       {},
       [](const Program& b) { return drop_last_k_tile(b, "i_k_seq_tile", "attn_res_psum"); }},
      {"seqlen_tail_ignored",
       "every loop over ceil(seqlen / 128) tiles runs over seqlen // 128: the partial last tile "
       "of queries and keys is ignored",
       "naive_attention",
       {},
       ignore_seqlen_tail},
      {"seqlen_tail_keys_dropped",
       "the PV loop over key tiles runs to seqlen // 128 instead of ceil(seqlen / 128): the "
       "partial last key tile is in the row sums but never reaches the output",
       "naive_attention",
       {},
       [](const Program& b) { return ignore_tail_keys(b, "t7", "p7_out_psum"); }},
      {"k_tile_uses_q_index",
       "the QK^T matmul reads k_local at the q-tile index instead of the key-tile index: every "
       "key tile is the diagonal one",
       "sd_attention_step2",
       {},
       k_indexed_by_q_tile},
      {"v_transposed",
       "the V tile load into trans_v reads v[tile] with its axes swapped (legal only when "
       "d_head = 128)",
       "sd_attention",
       {},
       transpose_v_load},
      {"max_subtraction_missing",
       "the fused exp activation writing softmax_res has no bias = -rowmax: exp(s) overflows "
       "for logits above ~88",
       "sd_attention_step1",
       {},
       [](const Program& b) { return drop_max_subtraction(b, "softmax_res"); }},
      {"scale_applied_twice",
       "the exp activation gets scale=0.125 although Q was already multiplied by 0.125: "
       "softmax(s / 64)",
       "sd_attention",
       {},
       [](const Program& b) { return scale_exp_again(b, "exp_res"); }},
      {"reciprocal_not_applied",
       "the reciprocal of the row sum is replaced by a copy of the sum: the output is "
       "multiplied by the sum instead of divided",
       "sd_attention_step4",
       {},
       skip_reciprocal},
      {"psum_accumulate_flag_wrong",
       "the PV matmuls in the loop over key tiles overwrite attn_res_psum instead of "
       "accumulating: only the last key tile remains",
       "sd_attention_allocated",
       {},
       [](const Program& b) { return pv_overwrites(b, "i_pv", "attn_res_psum"); }},
      {"psum_group_start_accumulates",
       "the first PV matmul of the accumulation group accumulates onto attn_res_psum, which "
       "nothing has zeroed",
       "sd_attention",
       {},
       [](const Program& b) { return pv_group_starts_accumulating(b, "attn_res_psum"); }},
      {"bf16_pv_accumulation",
       "PV results leave PSUM per key tile and are added into a bf16 SBUF accumulator (in a "
       "sequential loop), rounding the running sum to bf16 after every tile",
       "sd_attention",
       {{"mixed_precision", "false"}},
       [](const Program& b) {
         return accumulate_pv_in_sbuf(b, "attn_res_psum", DType::bf16, LoopKind::sequential);
       }},
      {"carried_dependency_in_affine_loop",
       "PV results are added into an fp32 SBUF accumulator inside the affine loop over key "
       "tiles: each iteration reads what the previous one wrote",
       "sd_attention_step5",
       {},
       [](const Program& b) {
         return accumulate_pv_in_sbuf(b, "attn_res_psum", DType::fp32, LoopKind::affine);
       }},
      {"stale_psum_read",
       "the copy of local_tp_buf into trans_softmax_res moved above the loop of transposes "
       "that fill it: it reads the PSUM bank before this iteration writes it",
       "sd_attention_allocated",
       {},
       evict_before_transposes},
      {"overlapping_explicit_placements",
       "neg_max_res placed at qk_res_buf's byte offset: the row maxima overwrite score columns "
       "that the exp still has to read",
       "sd_attention_allocated",
       {},
       overlap_neg_max_with_scores},
      {"scale_off_2pct",
       "Q's load-time scaling into q_local multiplies by 0.1275 instead of 0.125: every logit is "
       "2% too large (fp32 operands: with bf16 operands the a-priori bound of the q and k "
       "roundings, 0.4% of every logit, is too loose to tell a 2% error apart)",
       "sd_attention",
       {{"mixed_precision", "false"}, {"dtype", "fp32"}},
       scale_off_by_2pct},
      {"mask_fill_leaks_large_logits",
       "the causal affine_select on qk_res_buf fills masked scores with -30 instead of -9984: "
       "harmless while the row max is near 0, dominant once the visible logits lie below -30",
       "sd_attention", kCausal,
       [](const Program& b) { return mask_fill_minus_30(b, "qk_res_buf"); }},
      {"row_max_subset_tiles",
       "the reduction of the per-tile maxima neg_max_res into neg_max_res_final reads only the "
       "first key tile's column: exp overflows when a later tile's logits are ~89 higher",
       "sd_attention_step1",
       {},
       [](const Program& b) {
         return row_max_first_tile_only(b, "neg_max_res_final", "neg_max_res");
       }},
      {"last_out_tile_one_off",
       "the output store of q tile i writes tile min(i, seqlen // 128 - 2): the last tile "
       "overwrites the one before it and its own rows stay unwritten",
       "sd_attention_step5",
       {},
       [](const Program& b) { return last_store_one_tile_early(b, "i_q_seq_tile"); }},
      {"pipelined_exp_after_next_max",
       "v10's steady state exponentiates q tile i + 1 after fused_qkmax_and_pv(i) has replaced "
       "the row max with q tile i + 2's: exp(s - m) with another tile's max overflows or "
       "underflows once the rows' maxima differ by ~88",
       "attn_fwd_v10",
       {},
       pipelined_exp_after_next_max},
      {"pipelined_sum_slot_off_by_one",
       "v10's steady-state write_back(i) reads the partial row sums of slot (i + 1) % 2 instead "
       "of i % 2: q tile i is divided by q tile i + 1's row sums",
       "attn_fwd_v10",
       {},
       pipelined_sum_slot_off_by_one},
      {"scratch_block_indices_swapped",
       "v3's PV loop reads the P^T tile scores_t[i_tile_q, i_tile_kv] where the transposes "
       "stored scores_t[i_tile_kv, i_tile_q]",
       "attn_fwd_v3",
       {},
       scratch_block_indices_swapped},
      {"reduction_skips_last_partition",
       "the PV matmuls into attn_res_psum contract over partitions 0..126 of trans_v and "
       "trans_softmax_res: key 127 of every key tile is in the row sum but not in the output",
       "sd_attention",
       {},
       [](const Program& b) { return pv_skips_last_partition(b, "attn_res_psum"); }},
      {"flash_rescale_missing",
       "flash_fwd's alpha = exp(m_prev - m) reads the updated max twice (exp(m - m) = 1): o is "
       "not rescaled when a later large tile raises the row max",
       "flash_fwd",
       {{"seq_tile_size", "512"}},
       flash_rescale_missing},
      {"flash_window_off_by_one",
       "flash_fwd's sliding-window affine_select keeps k_pos > q_pos - w - 1: one key beyond the "
       "window leaks into every row that has one",
       "flash_fwd",
       {{"sliding_window", "on"}},
       flash_window_off_by_one},
      {"flash_gqa_interleaved",
       "flash_fwd's q load and output store use q head i_q_h * kv_heads + head_id (interleaved) "
       "instead of head_id * group + i_q_h: q heads attend with another kv head",
       "flash_fwd",
       {},
       flash_gqa_interleaved},
      {"flash_skip_guard_strict",
       "flash_fwd's causal tile guard i*128 >= j*L written as >: the q tile at the start of each "
       "large tile skips it although it sees its keys",
       "flash_fwd", kCausal, flash_skip_guard_strict},
      {"flash_lse_drops_max",
       "flash_fwd's log-sum-exp update stores log(exp(lse - m) + sum) without adding m: the "
       "output is off by exp(m)",
       "flash_fwd",
       {},
       flash_lse_drops_max},
      {"flash_lse_store_off_by_max",
       "flash_fwd in training mode stores lse = log(sum) without the running max (l_buffer "
       "minus m_buffer after the output store): the output is right, only the lse is off by m",
       "flash_fwd",
       {{"training", "true"}},
       flash_lse_store_off_by_max},
      {"flash_bias_transposed",
       "flash_fwd reads logit_bias as [Sk, Sq]: the tile of q tile i and large tile j comes from "
       "key rows j*L.. and query columns i*128.., so score (q, k) gets bias[k][q]",
       "flash_fwd",
       {{"logit_bias", "true"}},
       flash_bias_transposed},
      {"flash_bias_dropped_on_diagonal",
       "flash_fwd with the causal mask copies the diagonal 512-key score tile out of PSUM without "
       "adding logit_bias (the left tiles add it)",
       "flash_fwd",
       {{"use_causal_mask", "true"}, {"logit_bias", "true"}},
       flash_bias_dropped_on_diagonal},
      {"flash_remat_store_ignores_pass",
       "flash_fwd with two q tiles per re-materialisation pass stores each tile's output at its "
       "index within the pass (i1) instead of i0 * T + i1: later passes overwrite the first "
       "pass's rows and leave the rest unwritten",
       "flash_fwd",
       {{"attn_core_tile_size", "2"}},
       flash_remat_store_ignores_pass},
      {"pipelined_merge_rescale_missing",
       "pipelined_attention's merge adds section 0's partial output without multiplying it by "
       "scaling_factor = exp(m0 - m1): wrong where section 1 raises the row max",
       "pipelined_attention",
       {},
       pipelined_merge_rescale_missing},
      {"pipelined_sum_rescale_missing",
       "pipelined_attention's running_sum = prev_running_sum + collect without the scaling_factor "
       "multiply: the denominator is wrong where section 1 raises the row max",
       "pipelined_attention",
       {},
       pipelined_sum_rescale_missing},
      {"pipelined_sum_slot_shared",
       "pipelined_attention's final_reduce_sum_b single-slotted: exp(g + 1) overwrites group g's "
       "partial row sums before write_back(g) reads them",
       "pipelined_attention",
       {},
       pipelined_sum_slot_shared},
      {"tkg_position_off_by_one",
       "attention_tkg's generated mask keeps slot <= pos[b, 0] instead of slot < pos[b, 0]: the "
       "stale cache slot at each batch's position is read",
       "attention_tkg",
       // swa=on generates the mask by the sliding-window rule instead (gen_mask_tkg_swa.h):
       // the standard compare this entry edits exists with swa=off only.
       {{"mask", "pos_id"}, {"swa", "off"}},
       tkg_position_off_by_one},
      {"tkg_stale_cache_read",
       "attention_tkg's generated mask compares with the last active token's position "
       "pos[b, s_a - 1] instead of pos[b, 0]: s_a - 1 stale cache slots past the position are read",
       "attention_tkg",
       {{"mask", "pos_id"}, {"swa", "off"}},  // the standard compare (as above)
       tkg_stale_cache_read},
      {"tkg_sink_ignored",
       "attention_tkg's sink enters neither the row max nor the denominator (should_prep_sink "
       "false; modelled as the sink load replaced by -inf)",
       "attention_tkg",
       {{"sink", "on"}},
       tkg_sink_ignored},
      {"tkg_kv_batch_offset_dropped",
       "attention_tkg split over the batch (LNC2): the K and V cache loads read batch i_b instead "
       "of global_batch_offset + i_b, so core 1 uses core 0's caches",
       "attention_tkg",
       // block KV (block_len > 0) gathers the caches through the block table, whose entries
       // already name each batch's blocks: the flat cache loads this entry edits exist with
       // block_len=0 only.
       {{"lnc", "2-batch"}, {"block_len", "0"}},
       tkg_kv_batch_offset_dropped},
      {"tkg_block_table_wrong_stride",
       "attention_tkg's block table lands in SBUF in [bs, folds] order while the K and V loads "
       "read it as [folds, bs] (column fold * bs + i_b): batches gather each other's blocks",
       "attention_tkg",
       // block_resize=4 loads the table by another path (rows on partitions, a PE transpose per
       // fold): the one [128, folds, bs] DMA this entry edits exists with block_resize=1 only.
       {{"block_len", "16"}, {"strided_mm1", "false"}, {"block_resize", "1"}},
       tkg_block_table_wrong_stride},
      {"tkg_swa_window_start_dropped",
       "attention_tkg's sliding-window mask compares iota > start instead of iota >= start: the "
       "first slot of every window is dropped",
       "attention_tkg",
       {{"mask", "pos_id"}, {"swa", "on"}},
       tkg_swa_window_start_dropped},
      {"tkg_out_in_sb_halves_not_swapped",
       "attention_tkg with out_in_sb split over the batch (LNC2): the sendrecv that swaps the "
       "halves of the SBUF output is missing, so each core holds only its own batches and the "
       "wrapper's copy of the whole output to HBM reads the other half unwritten",
       "attention_tkg",
       {{"lnc", "2-batch"}, {"out_in_sb", "true"}},
       tkg_out_in_sb_halves_not_swapped},
      {"cte_gqa_mapping_modulo",
       "attention_cte maps q row b to kv row b % bs_kv instead of b // (bs / bs_kv): with two "
       "kv rows of two q rows each, q row 1 reads kv row 1 and q row 2 kv row 0",
       "attention_cte",
       {},
       cte_gqa_mapping_modulo},
      {"cte_causal_diagonal_shifted",
       "attention_cte's causal affine_select keeps k_pos <= q_pos - 1: no row sees its own key "
       "and the first row of every group sees nothing in its diagonal tile",
       "attention_cte",
       {{"causal_mask", "true"}},  // the causal select exists with the causal mask only
       cte_causal_diagonal_shifted},
      {"cte_sink_ignored",
       "attention_cte drops the sink from the row max and the row sum (the copy of sink_sb and "
       "its exp become memsets of the columns' initial values)",
       "attention_cte",
       {{"sink", "on"}},
       cte_sink_ignored},
      {"cte_swa_window_off_by_one",
       "attention_cte's sliding-window affine_select keeps k_pos >= q_pos - W: one key beyond "
       "the window",
       "attention_cte",
       {{"sliding_window", "on"}},
       cte_swa_window_off_by_one},
  };
}

// Each entry's program carries the entry's name (not its base kernel's): what `dump` prints, what a
// check result names, and what the default tier's coverage guard counts (kernels/exercised.h).
std::vector<BugEntry> named_programs(std::vector<BugEntry> entries) {
  for (BugEntry& e : entries) {
    e.edit = [name = e.name, edit = std::move(e.edit)](const Program& base) {
      Program p = edit(base);
      p.name = name;
      return p;
    };
  }
  return entries;
}

}  // namespace

const std::vector<BugEntry>& bug_catalogue() {
  static const std::vector<BugEntry> entries = named_programs(make_catalogue());
  return entries;
}

const BugEntry* find_bug(const std::string& name) {
  for (const BugEntry& e : bug_catalogue()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

}  // namespace ncv::props
