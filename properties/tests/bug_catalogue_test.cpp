// The bug catalogue (properties/README.md): every entry's edit applies to its real base kernel and
// changes it, the base kernel passes `check` and the broken one fails it at the shape stored here,
// in the way stored here (a named dynamic check, or values beyond the contract's bound). Plus the
// program editing helpers' refusal to edit what they cannot find.
#include "properties/bug_catalogue.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "check/check.h"
#include "kernels/flash_attention/pipelined_attention_common.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"
#include "properties/program_edit.h"

namespace ncv::props {
namespace {

// Where and how an entry's bug shows: the params of the run; how many seeded cases (the hard
// value distributions are cycled in order: uniform, uniform_positive, normal, large_logits, ...);
// and either the dynamic check that must refuse the run, or a value failure: outputs beyond the
// contract's bound, or non-finite where the oracle is finite (`nonfinite`).
struct Demonstration {
  ParamValues params;
  int cases = 3;
  std::optional<CheckKind> error;
  bool nonfinite = false;
  // The one distribution every case draws, instead of cycling the gate distributions (a heavy
  // base affords one case; each bug shows under another input).
  std::optional<oracle::Distribution> dist;
};

ParamValues sd(int64_t seqlen, int64_t d_head) {
  return {{"seqlen", seqlen}, {"d_head", d_head}};
}
ParamValues allocated(int64_t seqlen) {
  return {{"bs", 1}, {"seqlen", seqlen}, {"d_head", 128}};
}
ParamValues flash(int64_t seqlen, int64_t group = 1, int64_t kv_heads = 1) {
  return {{"bs", 1}, {"kv_heads", kv_heads}, {"group", group}, {"seqlen", seqlen}, {"d_head", 32}};
}
// pipelined_attention's only shape: one case costs ~55 s (a heavy variant).
ParamValues pipelined() {
  return {{"bs", 1}, {"seqlen", 16384}};
}
ParamValues tkg(int64_t bs, int64_t q_head, int64_t s_active, int64_t seqlen) {
  return {
      {"bs", bs}, {"q_head", q_head}, {"s_active", s_active}, {"seqlen", seqlen}, {"d_head", 16}};
}
// attention_cte: bs_kv kv rows of `group` q rows each, d_head 32.
ParamValues cte(int64_t seqlen, int64_t bs_kv = 1, int64_t group = 1) {
  return {{"bs_kv", bs_kv}, {"group", group}, {"seqlen", seqlen}, {"d_head", 32}};
}
ParamValues flash_window(int64_t seqlen, int64_t window) {
  ParamValues p = flash(seqlen);
  p["window"] = window;
  return p;
}

const std::map<std::string, Demonstration>& demonstrations() {
  static const std::map<std::string, Demonstration> d = {
      {"causal_mask_off_by_one", {sd(256, 64)}},
      {"causal_mask_excludes_diagonal", {sd(256, 64)}},
      {"causal_mask_fills_zero", {sd(256, 64)}},
      {"last_k_tile_dropped", {sd(256, 64)}},
      // 320 = 2.5 tiles: the partial third tile holds query rows and keys 256..319. Its rows of
      // out are never written.
      {"seqlen_tail_ignored", {sd(320, 64), 3, CheckKind::output_not_written}},
      {"seqlen_tail_keys_dropped", {sd(320, 64)}},
      {"k_tile_uses_q_index", {sd(256, 64)}},
      // The transposed [d, 128] view only fits the [128, d] tile when d_head = 128.
      {"v_transposed", {sd(256, 128)}},
      // Only large_logits (the fourth distribution) drives exp(s) past fp32's range.
      {"max_subtraction_missing", {sd(256, 64), 4, std::nullopt, /*nonfinite=*/true}},
      {"scale_applied_twice", {sd(256, 64)}},
      {"reciprocal_not_applied", {sd(256, 64)}},
      // sd_attention_allocated's smallest shape is seqlen 1024, where the oracle's error bound
      // costs about a second per case: one case each.
      {"psum_accumulate_flag_wrong", {allocated(1024), 1}},
      {"psum_group_start_accumulates", {sd(256, 64), 3, CheckKind::uninitialized_read}},
      {"bf16_pv_accumulation", {sd(512, 64)}},
      // Iteration 2 of the key-tile loop is the first to read what another iteration wrote.
      {"carried_dependency_in_affine_loop", {sd(512, 64), 3, CheckKind::carried_dependency}},
      {"stale_psum_read", {allocated(1024), 1, CheckKind::uninitialized_read}},
      {"overlapping_explicit_placements", {allocated(1024), 1, CheckKind::clobbered_read}},
      // fp32 operands (the entry fixes them): uniform values already show a 2% scale error.
      {"scale_off_2pct", {sd(256, 64)}},
      // 13 cases reach masked_dominant (index 12 of all_distributions): visible logits <= -40.
      {"mask_fill_leaks_large_logits", {sd(256, 64), 13}},
      // 12 cases reach rowmax_across_tiles (index 11): the second tile's max overflows exp.
      {"row_max_subset_tiles", {sd(256, 64), 12, std::nullopt, /*nonfinite=*/true}},
      {"last_out_tile_one_off", {sd(256, 64), 1, CheckKind::output_not_written}},
      {"reduction_skips_last_partition", {sd(256, 64)}},
      // The tutorial chain's smallest shape (v3 on): seqlen 512, d_head 128 fixed. v10's steady
      // state runs twice there.
      {"pipelined_exp_after_next_max", {{{"seqlen", 512}}, 2}},
      {"pipelined_sum_slot_off_by_one", {{{"seqlen", 512}}, 1}},
      {"scratch_block_indices_swapped", {{{"seqlen", 512}}, 1}},
      // Two large tiles of 512 keys: the max of some rows rises in the second.
      {"flash_rescale_missing", {flash(1024)}},
      {"flash_window_off_by_one", {flash_window(512, 64)}},
      // Two kv heads of two q heads each: the interleaved mapping swaps q heads 1 and 2.
      {"flash_gqa_interleaved", {flash(512, 2, 2)}},
      {"flash_skip_guard_strict", {flash(512)}},
      {"flash_lse_drops_max", {flash(512)}},
      // Training mode (the entry fixes it): every row's lse is off by its max.
      {"flash_lse_store_off_by_max", {flash(512)}},
      // The generated bias is not symmetric: every row's bias moves (the entry fixes the option).
      {"flash_bias_transposed", {flash(512)}},
      // Causal with the bias: every q tile has a diagonal 512-key tile.
      {"flash_bias_dropped_on_diagonal", {flash(512)}},
      // Two q tiles per pass (the entry fixes it): seqlen 512 runs two passes; rows 256..511
      // are never written, which the model reports before any comparison.
      {"flash_remat_store_ignores_pass", {flash(512), 1, CheckKind::output_not_written}},
      // One case each. The rescale bugs need a row max that section 1 raises: rowmax_across_tiles
      // puts it there for rows 64..127 of every group, ~128 above section 0's (peaked leaves them
      // within the bound). The shared sum slot needs neighbouring groups with different row
      // sums: peaked (rowmax_across_tiles repeats its pattern every 128 rows, so group g + 1's
      // sums equal group g's up to noise and the bug passes it).
      {"pipelined_merge_rescale_missing",
       {pipelined(), 1, std::nullopt, false, oracle::Distribution::rowmax_across_tiles}},
      {"pipelined_sum_rescale_missing",
       {pipelined(), 1, std::nullopt, false, oracle::Distribution::rowmax_across_tiles}},
      {"pipelined_sum_slot_shared",
       {pipelined(), 1, std::nullopt, false, oracle::Distribution::peaked}},
      // attention_tkg (on trn2, its default generation): check's first case of a kv_cache
      // spec draws stale_cache, whose stale cache slots dominate any row that reads one; seed 1
      // puts batch 0's position at 0 (every cached slot stale).
      {"tkg_position_off_by_one", {tkg(2, 2, 3, 512), 1}},
      {"tkg_stale_cache_read", {tkg(2, 2, 3, 512), 1}},
      // One head's sink is 60 (Variant::draw_case): it dominates that head's rows.
      {"tkg_sink_ignored", {tkg(2, 2, 3, 512), 1}},
      // bs * q_head * s_active = 160 > 128 with bs even: the source's batch split.
      {"tkg_kv_batch_offset_dropped", {tkg(4, 8, 5, 640), 1}},
      // Two batches and two folds of 128 blocks of 16 (the edit changes nothing with one of
      // either); over 3 cases some batch sees a fold whose blocks the edit swaps.
      {"tkg_block_table_wrong_stride", {tkg(2, 1, 3, 4096), 3}},
      // Case 3 (seed 3) draws a window of 1 + u(16) slots: dropping its first slot removes a
      // large part of the row's weight (draw_window_and_table).
      {"tkg_swa_window_start_dropped", {tkg(2, 2, 3, 512), 3}},
      // The batch split (bs * q_head * s_active = 160 > 128, bs even) with the output in SBUF:
      // the wrapper's copy of it reads the other core's half, never written there.
      {"tkg_out_in_sb_halves_not_swapped", {tkg(4, 8, 5, 640), 1, CheckKind::uninitialized_read}},
      // Two kv rows of two q rows: q rows 1 and 2 read the other kv row.
      {"cte_gqa_mapping_modulo", {cte(512, 2, 2), 1}},
      {"cte_causal_diagonal_shifted", {cte(512), 1}},
      // The sinks (18.5, 1.25, ...) are far from negligible against these rows' logits.
      {"cte_sink_ignored", {cte(512, 1, 2), 1}},
      // A window of 200 keys: the extra key q - 200 is visible in every row from 200 on.
      {"cte_swa_window_off_by_one",
       {[] {
          ParamValues p = cte(512);
          p["window"] = 200;
          return p;
        }(),
        3}},
  };
  return d;
}

const kernels::Variant& base_variant(const BugEntry& e) {
  const kernels::Variant* v = kernels::find_variant(e.base);
  if (v == nullptr) throw std::invalid_argument("no registered variant " + e.base);
  return *v;
}

TEST(BugCatalogue, HasAtLeastTwelveUniquelyNamedEntriesEachWithADemonstration) {
  const auto& entries = bug_catalogue();
  EXPECT_GE(entries.size(), 12u);
  std::set<std::string> names;
  for (const BugEntry& e : entries) {
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate entry " << e.name;
    EXPECT_EQ(find_bug(e.name), &e);
    EXPECT_FALSE(e.what.empty()) << e.name;
    EXPECT_NE(kernels::find_variant(e.base), nullptr) << e.name << ": base " << e.base;
    EXPECT_TRUE(demonstrations().count(e.name)) << e.name << " has no demonstration shape";
  }
  for (const auto& [name, demo] : demonstrations()) {
    EXPECT_NE(find_bug(name), nullptr) << "demonstration for unknown entry " << name;
  }
  EXPECT_EQ(find_bug("no_such_bug"), nullptr);
}

// The base kernel's verdict, once per (base, options, params, cases): several entries share one.
bool base_passes(const kernels::Variant& v, const Program& base, const kernels::Options& options,
                 const Demonstration& demo) {
  static std::map<std::string, bool> verdicts;
  std::string key = v.name;
  for (const auto& [name, value] : options) key += " " + name + "=" + value;
  for (const auto& [name, value] : demo.params) key += " " + name + "=" + std::to_string(value);
  key += " cases=" + std::to_string(demo.cases);
  if (demo.dist) key += std::string(" dist=") + oracle::distribution_name(*demo.dist);
  if (auto it = verdicts.find(key); it != verdicts.end()) return it->second;
  kernels::CheckOptions co;
  co.cases = demo.cases;
  co.run.hw = find_hw_config(kernels::default_generation(v));
  if (demo.dist) co.distributions = {*demo.dist};
  const kernels::CheckResult good = kernels::check_kernel(v, base, options, demo.params, co);
  EXPECT_TRUE(good.pass) << good.summary();
  return verdicts[key] = good.pass;
}

// The edit changes the base, the broken program round-trips through the printer, the base passes
// `demo` and the broken program fails it the way the demonstration says.
void expect_caught(const BugEntry& e, const kernels::Variant& v, const kernels::Options& options,
                   const Program& base, const Demonstration& demo) {
  const Program broken = e.edit(base);
  ASSERT_NE(print_program(broken), print_program(base)) << "the edit changed nothing";
  // The broken kernel is a valid program: it prints and parses back to itself.
  EXPECT_EQ(parse_program(print_program(broken)), broken);

  EXPECT_TRUE(base_passes(v, base, options, demo)) << e.base << " itself fails";
  kernels::CheckOptions co;
  co.cases = demo.cases;
  co.run.hw = find_hw_config(kernels::default_generation(v));
  if (demo.dist) co.distributions = {*demo.dist};
  const kernels::CheckResult bad = kernels::check_kernel(v, broken, options, demo.params, co);
  // FAIL, not UNKNOWN: a bug the model cannot judge is not caught.
  EXPECT_STREQ(bad.verdict(), "FAIL") << bad.summary();

  std::optional<CheckKind> first_error;
  int64_t nonfinite = 0;
  for (const kernels::CaseResult& c : bad.cases) {
    if (c.run_error && !first_error) first_error = c.run_error->kind;
    if (!c.run_error) nonfinite += c.comparison.nonfinite_mismatch;
  }
  if (demo.error) {
    ASSERT_TRUE(first_error.has_value()) << bad.summary();
    EXPECT_EQ(check_kind_name(*first_error), check_kind_name(*demo.error)) << bad.summary();
  } else if (demo.nonfinite) {
    EXPECT_FALSE(first_error.has_value()) << bad.summary();
    EXPECT_GT(nonfinite, 0) << bad.summary();
  } else {
    EXPECT_FALSE(first_error.has_value()) << bad.summary();
    EXPECT_GT(bad.worst_normalized, 1.0) << bad.summary();
  }
  std::printf("[bug] %-34s %-24s worst normalized %.3g, non-finite %lld%s%s\n", e.name.c_str(),
              e.base.c_str(), bad.worst_normalized, static_cast<long long>(nonfinite),
              first_error ? ", model error " : "",
              first_error ? std::string(check_kind_name(*first_error)).c_str() : "");
}

class BugEntryTest : public testing::TestWithParam<std::string> {};

TEST_P(BugEntryTest, EditChangesTheBaseAndCheckCatchesIt) {
  const BugEntry& e = *find_bug(GetParam());
  const kernels::Variant& v = base_variant(e);
  const kernels::Options options = v.resolve(e.options);
  expect_caught(e, v, options, v.build(options), demonstrations().at(e.name));
}

// The entries whose base is heavy (kernels::heavy_check: about a minute per case) or not.
std::vector<std::string> entry_names(bool heavy) {
  std::vector<std::string> names;
  for (const BugEntry& e : bug_catalogue()) {
    if (kernels::heavy_check(base_variant(e)) == heavy) names.push_back(e.name);
  }
  return names;
}

std::string param_name(const testing::TestParamInfo<std::string>& param) {
  return param.param;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BugEntryTest, testing::ValuesIn(entry_names(false)),
                         param_name);
// Heavy bases: the deep tier (their default-tier sibling judges each entry more cheaply,
// README.md "Tests").
INSTANTIATE_TEST_SUITE_P(Deep, BugEntryTest, testing::ValuesIn(entry_names(true)), param_name);

// `ncverify check ENTRY` and `bugs --gate` sweep every option set the entry leaves open: the edit
// must find its pattern in each of them (an entry pins the options where its pattern exists).
class BugEntryOptionSets : public testing::TestWithParam<std::string> {};

TEST_P(BugEntryOptionSets, EditAppliesAtEveryOptionSetTheCheckEnumerates) {
  const BugEntry& e = *find_bug(GetParam());
  const kernels::Variant& v = base_variant(e);
  for (const kernels::Options& o : kernels::resolved_combinations(v, e.options)) {
    std::string label;
    for (const auto& [name, value] : o) label += name + "=" + value + " ";
    const Program base = v.build(o);
    try {
      EXPECT_NE(print_program(e.edit(base)), print_program(base)) << label << "changed nothing";
    } catch (const std::logic_error& err) {
      ADD_FAILURE() << "at " << label << ": " << err.what();
    }
  }
}

std::vector<std::string> all_entry_names() {
  std::vector<std::string> names;
  for (const BugEntry& e : bug_catalogue()) names.push_back(e.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BugEntryOptionSets, testing::ValuesIn(all_entry_names()),
                         param_name);

// The default tier's judge of the heavy bases' entries: the same edit on the base's builder at a
// scaled-down shape (pipelined_attention with two 2048-key sections instead of 8192: 1/16 of a
// case), demonstrated with the entry's own distribution. Every such entry runs here (a few
// seconds each): the tier's coverage guard counts an entry only when a default-tier test judged
// it, and the entries' own demonstrations at the full shape are deep-tier tests (Deep/).
std::vector<std::string> scaled_entry_names() {
  std::vector<std::string> names;
  for (const BugEntry& e : bug_catalogue()) {
    if (e.base == "pipelined_attention") names.push_back(e.name);
  }
  return names;
}

class ScaledBugEntryTest : public testing::TestWithParam<std::string> {};

TEST_P(ScaledBugEntryTest, EditOfTheScaledBaseIsCaught) {
  const BugEntry& e = *find_bug(GetParam());
  const kernels::PipeShape shape{.section_len = 2048};
  const kernels::Variant v = kernels::pipelined_attention_scaled_variant(shape);
  const kernels::Options options = v.resolve(e.options);
  Demonstration demo = demonstrations().at(e.name);
  demo.params["seqlen"] = shape.seqlen();
  expect_caught(e, v, options, v.build(options), demo);
}

INSTANTIATE_TEST_SUITE_P(Scaled, ScaledBugEntryTest, testing::ValuesIn(scaled_entry_names()),
                         param_name);

// The carried-dependency entry is wrong only in its promise: the same program with the key-tile
// loop declared sequential computes the right values.
TEST(BugCatalogue, CarriedDependencyEntryIsRightOnceItsLoopIsSequential) {
  const BugEntry& e = *find_bug("carried_dependency_in_affine_loop");
  const kernels::Variant& v = base_variant(e);
  const kernels::Options options = v.resolve(e.options);
  Program p = e.edit(v.build(options));
  Loop& loop =
      find_loop(p, "i_k_seq_tile", {.op = "tensor_tensor", .writes = "pv_acc_sbuf"}).loop();
  ASSERT_EQ(loop.kind, LoopKind::affine);
  loop.kind = LoopKind::sequential;
  const kernels::CheckResult r = kernels::check_kernel(v, finish_edit(std::move(p)), options,
                                                       demonstrations().at(e.name).params);
  EXPECT_TRUE(r.pass) << r.summary();
}

// The tail entries are edge bugs: at a multiple of 128 there is no partial tile to ignore, and
// the broken kernels are right.
TEST(BugCatalogue, TailEntriesAreInvisibleAtMultiplesOf128) {
  for (const char* name : {"seqlen_tail_ignored", "seqlen_tail_keys_dropped"}) {
    const BugEntry& e = *find_bug(name);
    const kernels::Variant& v = base_variant(e);
    const kernels::Options options = v.resolve(e.options);
    const kernels::CheckResult r =
        kernels::check_kernel(v, e.edit(v.build(options)), options, sd(256, 64));
    EXPECT_TRUE(r.pass) << name << "\n" << r.summary();
  }
}

// An edit written against a kernel's structure refuses a kernel without that structure.
TEST(BugCatalogue, EditsThrowWhenTheirPatternIsMissing) {
  const kernels::Variant& tutorial = *kernels::find_variant("sd_attention");
  const Program plain = tutorial.build(tutorial.resolve({}));  // no causal mask
  EXPECT_THROW(find_bug("causal_mask_off_by_one")->edit(plain), std::logic_error);
  EXPECT_THROW(find_bug("stale_psum_read")->edit(plain), std::logic_error);
  EXPECT_THROW(find_bug("seqlen_tail_ignored")->edit(plain), std::logic_error);
}

TEST(ProgramEdit, FindersNameWhatTheyDidNotFind) {
  const kernels::Variant& tutorial = *kernels::find_variant("sd_attention");
  Program p = tutorial.build(tutorial.resolve({}));
  try {
    find_instruction(p, {.op = "matmul", .writes = "no_such_tensor"});
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& err) {
    EXPECT_NE(std::string(err.what()).find("matmul writing 'no_such_tensor'"), std::string::npos)
        << err.what();
  }
  // Three matmuls write PSUM tiles in different loops: an ambiguous query is refused too.
  EXPECT_THROW(find_instruction(p, {.op = "matmul"}), std::logic_error);
  EXPECT_THROW(find_loop(p, "no_such_loop"), std::logic_error);
  EXPECT_THROW(find_tensor(p, "no_such_tensor"), std::logic_error);
  EXPECT_THROW(
      instruction_as<Matmul>(find_instruction(p, {.op = "reciprocal", .writes = "sum_reciprocal"})),
      std::logic_error);
}

TEST(ProgramEdit, SubstituteReplacesEverySubexpressionAndMoveBeforeReorders) {
  const Expr i = Expr::var("i"), j = Expr::var("j"), s = Expr::var("seqlen");
  EXPECT_EQ(substitute(Expr::floordiv(s + 127, 128) + i * 128, i, j),
            Expr::floordiv(s + 127, 128) + j * 128);
  EXPECT_EQ(substitute(Expr::floordiv(s + 127, 128), s + 127, s), Expr::floordiv(s, 128));

  const kernels::Variant& tutorial = *kernels::find_variant("sd_attention");
  Program p = tutorial.build(tutorial.resolve({}));
  const InstrQuery eviction{.op = "tensor_copy", .writes = "qk_res_buf"};
  const InstrQuery qk{.op = "matmul", .writes = "qk_psum"};
  move_before(find_instruction(p, eviction), find_instruction(p, qk));
  const StmtSite moved = find_instruction(p, eviction);
  EXPECT_EQ(moved.index + 1, find_instruction(p, qk).index);
  // A finished edit is renumbered and valid; the eviction now reads PSUM before it is written.
  const Program edited = finish_edit(std::move(p));
  EXPECT_EQ(edited.num_instructions, tutorial.build(tutorial.resolve({})).num_instructions);
}

}  // namespace
}  // namespace ncv::props
