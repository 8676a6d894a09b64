// Rewrites written as .nkir against the two-pass kernel of tests/data/two_pass.nkir: the harmless
// ones an optimizer makes (loop fission, reordering, renaming, another DMA queue, a scale moved
// into the activation, an affine loop made sequential) are proved bit-exact; precision-changing
// edits are never called bit-exact and each is located at its instruction; the online-softmax
// form of the same attention (tests/data/online_softmax.nkir) is proved equal in real arithmetic
// with its overflow obligation discharged, and a rescale bug in it is not.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "equiv/equiv.h"
#include "equiv/shapes.h"
#include "equiv/structural.h"
#include "model/nkir/parse.h"

namespace ncv::equiv {
namespace {

std::string read_data(const std::string& name) {
  std::ifstream f(std::string(NCV_EQUIV_DATA_DIR) + "/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// `text` with `from` replaced by `to` (exactly once: the edit must hit what it means to).
std::string edit(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return text;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "ambiguous edit: " << from;
  return text.replace(at, from.size(), to);
}

OptionOutcome compare(const std::string& original, const std::string& rewrite,
                      const char* gen = "trn1") {
  EquivRequest req;
  req.original = {"original", nullptr, parse_program(original, "original.nkir")};
  req.rewrite = {"rewrite", nullptr, parse_program(rewrite, "rewrite.nkir")};
  req.cases = 4;
  req.run.hw = find_hw_config(gen);
  const EquivResult r = run_equiv(req);
  EXPECT_EQ(r.outcomes.size(), 1u);
  return r.outcomes.at(0);
}

const std::string kBase = read_data("two_pass.nkir");

// Rewrites that change no bit of the result.
std::vector<std::pair<const char*, std::string>> harmless_rewrites() {
  return {
      {"renamed buffers",
       std::regex_replace(std::regex_replace(kBase, std::regex("\\bp_t\\b"), "probs_t"),
                          std::regex("\\bscaled\\b"), "logits")},
      {"another DMA queue", edit(kBase, "K[:, :], queue=1", "K[:, :], queue=3")},
      {"independent instructions reordered",
       edit(edit(kBase, "dma_copy v1[:, :], V[128:+128, :], queue=2\n", ""),
            "matmul scores[:, :], stationary=q[:, :], moving=k[:, :]\n",
            "matmul scores[:, :], stationary=q[:, :], moving=k[:, :]\n"
            "dma_copy v1[:, :], V[128:+128, :], queue=2\n")},
      {"affine loop made sequential", edit(kBase, "affine_range(2)", "sequential_range(2)")},
      {"loop fission", edit(kBase,
                            "for t in affine_range(2) {\n"
                            "  buffer p_t_psum : psum fp32 [128, 128]\n"
                            "  transpose p_t_psum[:, :], p[:, t * 128:+128]\n"
                            "  tensor_copy p_t[:, t * 128:+128], p_t_psum[:, :]\n"
                            "}\n",
                            "buffer p_t_psum : psum fp32 [128, 256]\n"
                            "for t in affine_range(2) {\n"
                            "  transpose p_t_psum[:, t * 128:+128], p[:, t * 128:+128]\n"
                            "}\n"
                            "for u in affine_range(2) {\n"
                            "  tensor_copy p_t[:, u * 128:+128], p_t_psum[:, u * 128:+128]\n"
                            "}\n")},
      {"loop unrolled and fused with the PV matmuls",
       edit(edit(kBase,
                 "buffer o_psum : psum fp32 [128, d]\n"
                 "matmul o_psum[:, :], stationary=p_t[:, 0:+128], moving=v0[:, :]\n",
                 ""),
            "for t in affine_range(2) {\n"
            "  buffer p_t_psum : psum fp32 [128, 128]\n"
            "  transpose p_t_psum[:, :], p[:, t * 128:+128]\n"
            "  tensor_copy p_t[:, t * 128:+128], p_t_psum[:, :]\n"
            "}\n",
            "buffer p_t_psum : psum fp32 [128, 256]\n"
            "transpose p_t_psum[:, 0:+128], p[:, 0:+128]\n"
            "tensor_copy p_t[:, 0:+128], p_t_psum[:, 0:+128]\n"
            "buffer o_psum : psum fp32 [128, d]\n"
            "matmul o_psum[:, :], stationary=p_t[:, 0:+128], moving=v0[:, :]\n"
            "transpose p_t_psum[:, 128:+128], p[:, 128:+128]\n"
            "tensor_copy p_t[:, 128:+128], p_t_psum[:, 128:+128]\n")},
      {"scale moved from the tensor_scalar into the activation",
       edit(kBase, "activation p[:, :], scaled[:, :], func=exp,",
            "activation p[:, :], scores[:, :], func=exp, scale=0.125,")},
  };
}

// Every `stride`-th harmless rewrite (from `first`) is proved bit-exact.
void expect_harmless_rewrites_proved(const size_t first, const size_t stride) {
  const auto rewrites = harmless_rewrites();
  for (size_t k = first; k < rewrites.size(); k += stride) {
    const auto& [what, text] = rewrites[k];
    SCOPED_TRACE(what);
    const OptionOutcome o = compare(kBase, text);
    ASSERT_TRUE(o.interface_error.empty()) << o.interface_error;
    EXPECT_EQ(o.bit_exact, Verdict::proved) << o.bit_detail;
    EXPECT_TRUE(o.holds(Level::bit_exact));
  }
}

// The default tier proves every other rewrite (renamings, queues, reorderings, loop forms among
// them); the deep tier proves them all.
TEST(HarmlessRewrites, AreProvedBitExact) {
  expect_harmless_rewrites_proved(0, 2);
}

TEST(DeepHarmlessRewrites, AreProvedBitExact) {
  expect_harmless_rewrites_proved(0, 1);
}

// Renaming buffers or loop variables, moving a transfer to another DMA queue and reordering
// independent statements leave the program itself as it was: proved for every shape of the
// domain (d in [32, 64] multiple of 32) without building terms. The other harmless rewrites (loop
// forms, a scale moved) are other programs and stay with the bounded layers, as does any edit of
// a value, a dtype or an input's name.
TEST(StructuralRewrites, RenamingQueuesAndOrderAreProvedForEveryShape) {
  const Program base = parse_program(kBase, "original.nkir");
  for (const auto& [what, text] : harmless_rewrites()) {
    const std::string w = what;
    EXPECT_EQ(same_program_up_to_layer0(base, parse_program(text, "rewrite.nkir")).has_value(),
              w == "renamed buffers" || w == "another DMA queue" ||
                  w == "independent instructions reordered")
        << w;
  }
  const std::string all_three =
      edit(std::regex_replace(harmless_rewrites()[0].second, std::regex("\\bt\\b"), "tile"),
           "K[:, :], queue=1", "K[:, :], queue=3");
  ASSERT_NE(all_three.find("for tile in"), std::string::npos);
  EXPECT_TRUE(same_program_up_to_layer0(base, parse_program(all_three, "r.nkir")));
  // The engine of a tensor_scalar (or a float tensor_tensor, tensor_copy, memset, reciprocal)
  // changes no value; a transpose's does (the Tensor engine's identity matmul turns -0 into +0).
  EXPECT_TRUE(same_program_up_to_layer0(
      base, parse_program(edit(kBase, "op0=multiply, operand0=0.125",
                               "op0=multiply, operand0=0.125, engine=scalar"),
                          "e.nkir")));
  EXPECT_TRUE(same_program_up_to_layer0(
      base, parse_program(edit(kBase, "reciprocal inv_sum[:, :], row_sum[:, :]",
                               "reciprocal inv_sum[:, :], row_sum[:, :], engine=vector"),
                          "r.nkir")));
  EXPECT_FALSE(same_program_up_to_layer0(
      base, parse_program(edit(kBase, "transpose p_t_psum[:, :], p[:, t * 128:+128]",
                               "transpose p_t_psum[:, :], p[:, t * 128:+128], engine=vector"),
                          "t.nkir")));
  // A rewrite that accepts more shapes is the same program on the original's domain; one that
  // accepts fewer is not.
  const std::string param = "param d in [32, 64] multiple_of 32";
  EXPECT_TRUE(same_program_up_to_layer0(
      base, parse_program(edit(kBase, param, "param d in [16, 128] multiple_of 16"), "w.nkir")));
  EXPECT_FALSE(same_program_up_to_layer0(
      base, parse_program(edit(kBase, param, "param d in [32, 32] multiple_of 32"), "n.nkir")));
  EXPECT_FALSE(same_program_up_to_layer0(
      base, parse_program(edit(kBase, param, "param d in [32, 64] multiple_of 64"), "g.nkir")));
  const OptionOutcome o = compare(kBase, all_three);
  EXPECT_EQ(o.all_shapes, "d in [32, 64] multiple of 32");
  EXPECT_EQ(o.bit_exact, Verdict::proved);
  EXPECT_NE(o.bit_detail.find("every shape of the domain"), std::string::npos) << o.bit_detail;
  EXPECT_EQ(o.to_json()["bit_exact"]["scope"], "all_shapes");
  EXPECT_TRUE(o.regions.empty());  // no terms were built
  for (const std::string& other :
       {edit(kBase, "operand0=0.125", "operand0=0.12"),
        edit(kBase, "buffer p : sbuf fp32", "buffer p : sbuf bf16"),
        std::regex_replace(kBase, std::regex("\\bK\\b"), "Keys"),
        // the loop variable renamed and the loop's range changed: another program
        edit(std::regex_replace(kBase, std::regex("\\bt\\b"), "tile"),
             "for tile in affine_range(2)", "for tile in sequential_range(2)")}) {
    EXPECT_FALSE(same_program_up_to_layer0(base, parse_program(other, "other.nkir"))) << other;
  }
}

// A domain of a few points is checked at every point, so a bounded proof there holds for every
// shape: two_pass's d takes 32 and 64 only. Loop fission is no layer-0 rewrite, yet proved for the
// whole domain; with d pinned, or in a domain of more points, the proof stays bounded.
TEST(WholeDomain, AFewPointsAreAllCheckedAndTheProofCoversTheDomain) {
  const Program base = parse_program(kBase, "original.nkir");
  const auto points = whole_domain(base, kWholeDomainPoints);
  ASSERT_TRUE(points.has_value());
  EXPECT_EQ(*points, (std::vector<ParamValues>{{{"d", 32}}, {{"d", 64}}}));
  const std::string wider =
      edit(kBase, "param d in [32, 64] multiple_of 32", "param d in [32, 256] multiple_of 32");
  EXPECT_FALSE(whole_domain(parse_program(wider, "wider.nkir"), kWholeDomainPoints).has_value());
  const std::string related = edit(wider, "param d in [32, 256] multiple_of 32\n",
                                   "param d in [32, 128] multiple_of 32\nrequire d <= 64\n");
  EXPECT_EQ(whole_domain(parse_program(related, "related.nkir"), kWholeDomainPoints), points);

  const std::string fission = harmless_rewrites()[4].second;
  ASSERT_EQ(std::string(harmless_rewrites()[4].first), "loop fission");
  const OptionOutcome o = compare(kBase, fission);
  EXPECT_TRUE(o.all_shapes.empty());  // not layer 0
  EXPECT_TRUE(o.whole_domain);
  EXPECT_EQ(o.bit_exact, Verdict::proved);
  EXPECT_NE(o.bit_detail.find("every shape of the domain (d in [32, 64] multiple of 32: all 2 "
                              "point(s) checked)"),
            std::string::npos)
      << o.bit_detail;
  EXPECT_EQ(o.to_json()["bit_exact"]["scope"], "all_shapes");

  const OptionOutcome w = compare(wider, edit(fission, "param d in [32, 64] multiple_of 32",
                                              "param d in [32, 256] multiple_of 32"));
  EXPECT_FALSE(w.whole_domain);
  EXPECT_EQ(w.bit_exact, Verdict::proved);
  EXPECT_EQ(w.to_json()["bit_exact"]["scope"], "bounded");
}

// Statements that commute are put in one order (reorder.h); those that do not keep theirs: a
// read moved above its write, a statement moved across an instruction with engine state (the
// activation's accumulator: conservative, the move is harmless there but layer 0 does not take
// it), and two writes of buffers whose explicit placements overlap. All three together with the
// renamings: the independent reordering is still proved for every shape.
TEST(StructuralRewrites, OnlyIndependentStatementsAreReordered) {
  const Program base = parse_program(kBase, "original.nkir");
  const std::string v1_load = "dma_copy v1[:, :], V[128:+128, :], queue=2\n";
  const std::string reordered = harmless_rewrites()[2].second;
  const std::string renamed_too =
      edit(std::regex_replace(std::regex_replace(reordered, std::regex("\\bt\\b"), "tile"),
                              std::regex("\\bscaled\\b"), "logits"),
           "K[:, :], queue=1", "K[:, :], queue=3");
  const OptionOutcome o = compare(kBase, renamed_too);
  EXPECT_EQ(o.all_shapes, "d in [32, 64] multiple of 32");
  EXPECT_EQ(o.bit_exact, Verdict::proved);
  EXPECT_NE(o.bit_detail.find("order of independent statements"), std::string::npos)
      << o.bit_detail;

  const std::string read_before_write =
      edit(edit(kBase, v1_load, ""), "buffer inv_sum : sbuf fp32 [128, 1]\n",
           v1_load + "buffer inv_sum : sbuf fp32 [128, 1]\n");
  const std::string across_accumulator =
      edit(edit(kBase, v1_load, ""), "buffer p_t : sbuf fp32 [128, 256]\n",
           v1_load + "buffer p_t : sbuf fp32 [128, 256]\n");
  for (const std::string& other : {read_before_write, across_accumulator}) {
    EXPECT_FALSE(same_program_up_to_layer0(base, parse_program(other, "other.nkir"))) << other;
  }
  EXPECT_NE(compare(kBase, read_before_write).bit_exact, Verdict::proved);
  // Why not one program: the first statement where the canonical programs part, both texts.
  EXPECT_EQ(layer0_difference(base, parse_program(renamed_too, "r.nkir")), "");
  const std::string why = layer0_difference(base, parse_program(read_before_write, "o.nkir"));
  EXPECT_NE(why.find("of the canonical programs: original `"), std::string::npos) << why;
  EXPECT_NE(why.find("`, rewrite `"), std::string::npos) << why;
  const std::string scale_moved = harmless_rewrites()[6].second;
  ASSERT_NE(std::string(harmless_rewrites()[6].first).find("scale moved"), std::string::npos);
  const OptionOutcome moved = compare(kBase, scale_moved);
  EXPECT_EQ(moved.bit_exact, Verdict::proved);
  EXPECT_NE(moved.layer0_difference.find("activation"), std::string::npos)
      << moved.layer0_difference;
  EXPECT_EQ(moved.to_json()["layer0_difference"], moved.layer0_difference);
  EXPECT_EQ(compare(kBase, across_accumulator).bit_exact, Verdict::proved);  // bounded layers

  // v0 and v1 at one address, v1 loaded once v0's last reader has run; loaded before that read,
  // it clobbers v0 (the rewrite fails its run), although the two tensors differ.
  const std::string pv0 = "matmul o_psum[:, :], stationary=p_t[:, 0:+128], moving=v0[:, :]\n";
  std::string aliased = edit(kBase, "buffer v0 : sbuf fp32 [128, d]\n",
                             "buffer v0 : sbuf fp32 [128, d] at (0, 65536)\n");
  aliased = edit(aliased, "buffer v1 : sbuf fp32 [128, d]\n",
                 "buffer v1 : sbuf fp32 [128, d] at (0, 65536)\n");
  aliased = edit(edit(aliased, v1_load, ""), pv0, pv0 + v1_load);
  const std::string swapped = edit(edit(aliased, v1_load, ""), pv0, v1_load + pv0);
  EXPECT_FALSE(same_program_up_to_layer0(parse_program(aliased, "aliased.nkir"),
                                         parse_program(swapped, "swapped.nkir")));
  EXPECT_NE(compare(aliased, swapped).bit_exact, Verdict::proved);
}

// A block longer than the canonical order's limit (1000 statements) keeps its order: the same
// swap of two independent loads is one program in a short block and not in a long one.
TEST(StructuralRewrites, ALongBlockKeepsItsOrder) {
  auto loads = [](int n, bool swapped) {
    std::string text = "kernel loads\ninput X : hbm fp32 [1, 4]\n";
    for (int i = 0; i < n; ++i) text += "buffer b" + std::to_string(i) + " : sbuf fp32 [1, 4]\n";
    for (int i = 0; i < n; ++i) {
      const int k = swapped && i < 2 ? 1 - i : i;
      text += "dma_copy b" + std::to_string(k) + "[:, :], X[:, :]\n";
    }
    return parse_program(text, "loads.nkir");
  };
  EXPECT_TRUE(same_program_up_to_layer0(loads(3, false), loads(3, true)));
  EXPECT_FALSE(same_program_up_to_layer0(loads(1001, false), loads(1001, true)));
}

// Loops split into one loop per group of statements that do not meet across iterations, so a
// fused loop and its fissioned form are one program for every shape (n in [128, 1024]): each
// iteration touches its own 128-column slice. Reading the next slice instead makes the fused
// loop read what the split one has loaded and the fused one has not: not one program.
TEST(StructuralRewrites, LoopFusionAndFissionAreProvedForEveryShape) {
  const std::string head =
      "kernel slices\n"
      "param n in [128, 1024] multiple_of 128\n"
      "input X : hbm fp32 [128, n]\n"
      "output A : hbm fp32 [128, n]\n"
      "buffer x : sbuf fp32 [128, n]\n"
      "buffer a : sbuf fp32 [128, n]\n";
  // A loop over n's 128-column tiles; `V` in its body stands for its variable.
  auto loop = [](const std::string& var, const std::string& body) {
    return "for " + var + " in affine_range(n // 128) {\n" +
           std::regex_replace(body, std::regex("V"), var) + "}\n";
  };
  const std::string load = "  dma_copy x[:, V * 128:+128], X[:, V * 128:+128]\n";
  const std::string store = "  dma_copy A[:, V * 128:+128], a[:, V * 128:+128]\n";
  auto scale = [](const std::string& read) {
    return "  tensor_scalar a[:, V * 128:+128], x[:, " + read + "], op0=multiply, operand0=2\n";
  };
  auto split = [&](const std::string& read) {
    return head + loop("t", load) + loop("u", scale(read) + store);
  };
  auto fused = [&](const std::string& read) {
    return head + loop("i", load + scale(read) + store);
  };
  const Program original = parse_program(split("V * 128:+128"), "split.nkir");
  EXPECT_EQ(same_program_up_to_layer0(original, parse_program(fused("V * 128:+128"), "f.nkir")),
            "n in [128, 1024] multiple of 128");
  const Program ahead = parse_program(split("V * 128 + 128:+128"), "split_ahead.nkir");
  EXPECT_FALSE(same_program_up_to_layer0(
      ahead, parse_program(fused("V * 128 + 128:+128"), "fused_ahead.nkir")));
  // A buffer declared in the body lives one iteration: its users stay in one loop.
  const std::string tile_scale =
      "  buffer tile : sbuf fp32 [128, 128]\n"
      "  dma_copy tile[:, :], X[:, V * 128:+128]\n"
      "  tensor_scalar a[:, V * 128:+128], tile[:, :], op0=multiply, operand0=2\n";
  const std::string scoped = head + loop("i", tile_scale + store);
  const std::string scoped_split = head + loop("i", tile_scale) + loop("j", store);
  EXPECT_TRUE(same_program_up_to_layer0(parse_program(scoped, "s.nkir"),
                                        parse_program(scoped_split, "ss.nkir")));
  const OptionOutcome o = compare(split("V * 128:+128"), fused("V * 128:+128"));
  EXPECT_EQ(o.bit_exact, Verdict::proved);
  EXPECT_EQ(o.to_json()["bit_exact"]["scope"], "all_shapes");

  // The split loops keep the order an iteration needs: y's load runs before the add that reads
  // it, although the add stays with the load of x's first tile (rewritten every iteration).
  const std::string two = head + "input Y : hbm fp32 [128, n]\nbuffer y : sbuf fp32 [128, n]\n";
  const std::string load_x = "  dma_copy x[:, 0:+128], X[:, V * 128:+128]\n";
  const std::string load_y = "  dma_copy y[:, V * 128:+128], Y[:, V * 128:+128]\n";
  const std::string add =
      "  tensor_tensor a[:, V * 128:+128], x[:, 0:+128], y[:, V * 128:+128], op=add\n" + store;
  const Program one_loop = parse_program(two + loop("i", load_x + load_y + add), "one.nkir");
  EXPECT_TRUE(same_program_up_to_layer0(
      one_loop, parse_program(two + loop("i", load_y) + loop("i", load_x + add), "y_first.nkir")));
  EXPECT_FALSE(same_program_up_to_layer0(
      one_loop, parse_program(two + loop("i", load_x + add) + loop("i", load_y), "y_last.nkir")));
}

// A loop's first or last iteration written out beside it (peeled) is folded back into the loop
// where the loop then runs that iteration at every shape: n // 128 >= 1 on n's domain. Peeling
// an iteration the loop does not run (an off-by-one range), or where the domain lets the loop run
// no iteration (n from 0), is not one program.
TEST(StructuralRewrites, PeelingIsProvedForEveryShape) {
  auto kernel = [](const std::string& domain, const std::string& body) {
    return "kernel slices\n"
           "param n in " +
           domain +
           " multiple_of 128\n"
           "input X : hbm fp32 [128, n]\n"
           "output A : hbm fp32 [128, n]\n"
           "buffer x : sbuf fp32 [128, n]\n"
           "buffer a : sbuf fp32 [128, n]\n" +
           body;
  };
  auto iteration = [](const std::string& v) {
    return "dma_copy x[:, " + v + " * 128:+128], X[:, " + v + " * 128:+128]\n" +
           "tensor_scalar a[:, " + v + " * 128:+128], x[:, " + v +
           " * 128:+128], op0=multiply, operand0=2\n" + "dma_copy A[:, " + v +
           " * 128:+128], a[:, " + v + " * 128:+128]\n";
  };
  auto loop = [&](const std::string& range) {
    return "for i in affine_range(" + range + ") {\n" + iteration("i") + "}\n";
  };
  const std::string domain = "[128, 1024]";
  const Program whole = parse_program(kernel(domain, loop("n // 128")), "whole.nkir");
  const std::string first = kernel(domain, iteration("0") + loop("1, n // 128"));
  const std::string last = kernel(domain, loop("n // 128 - 1") + iteration("(n // 128 - 1)"));
  for (const std::string& peeled : {first, last}) {
    EXPECT_EQ(same_program_up_to_layer0(whole, parse_program(peeled, "peeled.nkir")),
              "n in [128, 1024] multiple of 128")
        << peeled;
  }
  // Both ends peeled: the loop between runs no iteration at n = 128 and the two written out are
  // one tile twice, so only from n = 256 on.
  auto both = [&](const std::string& d) {
    return parse_program(
        kernel(d, iteration("0") + loop("1, n // 128 - 1") + iteration("(n // 128 - 1)")),
        "both.nkir");
  };
  EXPECT_EQ(
      same_program_up_to_layer0(parse_program(kernel("[256, 1024]", loop("n // 128")), "w.nkir"),
                                both("[256, 1024]")),
      "n in [256, 1024] multiple of 128");
  EXPECT_FALSE(same_program_up_to_layer0(whole, both(domain)));
  const OptionOutcome o = compare(kernel(domain, loop("n // 128")), first);
  EXPECT_EQ(o.bit_exact, Verdict::proved);
  EXPECT_EQ(o.to_json()["bit_exact"]["scope"], "all_shapes");
  // The iteration written out is one the loop does not run: tile 1 twice, tile 0 never.
  const std::string wrong = kernel(domain, iteration("1") + loop("1, n // 128"));
  EXPECT_FALSE(same_program_up_to_layer0(whole, parse_program(wrong, "wrong.nkir")));
  EXPECT_NE(compare(kernel(domain, loop("n // 128")), wrong).bit_exact, Verdict::proved);
  // n = 0 is in the domain: the peeled kernel stores tile 0 there, the loop stores nothing.
  const std::string from_zero = "[0, 1024]";
  EXPECT_FALSE(same_program_up_to_layer0(
      parse_program(kernel(from_zero, loop("n // 128")), "w0.nkir"),
      parse_program(kernel(from_zero, iteration("0") + loop("1, n // 128")), "p0.nkir")));
}

// Each edit changes numerics: never bit-exact, and the numerics diff (or the counterexample)
// names the instruction the edit touched. `all_edits` false (the default tier) takes the first
// edit and the mask's fill value; the deep tier takes every edit.
void expect_precision_changing_edits_located(const bool all_edits) {
  struct Case {
    const char* what;
    std::string text;
    const char* instruction;  // text the located instruction contains
    const char* gen = "trn1";
  };
  const std::string masked =
      edit(kBase, "buffer neg_max : sbuf fp32 [128, 1]\n",
           "affine_select scaled[:, :], on_true=scaled[:, :], offset=0, channel_multiplier=1, "
           "steps=[-1], cmp=ge, on_false=-9984\n"
           "buffer neg_max : sbuf fp32 [128, 1]\n");
  const std::vector<Case> cases = {
      {"P narrowed to bf16", edit(kBase, "buffer p : sbuf fp32", "buffer p : sbuf bf16"),
       "activation p"},
      {"the PV accumulation moved to bf16 (trn3 PSUM)",
       edit(kBase, "buffer o_psum : psum fp32", "buffer o_psum : psum bf16"), "o_psum", "trn3"},
      {"the scale 0.125 changed to 0.12", edit(kBase, "operand0=0.125", "operand0=0.12"),
       "tensor_scalar scaled"},
  };
  for (size_t k = 0; k < (all_edits ? cases.size() : 1); ++k) {
    const Case& c = cases[k];
    SCOPED_TRACE(c.what);
    const OptionOutcome o = compare(kBase, c.text, c.gen);
    ASSERT_TRUE(o.interface_error.empty()) << o.interface_error;
    EXPECT_NE(o.bit_exact, Verdict::proved);
    bool located = false;
    for (const NumericsDifference& d : o.numerics_diff) {
      located = located || d.rewrite_at.find(c.instruction) != std::string::npos ||
                d.original_at.find(c.instruction) != std::string::npos;
    }
    EXPECT_TRUE(located) << o.to_json().dump(1);
  }
  // The mask fill value: compared with the masked kernel itself.
  const OptionOutcome o = compare(masked, edit(masked, "on_false=-9984", "on_false=-30000"));
  EXPECT_NE(o.bit_exact, Verdict::proved);
  ASSERT_FALSE(o.numerics_diff.empty());
  EXPECT_EQ(o.numerics_diff[0].kind, "constant");
  EXPECT_NE(o.numerics_diff[0].rewrite_at.find("affine_select"), std::string::npos);
}

TEST(PrecisionChangingEdits, AreNeverBitExactAndAreLocated) {
  expect_precision_changing_edits_located(false);
}

TEST(DeepPrecisionChangingEdits, AreNeverBitExactAndAreLocated) {
  expect_precision_changing_edits_located(true);
}

TEST(OnlineSoftmax, IsProvedEqualInRealArithmetic) {
  const OptionOutcome o = compare(kBase, read_data("online_softmax.nkir"));
  ASSERT_TRUE(o.interface_error.empty()) << o.interface_error;
  EXPECT_EQ(o.real, Verdict::proved) << o.real_detail;
  EXPECT_TRUE(o.overflow_ok);
  EXPECT_TRUE(o.holds(Level::real));
  // The accumulation differs: not bit-exact, and the numerics diff says where.
  EXPECT_NE(o.bit_exact, Verdict::proved);
  EXPECT_FALSE(o.numerics_diff.empty());
}

TEST(OnlineSoftmax, AMissingRescaleIsNotProved) {
  const std::string buggy =
      edit(read_data("online_softmax.nkir"),
           "  tensor_scalar acc[:, :], acc[:, :], op0=multiply, operand0=alpha[:, :]\n", "");
  const OptionOutcome o = compare(kBase, buggy);
  EXPECT_NE(o.real, Verdict::proved);
  EXPECT_FALSE(o.holds(Level::real));
  ASSERT_TRUE(o.bit_counterexample.has_value());  // and the inputs that show it
}

TEST(OnlineSoftmax, AMissingMaxSubtractionFailsTheOverflowObligation) {
  const std::string no_max =
      edit(kBase, "func=exp, bias=neg_max[:, :], reduce_cmd", "func=exp, reduce_cmd");
  const OptionOutcome o = compare(kBase, no_max);
  EXPECT_EQ(o.real, Verdict::proved) << o.real_detail;  // the max cancels in real arithmetic
  EXPECT_FALSE(o.overflow_ok);
  EXPECT_FALSE(o.holds(Level::real));
}

}  // namespace
}  // namespace ncv::equiv
