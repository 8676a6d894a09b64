// The layout adapter between an AttentionSpec's tensors (q [B][H][Sq][d], k/v [B][KVH][Skv][d],
// out [B][H][Sq][d]) and a kernel's HBM tensors, e.g. the tutorial's q [S, d] or the reference
// kernel's q [bs, d, S]. A layout names the HBM tensor and lists which spec axis each of its
// dimensions is; spec axes a tensor does not list must have extent 1.
#pragma once

#include <any>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/interp/host_tensor.h"
#include "model/interp/interpreter.h"
#include "model/ir/program.h"
#include "oracle/attention_spec.h"

namespace ncv::kernels {

// seq_tile and seq_part split the sequence into 128-row tiles, partition-major: a tensor with
// both holds row t * 128 + p at seq_tile t, seq_part p (flash_fwd's lse [bs, h, 128, Sq / 128]).
// kv_seq is the key sequence of a tensor indexed by query and key (the logits bias, whose seq
// axis is the query's).
enum class Axis : uint8_t { batch, head, seq, dim, seq_tile, seq_part, kv_seq };
inline constexpr int64_t kSeqPartRows = 128;  // rows per seq_tile (the SBUF partitions)
const char* axis_name(Axis a);

struct TensorLayout {
  std::string tensor;  // HBM tensor name in the Program
  // One per tensor dimension, outermost first; when it lists more axes than the tensor has
  // dimensions, consecutive axes share a flattened dimension (a q [d, B*H*Sq] stored flat from
  // SBUF: axes dim, batch, head, seq), each dimension holding the axes whose extents multiply to
  // its size. Empty (with Layout::pack_extra set): pack_extra packs the tensor.
  std::vector<Axis> axes;
};

// What one check case drew beyond its spec (check/explicit_layout.cpp: a --layout problem's
// prior length, query offset and key bounds), returned by Variant::draw_case with the case's spec
// and handed with that spec to Layout::pack_extra, so that the packing reads the draws of its own
// case whatever was drawn in between. Opaque to everything in between (a std::any of the drawing
// variant's own type); empty when the case drew nothing beyond the spec.
using CaseDraws = std::any;

struct Layout {
  TensorLayout q, k, v, out;
  // The log-sum-exp of every query row, [B][H][Sq] without a dim axis, when the kernel stores it
  // (flash_fwd in training mode): check compares it with the oracle's lse whenever the program
  // has an output of this name.
  std::optional<TensorLayout> lse;
  // The additive logits bias [Sq][Skv] (AttentionSpec::bias) when the kernel takes one
  // (flash_fwd's logit_bias [1, 1, Sq, Sk]): axes seq and kv_seq, plus batch or head axes of
  // extent 1 (the bias is broadcast over them). pack_inputs fills it whenever the program has an
  // input of this name.
  std::optional<TensorLayout> bias;
  // The kernel's inputs that are not an axis permutation of the spec's q, k and v (a decode
  // kernel's active-token tensors, a mask or positions derived from the spec, sinks): pack_inputs
  // calls it after packing q, k, v and the bias, with those tensors in `packed`; it adds the
  // other inputs and may overwrite elements of packed ones (cache slots the kernel must not read
  // get adversarial values). With a paged (block_kv) spec, pack_inputs leaves k and v to it, and
  // any of q, k, v whose TensorLayout lists no axes (check/kv_cache_layout.h: a cache longer than
  // the slots the kernel reads). `draws`: what draw_case returned for this case (CaseDraws).
  // Throws std::invalid_argument on a mismatch. Unset: none.
  std::function<void(const Program&, const ParamValues&, const oracle::AttentionSpec&,
                     const oracle::AttentionInputs&, const CaseDraws& draws,
                     std::map<std::string, HostTensor>& packed)>
      pack_extra;
  // The sink logits (AttentionSpec::sink, one per head) when the kernel takes them
  // (attention_cte's sink [bs, 1] with the heads folded into its rows): a head axis plus batch
  // axes of extent 1 (broadcast). pack_inputs fills it whenever the program has an input of this
  // name; the spec must then carry sinks.
  std::optional<TensorLayout> sink;
  // (Last, so that the kernels' positional initialisers of the fields above keep their meaning.)
  // The softmax statistics of every query row, [B][H][Sq] each without a dim axis, when the kernel
  // caches them for a backward pass (nki-library attention_cte's cache_softmax: out_neg_max, the
  // negated row max, and out_sum_recip, 1 / the row sum, both [bs, 128, Sq / 128]): check
  // compares them with the oracle's row_max and row_sum whenever the program has an output of
  // the name (ERROR_BOUNDS.md §4 "The cached softmax statistics").
  std::optional<TensorLayout> neg_max, recip_sum;
};

// Kernel inputs for `spec` and `in`: every input tensor of `program` named by the layout, with
// the shapes the program declares under `params` (checked against the spec's extents), values
// converted to the tensor's dtype (exact when the inputs are representable in it, as oracle
// inputs are); any other input of the program (one outside the attention problem, such as a
// dropout seed) is zeros, or its declared range's least value when the range excludes zero.
// The bias tensor (Layout::bias), when the program takes it, holds spec.bias, which must then be
// present. Layout::pack_extra, when set, then adds the kernel-specific inputs from `draws`, what
// Variant::draw_case returned with `spec` (empty for a spec no draw_case made). Throws
// std::invalid_argument on a shape or name mismatch, naming the tensor.
std::map<std::string, HostTensor> pack_inputs(const Layout& layout, const Program& program,
                                              const ParamValues& params,
                                              const oracle::AttentionSpec& spec,
                                              const oracle::AttentionInputs& in,
                                              const CaseDraws& draws = {});

// The kernel's output tensor as the spec's out [B][H][Sq][d] (values of the output dtype as
// doubles). Throws std::invalid_argument when the output is missing or its shape is wrong.
std::vector<double> unpack_output(const Layout& layout, const oracle::AttentionSpec& spec,
                                  const std::map<std::string, HostTensor>& outputs);

// The kernel's lse output as the spec's [B][H][Sq] and its dtype, when the layout declares one
// and `outputs` holds it (else nullopt). Throws std::invalid_argument when its shape is wrong.
struct LseOutput {
  std::vector<double> values;
  DType dtype = DType::fp32;
};
std::optional<LseOutput> unpack_lse(const Layout& layout, const oracle::AttentionSpec& spec,
                                    const std::map<std::string, HostTensor>& outputs);
// The same for any per-row output (Layout::neg_max, Layout::recip_sum): nullopt when `t` is unset
// or `outputs` does not hold it.
std::optional<LseOutput> unpack_row_output(const std::optional<TensorLayout>& t,
                                           const oracle::AttentionSpec& spec,
                                           const std::map<std::string, HostTensor>& outputs);

}  // namespace ncv::kernels
