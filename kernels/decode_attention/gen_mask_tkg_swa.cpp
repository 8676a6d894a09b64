#include "kernels/decode_attention/gen_mask_tkg_swa.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace ncv::kernels::tkg {

int64_t slot_of(SlotLayout layout, int64_t block_len, int64_t n, int64_t base, int64_t p,
                int64_t t) {
  switch (layout) {
    case SlotLayout::flat_strided:
      return base + p * n + t;
    case SlotLayout::flat_contiguous:
      return base + t * kSlotPartitions + p;
    case SlotLayout::block: {
      const int64_t fold = t / block_len, j = t % block_len;
      return base + fold * kSlotPartitions * block_len + p * block_len + j;
    }
  }
  throw std::logic_error("slot_of: unknown layout");
}

namespace {
// `steps` for an iota into dst: step t on view dim 1, 0 on any trailing unit dims.
std::vector<int64_t> iota_steps(const Access& dst, int64_t t_step) {
  std::vector<int64_t> steps(dst.rank() - 1, 0);
  steps[0] = t_step;
  return steps;
}
// View dim `dim` of `a` narrowed to [start, start + size) relative to its current start.
Access narrow(Access a, size_t dim, Expr start, Expr size) {
  a.dims[dim].start = a.dims[dim].start + start * a.dims[dim].step;
  a.dims[dim].size = size;
  return a;
}
}  // namespace

void emit_slot_iota(Builder& b, const Access& dst, const SlotIota& s) {
  if (dst.rank() < 2) throw std::invalid_argument("emit_slot_iota: dst needs a free dim");
  switch (s.layout) {
    case SlotLayout::flat_contiguous:
      // gen_mask_tkg.py 357–365: pattern [[128, n]], channel_multiplier 1.
      b.iota(dst, s.base, 1, iota_steps(dst, kSlotPartitions));
      break;
    case SlotLayout::flat_strided: {
      // pattern [[1, n]], channel_multiplier n (see the header for the exact decomposition).
      b.iota(dst, s.base, 0, iota_steps(dst, 1));
      auto part = b.sbuf("iota_partition" + s.suffix, DType::fp32, {kSlotPartitions, 1});
      auto stride = b.sbuf("iota_stride" + s.suffix, DType::fp32, {kSlotPartitions, 1});
      b.iota(part(), Expr(0), 1, {0});
      b.iota(stride(), s.tiles, 0, {0});
      b.tensor_tensor(part(), part(), stride(), AluOp::multiply, Engine::Vector);
      b.tensor_scalar(dst, dst, AluOp::add, part(), false, std::nullopt, Imm{0.0f}, false,
                      Engine::Vector);
      break;
    }
    case SlotLayout::block: {
      if (s.block_len < 1) {
        throw std::invalid_argument("emit_slot_iota: the block layout needs a block_len");
      }
      // gen_mask_tkg.py 326–348: per fold, pattern [[1, bl]], offset base + fold·128·bl,
      // channel_multiplier bl.
      const int64_t bl = s.block_len;
      b.affine_range("iota_fold", Expr::floordiv(s.tiles, bl), [&](Expr fold) {
        b.iota(narrow(dst, 1, fold * bl, Expr(bl)), s.base + fold * (kSlotPartitions * bl), bl,
               iota_steps(dst, 1));
      });
      break;
    }
  }
}

void emit_swa_mask(Builder& b, const SwaMask& m) {
  const Expr n = m.tiles;
  // Column (b, i) of the [128, batches, s_active] positions.
  auto col = [](const Access& a, Expr bi, Expr i) { return narrow(narrow(a, 1, bi, 1), 2, i, 1); };
  b.affine_range("swa_b", m.batches, [&](Expr bi) {
    // Three fp32 scratch tiles per batch (gen_mask_tkg.py 470–488: fp32 because tensor_scalar
    // arithmetic needs it).
    auto ge = b.sbuf(SwaMask::kGeTile + m.suffix, DType::fp32, {kSlotPartitions, n, 1});
    auto lt = b.sbuf("swa_lt" + m.suffix, DType::fp32, {kSlotPartitions, n, 1});
    auto scratch = b.sbuf("swa_scratch" + m.suffix, DType::fp32, {kSlotPartitions, n, 1});
    const Access wrap_flag = lt({all(), ds(0, 1), all()});
    b.affine_range("swa_i", m.s_active, [&](Expr i) {
      const Access start = col(m.start, bi, i), end = col(m.pos, bi, i);
      // Steps 1–2 (493–507): ge = iota >= start, lt = iota < end.
      b.tensor_scalar(ge(), m.iota, AluOp::is_ge, start);
      b.tensor_scalar(lt(), m.iota, AluOp::is_lt, end);
      // Steps 3–5 (510–516): normal = ge·lt, wrap = max(ge, lt), diff = wrap − normal.
      b.tensor_tensor(scratch(), ge(), lt(), AluOp::multiply);
      b.tensor_tensor(ge(), ge(), lt(), AluOp::max);
      b.tensor_tensor(ge(), ge(), scratch(), AluOp::subtract);
      // Step 6 (519–524): is_wrap = start > end, into column 0 of lt.
      b.tensor_tensor(wrap_flag, start, end, AluOp::is_gt);
      // Steps 7–8 (527–535): final = normal + is_wrap·diff.
      b.tensor_scalar(ge(), ge(), AluOp::multiply, wrap_flag);
      b.tensor_tensor(ge(), scratch(), ge(), AluOp::add);
      // Step 9 (537–548): one copy per head. The source alternates the Scalar and Vector
      // engines by the parity of b + h + i in trace-time loops; these loops are symbolic, so
      // every copy runs on the Scalar engine (same values; only the engine balance differs).
      b.affine_range("swa_h", m.heads, [&](Expr h) {
        b.tensor_copy(m.mask_out({all(), all(), one(bi), one(h), one(i)}), ge(), Engine::Scalar);
      });
    });
  });
}

bool swa_keeps(int64_t j, int64_t start, int64_t end) {
  const bool ge = j >= start, lt = j < end;
  return start > end ? (ge || lt) : (ge && lt);
}

}  // namespace ncv::kernels::tkg
