// The mamba family: the eight candidates of Autocomp's Mamba (selective state space) optimisation
// trace (ucb-bar/autocomp examples/trn-tutorial/3_mamba_trace.py
// @dd26a5656bcd3158b80c36bc97500d76a495c765), written here from each candidate's structure. All
// compute on fp32 inputs delta, u [batch, channels, seq], A [channels, state], B, C
// [batch, state, seq]:
//   out[b, c, t] = sum_s C[b, s, t] * h_s[t],
//   h_s[t] = exp(delta[b, c, t] * A[c, s]) * h_s[t - 1] + delta[b, c, t] * u[b, c, t] * B[b, s, t]
// with h_s[-1] = 0, channels on the 128 partitions and seq on the free axis.
//
// Calls the candidates leave to the compiler, and what the IR lacks, are modelled as follows:
//   nisa.tensor_tensor_scan               -> see BuildOptions::exact_scan (workload.h): a Vector
//                                            tensor_tensor at the scan's documented cost, or an
//                                            exact per-column tensor_scalar chain
//   nl.load(B[b, s, f]) + broadcast_to((128, F)) (and nl.multiply(x, B_buf) with a [1, F] tile)
//                                         -> one DMA that broadcasts the row over 128 partitions
//                                            into a [128, F] tile (the IR has no on-chip
//                                            partition-broadcast operand)
//   nisa.activation(exp, delta, scale=A_i) -> Scalar activation with a per-partition scale
//   nisa.tensor_tensor / nl.multiply / `+=` on a tile -> Vector tensor_tensor
//   nl.zeros(...)                         -> Vector memset
//   carry[:, s] = scan_res[:, F-1]         -> Vector tensor_copy of one column
//   nl.load / nl.store / nisa.dma_copy     -> dma_copy; the source names no queue: delta, u, A,
//                                            B, C and the stores get one queue each
// Buffers are single-buffered (bufs 1) except where the source double-buffers by hand
// (candidates 5-7: B_buf0/B_buf1, C_buf0/C_buf1).
#include <functional>
#include <string>

#include "model/ir/builder.h"
#include "workloads/families.h"

namespace ncv::workloads {
namespace {

constexpr int64_t kP = 128;      // nl.tile_size.pmax: channels per tile
constexpr int64_t kFTile = 512;  // nl.tile_size.psum_fmax (LANG-OLD: 512) in candidates 4-7
constexpr int kQDelta = 0, kQU = 1, kQA = 2, kQB = 3, kQC = 4, kQOut = 5;

const char* const kSource =
    "ucb-bar/autocomp examples/trn-tutorial/3_mamba_trace.py "
    "@dd26a5656bcd3158b80c36bc97500d76a495c765";
const char* const kTutorialSource =
    "aws-neuron/aws-neuron-sdk general/nki/examples/fused_mamba/mamba_nki_kernels.py "
    "@0521004ce0ba18aa5313a835aacaabb31543af37";

struct MambaConfig {
  int candidate;
  bool state_outer;    // batch -> state -> channel tile (candidates 0, 1); else channel -> state
  bool bc_hoisted;     // candidate 1: B_i, C_i loaded once per state, outside the channel loop
  bool a_block;        // candidates 3+: A[ch tile, 0:state] loaded once per channel tile
  bool chunked;        // candidates 4+: seq in chunks of 512, carry, PSUM accumulator
  bool double_buffer;  // candidates 5+: sequential state loop, B/C prefetched into two buffers
  bool chunk_loads;    // candidate 7: delta, u and deltaU per chunk
  const char* summary;
  // The fused Mamba tutorial (kTutorialSource) only. mamba_v2: deltaU is computed inside the state
  // loop (once per state), not once per channel tile as in candidate 2.
  bool delta_u_per_state = false;
  // mamba_v3: per channel tile and state, the sequence in 512-wide chunks (a static_range) with a
  // [128, 1] scan carry per state and one SBUF accumulator over the whole sequence.
  bool state_then_chunks = false;
};

class MambaBuilder {
 public:
  MambaBuilder(const MambaConfig& c, const BuildOptions& o, const std::string& name)
      : c_(c), o_(o), b_(name) {}

  Program build() {
    batch_ = b_.param("batch", 1, 8);
    channels_ = b_.param("channels", kP, 8192, kP);
    const int64_t seq_multiple = c_.chunked || c_.state_then_chunks ? kFTile : 1;
    seq_ = b_.param("seq_len", seq_multiple, 8192, seq_multiple);
    state_ = c_.double_buffer ? b_.param("state_size", 2, 64, 2) : b_.param("state_size", 1, 64);
    delta_ = b_.input("delta", DType::fp32, {batch_, channels_, seq_});
    u_ = b_.input("u", DType::fp32, {batch_, channels_, seq_});
    a_ = b_.input("A", DType::fp32, {channels_, state_});
    bm_ = b_.input("B", DType::fp32, {batch_, state_, seq_});
    cm_ = b_.input("C", DType::fp32, {batch_, state_, seq_});
    out_ = b_.output("out", DType::fp32, {batch_, channels_, seq_});
    const Expr n_ct = Expr::floordiv(channels_, kP);
    b_.affine_range("i_batch", batch_, [&](Expr bi) {
      if (c_.state_outer) {
        state_outer(bi, n_ct);
      } else {
        b_.affine_range("i_channel_tile", n_ct, [&](Expr ct) {
          if (c_.chunked) {
            chunked(bi, ct);
          } else if (c_.state_then_chunks) {
            state_then_chunks(bi, ct);
          } else {
            channel_outer(bi, ct);
          }
        });
      }
    });
    return b_.finish();
  }

 private:
  Access rows(const TensorRef& t, Expr bi, Expr ct, Expr f0, Expr f) const {  // [b, ch tile, f]
    return t({one(bi), ds(ct * kP, Expr(kP)), ds(f0, f)});
  }
  // nl.load(B[b, s:s+1, f0:f0+F]).broadcast_to((128, F)): one broadcasting DMA
  void load_bcast(Access dst, const TensorRef& t, Expr bi, Expr s, Expr f0, Expr f, int q) {
    b_.dma_copy(dst, broadcast(t({one(bi), one(s), ds(f0, f)}), 1, Expr(kP)), q);
  }
  TensorRef tile(const std::string& name, Expr f, Memory mem = Memory::SBUF) {
    return mem == Memory::PSUM ? b_.psum(name + sfx_, DType::fp32, {Expr(kP), f})
                               : b_.sbuf(name + sfx_, DType::fp32, {Expr(kP), f});
  }

  // The source's `for i_state in nl.affine_range(state_size)` accumulates `acc += scanC` across
  // states, which NKI accepts as a reduction in an affine loop; the IR has no such reduction, and
  // the interpreter rejects the carried dependency, so the loop is sequential here.
  void state_loop(const std::function<void(Expr)>& body) {
    b_.sequential_range("i_state", state_, body);
  }

  // scan_res = tensor_tensor_scan(deltaA, deltaBu, initial, multiply, add)
  void scan(Access dst, Access a, Access bu, Operand initial, Expr f) {
    if (!o_.exact_scan) {
      // The documented scan cost (Vector, max(MIN_II, 2N), ISA-OLD) with its operands; the value
      // is deltaA * deltaBu (see BuildOptions::exact_scan).
      b_.tensor_tensor(dst, a, bu, AluOp::multiply, Engine::Vector);
      return;
    }
    auto col = [](Access x, Expr t) {
      x.dims.back() = AccessDim{x.dims.back().start + t, Expr(1), 1};
      return x;
    };
    b_.tensor_scalar(col(dst, Expr(0)), col(a, Expr(0)), AluOp::multiply, initial, false,
                     AluOp::add, col(bu, Expr(0)));
    b_.sequential_range("t", 1, f, 1, [&](Expr t) {
      b_.tensor_scalar(col(dst, t), col(a, t), AluOp::multiply, col(dst, t - 1), false, AluOp::add,
                       col(bu, t));
    });
  }

  // One state's work on a [128, F] slice: deltaBu, scan, scanC, accumulate. delta_u, b_b, c_b
  // are [128, F] views; acc is the accumulator view.
  void state_body(Access delta_a, Access delta_u, Access b_b, Access c_b, Operand initial,
                  Access acc, Expr f, std::optional<Access> carry_col) {
    auto delta_bu = tile("deltaBu", f);
    // nisa.tensor_tensor(deltaU, B_b, multiply) (candidates 6, 7: nl.multiply, unpinned in source)
    b_.tensor_tensor(delta_bu(), delta_u, b_b, AluOp::multiply, Engine::Vector);
    auto scan_res = tile("scan_res", f);
    scan(scan_res(), delta_a, delta_bu(), initial, f);
    if (carry_col) {
      // carry[:, s] = scan_res[:, F-1]: unpinned in source
      b_.tensor_copy(*carry_col, scan_res({all(), ds(f - 1, Expr(1))}));
    }
    auto scan_c = tile("scanC", f);
    b_.tensor_tensor(scan_c(), scan_res(), c_b, AluOp::multiply, Engine::Vector);
    // acc += scanC: unpinned in source
    b_.tensor_tensor(acc, acc, scan_c(), AluOp::add);
  }

  // Candidates 0, 1: batch -> state -> channel tile, whole sequence per instruction.
  void state_outer(Expr bi, Expr n_ct) {
    // scanC_accum = nl.zeros((n_channel_tile, par_dim(128), seq_len)): unpinned in source
    auto accum = b_.sbuf("scanC_accum", DType::fp32, {Expr(kP), n_ct, seq_});
    b_.memset(accum(), 0.0f);
    state_loop([&](Expr s) {
      TensorRef b_i, c_i;
      if (c_.bc_hoisted) {
        b_i = tile("B_i", seq_);
        load_bcast(b_i(), bm_, bi, s, Expr(0), seq_, kQB);
        c_i = tile("C_i", seq_);
        load_bcast(c_i(), cm_, bi, s, Expr(0), seq_, kQC);
      }
      b_.affine_range("i_channel_tile", n_ct, [&](Expr ct) {
        auto delta_i = tile("delta_i", seq_);
        b_.dma_copy(delta_i(), rows(delta_, bi, ct, Expr(0), seq_), kQDelta);
        auto a_i = b_.sbuf("A_i", DType::fp32, {Expr(kP), Expr(1)});
        b_.dma_copy(a_i(), a_({ds(ct * kP, Expr(kP)), one(s)}), kQA);
        auto delta_a = tile("deltaA", seq_);
        b_.activation(delta_a(), delta_i(), {.func = ActFunc::exp, .scale = a_i()});
        auto u_i = tile("u_i", seq_);
        b_.dma_copy(u_i(), rows(u_, bi, ct, Expr(0), seq_), kQU);
        if (!c_.bc_hoisted) {
          b_i = tile("B_i", seq_);
          load_bcast(b_i(), bm_, bi, s, Expr(0), seq_, kQB);
        }
        auto delta_u = tile("deltaU", seq_);
        b_.tensor_tensor(delta_u(), delta_i(), u_i(), AluOp::multiply, Engine::Vector);
        if (!c_.bc_hoisted) {
          // candidate 0 loads C_i after the scan; the DMA queue order is what matters here
          c_i = tile("C_i", seq_);
          load_bcast(c_i(), cm_, bi, s, Expr(0), seq_, kQC);
        }
        state_body(delta_a(), delta_u(), b_i(), c_i(), Imm{0.0f}, accum({all(), one(ct), all()}),
                   seq_, std::nullopt);
      });
    });
    b_.affine_range("i_channel_tile", n_ct, [&](Expr ct) {
      b_.dma_copy(rows(out_, bi, ct, Expr(0), seq_), accum({all(), one(ct), all()}), kQOut);
    });
  }

  // Candidates 2, 3: channel tile -> state; delta, u and deltaU once per channel tile.
  // mamba_v2: the same, with deltaU recomputed per state (delta_u_per_state).
  void channel_outer(Expr bi, Expr ct) {
    auto delta_i = tile("delta_i", seq_);
    b_.dma_copy(delta_i(), rows(delta_, bi, ct, Expr(0), seq_), kQDelta);
    auto u_i = tile("u_i", seq_);
    b_.dma_copy(u_i(), rows(u_, bi, ct, Expr(0), seq_), kQU);
    TensorRef delta_u;
    if (!c_.delta_u_per_state) {
      delta_u = tile("deltaU", seq_);
      b_.tensor_tensor(delta_u(), delta_i(), u_i(), AluOp::multiply, Engine::Vector);
    }
    TensorRef a_block;
    if (c_.a_block) {
      a_block = b_.sbuf("A_block", DType::fp32, {Expr(kP), state_});
      b_.dma_copy(a_block(), a_({ds(ct * kP, Expr(kP)), all()}), kQA);
    }
    auto acc = tile("acc", seq_);
    b_.memset(acc(), 0.0f);  // nl.zeros: unpinned in source
    state_loop([&](Expr s) {
      Access a_col;
      if (c_.a_block) {
        a_col = a_block({all(), one(s)});
      } else {
        auto a_i = b_.sbuf("A_i", DType::fp32, {Expr(kP), Expr(1)});
        b_.dma_copy(a_i(), a_({ds(ct * kP, Expr(kP)), one(s)}), kQA);
        a_col = a_i();
      }
      auto delta_a = tile("deltaA", seq_);
      b_.activation(delta_a(), delta_i(), {.func = ActFunc::exp, .scale = a_col});
      auto b_i = tile("B_i", seq_);
      load_bcast(b_i(), bm_, bi, s, Expr(0), seq_, kQB);
      TensorRef du = delta_u;
      if (c_.delta_u_per_state) {
        du = tile("deltaU", seq_);
        b_.tensor_tensor(du(), delta_i(), u_i(), AluOp::multiply, Engine::Vector);
      }
      auto c_i = tile("C_i", seq_);
      load_bcast(c_i(), cm_, bi, s, Expr(0), seq_, kQC);
      state_body(delta_a(), du(), b_i(), c_i(), Imm{0.0f}, acc(), seq_, std::nullopt);
    });
    b_.dma_copy(rows(out_, bi, ct, Expr(0), seq_), acc(), kQOut);
  }

  // mamba_v3: channel tile -> state -> 512-wide chunk. delta, u and the SBUF accumulator cover
  // the whole sequence; per state A_i is loaded and a [128, 1] scan carry zeroed; per chunk exp,
  // B and C chunk loads, deltaU, deltaBu, the scan from the carry, the carry update, scanC and the
  // accumulation into the chunk's columns. The source's chunk loop is a static_range (unrolled by
  // the tracer); here it is a sequential loop, which carries the scan the same way. The chunk is
  // kFTile = 512, the source's seq_len_fsize ("decided through empirical profiling data").
  void state_then_chunks(Expr bi, Expr ct) {
    auto accum = tile("scanC_accum", seq_);
    b_.memset(accum(), 0.0f);  // nl.zeros: unpinned in source
    auto delta_i = tile("delta_i", seq_);
    b_.dma_copy(delta_i(), rows(delta_, bi, ct, Expr(0), seq_), kQDelta);
    auto u_i = tile("u_i", seq_);
    b_.dma_copy(u_i(), rows(u_, bi, ct, Expr(0), seq_), kQU);
    const Expr F(kFTile);
    state_loop([&](Expr s) {
      auto a_i = b_.sbuf("A_i", DType::fp32, {Expr(kP), Expr(1)});
      b_.dma_copy(a_i(), a_({ds(ct * kP, Expr(kP)), one(s)}), kQA);
      auto scan_init = b_.sbuf("scan_init", DType::fp32, {Expr(kP), Expr(1)});
      b_.memset(scan_init(), 0.0f);  // nl.zeros: unpinned in source
      b_.sequential_range("i_seq_len_tile", Expr::floordiv(seq_, kFTile), [&](Expr i_f) {
        const Expr f0 = i_f * kFTile;
        auto delta_a = tile("deltaA", F);
        b_.activation(delta_a(), delta_i({all(), ds(f0, F)}),
                      {.func = ActFunc::exp, .scale = a_i()});
        auto b_i = tile("B_i", F);
        load_bcast(b_i(), bm_, bi, s, f0, F, kQB);
        auto delta_u = tile("deltaU", F);
        b_.tensor_tensor(delta_u(), delta_i({all(), ds(f0, F)}), u_i({all(), ds(f0, F)}),
                         AluOp::multiply, Engine::Vector);
        // the source loads C_i after the scan; only the DMA queue order matters here
        auto c_i = tile("C_i", F);
        load_bcast(c_i(), cm_, bi, s, f0, F, kQC);
        state_body(delta_a(), delta_u(), b_i(), c_i(), scan_init(), accum({all(), ds(f0, F)}), F,
                   scan_init());
      });
    });
    b_.dma_copy(rows(out_, bi, ct, Expr(0), seq_), accum(), kQOut);
  }

  // Candidates 4-7: seq in chunks of 512 (sequential), state carry, PSUM accumulator per chunk.
  void chunked(Expr bi, Expr ct) {
    TensorRef delta_i, delta_u;
    if (!c_.chunk_loads) {
      delta_i = tile("delta_i", seq_);
      b_.dma_copy(delta_i(), rows(delta_, bi, ct, Expr(0), seq_), kQDelta);
      auto u_i = tile("u_i", seq_);
      b_.dma_copy(u_i(), rows(u_, bi, ct, Expr(0), seq_), kQU);
      delta_u = tile("deltaU", seq_);
      b_.tensor_tensor(delta_u(), delta_i(), u_i(), AluOp::multiply, Engine::Vector);
    }
    auto a_block = b_.sbuf("A_block", DType::fp32, {Expr(kP), state_});
    b_.dma_copy(a_block(), a_({ds(ct * kP, Expr(kP)), all()}), kQA);
    auto carry = b_.sbuf("carry", DType::fp32, {Expr(kP), state_});
    b_.memset(carry(), 0.0f);  // nl.zeros: unpinned in source
    const Expr F(kFTile);
    b_.sequential_range("i_f", Expr::floordiv(seq_, kFTile), [&](Expr i_f) {
      const Expr f0 = i_f * kFTile;
      Access d_chunk, du_chunk;
      if (c_.chunk_loads) {
        auto dc = tile("delta_chunk", F);
        b_.dma_copy(dc(), rows(delta_, bi, ct, f0, F), kQDelta);
        auto uc = tile("u_chunk", F);
        b_.dma_copy(uc(), rows(u_, bi, ct, f0, F), kQU);
        auto duc = tile("deltaU_chunk", F);
        b_.tensor_tensor(duc(), dc(), uc(), AluOp::multiply, Engine::Vector);
        d_chunk = dc();
        du_chunk = duc();
      } else {
        d_chunk = delta_i({all(), ds(f0, F)});
        du_chunk = delta_u({all(), ds(f0, F)});
      }
      auto acc_psum = tile("acc_psum", F, Memory::PSUM);
      b_.memset(acc_psum(), 0.0f);  // nl.zeros(psum): unpinned in source
      // deltaA = activation(exp, delta[:, f0:f1], scale=A_block[:, s])
      auto exp_a = [&](Expr s) {
        auto delta_a = tile("deltaA", F);
        b_.activation(delta_a(), d_chunk,
                      {.func = ActFunc::exp, .scale = a_block({all(), one(s)})});
        return delta_a;
      };
      auto body = [&](Expr s, Access b_b, Access c_b, TensorRef delta_a) {
        Access carry_col = carry({all(), one(s)});
        state_body(delta_a(), du_chunk, b_b, c_b, carry_col, acc_psum(), F, carry_col);
      };
      if (!c_.double_buffer) {
        state_loop([&](Expr s) {
          auto delta_a = exp_a(s);
          auto b_i = tile("B_i", F);
          load_bcast(b_i(), bm_, bi, s, f0, F, kQB);
          auto c_i = tile("C_i", F);
          load_bcast(c_i(), cm_, bi, s, f0, F, kQC);
          body(s, b_i(), c_i(), delta_a);
        });
      } else {
        // B_buf0/1, C_buf0/1; state 0 loaded before the loop, state s+1 prefetched into the
        // other buffer after state s's exp. The source's `if i_state % 2` is unrolled by two;
        // the last pair is peeled because it has no prefetch after its odd state.
        TensorRef bb[2] = {tile("B_buf0", F), tile("B_buf1", F)};
        TensorRef cb[2] = {tile("C_buf0", F), tile("C_buf1", F)};
        load_bcast(bb[0](), bm_, bi, Expr(0), f0, F, kQB);
        load_bcast(cb[0](), cm_, bi, Expr(0), f0, F, kQC);
        auto one_state = [&](Expr s, int parity, bool prefetch, const std::string& sfx) {
          sfx_ = sfx;  // the unrolled bodies share a scope: their tiles need distinct names
          auto delta_a = exp_a(s);
          if (prefetch) {
            load_bcast(bb[1 - parity](), bm_, bi, s + 1, f0, F, kQB);
            load_bcast(cb[1 - parity](), cm_, bi, s + 1, f0, F, kQC);
          }
          body(s, bb[parity](), cb[parity](), delta_a);
          sfx_.clear();
        };
        const Expr pairs = Expr::floordiv(state_, 2);
        b_.sequential_range("i_state_pair", pairs - 1, [&](Expr sp) {
          one_state(sp * 2, 0, true, "_even");
          one_state(sp * 2 + 1, 1, true, "_odd");
        });
        one_state(state_ - 2, 0, true, "_even_last");
        one_state(state_ - 1, 1, false, "_odd_last");
      }
      // acc_sbuf = tensor_copy(acc_psum, engine=nisa.vector_engine); nl.store(output[...])
      auto acc_sbuf = tile("acc_sbuf", F);
      b_.tensor_copy(acc_sbuf(), acc_psum(), Engine::Vector);
      b_.dma_copy(rows(out_, bi, ct, f0, F), acc_sbuf(), kQOut);
    });
  }

  MambaConfig c_;
  BuildOptions o_;
  Builder b_;
  std::string sfx_;  // appended to tile names while building an unrolled body
  Expr batch_, channels_, seq_, state_;
  TensorRef delta_, u_, a_, bm_, cm_, out_;
};

}  // namespace

std::vector<Workload> mamba_workloads() {
  const MambaConfig configs[] = {
      {0, true, false, false, false, false, false,
       "batch -> state -> channel tile; every operand reloaded per (state, channel tile); one "
       "scan over the whole sequence"},
      {1, true, true, false, false, false, false,
       "candidate 0 with B_i, C_i loaded once per state"},
      {2, false, false, false, false, false, false,
       "channel tile -> state: delta, u and deltaU once per channel tile, SBUF accumulator"},
      {3, false, false, true, false, false, false,
       "candidate 2 with A loaded as one [128, state] block per channel tile"},
      {4, false, false, true, true, false, false,
       "sequence in 512-wide chunks with a state carry and a PSUM accumulator"},
      {5, false, false, true, true, true, false,
       "candidate 4 with a sequential state loop and B/C prefetched into two buffers"},
      {6, false, false, true, true, true, false,
       "candidate 5 with nl.multiply on the [1, F] tiles instead of broadcast_to + tensor_tensor"},
      {7, false, false, true, true, true, true,
       "candidate 6 with delta, u and deltaU loaded and computed per chunk"},
  };
  std::vector<Workload> out;
  for (const MambaConfig& c : configs) {
    Workload w;
    w.name = "mamba_autocomp_c" + std::to_string(c.candidate);
    w.family = "mamba";
    w.source = std::string(kSource) + ", candidate " + std::to_string(c.candidate);
    w.summary = c.summary;
    w.params = {"batch", "channels", "seq_len", "state_size"};
    w.notes = {
        "nisa.tensor_tensor_scan is not an IR instruction: for timing it is one Vector "
        "tensor_tensor with the scan's operands and documented cost (max(MIN_II, 2N)), which "
        "computes deltaA * deltaBu and does not read the initial value; with exact_scan it is a "
        "per-column tensor_scalar chain (exact, not the scan's cost)",
        "a [1, F] B/C row broadcast to 128 partitions is one broadcasting DMA into a [128, F] "
        "tile (the source loads the row, then broadcasts it on chip)",
        "channels must be a multiple of 128",
        "a state loop that accumulates `acc += scanC` is sequential here (affine in candidates "
        "0-4): the IR has no reduction across affine iterations"};
    if (c.chunked) {
      w.notes.push_back(
          "seq_len must be a multiple of 512: the candidate's tail chunk code is not modelled "
          "(the calibration shape has none)");
    }
    if (c.candidate == 4) {
      w.notes.push_back(
          "the traced code loops over an undefined name 'nchunks' (corrupted in the trace); "
          "modelled as n_full_chunks, as in candidates 5-7");
    }
    if (c.candidate == 6) {
      w.notes.push_back(
          "nl.multiply(x, B_buf) with a [1, F] tile is modelled like candidate 5's broadcast_to "
          "+ tensor_tensor, so candidates 5 and 6 are the same program here");
    }
    w.build = [c, name = w.name](const BuildOptions& o) {
      return MambaBuilder(c, o, name).build();
    };
    out.push_back(std::move(w));
  }
  return out;
}

// The fused Mamba tutorial's three kernels (kTutorialSource). mamba_v1 is the program of
// Autocomp's candidate 0 (the trace starts from it); mamba_v2 is candidate 2's loop order with
// deltaU per state; mamba_v3 tiles the sequence inside the state loop.
std::vector<Workload> mamba_tutorial_workloads() {
  struct Version {
    const char* name;
    const char* function;
    MambaConfig config;
  };
  const Version versions[] = {
      {"mamba_tutorial_v1",
       "mamba_v1",
       {0, true, false, false, false, false, false,
        "batch -> state -> channel tile, every operand loaded per (state, channel tile), one scan "
        "over the whole sequence (the same program as mamba_autocomp_c0)"}},
      {"mamba_tutorial_v2",
       "mamba_v2",
       {2, false, false, false, false, false, false,
        "channel tile -> state: delta and u loaded once per channel tile, deltaU per state, SBUF "
        "accumulator",
        true}},
      {"mamba_tutorial_v3",
       "mamba_v3",
       {3, false, false, false, false, false, false,
        "mamba_v2 with the sequence in 512-wide chunks inside the state loop and a scan carry",
        false, true}},
  };
  std::vector<Workload> out;
  for (const Version& v : versions) {
    Workload w;
    w.name = v.name;
    w.family = "mamba";
    w.source = std::string(kTutorialSource) + ", " + v.function;
    w.summary = v.config.summary;
    w.params = {"batch", "channels", "seq_len", "state_size"};
    w.notes = {
        "nisa.tensor_tensor_scan is not an IR instruction: modelled as in the mamba_autocomp "
        "workloads (BuildOptions::exact_scan)",
        "a [1, F] B/C row broadcast to 128 partitions is one broadcasting DMA into a [128, F] "
        "tile",
        "channels must be a multiple of 128",
        "the state loop is sequential here (affine in the source, which accumulates "
        "`scanC_accum += scanC` across it): the IR has no reduction across affine iterations"};
    if (v.config.state_then_chunks) {
      w.notes.push_back("seq_len must be a multiple of 512, as the source asserts");
    }
    const MambaConfig c = v.config;
    w.build = [c, name = w.name](const BuildOptions& o) {
      return MambaBuilder(c, o, name).build();
    };
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace ncv::workloads
