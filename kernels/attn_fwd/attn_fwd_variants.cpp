// The registry entries of the FlashAttention performance tutorial's chain, attn_fwd_v1 ...
// attn_fwd_v11: what each version models, what it changes, and whether it keeps its
// predecessor's numerics (the MatchesPredecessor property holds each claim to account).
#include <string>

#include "kernels/attn_fwd/attn_fwd_common.h"
#include "kernels/families.h"

namespace ncv::kernels {
namespace {

using V = AttnFwdVersion;

const char* const kSource =
    "aws-neuron/nki-samples src/nki_samples/tutorials/attention_fwd_performance/"
    "attention_kernels.py @f35a06a1841d (unchanged at HEAD 6905a68)";

struct Entry {
  V version;
  const char* summary;
  bool same_numerics;
  std::vector<std::string> notes;
};

std::vector<Entry> entries() {
  return {
      {V::v1,
       "toy example: one 128 x 128 tile with nki.language calls; softmax with nl.max, subtract, "
       "exp, sum and divide, V transposed with nl.transpose, PV by nl.matmul(transpose_x=False)",
       false,
       {"seqlen = 128 only (`assert seqlen_q == 128`)",
        "nl.matmul(scores, v_t, transpose_x=False): the compiler transposes scores (modelled as "
        "an unpinned nc_transpose); the store from PSUM goes through the compiler's fp32 copy"}},
      {V::v2,
       "v1 with nki.isa calls: Vector-pinned tensor_scalar subtract and multiply by the "
       "reciprocal of the row sum, P rounded to q.dtype, explicit transposes and copies",
       false,
       {"seqlen = 128 only (`assert seqlen_q == 128`)",
        "not bit-identical to v1: exp * (1 / sum) rounded to q.dtype instead of exp / sum in "
        "fp32"}},
      {V::v3,
       "tiling for seqlen >= 512: each softmax stage its own loop nest, round-tripping through "
       "HBM scratch (normalised scores, exp, probabilities, V^T and P^T tiles, 16 S^2 bytes)",
       false,
       {"the domains of v2 (seqlen 128) and v3 (from 512) do not meet: MatchesPredecessor has no "
        "shape to compare them at",
        "QK, row max and subtraction loop nests modelled fused per q tile (the compiler's loop "
        "fusion): as declared they keep Nq x Nk PSUM banks live, 16 at seqlen 1024 of trn1's 8, "
        "yet the tutorial's test runs v3 at 4096",
        "the row sum is one S-wide reduce per q tile: not bit-identical to v2's single tile at "
        "any shape they share (none)"}},
      {V::v4,
       "loop fusion: QK, every softmax stage and PV in one loop over q tiles, nothing in HBM",
       false,
       {"not bit-identical to v3: the row sum adds 512-key partial sums instead of one S-wide "
        "reduce"}},
      {V::v5,
       "division delayed: PV on the unnormalised exp, the [128, 128] PV result multiplied by "
       "the reciprocal of the row sum straight from PSUM",
       false,
       {"not bit-identical to v4: P is not normalised before PV"}},
      {V::v6,
       "subtract, exp and the 512-key partial row sums fused into one Scalar-engine activation "
       "(the row max negated into its bias)",
       true,
       {"bit-identical to v5: the activation computes fl(s - m) then exp as v5's subtract and "
        "exp do, and its accumulator adds the same 512 values in the same order"}},
      {V::v7,
       "exp and V^T downcast to bf16 before the transposes and PV (the row sums still from the "
       "fp32 activation results)",
       false,
       {"not bit-identical to v6: P and V^T are rounded to bf16"}},
      {V::v8,
       "a Vector tensor_scalar_reduce copies each score tile to SBUF with its partial max (the "
       "copy is never read: the exp still reads PSUM)",
       true,
       {"bit-identical to v7: the copy is dead; the partial max is the same max",
        "qk_sbuf is written and never read, as in the source (its comment: slower than v7)"}},
      {V::v8a,
       "v8 refactored into per-q-tile stages in a sequential loop, buffers at kernel scope, "
       "transposes by matmuls with an identity, the exp reading the SBUF copy, bf16 output",
       false,
       {"not bit-identical to v8 when dtype is fp32: out is bf16 (kernel_out dtype bf16)",
        "the identity (nl.shared_constant) is generated on chip: the IR has no constant HBM "
        "tensors",
        "the kernel-scope row_max_kv is shadowed by qk_max's local one and never used: not "
        "declared"}},
      {V::v9,
       "v8a with direct allocation: every SBUF tensor at the byte offset the source's "
       "SBufAllocator hands out, PSUM banks by mod_alloc (scores and their transposes sharing "
       "banks 0-6, PV in bank 7), scores and partial sums double-buffered by q tile parity",
       true,
       {"bit-identical to v8a: only placements change",
        "skip_middle_end_transformations: program order kept (no loop fusion modelled)",
        "offsets start at 0; the source's module-level allocator is never reset, so a second "
        "trace in the same process starts where the first ended"}},
      {V::v10,
       "v9 software-pipelined: the QK and max of q tile i + 2 interleaved with the PV of tile "
       "i, with a two-tile prologue and epilogue",
       true,
       {"bit-identical to v9: the same operations on the same values in a different order",
        "sequential_range(..., directives=no_reorder()) modelled as a sequential loop",
        "the source compiles with nki.baremetal only (its header: nki.jit fails)"}},
      {V::v11,
       "v10's software-pipelined schedule with the compiler's allocation instead of direct "
       "allocation",
       true,
       {"bit-identical to v10: only allocation changes"}},
  };
}

std::vector<std::string> common_notes() {
  return {
      "d_head = 128 (asserted); q, k and v are [128, seqlen] (v pre-transposed too); no softmax "
      "scale, no mask",
      "seqlen a multiple of 512 from v3: the source asserts only seqlen >= 512; its loops "
      "floor-divide, so a tail would leave rows of out unwritten",
      "calls without engine= are unpinned and placed by the compiler-choice rules "
      "(model/compiler); nc_transpose of a 128 x 128 tile runs on the Tensor engine through an "
      "fp32 PSUM tile",
      "PSUM accumulation into nl.zeros / nl.ndarray: an accumulation group whose first matmul "
      "overwrites, peeled from its loop",
  };
}

}  // namespace

// The rewrites whose interface differs from their predecessor's on purpose (report: CHANGED).
// v4's narrower domain is not here: it comes from the model's allocator, not from the source.
std::string interface_change(V version) {
  switch (version) {
    case V::v3:
      return "tiled for seqlen >= 512 in steps of 512; v2 runs at seqlen 128 only (both "
             "asserted), so their domains do not meet";
    case V::v8a:
      return "out is bf16 whatever the input dtype (kernel_out dtype hard-coded in the "
             "source): at dtype=fp32 the output tensor differs from v8's";
    case V::v9:
      return "direct allocation within [0, 176 KiB) per partition: the domain stops at seqlen "
             "6656 (the largest where fp32 fits) where v8a's compiler allocation reaches 9728";
    default:
      return "";
  }
}

std::vector<Variant> attn_fwd_variants() {
  std::vector<Variant> out;
  std::string previous;
  for (const Entry& e : entries()) {
    Variant v;
    v.name = attn_fwd_name(e.version);
    v.family = "attn_fwd";
    v.models = std::string(kSource) + " " + v.name;
    v.summary = e.summary;
    v.rewrites = previous;
    v.same_numerics_as_predecessor = e.same_numerics;
    v.interface_change = interface_change(e.version);
    v.options = attn_fwd_options();
    v.notes = common_notes();
    v.notes.insert(v.notes.end(), e.notes.begin(), e.notes.end());
    const V ver = e.version;
    const bool staged = at_least(ver, V::v8a);
    v.build = [ver, staged](const Options& o) {
      return staged ? build_attn_fwd_staged(ver, o) : build_attn_fwd_tiled(ver, o);
    };
    v.contract = [ver](const Options& o) { return attn_fwd_contract(ver, o); };
    v.spec = [ver](const Options& o, const ParamValues& p) { return attn_fwd_spec(ver, o, p); };
    v.layout = attn_fwd_layout();
    previous = v.name;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace ncv::kernels
