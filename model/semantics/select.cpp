// Selection and index generation: tensor_copy_predicated, affine_select, iota.
//
// Fast paths: rows are processed with row decoders and an odometer over dst's free dims (the
// affine value is updated incrementally, no index division); the reference recomputes every
// element's indices from its flat index.
#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

namespace {

// Affine values are computed modulo 2^64 (the interpreter guarantees they do not overflow; the
// wrap only keeps pathological inputs free of UB, identically in both modes).
inline int64_t wadd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wmul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

inline int64_t row_value(int64_t offset, int64_t channel_multiplier, int64_t r) {
  return wadd(offset, wmul(r, channel_multiplier));
}

// value(r, f) with f's free indices recovered by division (reference).
int64_t ref_value(const View& dst, int64_t offset, int64_t cm, const int64_t* steps, int64_t r,
                  int64_t f) {
  int64_t v = row_value(offset, cm, r);
  for (int d = dst.free_rank - 1; d >= 0; --d) {
    v = wadd(v, wmul(steps[d], f % dst.sizes[d]));
    f /= dst.sizes[d];
  }
  return v;
}

// Calls fn(i, value) for the free elements of row r in row-major order, updating the value
// incrementally with an odometer over dst's (uncoalesced) free dims.
template <class Fn>
void for_each_value(const View& dst, int64_t offset, int64_t cm, const int64_t* steps, int64_t r,
                    Fn&& fn) {
  const int k = dst.free_rank;
  const int64_t n = dst.free_elems();
  if (n <= 0) return;
  int64_t v = row_value(offset, cm, r);
  if (k == 0) {
    fn(0, v);
    return;
  }
  int64_t idx[kMaxFreeDims] = {};
  const int64_t inner = dst.sizes[k - 1], inner_step = steps[k - 1];
  int64_t i = 0;
  for (;;) {
    for (int64_t j = 0; j < inner; ++j) {
      fn(i++, v);
      v = wadd(v, inner_step);
    }
    v = wadd(v, -wmul(inner_step, inner));
    int d = k - 2;
    for (; d >= 0; --d) {
      v = wadd(v, steps[d]);
      if (++idx[d] < dst.sizes[d]) break;
      v = wadd(v, -wmul(steps[d], dst.sizes[d]));
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

inline bool compare(CmpOp c, int64_t v) {
  switch (c) {
    case CmpOp::eq:
      return v == 0;
    case CmpOp::ne:
      return v != 0;
    case CmpOp::lt:
      return v < 0;
    case CmpOp::le:
      return v <= 0;
    case CmpOp::gt:
      return v > 0;
    case CmpOp::ge:
      return v >= 0;
  }
  return false;
}

// Store the masked elements of row r (row-major order).
void store_row_masked(const View& v, const RowShape& s, int64_t r, const uint32_t* bits,
                      const uint8_t* mask) {
  const DType t = v.dtype;
  for_each_run(v, s, r, [&](uint8_t* p, int64_t n, int64_t st) {
    for (int64_t i = 0; i < n; ++i, ++bits, ++mask) {
      if (*mask) store_bits(t, p + i * st, *bits);
    }
  });
}

}  // namespace

// Predicate elements are read as integers (uint8/16/32 zero-extended, int32) and select where
// nonzero xor reverse; a float-typed predicate (never passed by the interpreter) selects where its
// value != 0 (NaN selects). A tile src of dst's dtype moves bits; another dtype or an immediate
// goes through fp32 to dst's dtype. Unselected dst elements are not written at all.
void exec_copy_predicated(ExecMode mode, const View& dst, const std::variant<float, View>& src,
                          const View& predicate, bool reverse) {
  const DType pt = predicate.dtype;
  auto selected = [&](uint32_t pbits) {
    const bool nz = is_float(pt) ? decode_to_float(pt, pbits) != 0.0f : pbits != 0;
    return nz != reverse;
  };
  const View* sv = std::get_if<View>(&src);
  const uint32_t imm = sv ? 0 : encode_from_float(dst.dtype, std::get<float>(src));
  auto convert = [&](uint32_t bits) {
    return sv->dtype == dst.dtype ? bits
                                  : encode_from_float(dst.dtype, decode_to_float(sv->dtype, bits));
  };
  const int64_t rows = std::max<int64_t>(dst.rows, 0), n = dst.free_elems();
  if (mode == ExecMode::reference) {
    std::vector<uint32_t> out(static_cast<size_t>(rows * n));
    std::vector<uint8_t> mask(out.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) {
        mask[r * n + f] = selected(ref_load(predicate, r, f));
        out[r * n + f] = sv ? convert(ref_load(*sv, r, f)) : imm;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t f = 0; f < n; ++f) {
        if (mask[r * n + f]) store_bits(dst.dtype, dst.at(r, f), out[r * n + f]);
      }
    }
    return;
  }
  const bool stream =
      rows_independent(dst, predicate) && (sv == nullptr || rows_independent(dst, *sv));
  const RowShape ds = row_shape(dst), ps = row_shape(predicate);
  const RowShape ss = sv ? row_shape(*sv) : RowShape{};
  const int64_t kept = stream ? 1 : rows;  // rows held before writing
  std::vector<uint32_t> out(static_cast<size_t>(kept * n)), pbits(n);
  std::vector<uint8_t> mask(out.size());
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = stream ? 0 : r * n;
    load_row_bits(predicate, ps, r, pbits.data());
    for (int64_t i = 0; i < n; ++i) mask[at + i] = selected(pbits[i]);
    if (sv) {
      load_row_bits(*sv, ss, r, out.data() + at);
      if (sv->dtype != dst.dtype) {
        for (int64_t i = 0; i < n; ++i) out[at + i] = convert(out[at + i]);
      }
    } else {
      std::fill(out.begin() + at, out.begin() + at + n, imm);
    }
    if (stream) store_row_masked(dst, ds, r, out.data(), mask.data());
  }
  if (!stream) {
    for (int64_t r = 0; r < rows; ++r) {
      store_row_masked(dst, ds, r, out.data() + r * n, mask.data() + r * n);
    }
  }
}

// dst = cmp(value, 0) ? on_true : on_false. on_true of dst's dtype moves bits, another dtype goes
// through fp32; on_false is encoded (RNE + saturation) once.
void exec_affine_select(ExecMode mode, const View& dst, const View& on_true, int64_t offset,
                        int64_t channel_multiplier, const int64_t* steps, CmpOp cmp,
                        float on_false) {
  const uint32_t false_bits = encode_from_float(dst.dtype, on_false);
  auto convert = [&](uint32_t bits) {
    return on_true.dtype == dst.dtype
               ? bits
               : encode_from_float(dst.dtype, decode_to_float(on_true.dtype, bits));
  };
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t r, int64_t f) {
      const int64_t v = ref_value(dst, offset, channel_multiplier, steps, r, f);
      return compare(cmp, v) ? convert(ref_load(on_true, r, f)) : false_bits;
    });
    return;
  }
  const int64_t n = dst.free_elems();
  const RowShape ts = row_shape(on_true);
  RowWriter w(dst, rows_independent(dst, on_true));
  std::vector<uint32_t> bits(n);
  for (int64_t r = 0; r < dst.rows; ++r) {
    load_row_bits(on_true, ts, r, bits.data());
    for_each_value(dst, offset, channel_multiplier, steps, r, [&](int64_t i, int64_t v) {
      bits[i] = compare(cmp, v) ? convert(bits[i]) : false_bits;
    });
    w.emit(r, bits.data());
  }
  w.finish();
}

// dst = value: integer dtypes get the value saturated to their range; float dtypes get it
// rounded to fp32 (RNE) and then encoded with encode_from_float (RNE + the dtype's saturation),
// i.e. the int32 -> fp32 -> dtype cast chain.
void exec_iota(ExecMode mode, const View& dst, int64_t offset, int64_t channel_multiplier,
               const int64_t* steps) {
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t r, int64_t f) {
      return encode_int(dst.dtype, ref_value(dst, offset, channel_multiplier, steps, r, f));
    });
    return;
  }
  RowWriter w(dst, true);
  std::vector<uint32_t> bits(dst.free_elems());
  for (int64_t r = 0; r < dst.rows; ++r) {
    for_each_value(dst, offset, channel_multiplier, steps, r,
                   [&](int64_t i, int64_t v) { bits[i] = encode_int(dst.dtype, v); });
    w.emit(r, bits.data());
  }
  w.finish();
}

int64_t affine_pattern_value(const View& dst, int64_t offset, int64_t channel_multiplier,
                             const int64_t* steps, int64_t r, int64_t f) {
  return ref_value(dst, offset, channel_multiplier, steps, r, f);
}
bool affine_compare(CmpOp cmp, int64_t value) {
  return compare(cmp, value);
}
uint32_t iota_bits(DType t, int64_t value) {
  return encode_int(t, value);
}

}  // namespace semantics
}  // namespace ncv
