// The gemm family: the six candidates of Autocomp's GEMM optimisation trace (ucb-bar/autocomp
// examples/trn-tutorial/1_gemm_trace.py @dd26a5656bcd3158b80c36bc97500d76a495c765), each written
// here from the candidate's structure: result[M, N] = lhsT[K, M]^T @ rhs[K, N] in bf16 with fp32
// PSUM accumulation, tiles of TILE_M = 128 (stationary free size), TILE_K = 128 (partitions),
// TILE_N = 512 (moving free size), as the source's nl.tile_size constants give on trn1.
//
// Calls the candidates leave to the compiler are modelled as follows:
//   nl.zeros(psum) + `+=` nc_matmul over k   -> an accumulation group: the k = 0 matmul overwrites,
//                                               the others accumulate (no memset)
//   nl.copy / nisa.tensor_copy(psum) without engine -> Vector tensor_copy (cast to bf16)
//   nl.load / nl.store                      -> dma_copy; the source names no queue: lhsT loads,
//                                               rhs loads and stores get one queue each
// Buffers are single-buffered (bufs 1): the source gives no `bufs`.
#include <string>

#include "model/ir/builder.h"
#include "workloads/families.h"

namespace ncv::workloads {
namespace {

constexpr int64_t kTileM = 128;  // nl.tile_size.gemm_stationary_fmax
constexpr int64_t kTileK = 128;  // nl.tile_size.pmax
constexpr int64_t kTileN = 512;  // nl.tile_size.gemm_moving_fmax
// Largest M, N, K of the declared domain; the calibration shape (M = 4096, N = K = 8192) is inside.
constexpr int64_t kMaxDim = 16384;
constexpr int kQueueLhs = 0, kQueueRhs = 1, kQueueOut = 2;

const char* const kSource =
    "ucb-bar/autocomp examples/trn-tutorial/1_gemm_trace.py "
    "@dd26a5656bcd3158b80c36bc97500d76a495c765";

struct GemmConfig {
  int candidate;
  int group_m = 1;             // M tiles per block (GROUP_M)
  int group_n = 1;             // N tiles per block (GROUP_N)
  int lhs_tiles_per_load = 1;  // M tiles one lhsT load brings (candidates 4, 5 fuse loads)
  bool rhs_fused = false;      // one [128, GROUP_N * 512] rhs load (candidate 5)
  bool rhs_first = false;      // per k: rhs tiles first, then lhsT (candidates 2-5)
  bool evict_pinned = false;   // tensor_copy(..., engine=nisa.vector_engine) (candidate 5)
  const char* summary;
};

Slice tile(Expr i, int64_t size) {
  return ds(i * size, Expr(size));
}

Program build_gemm(const GemmConfig& c, const std::string& name) {
  Builder b(name);
  const int64_t block_m = kTileM * c.group_m, block_n = kTileN * c.group_n;
  Expr K = b.param("K", kTileK, kMaxDim, kTileK);
  Expr M = b.param("M", block_m, kMaxDim, block_m);
  Expr N = b.param("N", block_n, kMaxDim, block_n);
  auto lhsT = b.input("lhsT", DType::bf16, {K, M});
  auto rhs = b.input("rhs", DType::bf16, {K, N});
  auto result = b.output("result", DType::bf16, {M, N});

  b.affine_range("m", Expr::floordiv(M, block_m), [&](Expr m) {
    b.affine_range("n", Expr::floordiv(N, block_n), [&](Expr n) {
      // res_psum / psumMN = nl.zeros((128, 512), fp32, buffer=nl.psum): one per (m, n) tile
      std::vector<TensorRef> acc;
      for (int mi = 0; mi < c.group_m; ++mi) {
        for (int ni = 0; ni < c.group_n; ++ni) {
          acc.push_back(b.psum("psum" + std::to_string(mi) + std::to_string(ni), DType::fp32,
                               {Expr(kTileM), Expr(kTileN)}));
        }
      }
      auto m_tile = [&](int mi) { return m * c.group_m + mi; };
      auto n_tile = [&](int ni) { return n * c.group_n + ni; };
      // One k step: the loads and matmuls in the candidate's order.
      auto k_step = [&](Expr k, bool accumulate, const std::string& sfx) {
        auto mm = [&](Access lhs, int mi, Access r, int ni) {
          b.matmul(acc[mi * c.group_n + ni](), lhs, r, accumulate);
        };
        auto load_lhs = [&](int first_mi) {
          const int64_t t = c.lhs_tiles_per_load;
          auto l = b.sbuf("lhs" + std::to_string(first_mi) + sfx, DType::bf16,
                          {Expr(kTileK), Expr(kTileM * t)});
          b.dma_copy(l(), lhsT({tile(k, kTileK), ds(m_tile(first_mi) * kTileM, Expr(kTileM * t))}),
                     kQueueLhs);
          return l;
        };
        auto lhs_view = [&](const TensorRef& l, int j) {
          return l({all(), tile(Expr(j), kTileM)});
        };
        if (!c.rhs_first) {
          // candidates 0, 1: lhsT tile, then per N tile: rhs tile, matmul
          auto l = load_lhs(0);
          for (int ni = 0; ni < c.group_n; ++ni) {
            auto r =
                b.sbuf("rhs" + std::to_string(ni) + sfx, DType::bf16, {Expr(kTileK), Expr(kTileN)});
            b.dma_copy(r(), rhs({tile(k, kTileK), tile(n_tile(ni), kTileN)}), kQueueRhs);
            mm(lhs_view(l, 0), 0, r(), ni);
          }
          return;
        }
        // candidates 2-5: the rhs tiles (one fused load or one per tile), then per lhsT load
        // its M tiles times every N tile
        std::vector<Access> r;
        if (c.rhs_fused) {
          auto rr = b.sbuf("rhs01" + sfx, DType::bf16, {Expr(kTileK), Expr(block_n)});
          b.dma_copy(rr(), rhs({tile(k, kTileK), tile(n, block_n)}), kQueueRhs);
          for (int ni = 0; ni < c.group_n; ++ni) r.push_back(rr({all(), tile(Expr(ni), kTileN)}));
        } else {
          for (int ni = 0; ni < c.group_n; ++ni) {
            auto rr =
                b.sbuf("rhs" + std::to_string(ni) + sfx, DType::bf16, {Expr(kTileK), Expr(kTileN)});
            b.dma_copy(rr(), rhs({tile(k, kTileK), tile(n_tile(ni), kTileN)}), kQueueRhs);
            r.push_back(rr());
          }
        }
        for (int mi = 0; mi < c.group_m; mi += c.lhs_tiles_per_load) {
          auto l = load_lhs(mi);
          for (int j = 0; j < c.lhs_tiles_per_load; ++j) {
            for (int ni = 0; ni < c.group_n; ++ni) mm(lhs_view(l, j), mi + j, r[ni], ni);
          }
        }
      };
      k_step(Expr(0), false, "_k0");
      b.affine_range("k", 1, Expr::floordiv(K, kTileK), 1, [&](Expr k) { k_step(k, true, ""); });
      // outMN = tensor_copy(psumMN, dtype=bf16); nl.store(result[...], outMN)
      for (int mi = 0; mi < c.group_m; ++mi) {
        for (int ni = 0; ni < c.group_n; ++ni) {
          auto out = b.sbuf("out" + std::to_string(mi) + std::to_string(ni), DType::bf16,
                            {Expr(kTileM), Expr(kTileN)});
          // engine=nisa.vector_engine in candidate 5; unpinned before it (the compiler chooses)
          b.tensor_copy(out(), acc[mi * c.group_n + ni](),
                        c.evict_pinned ? EngineChoice(Engine::Vector) : std::nullopt);
          b.dma_copy(result({tile(m_tile(mi), kTileM), tile(n_tile(ni), kTileN)}), out(),
                     kQueueOut);
        }
      }
    });
  });
  return b.finish();
}

// The matrix-multiplication tutorial (aws-neuron/aws-neuron-sdk
// general/nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py @0521004c). Its
// first version, nki_matmul_tiled_, is Autocomp's candidate 0 (build_gemm above); the other three
// keep whole-K panels of tiles in SBUF and are built below.

// nki_matmul_hoist_load_ (tiles_m = tiles_n = 1) and nki_matmul_block_free_dimension_ (2, 2):
// per M block, its lhsT panels [K, tiles_m * 128] as K/128 [128, 128] loads; per N block, its rhs
// panels as K/128 [128, 512] loads; then per (bm, bn) tile a K-long accumulation group, a copy to
// bf16 and a store.
struct PanelConfig {
  int tiles_m, tiles_n;
  // Free size per k of the source's lhsT_tiles allocation: nki_matmul_hoist_load_ declares it
  // (K/128, par_dim(128), TILE_N) and fills only [:, :, 0:TILE_M]; the unused 384 columns still
  // take SBUF, so the buffer is declared at the source's size.
  int64_t lhs_alloc;
};

Program build_gemm_panels(const PanelConfig& c, const std::string& name) {
  Builder b(name);
  const int64_t block_m = kTileM * c.tiles_m, block_n = kTileN * c.tiles_n;
  Expr K = b.param("K", kTileK, kMaxDim, kTileK);
  Expr M = b.param("M", block_m, kMaxDim, block_m);
  Expr N = b.param("N", block_n, kMaxDim, block_n);
  auto lhsT = b.input("lhsT", DType::bf16, {K, M});
  auto rhs = b.input("rhs", DType::bf16, {K, N});
  auto result = b.output("result", DType::bf16, {M, N});
  const Expr k_tiles = Expr::floordiv(K, kTileK);
  b.affine_range("m", Expr::floordiv(M, block_m), [&](Expr m) {
    // lhsT_tiles[bm, k] = [128, 128] at column bm * lhs_alloc * K/128 + k * lhs_alloc
    auto lhs =
        b.sbuf("lhsT_tiles", DType::bf16, {Expr(kTileK), k_tiles * (c.tiles_m * c.lhs_alloc)});
    auto lhs_tile = [&](Expr bm, Expr k) {
      return lhs({all(), ds((bm * k_tiles + k) * c.lhs_alloc, Expr(kTileM))});
    };
    b.affine_range("bm", c.tiles_m, [&](Expr bm) {
      b.affine_range("k", k_tiles, [&](Expr k) {
        b.dma_copy(lhs_tile(bm, k), lhsT({tile(k, kTileK), tile(m * c.tiles_m + bm, kTileM)}),
                   kQueueLhs);
      });
    });
    b.affine_range("n", Expr::floordiv(N, block_n), [&](Expr n) {
      auto rhs_sb = b.sbuf("rhs_tiles", DType::bf16, {Expr(kTileK), k_tiles * block_n});
      auto rhs_tile = [&](Expr bn, Expr k) {
        return rhs_sb({all(), tile(bn * k_tiles + k, kTileN)});
      };
      b.affine_range("bn", c.tiles_n, [&](Expr bn) {
        b.affine_range("k", k_tiles, [&](Expr k) {
          b.dma_copy(rhs_tile(bn, k), rhs({tile(k, kTileK), tile(n * c.tiles_n + bn, kTileN)}),
                     kQueueRhs);
        });
      });
      b.affine_range("bm", c.tiles_m, [&](Expr bm) {
        b.affine_range("bn", c.tiles_n, [&](Expr bn) {
          // res_psum = nl.zeros(psum) + `+=` over an affine k: the k = 0 matmul overwrites
          auto acc = b.psum("res_psum", DType::fp32, {Expr(kTileM), Expr(kTileN)});
          b.matmul(acc(), lhs_tile(bm, Expr(0)), rhs_tile(bn, Expr(0)), false);
          b.affine_range("k", 1, k_tiles, 1,
                         [&](Expr k) { b.matmul(acc(), lhs_tile(bm, k), rhs_tile(bn, k), true); });
          auto res = b.sbuf("res_sb", DType::bf16, {Expr(kTileM), Expr(kTileN)});
          b.tensor_copy(res(), acc());  // nl.copy: unpinned in source
          b.dma_copy(result({tile(m * c.tiles_m + bm, kTileM), tile(n * c.tiles_n + bn, kTileN)}),
                     res(), kQueueOut);
        });
      });
    });
  });
  return b.finish();
}

// nki_matmul_fully_optimized_ with its meta-parameters TILES_IN_BLOCK_M/N/K (16, 2, 8 in the
// source and its benchmark). Per N block: an SBUF bf16 result block for all of M (nl.zeros);
// per K block (sequential_range): tiles_k [128, BLOCK_N] rhs loads, then per M block tiles_k
// [128, BLOCK_M] lhsT loads and per (bn, bm) tile a tiles_k-long accumulation group added into
// the SBUF result; at the end, per M tile, the tiles_n result tiles copied into one
// [128, BLOCK_N] tile and stored with one DMA.
Program build_gemm_k_blocked(int tiles_m, int tiles_n, int tiles_k, const std::string& name) {
  Builder b(name);
  const int64_t block_m = kTileM * tiles_m, block_n = kTileN * tiles_n, block_k = kTileK * tiles_k;
  Expr K = b.param("K", block_k, kMaxDim, block_k);
  Expr M = b.param("M", block_m, kMaxDim, block_m);
  Expr N = b.param("N", block_n, kMaxDim, block_n);
  auto lhsT = b.input("lhsT", DType::bf16, {K, M});
  auto rhs = b.input("rhs", DType::bf16, {K, N});
  auto result = b.output("result", DType::bf16, {M, N});
  const Expr num_block_m = Expr::floordiv(M, block_m);
  b.affine_range("n", Expr::floordiv(N, block_n), [&](Expr n) {
    // result_tiles[NUM_BLOCK_M, tiles_m, tiles_n, 128, 512] bf16: M tile t's row of tiles_n
    // result tiles is [128, t * BLOCK_N : (t + 1) * BLOCK_N]
    auto res =
        b.sbuf("result_tiles", DType::bf16, {Expr(kTileM), num_block_m * (tiles_m * block_n)});
    b.memset(res(), 0.0f);  // nl.zeros: unpinned in source
    b.sequential_range("k", Expr::floordiv(K, block_k), [&](Expr k) {
      auto rhs_sb = b.sbuf("rhs_tiles", DType::bf16, {Expr(kTileK), Expr(tiles_k * block_n)});
      b.affine_range("bk_r", tiles_k, [&](Expr bk) {
        b.dma_copy(rhs_sb({all(), tile(bk, block_n)}),
                   rhs({tile(k * tiles_k + bk, kTileK), tile(n, block_n)}), kQueueRhs);
      });
      b.affine_range("m", num_block_m, [&](Expr m) {
        auto lhs = b.sbuf("lhsT_tiles", DType::bf16, {Expr(kTileK), Expr(tiles_k * block_m)});
        b.affine_range("bk_l", tiles_k, [&](Expr bk) {
          b.dma_copy(lhs({all(), tile(bk, block_m)}),
                     lhsT({tile(k * tiles_k + bk, kTileK), tile(m, block_m)}), kQueueLhs);
        });
        b.affine_range("bn", tiles_n, [&](Expr bn) {
          b.affine_range("bm", tiles_m, [&](Expr bm) {
            auto lhs_tile = [&](Expr bk) {
              return lhs({all(), ds(bk * block_m + bm * kTileM, Expr(kTileM))});
            };
            auto rhs_tile = [&](Expr bk) {
              return rhs_sb({all(), ds(bk * block_n + bn * kTileN, Expr(kTileN))});
            };
            auto acc = b.psum("res_tile", DType::fp32, {Expr(kTileM), Expr(kTileN)});
            b.matmul(acc(), lhs_tile(Expr(0)), rhs_tile(Expr(0)), false);
            b.affine_range("bk", 1, tiles_k, 1,
                           [&](Expr bk) { b.matmul(acc(), lhs_tile(bk), rhs_tile(bk), true); });
            // result_tiles[m, bm, bn] += res_tile: unpinned in source
            Access dst = res({all(), ds((m * tiles_m + bm) * block_n + bn * kTileN, Expr(kTileN))});
            b.tensor_tensor(dst, dst, acc(), AluOp::add);
          });
        });
      });
    });
    b.affine_range("m", num_block_m, [&](Expr m) {
      b.affine_range("bm", tiles_m, [&](Expr bm) {
        auto packed = b.sbuf("result_packed", DType::bf16, {Expr(kTileM), Expr(block_n)});
        const Expr t = m * tiles_m + bm;
        b.affine_range("bn", tiles_n, [&](Expr bn) {
          // nl.copy: unpinned in source
          b.tensor_copy(packed({all(), tile(bn, kTileN)}),
                        res({all(), ds(t * block_n + bn * kTileN, Expr(kTileN))}));
        });
        b.dma_copy(result({tile(t, kTileM), tile(n, block_n)}), packed(), kQueueOut);
      });
    });
  });
  return b.finish();
}

const char* const kTutorialSource =
    "aws-neuron/aws-neuron-sdk "
    "general/nki/examples/matrix_multiplication/matrix_multiplication_nki_kernels.py "
    "@0521004ce0ba18aa5313a835aacaabb31543af37";

}  // namespace

Program build_matmul_tutorial_fully_optimized(int tiles_m, int tiles_n, int tiles_k) {
  return build_gemm_k_blocked(tiles_m, tiles_n, tiles_k, "matmul_tutorial_fully_optimized");
}

std::vector<Workload> matmul_tutorial_workloads() {
  auto make = [](const char* name, const char* function, const char* summary) {
    Workload w;
    w.name = name;
    w.family = "gemm";
    w.source = std::string(kTutorialSource) + ", " + function;
    w.summary = summary;
    w.params = {"K", "M", "N"};
    w.notes = {
        "M, N (and K for the fully optimised version) must be multiples of the block, as the "
        "source asserts"};
    return w;
  };
  std::vector<Workload> out;
  {
    Workload w =
        make("matmul_tutorial_tiled", "nki_matmul_tiled_",
             "per (m, n) tile, K/128 pairs of [128, 128] lhsT and [128, 512] rhs loads and "
             "matmuls (the same program as gemm_autocomp_c0)");
    w.notes.push_back("nl.matmul(transpose_x=True) is the nc_matmul with lhsT stationary");
    const GemmConfig c{0, 1, 1, 1, false, false, false, ""};
    w.build = [c](const BuildOptions&) { return build_gemm(c, "matmul_tutorial_tiled"); };
    out.push_back(std::move(w));
  }
  {
    Workload w = make("matmul_tutorial_hoist_load", "nki_matmul_hoist_load_",
                      "lhsT panel [K, 128] loaded once per M tile, rhs panel [K, 512] once per "
                      "(m, n) tile");
    w.notes.push_back(
        "lhsT_tiles is declared at the source's (K/128, 128, TILE_N) size although only 128 of "
        "each 512 columns are written");
    w.build = [](const BuildOptions&) {
      return build_gemm_panels({1, 1, kTileN}, "matmul_tutorial_hoist_load");
    };
    out.push_back(std::move(w));
  }
  {
    Workload w = make("matmul_tutorial_block_free", "nki_matmul_block_free_dimension_",
                      "2 x 2 blocks of the free dimensions: lhsT panels [K, 256] per M block, rhs "
                      "panels [K, 1024] per (M, N) block");
    w.build = [](const BuildOptions&) {
      return build_gemm_panels({2, 2, kTileM}, "matmul_tutorial_block_free");
    };
    out.push_back(std::move(w));
  }
  {
    Workload w = make("matmul_tutorial_fully_optimized", "nki_matmul_fully_optimized_",
                      "16 x 2 x 8 tile blocks, K blocks sequential, SBUF bf16 result block per N "
                      "block, [128, 1024] and [128, 2048] loads, one [128, 1024] store per M tile");
    w.notes.push_back(
        "the partial sums of the K blocks are added in bf16 (result_tiles has lhsT's dtype), "
        "as in the source");
    w.build = [](const BuildOptions&) { return build_matmul_tutorial_fully_optimized(16, 2, 8); };
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<Workload> gemm_workloads() {
  const GemmConfig configs[] = {
      {0, 1, 1, 1, false, false, false,
       "the tiled tutorial matmul: per (m, n) tile, K/128 pairs of loads and matmuls"},
      {1, 1, 2, 1, false, false, false,
       "two N tiles per block: each lhsT tile is loaded once for two rhs tiles"},
      {2, 2, 2, 1, false, true, false,
       "2 x 2 block: both rhs tiles first, each reused by two lhsT tiles"},
      {3, 4, 2, 1, false, true, false, "4 x 2 block: eight PSUM accumulators"},
      {4, 4, 2, 2, false, true, false, "4 x 2 block, lhsT loaded two M tiles at a time"},
      {5, 4, 2, 4, true, true, true,
       "4 x 2 block, one [128, 1024] rhs load and one [128, 512] lhsT load per k, Vector-pinned "
       "evictions"},
  };
  std::vector<Workload> out;
  for (const GemmConfig& c : configs) {
    Workload w;
    w.name = "gemm_autocomp_c" + std::to_string(c.candidate);
    w.family = "gemm";
    w.source = std::string(kSource) + ", candidate " + std::to_string(c.candidate);
    w.summary = c.summary;
    w.params = {"K", "M", "N"};
    w.notes = {
        "M, N must be multiples of the block (the candidates' M/N tail code is not "
        "modelled; the calibration shape has no tail)"};
    if (c.candidate == 0) {
      w.notes.push_back("nl.matmul(transpose_x=True) is the nc_matmul with lhsT stationary");
    }
    if (c.candidate == 5) {
      w.notes.push_back(
          "the traced code has a corrupted line ('TI nl.tile_size.gemm_stationary_fmax'), so it "
          "could not have compiled as stored; modelled with TILE_M = 128 as its plan and the "
          "previous candidates state");
    }
    w.build = [c, name = w.name](const BuildOptions&) { return build_gemm(c, name); };
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace ncv::workloads
