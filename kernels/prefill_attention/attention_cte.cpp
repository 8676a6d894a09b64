// attention_cte: nki-library's prefill (context encoding) attention kernel
// (aws-neuron/nki-library src/nkilib_src/nkilib/core/attention/attention_cte.py @d2ad3a5; line
// numbers below are that file's), written against the builder from the source's loop nest,
// buffers, dtypes and trace-time guards.
//
// Heads are folded into the batch (q [bs, Sq, d], k [bs_kv, d, Sk], v [bs_kv, Sk, d], out
// [bs, Sq, d]); q row b reads kv row b // (bs / bs_kv) (GQA). Per row the keys come in one
// section (Sk <= 10240) or in sections of 8192 merged through the output in HBM; per section K
// and V are loaded whole (bf16), then the 128-row q groups run the stages load_q, qk_and_max
// (QK in 512-key PSUM tiles, the static causal / window masks by affine_select on diagonal tiles,
// scale and partial row max by tensor_scalar_reduce), update_max (the negated running max and the
// flash correction exp(m_old - m_new)), exp (bf16 P, fp32 partial sums; P^T per 512 keys), pv (PV
// per 2048-key large tile in PSUM, summed into mm2_sb) and write_back, software-pipelined two
// groups deep (lines 712-760): the QK of group g + 2 interleaves with the PV of group g.
//
// The source is Python-unrolled at trace time; its `if`s on group and tile indices are loop
// bounds here, or loops of 0 or 1 trips (`when`). Every loop runs in program order
// (sequential_range) except the independent K / V tile loads: the unrolled source fixes the
// order and reuses rotating buffers (num_free_tiles) across iterations.
//
// SBUF: every buffer at the byte offset the source's ModularAllocator hands out (bump pointer,
// align_to where the source asks; one region per tensor holding all its num_free_tiles slots).
// PSUM: the source's banks (MM1 k_tile % 4, MM2 4 + large_tile % 4).
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/nki_lowering.h"
#include "kernels/prefill_attention/attention_cte_common.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

constexpr int64_t kP = 128;
constexpr int64_t kKPerLarge = kCteLargeTile / kCteKTile;  // 4 K tiles per large tile
constexpr int64_t kVPerLarge = kCteLargeTile / kCteVTile;  // 16 V tiles per large tile
constexpr int64_t kVPerK = kCteKTile / kCteVTile;          // 4 V tiles per K tile

// DMA queues (the source leaves them to the compiler): K, V, Q, output.
constexpr int kQueueK = 0, kQueueV = 1, kQueueQ = 2, kQueueOut = 3;

Expr align_up(Expr x, int64_t a) {
  return Expr::floordiv(x + (a - 1), a) * a;
}
Expr clamp(Expr x, Expr lo, Expr hi) {
  return Expr::max(lo, Expr::min(x, hi));
}
// 1 when n > 0, else 0: the trip count of a guarded block.
Expr positive(Expr n) {
  return Expr::min(Expr(1), Expr::max(Expr(0), n));
}

// One KV section as the builder sees it: its first key, its 512-key / 128-key / 2048-key tile
// counts and what kind of section it is (the source's `if section_idx == 0`, `section_idx > 0`,
// `section_idx == num_sections - 1`).
struct Section {
  Expr off;  // section_offset (line 659)
  Expr k_tiles, v_tiles, large_tiles;
  bool first = true, last = true;
};

class CteBuilder {
 public:
  CteBuilder(const Options& o, bool multi_section, int64_t section_len)
      : b_(multi_section ? "attention_cte_multi_section" : "attention_cte"),
        c_(attention_cte_config(o, multi_section)),
        section_len_(section_len) {}

  Program build() {
    kvb_n_ = c_.lnc == 2 ? b_.param("bs_kv", 2, kCteMaxKvBatch, 2)
                         : b_.param("bs_kv", 1, kCteMaxKvBatch);
    group_ = b_.param("group", 1, kCteMaxGroup);
    const CteSeqlenRange multi = cte_multi_section_seqlens(section_len_);
    S_ = c_.multi_section ? b_.param("seqlen", multi.min, multi.max, kCteKTile)
                          : b_.param("seqlen", kCteKTile, kCteMaxSingleSeqlen, kCteKTile);
    d_ = b_.param("d_head", 1, 128);  // 0 < d <= 128 (line 421)
    if (c_.sliding_window) {
      // W <= 128 takes the range_select path (line 976): refused (attention_cte_excluded).
      w_ = b_.param("window", kCteSwaRangeSelectMax + 1,
                    c_.multi_section ? multi.max : kCteMaxSingleSeqlen);
    }
    Expr bs = kvb_n_ * group_;
    q_ = b_.input("q", c_.io_dtype, {bs, S_, d_});      // tp_q=True: [bs, Sq, d]
    k_ = b_.input("k", c_.io_dtype, {kvb_n_, d_, S_});  // tp_k=False: [bs_kv, d, Sk]
    v_ = b_.input("v", c_.io_dtype, {kvb_n_, S_, d_});
    if (c_.sink) sink_ = b_.input("sink", DType::fp32, {bs, Expr(1)});
    o_ = b_.output("out", c_.io_dtype, {bs, S_, d_});  // result dtype = q.dtype (line 357)
    groups_ = Expr::floordiv(S_, kP);                  // num_grps = ceil(Sq / 128)
    if (c_.multi_section) {
      section_k_tiles_ = Expr(section_len_ / kCteKTile);
      section_v_tiles_ = Expr(section_len_ / kCteVTile);
      section_large_tiles_ = Expr(section_len_ / kCteLargeTile);
    } else {
      section_k_tiles_ = Expr::floordiv(S_, kCteKTile);
      section_v_tiles_ = Expr::floordiv(S_, kCteVTile);
      section_large_tiles_ = Expr::floordiv(S_ + (kCteLargeTile - 1), kCteLargeTile);
    }
    allocate();

    // Lines 468-493: LNC shards the batch (num_bs_per_shard = bs // 2 per core); rows in order.
    // With bs_kv even each core's rows are whole kv rows: kv row j, q rows j*group + i.
    Expr kv_lo(0), kv_hi = kvb_n_;
    if (c_.lnc == 2) {
      b_.grid(Expr(2));
      Expr per_core = Expr::floordiv(kvb_n_, 2);
      kv_lo = Builder::program_id() * per_core;
      kv_hi = kv_lo + per_core;
    }
    b_.sequential_range("kv_batch", kv_lo, kv_hi, 1, [&](Expr kvb) {
      b_.sequential_range("q_in_group", group_, [&](Expr i) {
        kv_batch_ = kvb;
        batch_ = kvb * group_ + i;  // _q_to_kv_batch_id: batch // (bs // bs_kv) = kvb
        attention_impl();
      });
    });
    return b_.finish();
  }

 private:
  // ---- allocation (lines 627-650, 1256-1538) ------------------------------------------------

  TensorRef take(const std::string& name, DType dt, std::vector<Expr> shape, int64_t align = 0) {
    if (align > 0) addr_ = align_up(addr_, align);
    Expr bytes(static_cast<int64_t>(dtype_size(dt)));
    for (size_t i = 1; i < shape.size(); ++i) bytes = bytes * shape[i];
    TensorRef t = b_.sbuf(name, dt, std::move(shape), {.placement = Placement{Expr(0), addr_}});
    addr_ = addr_ + bytes;
    return t;
  }

  void allocate() {
    const Expr one(1), two(2);
    zero_bias_ = take("zero_bias_tensor", DType::fp32, {kP, one});
    if (c_.sink) sink_sb_ = take("sink_sb", DType::fp32, {kP, one});
    running_max_ = take("mm1_running_max", DType::fp32, {kP, groups_});
    running_sum_ = take("exp_running_sum", DType::fp32, {kP, groups_});
    recip_ = take("exp_sum_reciprocal", DType::fp32, {kP, groups_});
    // _allocate_attention_buffers, from sbuf_addr_outer, once per section at the same base: the
    // same offsets in every section, so declared once.
    const Expr nk = section_k_tiles_, nv = section_v_tiles_, nl = section_large_tiles_;
    const Expr cols = nk + (c_.sink ? 1 : 0);  // + one sink column (lines 1310, 1327)
    k_sb_ = take("k_sb", DType::bf16, {d_, nk, Expr(kCteKTile)}, 32);
    v_sb_ = take("v_sb", DType::bf16, {kP, nv, d_});
    // [d, 128 * qpl] x 2 slots (block g // qpl at slot (g // qpl) % 2): column (g % (2 qpl)) * 128
    // holds group g, so declared [d, 2 qpl, 128] and indexed g % (2 qpl) (the same bytes).
    q_sb_ = take("q_sb", DType::bf16, {d_, Expr(2 * c_.q_groups_per_load()), Expr(kP)}, 32);
    correction_ = take("flash_attn_correction_factor", DType::fp32, {kP, two, one});
    partial_max_ = take("mm1_partial_max", DType::fp32, {kP, two, cols}, 4);
    section_max_ = take("mm1_section_max", DType::fp32, {kP, two, one});
    partial_sum_ = take("exp_partial_sum", DType::fp32, {kP, two, cols});
    section_sum_ = take("exp_section_sum", DType::fp32, {kP, two, one});
    prev_max_ = take("prev_mm1_running_max", DType::fp32, {kP, two, one});
    prev_sum_ = take("prev_exp_running_sum", DType::fp32, {kP, two, one});
    // mm_out_dtype = fp32 (bf16 only on gen4: refused)
    prev_output_ = take("mm2_prev_output", DType::fp32, {kP, two, d_});
    accum_ = take("mm2_accum_flash_attn", DType::fp32, {kP, two, d_});
    final_ = take("mm2_final", DType::fp32, {kP, two, d_});
    mm2_sb_ = take("mm2_sb", DType::fp32, {kP, two, d_});
    mm1_masked_ = take("mm1_masked", DType::fp32, {kP, two, nl, Expr(kCteLargeTile)});
    exp_sb_ = take("exp_sb", DType::bf16, {kP, nl, Expr(kCteLargeTile)});  // num_free_tiles [1, nl]
    copy_sb_ = take("mm1_copy_sb", DType::fp32, {kP, two, Expr(kCteKTile)});
    select_sb_ = take("mm1_affine_select_output", DType::fp32, {kP, two, Expr(kCteKTile)});
    // [128, 4 x 128] per (group slot, large tile, k tile): declared [128, 2, nl, 16, 128] (the
    // same bytes), V tile t of the large tile at [.., t, :].
    exp_tp_sb_ = take("exp_tp_sb", DType::bf16, {kP, two, nl, Expr(kVPerLarge), Expr(kP)}, 32);
    // The fp32 input's Q load buffer (_load_q_tile's local allocator at sbuf_addr, line 1667):
    // after the section buffers (the no-tp_k K and V loads allocate nothing).
    if (c_.io_dtype == DType::fp32) {
      q_load_ =
          take("q_load_buffer", DType::fp32, {d_, Expr(c_.q_groups_per_load()), Expr(kP)}, 32);
    }
    // scalar_tensor_tensor's fp32 product (multi-section merge, see the notes): not in the
    // source's allocation, placed after its end.
    if (c_.multi_section) stt_product_ = take("stt_product", DType::fp32, {kP, d_});
  }

  // A PSUM tile at `bank`, declared again by each use (IR names are unique; the source keeps one
  // nl.ndarray per (group, large tile, k tile) at the same bank addresses).
  TensorRef psum(const std::string& name, std::vector<Expr> shape, Expr bank) {
    const int n = declared_[name]++;
    return b_.psum(n == 0 ? name : name + "_" + std::to_string(n), DType::fp32, std::move(shape),
                   {.placement = Placement{Expr(0), bank * psum_bank_bytes()}});
  }

  // A block the source guards with an `if` on indices: a loop of 0 or 1 trips (nested ones get
  // distinct variables: the IR forbids shadowing).
  void when(Expr trips01, const std::function<void()>& body) {
    const std::string var = "when" + std::to_string(when_depth_++);
    b_.sequential_range(var, trips01, [&](Expr) { body(); });
    --when_depth_;
  }

  static Expr slot(Expr g) { return Expr::mod(g, 2); }  // num_free_tiles=[2] over groups
  Access col(const TensorRef& t, Expr g) const { return t({all(), one(g)}); }
  Access at_slot(const TensorRef& t, Expr g) const { return t({all(), one(slot(g)), all()}); }

  // ---- guards (lines 2884-2920) ----------------------------------------------------------------

  // _has_any_compute_causal(g, sec.off) for a whole group: its last row reaches the section.
  // Section 0 always has compute.
  Expr group_has_compute(Expr g, const Section& sec) const {
    if (!c_.causal || sec.first) return Expr(1);
    return positive(g * kP + kP - sec.off);  // g*128 + 127 >= off
  }
  // Tiles of `tile` keys (in-section index t, first key sec.off + t*tile) that group g computes:
  // [lo, hi). Causal: g*128 + 127 >= k_start. Window: g*128 < k_start + tile - 1 + W.
  std::pair<Expr, Expr> tile_range(Expr g, const Section& sec, int64_t tile, Expr count) const {
    Expr lo(0), hi = count;
    if (c_.causal)
      hi = clamp(Expr::floordiv(g * kP + (kP - 1) - sec.off, tile) + 1, Expr(0), count);
    if (c_.sliding_window) {
      lo = clamp(Expr::floordiv(g * kP - sec.off - (tile - 1) - w_, tile) + 1, Expr(0), count);
    }
    return {lo, Expr::max(lo, hi)};
  }

  // ---- per row (_attention_cte_impl, lines 601-760) -------------------------------------------

  void attention_impl() {
    b_.memset(zero_bias_(), 0.0f);  // line 629
    if (c_.sink) {
      // dma_copy(sink_sb[0, 0], sink[batch_id, 0]) and stream_shuffle_broadcast to every
      // partition (lines 632-635): one DMA reading the HBM element with partition step 0.
      b_.dma_copy(sink_sb_(), broadcast(sink_({one(batch_), all()}), 0, Expr(kP)), kQueueQ);
    }
    if (!c_.multi_section) {
      section(Section{Expr(0), section_k_tiles_, section_v_tiles_, section_large_tiles_});
      return;
    }
    // Sections of 8192 (line 1045): ceil(S / 8192) in {2, 3}; section 0, the middle ones
    // (0 or 1 here), the last (shorter when S is not a multiple of 8192).
    Expr n_sections = Expr::floordiv(S_ + (section_len_ - 1), section_len_);
    section(
        Section{Expr(0), section_k_tiles_, section_v_tiles_, section_large_tiles_, true, false});
    b_.sequential_range("section_idx", 1, n_sections - 1, 1, [&](Expr s) {
      section(Section{s * section_len_, section_k_tiles_, section_v_tiles_, section_large_tiles_,
                      false, false});
    });
    Expr last_off = (n_sections - 1) * section_len_;
    Expr rest = S_ - last_off;  // keys of the last section, a multiple of 512
    section(Section{last_off, Expr::floordiv(rest, kCteKTile), Expr::floordiv(rest, kCteVTile),
                    Expr::floordiv(rest + (kCteLargeTile - 1), kCteLargeTile), false, true});
  }

  void section(const Section& sec) {
    sec_ = &sec;
    // _load_k_tile without tp_k: [d, 512] tiles (line 1940); _load_v_tile: [128, d] tiles
    // (line 2030); both cast to bf16 by the DMA. Tiles past Sk are skipped (num_f > 0).
    b_.affine_range("k_tile", sec.k_tiles, [&](Expr t) {
      b_.dma_copy(k_sb_({all(), one(t), all()}),
                  k_({one(kv_batch_), all(), ds(sec.off + t * kCteKTile, kCteKTile)}), kQueueK);
    });
    b_.affine_range("v_tile", sec.v_tiles, [&](Expr t) {
      b_.dma_copy(v_sb_({all(), one(t), all()}),
                  v_({one(kv_batch_), ds(sec.off + t * kCteVTile, kCteVTile), all()}), kQueueV);
    });
    // The software pipeline (lines 712-760); num_grps >= 4 (Sq >= 512), so never the
    // one-group path.
    load_q(Expr(0));
    qk_and_max(Expr(0));
    update_max(Expr(0));
    exp(Expr(0));
    load_q(Expr(1));
    qk_and_max(Expr(1));
    update_max(Expr(1));
    b_.sequential_range("grp_i", groups_ - 2, [&](Expr g) {
      if (c_.sliding_window) b_.memset(at_slot(mm2_sb_, g), 0.0f);  // line 740
      load_q(g + 2);
      exp(g + 1);
      fused_qkmax_and_pv(g);
      write_back(g);
      update_max(g + 2);
    });
    const Expr second_last = groups_ - 2, last = groups_ - 1;
    pv(second_last);
    write_back(second_last);
    exp(last);
    pv(last);
    write_back(last);
  }

  // ---- stages ---------------------------------------------------------------------------------

  // _load_q_impl (lines 2058-2088): every num_q_grps_per_load (qpl) groups the source loads qpl
  // groups at once, one DMA transpose of [128 * qpl rows, d] into q_sb[g // qpl] as [d, rows]
  // (an fp32 q through an fp32 buffer and a tensor_copy to bf16, lines 1652-1677). Here each
  // group's 128 rows are one DMA transpose into the same columns (the same bytes at the same
  // addresses, qpl times as many DMAs; see the notes), so that the solver sees every group's
  // slot written. Seqlen is a multiple of 512, so every load is whole.
  void load_q(Expr g) {
    const int64_t qpl = c_.q_groups_per_load();
    when(group_has_compute(g, *sec_), [&] {
      Access src = q_({one(batch_), ds(g * kP, kP), all()});
      src.perm = {0, 2, 1};  // [1, d, 128]: the DMA transpose
      Access dst = q_group(g);
      if (c_.io_dtype == DType::bf16) {
        b_.dma_copy(dst, src, kQueueQ);
      } else {
        Access buf = q_load_({all(), one(Expr::mod(g, qpl)), all()});
        b_.dma_copy(buf, src, kQueueQ);
        b_.tensor_copy(dst, buf);
      }
    });
  }

  Access q_group(Expr g) const {
    return q_sb_({all(), one(Expr::mod(g, 2 * c_.q_groups_per_load())), all()});
  }

  // One 512-key tile t of group g (_qk_and_max_large_tile_impl, lines 2600-2760): the matmul,
  // then on a diagonal tile (masked) the PSUM copy, the causal affine_select and with a window
  // the second one, and tensor_scalar_reduce (x scale, row max into the partial max column t).
  void qk_tile(Expr g, Expr lt, Expr kt, bool masked) {
    Expr t = lt * kKPerLarge + kt;  // the K tile in the section
    Expr k_start = sec_->off + t * kCteKTile;
    auto mm1 = psum("mm1_psum", {Expr(kP), Expr(kCteKTile)}, kt);
    b_.matmul(mm1(), q_group(g), k_sb_({all(), one(t), all()}));
    Access masked_dst = mm1_masked_({all(), one(slot(g)), one(lt), ds(kt * kCteKTile, kCteKTile)});
    Access pmax = partial_max_({all(), one(slot(g)), one(t)});
    if (!masked) {
      b_.tensor_scalar_reduce(masked_dst, mm1(), AluOp::multiply, Imm{c_.scale}, AluOp::max, pmax);
      return;
    }
    // mm1_copy_sb / mm1_affine_select_output: num_free_tiles [1, 1, 2] over the k tile in the
    // large tile.
    Access copy = copy_sb_({all(), one(Expr::mod(kt, 2)), all()});
    Access sel = select_sb_({all(), one(Expr::mod(kt, 2)), all()});
    b_.tensor_copy(copy, mm1());
    // q_pos - k_pos >= 0 (line 2691)
    b_.affine_select(sel, copy, g * kP - k_start, 1, {0, -1}, CmpOp::ge, kCteFp32Min);
    if (c_.sliding_window) {
      // k_pos + W - 1 - q_pos >= 0 (line 2704)
      b_.affine_select(sel, sel, k_start + w_ - 1 - g * kP, -1, {0, 1}, CmpOp::ge, kCteFp32Min);
    }
    b_.tensor_scalar_reduce(masked_dst, sel, AluOp::multiply, Imm{c_.scale}, AluOp::max, pmax);
  }

  // The K tiles of large tile lt that group g computes. Without a window, causal tiles left of
  // the diagonal get no mask and the diagonal tile (the one holding key g*128) the causal
  // select (diagonal_sel_mask, line 2680); with a window every computed tile is masked
  // (line 2686).
  void qk_large_tile(Expr g, Expr lt) {
    auto [lo, hi] = tile_range(g, *sec_, kCteKTile, sec_->k_tiles);
    // the K tiles of lt as kt in [first, end) of 0..3 (nested loops: the solver's write patterns)
    Expr base = lt * kKPerLarge;
    Expr first = clamp(lo - base, Expr(0), Expr(kKPerLarge));
    Expr end = Expr::max(first, clamp(hi - base, Expr(0), Expr(kKPerLarge)));
    auto tiles = [&](Expr a, Expr b, bool masked) {
      b_.sequential_range("k_in_large", a, b, 1, [&](Expr kt) { qk_tile(g, lt, kt, masked); });
    };
    if (!c_.causal) {
      tiles(first, end, false);
    } else if (c_.sliding_window) {
      tiles(first, end, true);
    } else {
      // The diagonal tile: (g*128 - off) // 512; tiles before it are fully visible.
      Expr diag = clamp(Expr::floordiv(g * kP - sec_->off, kCteKTile) - base, first, end);
      tiles(first, diag, false);
      tiles(diag, end, true);
    }
  }

  Access partial_max_of(Expr g) const { return partial_max_({all(), one(slot(g)), all()}); }

  void qk_and_max(Expr g) {  // _qk_and_max_impl (lines 2091-2110)
    when(group_has_compute(g, *sec_), [&] {
      b_.memset(partial_max_of(g), kCteFp32Min);
      b_.sequential_range("large_tile", sec_->large_tiles, [&](Expr lt) { qk_large_tile(g, lt); });
    });
  }

  void update_max(Expr g) {  // _update_max_impl (lines 2113-2170)
    when(group_has_compute(g, *sec_), [&] {
      Access pmax = partial_max_of(g);
      if (c_.sink && sec_->first) {
        b_.tensor_copy(partial_max_({all(), one(slot(g)), one(sec_->k_tiles)}), sink_sb_());
      }
      Access smax = at_slot(section_max_, g);
      b_.tensor_reduce(smax, pmax, AluOp::max, 2, /*negate=*/true);  // -max
      Access run = col(running_max_, g);
      if (!c_.multi_section || sec_->first) {
        b_.tensor_copy(run, smax);
        if (c_.multi_section) b_.memset(at_slot(correction_, g), 0.0f);
        return;
      }
      Access prev = at_slot(prev_max_, g);
      b_.activation(prev, run, {.func = ActFunc::copy, .scale = Imm{-1.0f}, .bias = zero_bias_()});
      b_.tensor_tensor(run, run, smax, AluOp::min);
      b_.activation(at_slot(correction_, g), prev,
                    {.func = ActFunc::exp, .scale = Imm{1.0f}, .bias = run});
    });
  }

  // _exp_impl (lines 2173-2310): per computed 512-key tile, exp(s - m) to bf16 with the fp32 row
  // sum into partial sum column t, then P^T: the source's SBUF-to-SBUF dma_transpose of the four
  // [128 q, 128 keys] blocks into exp_tp_sb [128 keys, 4 x 128 q] is modelled as four
  // Tensor-engine transposes into PSUM (bit-exact on NeuronCore-v3) and one copy (notes).
  void exp_tile(Expr g, Expr lt, Expr kt) {
    Access p = exp_sb_({all(), one(lt), ds(kt * kCteKTile, kCteKTile)});
    b_.activation(p, mm1_masked_({all(), one(slot(g)), one(lt), ds(kt * kCteKTile, kCteKTile)}),
                  {.func = ActFunc::exp,
                   .scale = Imm{1.0f},
                   .bias = col(running_max_, g),
                   .reduce_cmd = ReduceCmd::reset_reduce,
                   .reduce_res = partial_sum_({all(), one(slot(g)), one(lt * kKPerLarge + kt)})});
    auto tp = psum("exp_tp_psum", {Expr(kP), Expr(kCteKTile)}, kt);
    b_.sequential_range("tp_block", kVPerK, [&](Expr j) {
      b_.transpose(tp({all(), ds(j * kP, kP)}),
                   exp_sb_({all(), one(lt), ds(kt * kCteKTile + j * kP, kP)}), Engine::Tensor);
    });
    b_.tensor_copy(exp_tp_sb_({all(), one(slot(g)), one(lt), ds(kt * kVPerK, kVPerK), all()}),
                   tp());
  }

  void exp(Expr g) {
    when(group_has_compute(g, *sec_), [&] {
      Access psums = at_slot(partial_sum_, g);
      b_.memset(psums, 0.0f);
      // Not structured bindings: clang 14 (the fuzz build) cannot capture them in the lambda.
      const std::pair<Expr, Expr> range = tile_range(g, *sec_, kCteKTile, sec_->k_tiles);
      const Expr lo = range.first, hi = range.second;
      b_.sequential_range("large_tile", sec_->large_tiles, [&](Expr lt) {
        Expr base = lt * kKPerLarge;
        Expr first = clamp(lo - base, Expr(0), Expr(kKPerLarge));
        Expr end = Expr::max(first, clamp(hi - base, Expr(0), Expr(kKPerLarge)));
        b_.sequential_range("k_in_large", first, end, 1, [&](Expr kt) { exp_tile(g, lt, kt); });
      });
      if (c_.sink && sec_->first) {
        // exp(sink - m) into the last partial-sum column (lines 2302-2309)
        b_.activation(partial_sum_({all(), one(slot(g)), one(sec_->k_tiles)}), sink_sb_(),
                      {.func = ActFunc::exp, .scale = Imm{1.0f}, .bias = col(running_max_, g)});
      }
    });
  }

  // _pv_large_tile_impl (lines 2763-2881): the PV matmuls of the computed V tiles of large tile
  // lt accumulate in the PSUM tile at bank 4 + lt % 4 (the first one opens the group), then
  // mm2_sb = the tile (lt == 0) or mm2_sb + the tile. The source's loop_reduce_sel guard holds
  // exactly when some V tile of lt is computed.
  void pv_large_tile(Expr g, Expr lt, bool first_large_tile) {
    auto [lo, hi] = tile_range(g, *sec_, kCteVTile, sec_->v_tiles);
    Expr first = Expr::max(lo, lt * kVPerLarge);
    Expr end = Expr::max(first, Expr::min(hi, lt * kVPerLarge + kVPerLarge));
    when(positive(end - first), [&] {
      auto mm2 = psum("mm2_psum", {Expr(kP), d_}, Expr::mod(lt, 4) + 4);
      auto step = [&](Expr t, bool accumulate) {
        Access p_t = exp_tp_sb_({all(), one(slot(g)), one(lt), one(t - lt * kVPerLarge), all()});
        b_.matmul(mm2(), p_t, v_sb_({all(), one(t), all()}), accumulate);
      };
      step(first, false);
      b_.sequential_range("v_tile", first + 1, end, 1, [&](Expr t) { step(t, true); });
      Access acc = at_slot(mm2_sb_, g);
      if (first_large_tile) {
        b_.tensor_copy(acc, mm2());
      } else {
        b_.tensor_tensor(acc, acc, mm2(), AluOp::add);
      }
    });
  }

  void pv_large_tiles(Expr g, const std::function<void(Expr)>& after) {
    pv_large_tile(g, Expr(0), true);
    after(Expr(0));
    b_.sequential_range("large_tile", 1, sec_->large_tiles, 1, [&](Expr lt) {
      pv_large_tile(g, lt, false);
      after(lt);
    });
  }

  void pv(Expr g) {  // _pv_impl (lines 2312-2329)
    when(group_has_compute(g, *sec_), [&] {
      b_.memset(at_slot(mm2_sb_, g), 0.0f);
      pv_large_tiles(g, [](Expr) {});
    });
  }

  // _fused_qkmax_and_pv_impl (lines 2332-2360): per large tile, group g's PV then group g+2's QK.
  void fused_qkmax_and_pv(Expr g) {
    when(group_has_compute(g + 2, *sec_), [&] { b_.memset(partial_max_of(g + 2), kCteFp32Min); });
    pv_large_tiles(g, [&](Expr lt) {
      when(group_has_compute(g + 2, *sec_), [&] { qk_large_tile(g + 2, lt); });
    });
  }

  // _write_back_impl (lines 2363-2523).
  void write_back(Expr g) {
    when(group_has_compute(g, *sec_), [&] {
      Access ssum = at_slot(section_sum_, g);
      b_.tensor_reduce(ssum, at_slot(partial_sum_, g), AluOp::add, 2);
      Access rsum = col(running_sum_, g), recip = col(recip_, g);
      if (!c_.multi_section) {
        b_.reciprocal(recip, ssum);
        scale_reciprocal_write_back(at_slot(mm2_sb_, g), g);
        return;
      }
      if (sec_->first) {
        b_.tensor_copy(rsum, ssum);
      } else {
        Access prev = at_slot(prev_sum_, g);
        b_.tensor_copy(prev, rsum);
        // running_sum = prev * correction + section_sum (line 2403)
        b_.tensor_scalar(rsum, prev, AluOp::multiply, at_slot(correction_, g), false, AluOp::add,
                         ssum);
      }
      // The last section with compute for this group: the last section, or with the causal
      // mask the section holding the group's diagonal (the next one has no compute).
      Expr last = sec_->last ? Expr(1) : Expr(0);
      Expr not_last = Expr(1) - last;
      if (c_.causal && !sec_->last) {
        // next section (off + 8192) has no compute: g*128 + 127 < off + 8192
        last = positive(sec_->off + section_len_ - g * kP);
        not_last = Expr(1) - last;
      }
      when(last, [&] { b_.reciprocal(recip, rsum); });
      Access src = at_slot(mm2_sb_, g);
      if (!sec_->first) {
        // Load the previous output (o in q.dtype) and merge: accum = prev * correction + mm2_sb
        // (scalar_tensor_tensor, line 2484: one fp32 Vector instruction; here its product in an
        // fp32 tile, then the add, see the notes).
        Access prev_out = at_slot(prev_output_, g);
        b_.dma_copy(prev_out, o_({one(batch_), ds(g * kP, kP), all()}), kQueueOut);
        b_.tensor_scalar(stt_product_(), prev_out, AluOp::multiply, at_slot(correction_, g), false,
                         std::nullopt, Imm{0.0f}, false, Engine::Vector);
        b_.tensor_tensor(at_slot(accum_, g), stt_product_(), src, AluOp::add, Engine::Vector);
        src = at_slot(accum_, g);
      }
      when(last, [&] { scale_reciprocal_write_back(src, g); });
      when(not_last, [&] { write_back_o(src, g); });
    });
  }

  // _scale_reciprocal_write_back_impl (lines 2526-2565): out = src * (1 / sum) (activation copy
  // with a per-row scale), stored.
  void scale_reciprocal_write_back(Access src, Expr g) {
    Access fin = at_slot(final_, g);
    b_.activation(fin, src, {.func = ActFunc::copy, .scale = col(recip_, g), .bias = zero_bias_()});
    write_back_o(fin, g);
  }

  // _write_back_o_impl (lines 2568-2597): the fp32 tile stored into out, rounded to q.dtype by
  // the DMA.
  void write_back_o(Access src, Expr g) {
    b_.dma_copy(o_({one(batch_), ds(g * kP, kP), all()}), src, kQueueOut);
  }

  Builder b_;
  CteConfig c_;
  int64_t section_len_;  // _FLASH_ATTENTION_SECTION_LENGTH (8192 unless scaled for tests)
  std::map<std::string, int> declared_;
  Expr addr_{0};
  int when_depth_ = 0;
  const Section* sec_ = nullptr;
  Expr kvb_n_, group_, S_, d_, w_, groups_, batch_, kv_batch_;
  Expr section_k_tiles_, section_v_tiles_, section_large_tiles_;
  TensorRef q_, k_, v_, o_, sink_;
  TensorRef zero_bias_, sink_sb_, running_max_, running_sum_, recip_, k_sb_, v_sb_, q_sb_,
      correction_, partial_max_, section_max_, partial_sum_, section_sum_, prev_max_, prev_sum_,
      prev_output_, accum_, final_, mm2_sb_, mm1_masked_, exp_sb_, copy_sb_, select_sb_, exp_tp_sb_,
      q_load_, stt_product_;
};

}  // namespace

Program build_attention_cte(const Options& o, bool multi_section) {
  if (const std::string why = attention_cte_excluded(o); !why.empty()) {
    throw BuildError("attention_cte: " + why);
  }
  return CteBuilder(o, multi_section, kCteSectionLen).build();
}

CteSeqlenRange cte_multi_section_seqlens(int64_t section_len) {
  if (section_len <= 0 || section_len % kCteLargeTile != 0) {
    throw std::invalid_argument("attention_cte: section length " + std::to_string(section_len) +
                                " is not a positive multiple of " + std::to_string(kCteLargeTile));
  }
  static_assert(kCteFaThreshold * 4 == kCteSectionLen * 5, "threshold = 5/4 section length");
  return {section_len * 5 / 4 + kCteKTile, 2 * section_len + kCteKTile};
}

Program build_attention_cte_multi_section_scaled(const Options& o, int64_t section_len) {
  cte_multi_section_seqlens(section_len);  // validates
  if (const std::string why = attention_cte_excluded(o); !why.empty()) {
    throw BuildError("attention_cte: " + why);
  }
  return CteBuilder(o, true, section_len).build();
}

}  // namespace ncv::kernels
