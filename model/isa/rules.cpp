#include "model/isa/rules.h"

#include <array>
#include <stdexcept>

namespace ncv {
inline namespace isa {

namespace {

// One row per Rule, in enum order (checked by rule_info).
struct Row {
  Rule rule;
  RuleInfo info;
};
constexpr std::array<Row, kNumRules> kRules = {{
    {Rule::access_size,
     {"access sizes >= 1", CheckKind::shape_rule, "model: a view has at least one element"}},
    {Rule::indirect_not_partition,
     {"indirect dim is not the partition dim", CheckKind::shape_rule,
      "model: indirect offsets move rows of a free dim (DGE gathers)"}},
    {Rule::indirect_offsets_column,
     {"indirect offsets column [P,1]", CheckKind::shape_rule,
      "model: one offset per row of the view"}},
    {Rule::partition_start,
     {"partition start alignment", CheckKind::partition_rule,
      "ARCH2 general engine model, partition constraints"}},
    {Rule::free_size,
     {"free size", CheckKind::shape_rule, "ARCH2: Vector/Scalar free size 64K (SBUF), 4K (PSUM)"}},
    {Rule::psum_bank,
     {"PSUM tile inside one bank", CheckKind::psum_bank,
      "ARCH2 PSUM banks; ALLOC: a PSUM tile cannot cross a bank"}},
    {Rule::dma_element_counts,
     {"dma element counts match", CheckKind::shape_rule, "ISA-NEW dma_copy"}},
    {Rule::dma_rows_paired,
     {"dma rows paired (oob_skip, dst_rmw)", CheckKind::shape_rule,
      "model: ISA-OLD dma_copy skips (oob_mode.skip) or accumulates (dst_rmw_op) row by row"}},
    {Rule::matmul_contraction,
     {"matmul K matches", CheckKind::shape_rule, "ISA-NEW nc_matmul: K on the partition axis"}},
    {Rule::matmul_k, {"matmul K", CheckKind::shape_rule, "ISA-NEW nc_matmul limits"}},
    {Rule::matmul_m, {"matmul M", CheckKind::shape_rule, "ISA-NEW nc_matmul limits"}},
    {Rule::matmul_n, {"matmul N", CheckKind::shape_rule, "ISA-NEW nc_matmul limits"}},
    {Rule::matmul_dst_shape,
     {"matmul destination is [M, N]", CheckKind::shape_rule, "ISA-NEW nc_matmul"}},
    {Rule::matmul_bf16_psum,
     {"matmul into bf16 PSUM", CheckKind::engine_rule,
      "ISA-NEW nc_matmul: fp32 PSUM on v2/v3, bf16 allowed on v4 (ARCH4)"}},
    {Rule::transpose_size,
     {"transpose size", CheckKind::shape_rule, "ISA-OLD nc_transpose: TensorE 128, VectorE 32"}},
    {Rule::transpose_dst_shape,
     {"transpose destination is [F, P]", CheckKind::shape_rule, "ISA-OLD nc_transpose"}},
    {Rule::column_operand,
     {"per-partition column [P,1]", CheckKind::shape_rule,
      "ISA-NEW activation, tensor_scalar: per-partition scalar operands"}},
    {Rule::same_shape,
     {"operand shapes match", CheckKind::shape_rule,
      "ARCH2: source and destination occupy the same number of partitions"}},
    {Rule::reduce_dst_shape,
     {"tensor_reduce destination is [P, kept]", CheckKind::shape_rule, "ISA-NEW tensor_reduce"}},
    {Rule::affine_pattern_int32,
     {"affine pattern fits int32", CheckKind::shape_rule,
      "ISA-NEW iota, affine_select: the pattern is computed in int32"}},
    {Rule::scalar_tensor_copy,
     {"tensor_copy on the scalar engine", CheckKind::engine_rule,
      "ARCH3: ScalarE tensor_copy from NeuronCore-v3"}},
    {Rule::top8_values,
     {"8 values per partition [P, 8]", CheckKind::shape_rule,
      "ISA-OLD max8, nc_find_index8, nc_match_replace8: exactly 8 elements per partition"}},
    {Rule::top8_source_size,
     {"top-8 data elements per partition", CheckKind::shape_rule,
      "ISA-OLD max8, nc_find_index8: 8 to 16,384 elements per partition; nc_match_replace8: at "
      "most 16,384"}},
    {Rule::buffer_partitions,
     {"buffer partitions", CheckKind::partition_rule, "ARCH2: 128 partitions per core"}},
    {Rule::range_select_generation,
     {"range_select on NeuronCore-v3 or newer", CheckKind::engine_rule,
      "nki.isa.range_select (SDK 2.26): available only on NeuronCore-v3 and beyond"}},
    {Rule::mx_generation,
     {"MX instructions on NeuronCore-v4 or newer", CheckKind::engine_rule,
      "nki.isa.quantize_mx, nki.isa.nc_matmul_mx (NKI 0.6 docstrings): available only on "
      "NeuronCore-v4 and newer"}},
    {Rule::mx_layout,
     {"MX tile and scale layout", CheckKind::shape_rule,
      "nki.isa.quantize_mx / nc_matmul_mx \"Tile size\": a multiple of 32 partitions, at most "
      "128; 4 source values per packed element; scales in the first 4 rows of each quadrant "
      "(MX deep dive \"Scale Tensor\")"}},
}};

}  // namespace

const RuleInfo& rule_info(Rule r) {
  const Row& row = kRules.at(static_cast<size_t>(r));
  if (row.rule != r) throw std::logic_error("isa rule table out of enum order");
  return row.info;
}

std::string rule_label(Rule r, int64_t limit) {
  const std::string name(rule_info(r).name);
  const std::string l = std::to_string(limit);
  if (r == Rule::transpose_size) return name + " <= " + l + "x" + l;
  return name + " <= " + l;
}

std::string free_size_label(Memory m, const HwConfig& hw) {
  return rule_label(Rule::free_size, free_size_limit(m, hw)) +
         (m == Memory::SBUF ? " (SBUF)" : " (PSUM)");
}

std::string same_shape_label(std::string_view instruction) {
  return std::string(rule_info(Rule::same_shape).name) + " (" + std::string(instruction) + ")";
}

int64_t free_size_limit(Memory m, const HwConfig& hw) {
  return m == Memory::SBUF ? hw.free_max_sbuf_elems : hw.free_max_psum_elems;
}

int64_t transpose_limit(Engine e, const HwConfig& hw) {
  return e == Engine::Tensor ? hw.tensor_transpose_max : hw.vector_transpose_max;
}

}  // namespace isa
}  // namespace ncv
