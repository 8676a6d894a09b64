#include "properties/bug_classes.h"

#include <map>
#include <stdexcept>
#include <string>

#include "kernels/registry.h"

namespace ncv::props {

namespace {

const std::map<std::string, BugClass, std::less<>>& class_table() {
  using C = BugClass;
  static const std::map<std::string, BugClass, std::less<>> table = {
      {"causal_mask_off_by_one", C::mask},
      {"causal_mask_excludes_diagonal", C::mask},
      {"causal_mask_fills_zero", C::mask},
      {"mask_fill_leaks_large_logits", C::mask},
      {"flash_window_off_by_one", C::mask},
      {"flash_skip_guard_strict", C::mask},
      {"tkg_position_off_by_one", C::mask},
      {"tkg_stale_cache_read", C::mask},
      {"tkg_swa_window_start_dropped", C::mask},
      {"cte_causal_diagonal_shifted", C::mask},
      {"cte_swa_window_off_by_one", C::mask},
      {"last_k_tile_dropped", C::tiling},
      {"seqlen_tail_ignored", C::tiling},
      {"seqlen_tail_keys_dropped", C::tiling},
      {"last_out_tile_one_off", C::tiling},
      {"reduction_skips_last_partition", C::tiling},
      {"flash_remat_store_ignores_pass", C::tiling},
      {"k_tile_uses_q_index", C::indexing},
      {"v_transposed", C::indexing},
      {"scratch_block_indices_swapped", C::indexing},
      {"flash_gqa_interleaved", C::indexing},
      {"flash_bias_transposed", C::indexing},
      {"tkg_kv_batch_offset_dropped", C::indexing},
      {"tkg_block_table_wrong_stride", C::indexing},
      {"tkg_out_in_sb_halves_not_swapped", C::indexing},
      {"cte_gqa_mapping_modulo", C::indexing},
      {"max_subtraction_missing", C::softmax},
      {"scale_applied_twice", C::softmax},
      {"reciprocal_not_applied", C::softmax},
      {"scale_off_2pct", C::softmax},
      {"row_max_subset_tiles", C::softmax},
      {"flash_lse_drops_max", C::softmax},
      {"flash_lse_store_off_by_max", C::softmax},
      {"flash_bias_dropped_on_diagonal", C::softmax},
      {"tkg_sink_ignored", C::softmax},
      {"cte_sink_ignored", C::softmax},
      {"flash_rescale_missing", C::online},
      {"pipelined_merge_rescale_missing", C::online},
      {"pipelined_sum_rescale_missing", C::online},
      {"psum_accumulate_flag_wrong", C::accumulation},
      {"psum_group_start_accumulates", C::accumulation},
      {"bf16_pv_accumulation", C::accumulation},
      {"carried_dependency_in_affine_loop", C::ordering},
      {"stale_psum_read", C::ordering},
      {"overlapping_explicit_placements", C::ordering},
      {"pipelined_exp_after_next_max", C::ordering},
      {"pipelined_sum_slot_off_by_one", C::ordering},
      {"pipelined_sum_slot_shared", C::ordering},
  };
  return table;
}

}  // namespace

std::string_view bug_class_name(BugClass c) {
  switch (c) {
    case BugClass::mask:
      return "mask";
    case BugClass::tiling:
      return "tiling";
    case BugClass::indexing:
      return "indexing";
    case BugClass::softmax:
      return "softmax";
    case BugClass::online:
      return "online";
    case BugClass::accumulation:
      return "accumulation";
    case BugClass::ordering:
      return "ordering";
  }
  return "?";
}

const std::vector<BugClass>& all_bug_classes() {
  static const std::vector<BugClass> all = {
      BugClass::mask,   BugClass::tiling,       BugClass::indexing, BugClass::softmax,
      BugClass::online, BugClass::accumulation, BugClass::ordering};
  return all;
}

BugClass bug_class(const BugEntry& entry) {
  const auto it = class_table().find(entry.name);
  if (it == class_table().end()) {
    throw std::logic_error("catalogue entry " + entry.name +
                           " has no bug class: add it to properties/bug_classes.cpp");
  }
  return it->second;
}

std::vector<const BugEntry*> one_entry_per_class() {
  // Chosen for a cheap base at its smallest shapes (the equiv gate of a sd_attention_allocated
  // entry took 19 s, of a sd_attention one 5-7 s) and, within that, for different kernels.
  static const std::vector<std::string_view> representatives = {
      "causal_mask_off_by_one",           "last_k_tile_dropped",   "k_tile_uses_q_index",
      "max_subtraction_missing",          "flash_rescale_missing", "psum_group_start_accumulates",
      "carried_dependency_in_affine_loop"};
  std::vector<const BugEntry*> picked;
  for (std::string_view name : representatives) {
    const BugEntry* e = find_bug(std::string(name));
    if (e == nullptr)
      throw std::logic_error("bug class representative " + std::string(name) +
                             " is not in the catalogue");
    picked.push_back(e);
  }
  return picked;
}

}  // namespace ncv::props
