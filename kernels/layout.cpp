#include "kernels/layout.h"

#include <set>
#include <stdexcept>

namespace ncv::kernels {

namespace {

using oracle::AttentionSpec;

// Extent of a spec axis for q/out (heads) or k/v (kv_heads) tensors.
int64_t extent(const AttentionSpec& s, Axis a, bool kv) {
  const int64_t seq = kv ? s.seqlen_kv : s.seqlen_q;
  switch (a) {
    case Axis::seq_tile:
      return seq / kSeqPartRows;
    case Axis::seq_part:
      return kSeqPartRows;
    case Axis::batch:
      return s.batch;
    case Axis::head:
      return kv ? s.kv_heads : s.heads;
    case Axis::seq:
      return kv ? s.seqlen_kv : s.seqlen_q;
    case Axis::dim:
      return s.d_head;
    case Axis::kv_seq:
      return s.seqlen_kv;
  }
  return 0;
}

}  // namespace

const char* axis_name(Axis a) {
  switch (a) {
    case Axis::seq_tile:
      return "seq_tile";
    case Axis::seq_part:
      return "seq_part";
    case Axis::batch:
      return "batch";
    case Axis::head:
      return "head";
    case Axis::seq:
      return "seq";
    case Axis::dim:
      return "dim";
    case Axis::kv_seq:
      return "kv_seq";
  }
  return "?";
}

namespace {

// Row-major strides of the tensor per spec axis (0 for axes the tensor does not list, which
// must then have extent 1). Throws when the shape disagrees with the spec.
struct Strides {
  int64_t batch = 0, head = 0, seq = 0, dim = 0, seq_tile = 0, seq_part = 0;
  // Offset of sequence row i: one seq axis, or its 128-row tile and partition.
  int64_t row(int64_t i) const {
    return i * seq + (i / kSeqPartRows) * seq_tile + (i % kSeqPartRows) * seq_part;
  }
};

// The dimension of `shape` each axis of `t` lies in: one axis per dimension when the ranks
// agree; when the layout lists more axes than the tensor has dimensions, consecutive axes share
// a flattened dimension (outermost first), each dimension taking axes from the innermost until
// their extents multiply to its size (a q [d, B*H*s] stored flat from SBUF). Throws when no such
// grouping exists.
std::vector<size_t> dims_of_axes(const TensorLayout& t, const std::vector<int64_t>& shape,
                                 const AttentionSpec& s, bool kv) {
  if (shape.size() > t.axes.size() || (shape.empty() && !t.axes.empty())) {
    throw std::invalid_argument("tensor '" + t.tensor + "' has rank " +
                                std::to_string(shape.size()) + ", the layout lists " +
                                std::to_string(t.axes.size()) + " axes");
  }
  std::vector<size_t> dim(t.axes.size());
  if (shape.size() == t.axes.size()) {
    for (size_t x = 0; x < dim.size(); ++x) dim[x] = x;
    return dim;
  }
  size_t a = t.axes.size();
  for (size_t x = shape.size(); x-- > 0;) {
    int64_t product = 1;
    // the outermost dimension takes every axis left; the others stop at their size
    do {
      if (a == 0) break;
      --a;
      dim[a] = x;
      product *= extent(s, t.axes[a], kv);
    } while ((x == 0 && a > 0) || (x > 0 && product < shape[x] && a > x));
    if (product != shape[x]) {
      throw std::invalid_argument("tensor '" + t.tensor + "' dimension " + std::to_string(x) +
                                  " is " + std::to_string(shape[x]) +
                                  ", the product of the extents of the layout's axes it holds is " +
                                  std::to_string(product));
    }
  }
  return dim;
}

// `per_row`: a tensor of one value per query row (lse), which has no dim axis.
Strides strides_for(const TensorLayout& t, const std::vector<int64_t>& shape,
                    const AttentionSpec& s, bool kv, bool per_row = false) {
  dims_of_axes(t, shape, s, kv);  // throws when the axes do not group into the dimensions
  const bool flat = shape.size() != t.axes.size();
  Strides st;
  std::set<Axis> seen;
  int64_t stride = 1;
  for (size_t x = t.axes.size(); x-- > 0;) {
    const Axis a = t.axes[x];
    if (!flat && shape[x] != extent(s, a, kv)) {
      throw std::invalid_argument("tensor '" + t.tensor + "' dimension " + std::to_string(x) +
                                  " (" + axis_name(a) + ") is " + std::to_string(shape[x]) +
                                  ", the spec needs " + std::to_string(extent(s, a, kv)));
    }
    if (a == Axis::kv_seq) {
      throw std::invalid_argument("tensor '" + t.tensor +
                                  "' lists kv_seq: only the bias is indexed by query and key");
    }
    if (!seen.insert(a).second) {
      throw std::invalid_argument("tensor '" + t.tensor + "' lists axis " + axis_name(a) +
                                  " twice");
    }
    (a == Axis::batch      ? st.batch
     : a == Axis::head     ? st.head
     : a == Axis::seq      ? st.seq
     : a == Axis::seq_tile ? st.seq_tile
     : a == Axis::seq_part ? st.seq_part
                           : st.dim) = stride;
    stride *= flat ? extent(s, a, kv) : shape[x];
  }
  const bool tiled = seen.count(Axis::seq_tile) + seen.count(Axis::seq_part) > 0;
  if (tiled) {
    const int64_t seq = kv ? s.seqlen_kv : s.seqlen_q;
    if (!seen.count(Axis::seq_tile) || !seen.count(Axis::seq_part) || seen.count(Axis::seq) ||
        seq % kSeqPartRows != 0) {
      throw std::invalid_argument("tensor '" + t.tensor +
                                  "' splits the sequence: it needs both seq_tile and seq_part, no "
                                  "seq axis, and a sequence of whole 128-row tiles (it has " +
                                  std::to_string(seq) + ")");
    }
    seen.insert(Axis::seq);
  }
  if (per_row && seen.count(Axis::dim)) {
    throw std::invalid_argument("tensor '" + t.tensor + "' holds one value per row: no dim axis");
  }
  for (Axis a : {Axis::batch, Axis::head, Axis::seq, Axis::dim}) {
    if (per_row && a == Axis::dim) continue;
    if (!seen.count(a) && extent(s, a, kv) != 1) {
      throw std::invalid_argument("tensor '" + t.tensor + "' has no " + axis_name(a) +
                                  " axis but the spec's extent is " +
                                  std::to_string(extent(s, a, kv)));
    }
  }
  return st;
}

// Copies spec tensor `src` ([B][H][S][d] order, k/v logical order) into `dst` per the layout.
void pack_one(const TensorLayout& t, const AttentionSpec& s, bool kv,
              const std::vector<double>& src, HostTensor& dst) {
  if (kv && s.block_kv) throw std::invalid_argument("paged KV specs have no dense layout");
  const Strides st = strides_for(t, dst.shape, s, kv);
  const int64_t H = kv ? s.kv_heads : s.heads, S = kv ? s.seqlen_kv : s.seqlen_q;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t i = 0; i < S; ++i) {
        const int64_t base = kv ? s.kv_index(b, h, i, 0) : s.q_index(b, h, i, 0);
        for (int64_t c = 0; c < s.d_head; ++c) {
          dst.set(b * st.batch + h * st.head + st.row(i) + c * st.dim,
                  static_cast<float>(src[static_cast<size_t>(base + c)]));
        }
      }
    }
  }
}

// Copies spec.bias ([Sq][Skv]) into `dst`: axes seq and kv_seq, and batch or head axes of
// extent 1 (broadcast).
void pack_bias(const TensorLayout& t, const AttentionSpec& s, HostTensor& dst) {
  if (s.bias.empty()) {
    throw std::invalid_argument("kernel input '" + t.tensor + "' needs a bias; the spec has none");
  }
  if (dst.shape.size() != t.axes.size()) {
    throw std::invalid_argument("tensor '" + t.tensor + "' has rank " +
                                std::to_string(dst.shape.size()) + ", the layout lists " +
                                std::to_string(t.axes.size()) + " axes");
  }
  int64_t stride = 1, seq = -1, kv_seq = -1;
  for (size_t x = t.axes.size(); x-- > 0;) {
    const Axis a = t.axes[x];
    if (a != Axis::seq && a != Axis::kv_seq && a != Axis::batch && a != Axis::head) {
      throw std::invalid_argument("tensor '" + t.tensor + "' lists " + axis_name(a) +
                                  ": a bias has seq, kv_seq and size-1 batch or head axes");
    }
    const int64_t want = a == Axis::seq ? s.seqlen_q : a == Axis::kv_seq ? s.seqlen_kv : 1;
    if (dst.shape[x] != want) {
      throw std::invalid_argument("tensor '" + t.tensor + "' dimension " + std::to_string(x) +
                                  " (" + axis_name(a) + ") is " + std::to_string(dst.shape[x]) +
                                  ", the spec needs " + std::to_string(want));
    }
    int64_t& slot = a == Axis::seq ? seq : kv_seq;
    if (a == Axis::seq || a == Axis::kv_seq) {
      if (slot >= 0) {
        throw std::invalid_argument("tensor '" + t.tensor + "' lists axis " + axis_name(a) +
                                    " twice");
      }
      slot = stride;
    }
    stride *= dst.shape[x];
  }
  if (seq < 0 || kv_seq < 0) {
    throw std::invalid_argument("tensor '" + t.tensor + "' needs both a seq and a kv_seq axis");
  }
  for (int64_t i = 0; i < s.seqlen_q; ++i) {
    for (int64_t j = 0; j < s.seqlen_kv; ++j) {
      dst.set(i * seq + j * kv_seq,
              static_cast<float>(s.bias[static_cast<size_t>(i * s.seqlen_kv + j)]));
    }
  }
}

// Copies spec.sink ([H]) into `dst`: a head axis and batch axes of extent 1.
void pack_sink(const TensorLayout& t, const AttentionSpec& s, HostTensor& dst) {
  if (s.sink.empty()) {
    throw std::invalid_argument("kernel input '" + t.tensor + "' needs sinks; the spec has none");
  }
  if (dst.shape.size() != t.axes.size()) {
    throw std::invalid_argument("tensor '" + t.tensor + "' has rank " +
                                std::to_string(dst.shape.size()) + ", the layout lists " +
                                std::to_string(t.axes.size()) + " axes");
  }
  int64_t stride = 1, head = -1;
  for (size_t x = t.axes.size(); x-- > 0;) {
    const Axis a = t.axes[x];
    if (a != Axis::head && a != Axis::batch) {
      throw std::invalid_argument("tensor '" + t.tensor + "' lists " + axis_name(a) +
                                  ": sinks have a head axis and size-1 batch axes");
    }
    const int64_t want = a == Axis::head ? s.heads : 1;
    if (dst.shape[x] != want) {
      throw std::invalid_argument("tensor '" + t.tensor + "' dimension " + std::to_string(x) +
                                  " (" + axis_name(a) + ") is " + std::to_string(dst.shape[x]) +
                                  ", the spec needs " + std::to_string(want));
    }
    if (a == Axis::head) {
      if (head >= 0) {
        throw std::invalid_argument("tensor '" + t.tensor + "' lists axis head twice");
      }
      head = stride;
    }
    stride *= dst.shape[x];
  }
  if (head < 0) throw std::invalid_argument("tensor '" + t.tensor + "' needs a head axis");
  for (int64_t h = 0; h < s.heads; ++h) {
    dst.set(h * head, static_cast<float>(s.sink[static_cast<size_t>(h)]));
  }
}

}  // namespace

std::map<std::string, HostTensor> pack_inputs(const Layout& layout, const Program& program,
                                              const ParamValues& params,
                                              const oracle::AttentionSpec& spec,
                                              const oracle::AttentionInputs& in,
                                              const CaseDraws& draws) {
  oracle::validate_inputs(spec, in);
  std::map<std::string, HostTensor> out;
  const struct {
    const TensorLayout& t;
    const std::vector<double>& values;
    bool kv;
  } parts[] = {{layout.q, in.q, false}, {layout.k, in.k, true}, {layout.v, in.v, true}};
  for (const auto& part : parts) {
    // A paged cache has no dense layout: a kernel that takes one packs it in pack_extra; so does
    // a layout that lists no axes for a tensor (check/kv_cache_layout.h: a cache longer than the
    // slots the kernel reads).
    if (layout.pack_extra && ((part.kv && spec.block_kv) || part.t.axes.empty())) continue;
    const auto id = program.find_tensor(part.t.tensor);
    if (!id || program.tensor(*id).kind != TensorKind::Input) {
      throw std::invalid_argument("kernel " + program.name + " has no input tensor '" +
                                  part.t.tensor + "'");
    }
    HostTensor h(program.tensor(*id).dtype, concrete_shape(program, *id, params));
    pack_one(part.t, spec, part.kv, part.values, h);
    out[part.t.tensor] = std::move(h);
  }
  if (layout.bias) {
    const auto id = program.find_tensor(layout.bias->tensor);
    if (id && program.tensor(*id).kind == TensorKind::Input) {
      HostTensor h(program.tensor(*id).dtype, concrete_shape(program, *id, params));
      pack_bias(*layout.bias, spec, h);
      out[layout.bias->tensor] = std::move(h);
    }
  }
  if (layout.pack_extra) layout.pack_extra(program, params, spec, in, draws, out);
  if (layout.sink) {
    const auto id = program.find_tensor(layout.sink->tensor);
    if (id && program.tensor(*id).kind == TensorKind::Input) {
      HostTensor h(program.tensor(*id).dtype, concrete_shape(program, *id, params));
      pack_sink(*layout.sink, spec, h);
      out[layout.sink->tensor] = std::move(h);
    }
  }
  // Inputs outside the attention problem (a dropout seed, ...): zeros, or the least value of a
  // declared range that excludes zero.
  for (const Tensor& t : program.tensors) {
    if (t.kind != TensorKind::Input || out.count(t.name)) continue;
    HostTensor h(t.dtype, concrete_shape(program, t.id, params));
    if (t.value_range && (t.value_range->lo > 0 || t.value_range->hi < 0)) {
      for (int64_t i = 0; i < h.num_elements(); ++i) {
        h.set(i, static_cast<float>(t.value_range->lo));
      }
    }
    out[t.name] = std::move(h);
  }
  return out;
}

std::vector<double> unpack_output(const Layout& layout, const oracle::AttentionSpec& spec,
                                  const std::map<std::string, HostTensor>& outputs) {
  const auto it = outputs.find(layout.out.tensor);
  if (it == outputs.end()) {
    throw std::invalid_argument("the run produced no output '" + layout.out.tensor + "'");
  }
  const HostTensor& h = it->second;
  const Strides st = strides_for(layout.out, h.shape, spec, false);
  std::vector<double> out(static_cast<size_t>(spec.q_elements()));
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t hh = 0; hh < spec.heads; ++hh) {
      for (int64_t i = 0; i < spec.seqlen_q; ++i) {
        for (int64_t c = 0; c < spec.d_head; ++c) {
          out[static_cast<size_t>(spec.q_index(b, hh, i, c))] =
              h.get(b * st.batch + hh * st.head + st.row(i) + c * st.dim);
        }
      }
    }
  }
  return out;
}

std::optional<LseOutput> unpack_lse(const Layout& layout, const oracle::AttentionSpec& spec,
                                    const std::map<std::string, HostTensor>& outputs) {
  return unpack_row_output(layout.lse, spec, outputs);
}

std::optional<LseOutput> unpack_row_output(const std::optional<TensorLayout>& t,
                                           const oracle::AttentionSpec& spec,
                                           const std::map<std::string, HostTensor>& outputs) {
  if (!t) return std::nullopt;
  const auto it = outputs.find(t->tensor);
  if (it == outputs.end()) return std::nullopt;
  const HostTensor& h = it->second;
  const Strides st = strides_for(*t, h.shape, spec, false, true);
  LseOutput out{std::vector<double>(static_cast<size_t>(spec.rows())), h.dtype};
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t hh = 0; hh < spec.heads; ++hh) {
      for (int64_t i = 0; i < spec.seqlen_q; ++i) {
        out.values[static_cast<size_t>((b * spec.heads + hh) * spec.seqlen_q + i)] =
            h.get(b * st.batch + hh * st.head + st.row(i));
      }
    }
  }
  return out;
}

}  // namespace ncv::kernels
