// nki-library's decode attention kernel attention_tkg (attention_tkg.py, line numbers below are
// that file's unless another file is named) inside its test wrapper attn_tkg_wrapper
// (test_attention_tkg.py lines 93-220, the qk_in_sb path: q and k_active are DMA-loaded into
// SBUF first). One KV head shared by all q_head query heads; key slots sit on partitions and the
// (batch, head, query) columns on the free axis: qk[p, t, b, h * s_a + i] is the score of the
// slot of partition p, tile t (strided_mm1: slot = p * n + t; otherwise t * 128 + p). Per FA tile:
// mask, QK (predicated copy from PSUM), cascaded max (reduce over tiles, PE transpose, reduce,
// [LNC exchange], [sink]), exp into the io dtype, cascaded sum (ones-vector matmuls over the
// rounded exp), PV, then normalise and store, or carry flash-attention running statistics.
//
// LNC2 is a grid of 2 programs in lockstep; sendrecv is a DMA into the peer's buffer
// (on_core(dst, 1 - program_id)); trace-time `if prg_id == ...` become loops whose trip count is
// program_id or 1 - program_id.
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "kernels/decode_attention/attention_tkg_block_kv.h"
#include "kernels/decode_attention/attention_tkg_common.h"
#include "kernels/decode_attention/attention_tkg_draws.h"
#include "kernels/decode_attention/gen_mask_tkg.h"
#include "kernels/nki_lowering.h"

namespace ncv::kernels {

namespace {

constexpr float kFp32Min = std::numeric_limits<float>::lowest();  // _MIN_FLOAT32 (line 2305)
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

class TkgBuilder {
 public:
  explicit TkgBuilder(const TkgConfig& c) : c_(c), b_("attention_tkg") {}

  Program build() {
    declare_params();
    declare_hbm();
    wrapper_prologue();
    // one_vec (lines 315-316)
    one_vec_ = b_.sbuf("one_vec", c_.io_dtype, {128, 1});
    b_.memset(one_vec_(), 1.0f);
    if (c_.mask == TkgMask::pos_id) load_position_ids();
    // The batch-tile loop has one iteration in the modelled domain (a relation keeps
    // 8 * bs * H * s_a * tile_s_prior within the 16 MiB budget); its scope:
    b_.sequential_range("batch_tile", 1, [&](Expr) {
      if (c_.fa) allocate_fa_buffers();
      for (int f = 0; f < num_fa_tiles(); ++f) {
        b_.sequential_range("fa_tile_" + std::to_string(f), 1, [&](Expr) { fa_tile(f); });
      }
      if (c_.fa) fa_finalize_and_store();
    });
    wrapper_epilogue();
    return b_.finish();
  }

 private:
  int num_fa_tiles() const { return c_.fa ? static_cast<int>(kTkgFaTilesPerCore) : 1; }

  void declare_params() {
    const int ns = c_.sprior_programs();
    if (c_.lnc == TkgLnc::batch) {
      bs_ = b_.param("bs", 2, 256, 2);
    } else {
      bs_ = b_.param("bs", 1, 128);
    }
    h_ = b_.param("q_head", 1, 128);
    sa_ = b_.param("s_active", 1, 8);
    if (c_.fa) {
      const int64_t s = kTkgFaTile * kTkgFaTilesPerCore * ns;
      s_ = b_.param("seqlen", s, s, s);
    } else if (c_.block()) {
      // Block KV: a core's s_prior is a whole number of folds of 128 blocks of the kernel's
      // block length (see block_relations)
      const int64_t fold = 128 * c_.kernel_block_len() * ns;
      s_ = b_.param("seqlen", fold, kTkgMaxNoFaSprior * ns, fold);
    } else {
      s_ = b_.param("seqlen", 128 * ns, kTkgMaxNoFaSprior * ns, 128 * ns);
    }
    d_ = b_.param("d_head", 1, 128);
    if (c_.n_programs() > 1) {
      b_.grid(Expr(2));
      pid_ = Builder::program_id();
    }
    s_nc_ = Expr::floordiv(s_, ns);                     // atp.s_prior (per NC)
    bs_nc_ = Expr::floordiv(bs_, c_.batch_programs());  // atp.bs_per_nc
    sprior_id_ = c_.lnc == TkgLnc::sprior ? pid_ : Expr(0);
    bs_id_ = c_.lnc == TkgLnc::batch ? pid_ : Expr(0);
    gbo_ = bs_id_ * bs_nc_;  // global_batch_offset (line 346)
    hs_ = h_ * sa_;          // s_active_qh
    bqs_ = bs_nc_ * hs_;     // s_active_bqh (one batch tile, one bsq tile)
    tile_s_ = c_.fa ? Expr(kTkgFaTile) : s_nc_;
    n_ = Expr::floordiv(tile_s_, 128);
    // _get_lnc_sharding (lines 3061-3085): batch-sharded iff bs % 2 == 0 and (bs * H * s_a > 128
    // or S < 256), else s_prior-sharded iff S >= 256. Each split is an option whose relations
    // make the source pick it (the batch split by its first cause only).
    const Expr bhs = bs_ * hs_;
    if (c_.lnc == TkgLnc::batch) {
      b_.require(RelationKind::LE, Expr(129), bhs);
      b_.require(RelationKind::LE, bhs, Expr(256));  // one 128-column bsq tile per core
    } else {
      b_.require(RelationKind::LE, bhs, Expr(128));  // one bsq tile (n_bsq_tiles = 1)
    }
    // Active keys of the strided layout sit in the last partition: s_a <= n per core.
    if (c_.strided_mm1) b_.require(RelationKind::LE, sa_ * 128, tile_s_);
    // uses_batch_tiling (utils lines 142-171): one batch tile while 8 * bs_nc * H * s_a *
    // tile_s_prior <= 16 MiB.
    if (!c_.fa) b_.require(RelationKind::LE, bqs_ * tile_s_ * 8, Expr(kTkgBatchTileBudget));
    if (c_.block()) block_relations();
  }

  // Block KV: the resized block length bl_r = gcd(block_len, s_prior per core / 128) of
  // resize_cache_block_len_for_attention_tkg_kernel (utils lines 240-329; with FA, also gcd with
  // 64 and the last tile / 128, which the two 8192-slot tiles leave at 64: rf = 1 there) is what
  // the build assumed: 128 * bl_r divides the per-core s_prior (the seqlen param's step) and, for
  // rf > 1, 2 * bl_r does not divide s_prior / 128 per core. The physical cache holds
  // tkg::kBlockCacheSlots slots (attention_tkg_draws.h): every batch's blocks distinct needs bs *
  // seqlen within it.
  void block_relations() {
    const int64_t ns = c_.sprior_programs(), blr = c_.kernel_block_len();
    // 128 * bl_r divides the per-core s_prior: the seqlen param's multiple_of (declare_params)
    if (c_.block_resize > 1) {
      b_.require(RelationKind::NE, Expr::mod(Expr::floordiv(s_, 128 * ns), 2 * blr), Expr(0));
    }
    b_.require(RelationKind::LE, bs_ * s_, Expr(tkg::kBlockCacheSlots));
  }

  // The block-KV geometry of the current FA tile (attention_tkg_block_kv.h).
  tkg::BlockKvTile block_tile() const {
    tkg::BlockKvTile t;
    t.block_len = c_.kernel_block_len();
    t.resize = c_.block_resize;
    t.d_head = d_;
    t.folds = Expr::floordiv(n_, t.block_len);
    t.fold_start = Expr::floordiv(tile0_, t.block_len);  // tile0_ counts 128-slot tiles
    t.batches = bs_nc_;
    t.batch_start = gbo_;
    t.max_blocks = tkg::kBlockCacheSlots / c_.block_len * c_.block_resize;
    t.suffix = "_fa" + std::to_string(f_);
    t.psum_bank_bytes = psum_bank_bytes();
    return t;
  }

  void declare_hbm() {
    const DType kv = c_.kv_dtype, io = c_.io_dtype;
    const Expr tiles = Expr::floordiv(s_, 128);
    // Wrapper inputs (qk_in_sb): q [d, B*H*s_a] and k_active [d, B*s_a] (test lines 256-262),
    // declared with the flat column split into its (batch, head, query) factors.
    q_ = b_.input("q", io, {d_, bs_, h_, sa_});
    k_active_ = b_.input("k_active", kv, {d_, bs_, sa_});
    v_active_ = b_.input("v_active", kv, {bs_, 1, sa_, d_});
    // k_prior [B, 1, d, S] (tp_k_prior=False) and v_prior [B, 1, S, d], with the slot axis split
    // into (tile, partition) factors (the same bytes): the non-strided V load reads it
    // partition-major. full_sprior = curr_sprior = s_prior.
    if (c_.block()) {
      // Block KV (lines 867-972): k_prior / v_prior [num_blocks, block_len, d] read as
      // [num_blocks * rf, block_len / rf, d] (the same bytes, utils line 322), num_blocks fixed
      // (tkg::kBlockCacheSlots / block_len); active_blocks_table [B, S / block_len] uint32.
      const int64_t blocks = tkg::kBlockCacheSlots / c_.block_len;
      const std::vector<Expr> cache{Expr(blocks * c_.block_resize), Expr(c_.kernel_block_len()),
                                    d_};
      k_prior_ = b_.input("k_prior", kv, cache);
      v_prior_ = b_.input("v_prior", kv, cache);
      tkg::BlockKvTile shape_of;
      shape_of.resize = c_.block_resize;
      table_ = b_.input("active_blocks_table", DType::uint32,
                        tkg::block_table_shape(shape_of, bs_, s_, c_.block_len),
                        ValueRange{0, blocks - 1});
    } else {
      k_prior_ = b_.input("k_prior", kv, {bs_, 1, d_, tiles, 128});
      v_prior_ = b_.input("v_prior", kv, {bs_, 1, tiles, 128, d_});
    }
    if (c_.mask == TkgMask::hbm) {
      // mask [S, B, H, s_a] uint8, key-slot major (1 = keep)
      mask_ = b_.input("mask", DType::uint8, {tiles, 128, bs_, h_, sa_}, ValueRange{0, 1});
    } else {
      // use_pos_id: mask is only the active mask [s_a, B, H, s_a]; rope_pos_ids [B, s_a] (fp32
      // in the tests) with a leading unit dim the partition broadcast steps over.
      mask_ = b_.input("mask", DType::uint8, {sa_, bs_, h_, sa_}, ValueRange{0, 1});
      pos_ = b_.input("rope_pos_ids", DType::fp32, {1, bs_, sa_});
      // SWA: start_pos_ids [B, s_a] (inclusive window starts), the same leading unit dim
      if (c_.swa) start_ = b_.input("start_pos_ids", DType::fp32, {1, bs_, sa_});
    }
    if (c_.sink) sink_ = b_.input("sink", DType::fp32, {h_, 1});
    if (c_.out_in_sb) {
      // The wrapper's attn_out_hbm: the SBUF output's shape [d, B*H*s_a] (test lines 204-208),
      // declared with the flat column split into its (batch, head, query) factors.
      out_ = b_.output("out", c_.out_dtype, {d_, bs_, h_, sa_});
    } else {
      out_ = b_.output("out", c_.out_dtype, {bs_, h_, d_, sa_});  // [B, H, d, s_a]
    }
  }

  // attn_tkg_wrapper: the SBUF output (out_in_sb, test lines 130-135: allocated first), then the
  // q_input, k_active_input SBUF copies (test lines 144-150).
  void wrapper_prologue() {
    if (c_.out_in_sb) out_sb_ = b_.sbuf("out_sb", c_.out_dtype, {d_, bs_, hs_});
    q_sb_ = b_.sbuf("q_input", c_.io_dtype, {d_, bs_, hs_});
    k_active_sb_ = b_.sbuf("k_active_input", c_.kv_dtype, {d_, bs_, sa_});
    b_.dma_copy(q_sb_(), q_());
    b_.dma_copy(k_active_sb_(), k_active_());
  }

  // attn_tkg_wrapper after the kernel (out_in_sb, test lines 204-208): the SBUF output DMAed to
  // HBM as it is. Every core runs the wrapper: under LNC2 both cores hold the full output (see
  // gather_and_store) and store the same bytes.
  void wrapper_epilogue() {
    if (c_.out_in_sb) b_.dma_copy(out_(), out_sb_());
  }

  // _load_position_ids / _load_and_broadcast_pos_ids (lines 1372-1411): this core's rows of
  // rope_pos_ids on every partition. The source DMAs one row and broadcasts it with
  // nc_stream_shuffle (an IR gap); here the DMA's HBM side steps 0 over the partitions (the
  // same values on every partition).
  void load_position_ids() {
    pos_sb_ = b_.sbuf("pos_ids_sb", DType::fp32, {128, bs_nc_, sa_});
    b_.dma_copy(pos_sb_(), broadcast(pos_({all(), ds(gbo_, bs_nc_), all()}), 0, Expr(128)));
    if (c_.swa) {  // start_pos_sb the same way (lines 1392-1411)
      start_sb_ = b_.sbuf("start_pos_sb", DType::fp32, {128, bs_nc_, sa_});
      b_.dma_copy(start_sb_(), broadcast(start_({all(), ds(gbo_, bs_nc_), all()}), 0, Expr(128)));
    }
  }

  // A PSUM tile at bank `bank` (the source's explicit addresses: not auto-allocated under the
  // test's SbufManager).
  TensorRef psum(const std::string& name, DType dt, std::vector<Expr> shape, Expr bank) {
    const int k = psum_count_[name]++;
    return b_.psum(k == 0 ? name : name + "_" + std::to_string(k), dt, std::move(shape),
                   {.placement = Placement{Expr(0), bank * psum_bank_bytes()}});
  }
  // Unique SBUF names for buffers a source function allocates once per call.
  std::string nm(const std::string& base) {
    const int k = sbuf_count_[base]++;
    return k == 0 ? base : base + "_" + std::to_string(k);
  }

  // Trip count of the last core's statements (`sprior_prg_id == sprior_n_prgs - 1`).
  Expr last_core_trips() const { return c_.lnc == TkgLnc::sprior ? pid_ : Expr(1); }
  // Trip count of core 0's statements (`sprior_prg_id == 0`).
  Expr first_core_trips() const { return c_.lnc == TkgLnc::sprior ? Expr(1) - pid_ : Expr(1); }
  void guarded(const std::string& name, Expr trips, const std::function<void()>& body) {
    if (trips.is_const() && trips.const_value() == 1) {
      body();
      return;
    }
    b_.sequential_range(name, trips, [&](Expr) { body(); });
  }

  // ---------------------------------------------------------------------------------------
  // One FA tile (the body of the fa_tile_idx loop, lines 357-396).
  void fa_tile(int f) {
    f_ = f;
    last_ = f == num_fa_tiles() - 1;
    // slot offset of this tile in the cache: sprior_prg_id * s_prior + fa_tile_offset, in tiles
    tile0_ = sprior_id_ * Expr::floordiv(s_nc_, 128) + Expr(f * (kTkgFaTile / 128));
    sync_per_tile_ = !c_.fa || c_.sprior_programs() == 1;
    prep_sink_ = c_.sink && ((sync_per_tile_ && f == 0) || (!sync_per_tile_ && last_));
    red_len_ = 1 + (c_.sprior_programs() > 1 && !c_.fa ? 1 : 0) + (prep_sink_ ? 1 : 0);
    sink_idx_ = red_len_ - 1;
    if (c_.block()) {
      // _load_active_blocks (lines 3378-3545): this tile's table columns, [128, folds * bs]
      const tkg::BlockKvTile t = block_tile();
      table_sb_ = b_.sbuf(nm("active_blocks_sb"), DType::uint32, tkg::block_table_sb_shape(t));
      tkg::load_block_table(b_, table_, table_sb_, t);
    }
    allocate_qk_buffers();
    load_mask();
    qk_matmul();
    cascaded_max_reduce();
    exp_qk();
    cascaded_sum_reduction();
    pv_matmul_and_store();
  }

  // _allocate_qk_buffers (lines 1019-1045)
  void allocate_qk_buffers() {
    qk_ = b_.sbuf(nm("qk"), DType::fp32, {128, n_, bs_nc_, hs_});
    b_.memset(qk_(), kNegInf);  // line 1040
    qk_io_ = b_.sbuf(nm("qk_io_type"), c_.io_dtype, {128, n_, bs_nc_, hs_});
    mask_sb_ = b_.sbuf(nm("mask_sb"), DType::uint8, {128, n_, bs_nc_, h_, sa_});
  }

  // _load_mask (lines 1414-1505)
  void load_mask() {
    if (c_.mask == TkgMask::hbm) {
      // The tile's rows [offset, offset + tile_s) of the core's batches. Strided: row p * n + t
      // goes to partition p, column t: the rows in order fill the partitions in order (a flat
      // copy). Non-strided: row t * 128 + p, the (tile, partition) view permuted.
      Access src = mask_({ds(tile0_, n_), all(), ds(gbo_, bs_nc_), all(), all()});
      if (!c_.strided_mm1) src.perm = {1, 0, 2, 3, 4};
      b_.dma_copy(mask_sb_(), src);
      return;
    }
    GenMaskTkgArgs a;
    a.pos_ids = pos_sb_();
    a.mask_out = mask_sb_;
    a.n = n_;
    a.bs = bs_nc_;
    a.q_head = h_;
    a.s_active = sa_;
    a.iota_base = tile0_ * 128;
    a.strided_mm1 = c_.strided_mm1;
    if (c_.block()) a.block_len = c_.kernel_block_len();
    if (c_.swa) a.start_pos = start_sb_();
    a.name_suffix = "_fa" + std::to_string(f_);
    if (last_) {  // load_active_mask: last NC, last FA tile (line 1473)
      a.active_mask = mask_;
      a.batch_start = gbo_;
      a.active_trips = last_core_trips();
    }
    gen_mask_tkg(b_, a);
  }

  // The batch whose cache rows batch i_b of this core reads (global_batch_offset + i_b).
  Expr cache_batch(Expr ib) const { return gbo_ + ib; }

  // The K of batch i_b of this core for the tile into k_sb (the extension point of the block-KV
  // load): k_prior[b, 0, :, slots] (lines 1731-1752), in slot order either way (a flat copy),
  // then, on the last core's last tile, the active keys into the last s_a slots.
  void load_k(const TensorRef& k_sb, Expr ib) {
    if (c_.block()) {
      // Block KV, the PE transpose path (lines 1666-1729; bf16 loads for an fp8 cache), then
      // the active keys into the last blocks of the last fold (lines 1799-1887)
      tkg::load_block_k(b_, k_prior_, table_sb_, block_tile(), ib, k_sb(),
                        c_.kv_dtype == DType::fp8_e4m3 ? DType::bf16 : c_.kv_dtype);
      if (last_) {
        guarded("insert_k_active", last_core_trips(), [&] {
          tkg::place_block_k_active(b_, block_tile(), k_sb(), k_active_sb_, gbo_ + ib, sa_);
        });
      }
      return;
    }
    // k_prior[b, 0, :, slots] (lines 1731-1752): in slot order either way (a flat copy)
    b_.dma_copy(k_sb(), k_prior_({one(cache_batch(ib)), one(0), all(), ds(tile0_, n_), all()}));
    if (last_) {
      // k_sb[:, tile_s - s_a:] = k_active of this batch, ScalarE (lines 1890-1897)
      guarded("insert_k_active", last_core_trips(), [&] {
        const Access dst = c_.strided_mm1 ? k_sb({all(), one(127), ds(n_ - sa_, sa_)})
                                          : k_sb({all(), one(n_ - 1), ds(Expr(128) - sa_, sa_)});
        b_.tensor_copy(dst, k_active_sb_({all(), one(gbo_ + ib), all()}), Engine::Scalar);
      });
    }
  }

  // The V of batch i_b of this core for the tile into v_sb [128, n, d] (the extension point of
  // the block-KV load), then the active values on the last core's last tile.
  void load_v(const TensorRef& v_sb, Expr ib) {
    if (c_.block()) {
      // Block KV: one indirect DMA per fold (lines 2705-2748), then the active values into the
      // last blocks of the last fold (lines 2783-2873)
      tkg::load_block_v(b_, v_prior_, table_sb_, block_tile(), ib, v_sb());
      if (last_) {
        guarded("insert_v_active", last_core_trips(), [&] {
          tkg::place_block_v_active(b_, block_tile(), v_sb(), v_active_, gbo_ + ib, sa_);
        });
      }
      return;
    }
    // Strided: rows p * n .. p * n + n - 1 to partition p (slot order, a flat copy);
    // non-strided: row t * 128 + p to partition p, column t (lines 2749-2779).
    Access src = v_prior_({one(cache_batch(ib)), one(0), ds(tile0_, n_), all(), all()});
    if (!c_.strided_mm1) src.perm = {3, 2, 4, 0, 1};
    b_.dma_copy(v_sb(), src);
    if (last_) {
      guarded("insert_v_active", last_core_trips(), [&] {
        // strided: slots n * 128 - s_a + a are partition 127, columns n - s_a + a (s_a <= n);
        // non-strided: partitions 128 - s_a + a of the last column (lines 2874-2934)
        const Access dst = c_.strided_mm1 ? v_sb({ds(127, 1), ds(n_ - sa_, sa_), all()})
                                          : v_sb({ds(Expr(128) - sa_, sa_), one(n_ - 1), all()});
        b_.dma_copy(dst, v_active_({one(gbo_ + ib), one(0), all(), all()}));
      });
    }
  }

  // _compute_qk_matmul (lines 1576-2058), flat cache, tp_k_prior=False
  void qk_matmul() {
    // The batch loop (Python range, unrolled by the tracer, sections interleaved): sequential,
    // interleave degree 1 (see the notes).
    b_.sequential_range("i_b_mm1", bs_nc_, [&](Expr ib) {
      // k_sb [d, tile_s]: its columns are slots; declared with the column split as the matmul
      // tiles read it (strided: [d, 128, n]; else [d, n, 128]).
      // Block KV: [d, folds, bl, 128] (the tiles split by fold, attention_tkg_block_kv.h).
      const int64_t blr = c_.kernel_block_len();
      auto k_sb = c_.strided_mm1 ? b_.sbuf(nm("k_sb"), c_.kv_dtype, {d_, 128, n_})
                  : c_.block()
                      ? b_.sbuf(nm("k_sb"), c_.kv_dtype, {d_, Expr::floordiv(n_, blr), blr, 128})
                      : b_.sbuf(nm("k_sb"), c_.kv_dtype, {d_, n_, 128});
      load_k(k_sb, ib);
      // MM1 in PSUM groups of kTkgMm1GroupTiles key tiles at bank g % 8 (lines 1899-2011)
      const Expr groups = Expr::floordiv(n_ + (kTkgMm1GroupTiles - 1), kTkgMm1GroupTiles);
      b_.affine_range("i_mm1_grp", groups, [&](Expr g) {
        auto qk_psum = psum("qk_psum", DType::fp32, {128, kTkgMm1GroupTiles, hs_}, Expr::mod(g, 8));
        const Expr cnt = Expr::min(Expr(kTkgMm1GroupTiles), n_ - g * kTkgMm1GroupTiles);
        b_.affine_range("i_mm1", cnt, [&](Expr m) {
          const Expr t = g * kTkgMm1GroupTiles + m;
          const Access k_tile =
              c_.strided_mm1 ? k_sb({all(), all(), one(t)})
              : c_.block()
                  ? k_sb({all(), one(Expr::floordiv(t, blr)), one(Expr::mod(t, blr)), all()})
                  : k_sb({all(), one(t), all()});
          b_.matmul(qk_psum({all(), one(m), all()}), k_tile, q_sb_({all(), one(gbo_ + ib), all()}));
        });
        b_.tensor_copy_predicated(
            qk_({all(), ds(g * kTkgMm1GroupTiles, cnt), one(ib), all()}),
            qk_psum({all(), ds(0, cnt), all()}),
            mask_sb_({all(), ds(g * kTkgMm1GroupTiles, cnt), one(ib), all(), all()}));
      });
    });
  }

  // tp_broadcast (utils/tp_broadcast.py): column src [rows, 1] onto every partition of dst
  // [parts, rows] by one PE transpose of the column repeated along the free axis.
  void tp_broadcast(Access dst, Access src, Expr parts) {
    auto tp = psum("tp_psum", DType::fp32, {parts, bqs_}, Expr(0));
    b_.transpose(tp(), broadcast(src, 1, parts));
    b_.tensor_copy(dst, tp());
  }

  // _s_active_bqh_tile_transpose_broadcast (lines 2633-2647): the source transposes the column
  // into row 0 with Vector 32x32 transposes and broadcasts it with nc_stream_shuffle (an IR gap);
  // modelled as tp_broadcast (bit-exact transposes on NeuronCore-v3+: the same values).
  void column_broadcast(Access dst, Access src, Expr parts) { tp_broadcast(dst, src, parts); }

  // _cascaded_max_reduce (lines 2060-2245)
  void cascaded_max_reduce() {
    qk_max_ = b_.sbuf(nm("qk_max"), DType::fp32, {128, 1, bqs_});
    Access qk_by_col = qk_();
    qk_by_col.perm = {0, 2, 3, 1};  // [128, bs, hs, n]: reduce over the tiles
    b_.tensor_reduce(qk_max_(), qk_by_col, AluOp::max);
    qk_max_buf_ = b_.sbuf(nm("qk_max_buf"), DType::fp32, {bqs_, red_len_});
    // _transpose_max_psum (lines 2248-2282): bank index % 8 = 0
    b_.sequential_range("max_transpose_scope", 1, [&](Expr) {
      auto tp = psum("qk_max_psum", DType::fp32, {bqs_, 128}, Expr(0));
      b_.transpose(tp(), qk_max_());
      b_.tensor_reduce(col(qk_max_buf_, 0), tp(), AluOp::max);
    });
    if (c_.sprior_programs() > 1 && sync_per_tile_) {
      // sendrecv of the local max column into the peer's column 1 (line 2126)
      b_.dma_copy(on_core(col(qk_max_buf_, 1), Expr(1) - pid_), col(qk_max_buf_, 0));
    }
    if (prep_sink_) prep_sink(col(qk_max_buf_, sink_idx_));
    max_negated_ = false;
    if (red_len_ > 1 && sync_per_tile_) {
      max_negated_ = true;
      b_.tensor_reduce(col(qk_max_buf_, 0), qk_max_buf_(), AluOp::max, 1, /*negate=*/true);
    } else if (c_.sink && c_.fa && c_.sprior_programs() == 1) {
      max_negated_ = true;  // line 2169
      b_.tensor_scalar(qk_max_buf_(), qk_max_buf_(), AluOp::multiply, Imm{-1.0f});
    }
    if (c_.fa) fa_update_running_max();
    // _transpose_broadcast_max (lines 2285-2315)
    b_.sequential_range("max_broadcast_scope", 1, [&](Expr) {
      auto buf_copy = b_.sbuf(nm("qk_max_buf_copy"), DType::fp32, {bqs_, 1});
      auto max_copy = b_.sbuf(nm("qk_max_copy"), DType::fp32, {128, bqs_});
      const Access src = c_.fa ? fa_running_max_() : col(qk_max_buf_, 0);
      b_.tensor_scalar(buf_copy(), src, AluOp::max, Imm{kFp32Min});
      tp_broadcast(max_copy(), buf_copy(), Expr(128));
      b_.tensor_copy(qk_max_(), max_copy());
    });
  }

  Access col(const TensorRef& t, int64_t c) const { return t({all(), ds(c, 1)}); }

  // _prep_sink (lines 3285-3338): sink [H, 1] -> [bs * H * s_a, 1] (repeated over batches and
  // queries, PE-transposed).
  void prep_sink(Access result) {
    b_.sequential_range("prep_sink_scope", 1, [&](Expr) {
      auto sink_sb = b_.sbuf(nm("sink_sb"), DType::fp32, {1, 1, h_, 1});
      Access src = sink_();
      src.perm = {1, 0};  // [H, 1] read as [1, H]
      b_.dma_copy(sink_sb(), src);
      auto rep = b_.sbuf(nm("sink_repeated"), DType::fp32, {1, bs_nc_, h_, sa_});
      b_.tensor_copy(rep(), broadcast(broadcast(sink_sb(), 1, bs_nc_), 3, sa_));
      auto tp_rep = b_.sbuf(nm("sink_tp_repeated"), DType::fp32, {bqs_, 1});
      auto tp = psum("sink_tp_psum", DType::fp32, {bqs_, 1}, Expr(0));
      b_.transpose(tp(), rep());
      b_.tensor_copy(tp_rep(), tp());
      b_.tensor_copy(result, tp_rep());
    });
  }

  // _compute_exp_qk (lines 2318-2360), the NeuronCore-v3 form (one instruction each)
  void exp_qk() {
    b_.tensor_tensor(qk_(), qk_(), broadcast(qk_max_(), 1, n_),
                     max_negated_ ? AluOp::add : AluOp::subtract);
    b_.activation(qk_io_(), qk_(), {.func = ActFunc::exp});
  }

  // _cascaded_sum_reduction (lines 2395-2560)
  void cascaded_sum_reduction() {
    exp_sum_ = b_.sbuf(nm("exp_sum"), DType::fp32, {bqs_, red_len_});
    if (!c_.fa) exp_sum_recip_ = b_.sbuf(nm("exp_sum_recip"), DType::fp32, {128, bs_nc_, hs_});
    // _tile_sum_reduction (lines 2563-2601): ones-vector matmuls of the rounded exp
    b_.sequential_range("sum_scope", 1, [&](Expr) {
      auto sum_psum = psum("sum_reduce_psum", DType::fp32, {bqs_, n_}, Expr(0));
      b_.affine_range("i_exp_reduce", n_, [&](Expr t) {
        b_.matmul(sum_psum({all(), one(t)}), qk_io_({all(), one(t), all(), all()}), one_vec_());
      });
      b_.tensor_reduce(col(exp_sum_, 0), sum_psum(), AluOp::add);
    });
    if (c_.sprior_programs() > 1 && sync_per_tile_) {
      b_.dma_copy(on_core(col(exp_sum_, 1), Expr(1) - pid_), col(exp_sum_, 0));  // line 2438
    }
    if (prep_sink_ && sync_per_tile_ && f_ == 0) {
      // exp(sink - max) into the sink column (lines 2447-2472)
      const Access max_for_sink = c_.fa ? fa_running_max_() : col(qk_max_buf_, 0);
      b_.tensor_scalar(col(qk_max_buf_, sink_idx_), col(qk_max_buf_, sink_idx_), AluOp::add,
                       max_for_sink);
      b_.activation(col(exp_sum_, sink_idx_), col(qk_max_buf_, sink_idx_), {.func = ActFunc::exp});
    }
    if (red_len_ > 1 && sync_per_tile_) {
      b_.tensor_reduce(col(exp_sum_, 0), exp_sum_(), AluOp::add);
    }
    if (c_.fa) {
      fa_update_running_sum();
      return;
    }
    b_.reciprocal(col(exp_sum_, 0), col(exp_sum_, 0));
    column_broadcast(exp_sum_recip_(), col(exp_sum_, 0), Expr(128));
  }

  // _compute_pv_matmul_and_store (lines 2650-2981), flat cache
  void pv_matmul_and_store() {
    exp_v_ = b_.sbuf(nm("exp_v"), DType::fp32, {d_, bs_nc_, hs_});
    b_.sequential_range("i_b_pv", bs_nc_, [&](Expr ib) {
      auto v_sb = b_.sbuf(nm("v_sb"), c_.kv_dtype, {128, n_, d_});
      load_v(v_sb, ib);
      auto ev = psum("exp_v_psum", DType::fp32, {d_, hs_}, Expr(0));
      auto step = [&](Expr t, bool acc) {
        b_.matmul(ev(), v_sb({all(), one(t), all()}), qk_io_({all(), one(t), one(ib), all()}), acc);
      };
      // the PSUM accumulation group over t (an nl.ndarray: the first matmul overwrites)
      step(Expr(0), false);
      b_.affine_range("i_t", 1, n_, 1, [&](Expr t) { step(t, true); });
      const Access dst = exp_v_({all(), one(ib), all()});
      if (c_.fa) {
        b_.tensor_copy(dst, ev());
      } else {
        b_.tensor_tensor(dst, ev(), exp_sum_recip_({ds(0, d_), one(ib), all()}), AluOp::multiply);
      }
    });
    if (c_.fa) {
      fa_accumulate_output();
    } else {
      gather_and_store(exp_v_);
    }
  }

  // _gather_and_store_output (lines 2984-3058)
  void gather_and_store(const TensorRef& res) {
    b_.sequential_range("store_scope", 1, [&](Expr) {
      if (c_.sprior_programs() > 1) {
        auto recv = b_.sbuf(nm("res_recv"), DType::fp32, {d_, bs_nc_, hs_});
        b_.dma_copy(on_core(recv(), Expr(1) - pid_), res());
        // only NC0 adds, unless out_in_sb: then both cores hold the result (lines 3012-3014)
        guarded("nc0_add", c_.out_in_sb ? Expr(1) : first_core_trips(),
                [&] { b_.tensor_tensor(res(), res(), recv(), AluOp::add); });
      }
      if (c_.out_in_sb) {
        store_to_sbuf(res);
        return;
      }
      guarded("nc0_store", first_core_trips(), [&] {
        Access dst = out_({ds(gbo_, bs_nc_), all(), all(), all()});
        dst.perm = {2, 0, 1, 3};  // [d, bs, H, s_a]
        b_.dma_copy(dst, res());
      });
    });
  }

  // out_in_sb (lines 3017-3033): the result, rounded to io, into this core's batch columns of the
  // SBUF output; with the batch split, one sendrecv swaps the halves so that both cores hold the
  // full output. The source's sendrecv names, on each core, the half it receives (the peer's
  // batches, dst_bs_offset); here the sender writes into the peer's buffer, so the destination
  // is the sender's own batch columns there.
  void store_to_sbuf(const TensorRef& res) {
    const Access mine = out_sb_({all(), ds(gbo_, bs_nc_), all()});
    b_.tensor_copy(mine, res());
    if (c_.batch_programs() > 1) b_.dma_copy(on_core(mine, Expr(1) - pid_), mine);
  }

  // ---------------------------------------------------------------------------------------
  // Flash attention over s_prior tiles (lines 1048-1370)
  void allocate_fa_buffers() {
    fa_running_max_ = b_.sbuf("fa_running_max", DType::fp32, {bqs_, 1});
    fa_running_sum_ = b_.sbuf("fa_running_sum", DType::fp32, {bqs_, 1});
    fa_corr_ = b_.sbuf("fa_correction_factor", DType::fp32, {bqs_, 1});
    fa_running_out_ = b_.sbuf("fa_running_output", DType::fp32, {d_, bs_nc_, hs_});
  }
  bool sync_at_end() const { return c_.sprior_programs() > 1 && c_.fa && last_; }

  // _fa_update_correction_factor (lines 1074-1085): exp(prev - curr)
  void fa_correction(const Access& curr, const Access& prev) {
    b_.activation(fa_corr_(), max_negated_ ? prev : curr,
                  {.func = ActFunc::exp, .scale = Imm{-1.0f}, .bias = max_negated_ ? curr : prev});
  }

  // _fa_update_running_max (lines 1133-1177)
  void fa_update_running_max() {
    const Access tile_max = col(qk_max_buf_, 0);
    if (f_ == 0) {
      b_.tensor_copy(fa_running_max_(), tile_max);
      b_.memset(fa_corr_(), 1.0f);
      return;
    }
    b_.sequential_range("fa_max_scope", 1, [&](Expr) {
      auto prev = b_.sbuf(nm("prev_running_max"), DType::fp32, {bqs_, 1});
      b_.tensor_copy(prev(), fa_running_max_());
      b_.tensor_tensor(fa_running_max_(), fa_running_max_(), tile_max,
                       max_negated_ ? AluOp::min : AluOp::max);
      if (sync_at_end()) {
        // _fa_gather_and_compute_global_running_max (lines 1088-1130)
        if (prep_sink_) {
          b_.tensor_tensor(fa_running_max_(), fa_running_max_(), col(qk_max_buf_, sink_idx_),
                           AluOp::max);
        }
        auto remote = b_.sbuf(nm("remote_running_max"), DType::fp32, {bqs_, 1});
        b_.dma_copy(on_core(remote(), Expr(1) - pid_), fa_running_max_());
        b_.tensor_tensor(fa_running_max_(), fa_running_max_(), remote(), AluOp::max);
      }
      fa_correction(fa_running_max_(), prev());
    });
  }

  // _fa_update_running_sum (lines 1233-1271)
  void fa_update_running_sum() {
    const Access tile_sum = col(exp_sum_, 0);
    if (f_ == 0) {
      b_.tensor_copy(fa_running_sum_(), tile_sum);
      return;
    }
    b_.tensor_tensor(fa_running_sum_(), fa_running_sum_(), fa_corr_(), AluOp::multiply);
    b_.tensor_tensor(fa_running_sum_(), fa_running_sum_(), tile_sum, AluOp::add);
    if (!sync_at_end()) return;
    // _fa_gather_and_compute_global_running_sum (lines 1180-1230)
    b_.sequential_range("fa_sum_scope", 1, [&](Expr) {
      auto remote = b_.sbuf(nm("remote_running_sum"), DType::fp32, {bqs_, 1});
      b_.dma_copy(on_core(remote(), Expr(1) - pid_), fa_running_sum_());
      b_.tensor_tensor(fa_running_sum_(), fa_running_sum_(), remote(), AluOp::add);
    });
    if (prep_sink_) {
      const Access sink_col = col(qk_max_buf_, sink_idx_);
      b_.activation(sink_col, fa_running_max_(),
                    {.func = ActFunc::exp, .scale = Imm{-1.0f}, .bias = sink_col});
      b_.tensor_tensor(fa_running_sum_(), fa_running_sum_(), sink_col, AluOp::add);
    }
  }

  // _fa_accumulate_output (lines 1274-1321)
  void fa_accumulate_output() {
    if (f_ == 0) {
      b_.tensor_copy(fa_running_out_(), exp_v_());
      return;
    }
    b_.sequential_range("fa_out_scope", 1, [&](Expr) {
      auto corr_bc = b_.sbuf(nm("fa_correction_factor_bc"), DType::fp32, {d_, bs_nc_, hs_});
      column_broadcast(corr_bc(), fa_corr_(), d_);
      b_.tensor_tensor(fa_running_out_(), fa_running_out_(), corr_bc(), AluOp::multiply);
      b_.tensor_tensor(fa_running_out_(), fa_running_out_(), exp_v_(), AluOp::add);
    });
  }

  // _fa_finalize_and_store (lines 1324-1369)
  void fa_finalize_and_store() {
    b_.sequential_range("fa_finalize_scope", 1, [&](Expr) {
      b_.reciprocal(fa_running_sum_(), fa_running_sum_());
      auto recip_bc = b_.sbuf(nm("fa_sum_recip_bc"), DType::fp32, {d_, bs_nc_, hs_});
      column_broadcast(recip_bc(), fa_running_sum_(), d_);
      b_.tensor_tensor(fa_running_out_(), fa_running_out_(), recip_bc(), AluOp::multiply);
    });
    gather_and_store(fa_running_out_);
  }

  TkgConfig c_;
  Builder b_;
  std::map<std::string, int> psum_count_, sbuf_count_;
  Expr bs_, h_, sa_, s_, d_, pid_, s_nc_, bs_nc_, sprior_id_, bs_id_, gbo_, hs_, bqs_, tile_s_, n_;
  TensorRef q_, k_active_, v_active_, k_prior_, v_prior_, mask_, pos_, start_, table_, sink_, out_;
  TensorRef out_sb_, q_sb_, k_active_sb_, one_vec_, pos_sb_, start_sb_, table_sb_;
  TensorRef qk_, qk_io_, mask_sb_, qk_max_, qk_max_buf_, exp_sum_, exp_sum_recip_, exp_v_;
  TensorRef fa_running_max_, fa_running_sum_, fa_corr_, fa_running_out_;
  int f_ = 0;
  bool last_ = true, sync_per_tile_ = true, prep_sink_ = false, max_negated_ = false;
  int64_t red_len_ = 1, sink_idx_ = 0;
  Expr tile0_;
};

}  // namespace

Program build_attention_tkg(const Options& o) {
  return TkgBuilder(attention_tkg_config(o)).build();
}

}  // namespace ncv::kernels
