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

Program build_gemm(const GemmConfig& c) {
  Builder b("gemm_autocomp_c" + std::to_string(c.candidate));
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

}  // namespace

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
    w.build = [c](const BuildOptions&) { return build_gemm(c); };
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace ncv::workloads
