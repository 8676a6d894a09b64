// The NKI front end end to end (label frontend): NKI Python kernels from frontend/tests/kernels
// traced by `ncverify import` and run, checked, proved, benched through FILE.py:FUNCTION; the
// rendition of the registered tutorial kernel runs bit-identically with it; every error path
// ends in `FILE.py:LINE: why` and exit 2; the user's file is never modified.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

std::string kernel(const std::string& file, const std::string& function) {
  return (kKernels / file).string() + ":" + function;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The 1-based line of the first line of `file` containing `needle`.
int line_of(const fs::path& file, const std::string& needle) {
  std::istringstream in(read_file(file));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return -1;
}

nlohmann::json run_json(const std::vector<std::string>& args) {
  const CliResult r = run_cli(cat(args, {"--json"}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// `run` and `bench` of a traced kernel and of its registered twin agree: the output bits, and
// the whole profile (latency, per-engine counts and busy times) and the memory peak.
void expect_same_run(const std::vector<std::string>& traced, const std::vector<std::string>& reg) {
  const auto a = run_json(cat({"run"}, traced));
  const auto b = run_json(cat({"run"}, reg));
  ASSERT_FALSE(a.is_null());
  EXPECT_EQ(a["outputs"][0]["checksum"], b["outputs"][0]["checksum"]);
  EXPECT_EQ(a["instances"], b["instances"]);
  auto la = run_json(cat({"bench"}, traced));
  auto lb = run_json(cat({"bench"}, reg));
  ASSERT_FALSE(la.is_null());
  la.erase("kernel");
  lb.erase("kernel");
  // Memory: the same peak per memory; the buffers' names and loop names are each author's own.
  for (const char* mem : {"sbuf", "psum"}) {
    for (const char* key : {"peak_bytes", "capacity", "fits"}) {
      EXPECT_EQ(la["memory"][mem][key], lb["memory"][mem][key]) << mem << " " << key;
    }
  }
  la.erase("memory");
  lb.erase("memory");
  // The dominating instructions: the same ids, engines and times; their texts name each author's
  // own tensors.
  for (auto* j : {&la, &lb}) {
    for (auto& row : (*j)["dominating_instructions"]) row.erase("text");
  }
  EXPECT_EQ(la, lb);
}

TEST(FrontendImport, PrintsTheProgramWithItsProvenanceAndDomain) {
  const CliResult r = run_cli({"import", kernel("sd_attention_rendition.py", "sd_attention")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.rfind("# traced by ncverify import from sd_attention_rendition.py", 0), 0u);
  EXPECT_NE(r.out.find("kernel sd_attention\n"), std::string::npos) << r.out;
  // `seqlen, d_head = q.shape` names the params; the asserts become their domain
  EXPECT_NE(r.out.find("param seqlen in [128, 4096] multiple_of 128"), std::string::npos);
  EXPECT_NE(r.out.find("param d_head in [1, 128]"), std::string::npos);
  EXPECT_NE(r.out.find("input q : hbm fp32 [seqlen, d_head]"), std::string::npos);
  EXPECT_NE(r.out.find("output out : hbm fp32 [seqlen, d_head]"), std::string::npos);
}

TEST(FrontendImport, RecordsKeywordArgumentsAndInputDtypes) {
  const CliResult r =
      run_cli({"import", kernel("sd_attention_rendition.py", "sd_attention"), "--param",
               "use_causal_mask=true", "--param", "seqlen=512", "--input", "q=bf16"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("# kernel arguments: use_causal_mask=True"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("param seqlen in [512, 512]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input q : hbm bf16 [512, d_head]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("affine_select"), std::string::npos) << r.out;
}

// The keyword arguments given to import are the program's `options` line, so a check `--like`
// the registered twin takes them, and a --param that contradicts them is exit 2.
TEST(FrontendImport, KeywordArgumentsAreTheOptionsACheckLikeTakes) {
  const fs::path out = temp_dir() / "imported_causal.nkir";
  fs::remove(out);
  ASSERT_EQ(run_cli({"import", kernel("sd_attention_rendition.py", "sd_attention"), "--param",
                     "use_causal_mask=true", "-o", out.string()})
                .exit_code,
            0);
  EXPECT_NE(read_file(out).find("kernel sd_attention\noptions use_causal_mask=true\n"),
            std::string::npos)
      << read_file(out);
  const std::vector<std::string> shape = {"--param",   "seqlen=128", "--param",
                                          "d_head=64", "--cases",    "1"};
  const nlohmann::json ok = run_json(cat({"check", out.string(), "--like", "sd_attention"}, shape));
  EXPECT_EQ(ok.value("options", nlohmann::json())["use_causal_mask"], "true") << ok.dump(2);
  EXPECT_EQ(ok.value("pass", false), true) << ok.dump(2);
  const CliResult bad = run_cli(
      cat({"check", out.string(), "--like", "sd_attention", "--param", "use_causal_mask=false"},
          shape));
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("option use_causal_mask=false contradicts the program, which was built "
                         "with use_causal_mask=true"),
            std::string::npos)
      << describe(bad);
}

TEST(FrontendImport, WritesOutFileAndNeverReplacesOneWithoutForce) {
  const fs::path out = temp_dir() / "imported.nkir";
  fs::remove(out);
  const std::string k = kernel("api_coverage.py", "copy_rows");
  ASSERT_EQ(run_cli({"import", k, "-o", out.string()}).exit_code, 0);
  const std::string first = read_file(out);
  EXPECT_NE(first.find("kernel copy_rows"), std::string::npos);
  std::ofstream(out) << "mine";
  const CliResult again = run_cli({"import", k, "-o", out.string()});
  EXPECT_EQ(again.exit_code, 2) << describe(again);
  EXPECT_EQ(read_file(out), "mine");
  EXPECT_EQ(run_cli({"import", k, "-o", out.string(), "--force"}).exit_code, 0);
  EXPECT_EQ(read_file(out), first);
}

TEST(FrontendImport, TheImportedTextParsesBackToTheSameProgram) {
  const fs::path out = temp_dir() / "roundtrip.nkir";
  fs::remove(out);
  const std::string k = kernel("sd_attention_rendition.py", "sd_attention");
  ASSERT_EQ(run_cli({"import", k, "-o", out.string()}).exit_code, 0);
  const CliResult a = run_cli({"dump", out.string()});
  const CliResult b = run_cli({"dump", k});
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  EXPECT_EQ(a.out, b.out);
}

// For every option set and several shapes, the rendition and the registered kernel compute the
// same bits and the same modelled latency and profile.
TEST(FrontendRendition, RunsBitIdenticallyWithTheRegisteredTutorialKernel) {
  const std::vector<std::pair<int, int>> shapes = {{128, 32}, {384, 64}, {1024, 128}};
  const std::vector<std::vector<std::string>> options = {
      {}, {"--param", "use_causal_mask=true"}, {"--param", "mixed_precision=false"}};
  for (const auto& [s, d] : shapes) {
    for (const auto& opt : options) {
      const std::vector<std::string> params =
          cat({"--param", "seqlen=" + std::to_string(s), "--param", "d_head=" + std::to_string(d)},
              opt);
      SCOPED_TRACE("seqlen " + std::to_string(s) + " d_head " + std::to_string(d) +
                   (opt.empty() ? "" : " " + opt[1]));
      expect_same_run(cat({kernel("sd_attention_rendition.py", "sd_attention")}, params),
                      cat({"sd_attention"}, params));
    }
  }
}

// The five Autocomp rewrites (one function, `step` picks the rewrite) and the batched SPMD
// layout, against their registered twins: each at every option set and shape below
// (`all_options`, the deep tier), or each at one of them in turn (the default tier: every twin and
// every option set still run).
void expect_rewrites_and_batched_run_as_their_twins(const bool all_options) {
  struct Twin {
    std::string function, registered;
    std::vector<std::string> extra;
  };
  std::vector<Twin> twins;
  for (int step = 1; step <= 5; ++step) {
    twins.push_back({"sd_attention_rewrite",
                     "sd_attention_step" + std::to_string(step),
                     {"--param", "step=" + std::to_string(step)}});
  }
  twins.push_back({"sd_attention_batched", "sd_attention_batched", {"--param", "bs=2"}});
  const std::vector<std::vector<std::string>> options = {
      {"--param", "seqlen=128", "--param", "d_head=32"},
      {"--param", "seqlen=384", "--param", "d_head=48", "--param", "use_causal_mask=true"},
      {"--param", "seqlen=256", "--param", "d_head=128", "--param", "mixed_precision=false"}};
  for (size_t k = 0; k < twins.size(); ++k) {
    const Twin& t = twins[k];
    for (size_t o = 0; o < options.size(); ++o) {
      if (!all_options && o != k % options.size()) continue;
      const auto& opt = options[o];
      SCOPED_TRACE(t.registered + " " + opt[1] + " " + opt[3]);
      std::vector<std::string> traced = {kernel("sd_attention_rendition.py", t.function)};
      traced = cat(cat(traced, t.extra), opt);
      if (t.function == "sd_attention_batched") traced = cat(traced, {"--grid", "bs"});
      std::vector<std::string> reg = cat({t.registered}, opt);
      if (t.function == "sd_attention_batched") reg = cat(reg, {"--param", "bs=2"});
      expect_same_run(traced, reg);
    }
  }
}

TEST(FrontendRendition, RewritesAndBatchedRunBitIdenticallyWithTheirRegisteredTwins) {
  expect_rewrites_and_batched_run_as_their_twins(false);
}

TEST(DeepFrontendRendition, RewritesAndBatchedRunBitIdenticallyWithTheirRegisteredTwins) {
  expect_rewrites_and_batched_run_as_their_twins(true);
}

// The manually allocated kernel: mod_alloc placements with rotating tiles, PSUM banks given by
// a function, identity matrices as shared constants.
TEST(FrontendRendition, AllocatedRunsBitIdenticallyWithItsRegisteredTwin) {
  const std::vector<std::vector<std::string>> options = {
      {"--param", "bs=1", "--param", "seqlen=1024"},
      {"--param", "bs=2", "--param", "seqlen=2048", "--param", "mixed_precision=false"}};
  for (const auto& opt : options) {
    SCOPED_TRACE(opt[3]);
    const auto traced_args =
        cat({kernel("allocated_rendition.py", "allocated_attention"), "--grid", "bs"}, opt);
    const auto reg_args = cat(cat({"sd_attention_allocated"}, opt), {"--param", "d_head=128"});
    expect_same_run(traced_args, reg_args);
  }
  const CliResult check =
      run_cli({"check", kernel("allocated_rendition.py", "allocated_attention"), "--grid", "bs",
               "--like", "sd_attention_allocated", "--param", "bs=1", "--param", "seqlen=1024"});
  EXPECT_EQ(check.exit_code, 0) << describe(check);
}

TEST(FrontendRendition, ChecksAgainstTheOracleAndABrokenCopyFails) {
  const std::vector<std::string> params = {"--like",     "sd_attention", "--param",
                                           "seqlen=256", "--param",      "d_head=64"};
  const CliResult ok =
      run_cli(cat({"check", kernel("sd_attention_rendition.py", "sd_attention")}, params));
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);
  EXPECT_NE(ok.out.find("PASS"), std::string::npos);
  // Break it: drop the normalisation by the row sums.
  std::string text = read_file(kKernels / "sd_attention_rendition.py");
  const std::string scaled = "o_scaled = o * nisa.nc_transpose(divisor)";
  ASSERT_NE(text.find(scaled), std::string::npos);
  text.replace(text.find(scaled), scaled.size(), "o_scaled = o");
  const fs::path broken = write_temp("broken_rendition.py", text);
  const CliResult bad = run_cli(cat({"check", broken.string() + ":sd_attention"}, params));
  EXPECT_EQ(bad.exit_code, 1) << describe(bad);
  EXPECT_NE(bad.out.find("FAIL"), std::string::npos) << bad.out;
}

TEST(FrontendRendition, SymbolicTracingProvesForAllShapesAndABrokenDomainIsRefuted) {
  const CliResult r = run_cli({"prove", kernel("sd_attention_rendition.py", "sd_attention")});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PROVED"), std::string::npos) << r.out;
  // Break it: claim four times the sequence length; the [128, seqlen] rows outgrow SBUF.
  std::string text = read_file(kKernels / "sd_attention_rendition.py");
  const std::string bound = "assert seqlen <= 4096";
  ASSERT_NE(text.find(bound), std::string::npos);
  text.replace(text.find(bound), bound.size(), "assert seqlen <= 16384");
  const fs::path broken = write_temp("too_long_rendition.py", text);
  const CliResult bad = run_cli({"prove", broken.string() + ":sd_attention"});
  EXPECT_EQ(bad.exit_code, 1) << describe(bad);
  EXPECT_NE(bad.out.find("SBUF capacity"), std::string::npos) << bad.out;
  // The capacity frontier of the traced kernel, and a domain given on the command line.
  const CliResult f = run_cli(
      {"frontier", broken.string() + ":sd_attention", "--param", "d_head=64", "--gen", "trn1"});
  EXPECT_EQ(f.exit_code, 0) << describe(f);
  EXPECT_NE(f.out.find("trn1: fits up to seqlen="), std::string::npos) << f.out;
  const CliResult narrowed =
      run_cli({"prove", broken.string() + ":sd_attention", "--param", "seqlen=128..2048/128"});
  EXPECT_EQ(narrowed.exit_code, 0) << describe(narrowed);
}

// A kernel no registered kernel shares a layout with: --layout says which axes its tensors have,
// --contract borrows a precision contract, --scale states the problem. A wrong scale in the
// kernel is caught.
TEST(FrontendExplicitLayout, ChecksAKernelInItsOwnLayoutAndCatchesAWrongScale) {
  const std::string k = kernel("small_attention.py", "one_tile_attention");
  const std::vector<std::string> common = {
      "--layout", "q=d,s k=d,s v=d,s out=s,d", "--contract", "sd_attention",
      "--param",  "mixed_precision=false",     "--param",    "d_head=64"};
  const CliResult unscaled = run_cli(cat({"check", k}, common));
  EXPECT_EQ(unscaled.exit_code, 0) << describe(unscaled);
  const CliResult scaled =
      run_cli(cat({"check", k, "--param", "scale=0.125", "--scale", "0.125"}, common));
  EXPECT_EQ(scaled.exit_code, 0) << describe(scaled);
  const CliResult seeded = run_cli(
      cat({"check", kernel("small_attention.py", "with_unused_seed"), "--input", "seed=int32[1]"},
          common));
  EXPECT_EQ(seeded.exit_code, 0) << describe(seeded);
  const CliResult wrong =
      run_cli(cat({"check", k, "--param", "scale=0.12", "--scale", "0.125"}, common));
  EXPECT_EQ(wrong.exit_code, 1) << describe(wrong);
  EXPECT_NE(wrong.out.find("FAIL"), std::string::npos) << wrong.out;
}

// --contract-option gives the contract kernel's options apart from --param, which then is the
// checked kernel's own even where a name is both (a keyword argument named like an option); every
// option is given, and the output names the contract's options.
TEST(FrontendExplicitLayout, ContractOptionsAreGivenApartFromTheKernelsParams) {
  const std::string k = kernel("small_attention.py", "with_own_mixed_precision");
  const std::vector<std::string> base = {
      "check",   k,           "--layout", "q=d,s k=d,s v=d,s out=s,d", "--contract", "sd_attention",
      "--param", "d_head=64", "--param",  "mixed_precision=fast",      "--cases",    "1"};
  const std::vector<std::string> all = {"--contract-option", "use_causal_mask=false",
                                        "--contract-option", "mixed_precision=false",
                                        "--contract-option", "dtype=fp32"};
  const CliResult ok = run_cli(cat(base, all));
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);
  EXPECT_NE(ok.out.find("contract sd_attention with options dtype=fp32 mixed_precision=false "
                        "use_causal_mask=false (each given by --contract-option)"),
            std::string::npos)
      << ok.out;
  // Without --contract-option the same --param is read as the contract's option.
  const CliResult mixed = run_cli(base);
  EXPECT_EQ(mixed.exit_code, 2) << describe(mixed);
  EXPECT_NE(mixed.err.find("mixed_precision=fast is not one of"), std::string::npos) << mixed.err;
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--contract-option", "use_causal_mask=false", "--contract-option", "dtype=fp32"},
       "sd_attention's option mixed_precision is not given"},
      {cat(all, {"--contract-option", "scale=0.5"}), "sd_attention has no option scale"},
      {{"--contract-option", "use_causal_mask=maybe"}, "does not offer use_causal_mask=maybe"},
  };
  for (const auto& [extra, why] : bad) {
    const CliResult r = run_cli(cat(base, extra));
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
  const CliResult no_contract =
      run_cli(cat({"check", k, "--like", "sd_attention", "--param", "d_head=64"}, all));
  EXPECT_EQ(no_contract.exit_code, 2) << describe(no_contract);
  EXPECT_NE(no_contract.err.find("--contract-option gives the options of the --contract kernel"),
            std::string::npos)
      << no_contract.err;
}

TEST(FrontendExplicitLayout, InconsistentFlagsAreUsageErrors) {
  const std::string k = kernel("small_attention.py", "one_tile_attention");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"check", k, "--layout", "q=d,s k=d,s v=d,s out=s,d"}, "go together"},
      {{"check", k, "--layout", "q=d,s k=d,s v=d,s out=s,d", "--contract", "sd_attention", "--like",
        "sd_attention"},
       "one or the other"},
      {{"check", k, "--layout", "q=d,x k=d,s v=d,s out=s,d", "--contract", "sd_attention"},
       "axis 'x'"},
      {{"check", k, "--layout", "q=d,s k=d,s v=d,s", "--contract", "sd_attention"}, "misses 'out'"},
      {{"check", k, "--like", "sd_attention", "--scale", "2"}, "--layout check"},
      {{"check", k}, "--like KERNEL (or --layout"},
  };
  for (const auto& [args, why] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
}

struct CoverageCase {
  std::string function;
  std::vector<std::string> flags;
  std::vector<std::string> expect_in_program;
};

TEST(FrontendCoverage, EverySupportedCallTracesAndRunsCleanly) {
  const std::vector<CoverageCase> cases = {
      {"copy_rows",
       {"--param", "rows=256", "--param", "cols=64"},
       {"affine_range", "sequential_range", "dma_copy out["}},
      {"elementwise",
       {},
       {"tensor_tensor", "op0=subtract", "op=max", "func=exp", "reciprocal", "op0=min"}},
      {"matmuls",
       {},
       // the loop body declares buffers, so the zeroed accumulator is a memset (no peeling)
       {"memset acc", "accumulate=true", "transpose", "matmul"}},
      {"isa_calls",
       {},
       {"reduce_cmd=reset_reduce", "func=tanh", "op1=add", "engine=gpsimd", "engine=scalar",
        "affine_select", "iota", "memset", "engine=vector", "tensor_scalar_reduce", "negate=true",
        "tensor_copy_predicated", "op0=is_gt"}},
      {"masked_tail", {"--param", "n=200", "--param", "m=64"}, {"min("}},
      {"spmd_rows",
       {"--grid", "g", "--param", "g=2", "--param", "cols=64"},
       {"grid 2", "program_id"}},
      {"writes_argument", {"--shape", "result=n,m"}, {"output result"}},
      {"allocated_copy", {}, {"at (0, 0)", "i % 2"}},
      {"loop_branch", {}, {"tensor_reduce col[:, i], t[:, :], op=max", "operand0=col[:, i]"}},
      {"configured",
       {"--param", "config.factor=2.5"},
       {"# kernel arguments: config=Scaling(factor=2.5", "operand0=2.5"}},
      {"configured",
       {"--param", "config=Scaling(factor=0.5, add_bias=True)", "--input", "bias=fp32[128,64]"},
       {"operand0=0.5", "input bias : hbm fp32 [128, 64]", "op=add"}},
  };
  for (const CoverageCase& c : cases) {
    SCOPED_TRACE(c.function);
    const std::string k = kernel("api_coverage.py", c.function);
    const CliResult imp = run_cli(cat({"import", k}, c.flags));
    ASSERT_EQ(imp.exit_code, 0) << describe(imp);
    for (const std::string& s : c.expect_in_program) {
      EXPECT_NE(imp.out.find(s), std::string::npos) << s << " missing in\n" << imp.out;
    }
    const CliResult run = run_cli(cat({"run", k}, c.flags));
    EXPECT_EQ(run.exit_code, 0) << describe(run);
    EXPECT_NE(run.out.find("result: ok"), std::string::npos) << run.out;
  }
}

TEST(FrontendCoverage, SpmdKernelNeedsItsGrid) {
  const CliResult r = run_cli({"run", kernel("api_coverage.py", "spmd_rows"), "--param", "g=2"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("--grid"), std::string::npos) << r.err;
}

struct ErrorCase {
  std::string function;
  std::vector<std::string> flags;
  std::string marker;  // text on the line the error must name
  std::string why;     // part of the message
};

TEST(FrontendErrors, EachIsReportedAtTheKernelLineWithExitTwo) {
  const fs::path file = kKernels / "errors.py";
  const std::vector<ErrorCase> cases = {
      {"unsupported_call", {}, "nl.where(", "nl.where is not modelled"},
      {"symbolic_branch", {}, "if n > 256", "--param n=VALUE"},
      {"failing_assert", {"--param", "n=256"}, "rows must fit", "assertion failed: rows must fit"},
      {"own_exception", {"--param", "mode=slow"}, "raise ValueError", "ValueError: mode slow"},
      {"hbm_matmul", {}, "stationary=a, moving=a", "must be on chip"},
      {"shape_mismatch", {}, "t[:, 0:32]", "different shapes"},
      {"too_many_partitions", {}, "(256, m)", "at most 128 partitions"},
      {"uses_missing_module", {}, "softmax(np.zeros", "scipy.special.softmax is not available"},
      {"int_of_shape", {}, "int(n)", "needs the value of n"},
      {"no_output", {}, "def no_output", "returns an on-chip tile"},
      {"data_branch", {}, "if t > 0.5", "depends on tensor values"},
      {"nonaffine_branch", {}, "if i * i == 1", "not affine in the loop variable i"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.function);
    const CliResult r = run_cli(cat({"import", (file.string() + ":" + c.function)}, c.flags));
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    const std::string where = "errors.py:" + std::to_string(line_of(file, c.marker)) + ": ";
    EXPECT_NE(r.err.find(where), std::string::npos) << "expected " << where << "\n" << r.err;
    EXPECT_NE(r.err.find(c.why), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
  }
}

// Loop splitting (frontend/python/ncverify_nki/splitting.py): an `if` on loop variables splits
// the loop; the program computes the same bits as an unrolled twin (every condition decided on
// Python ints) and a condition off by one tile computes other bits.
std::string checksum_of(const std::vector<std::string>& args) {
  const nlohmann::json j = run_json(cat({"run"}, args));
  return j.is_null() ? std::string("(run failed)") : j["outputs"][0]["checksum"].get<std::string>();
}

struct SplitCase {
  std::string name, function, twin;
  std::vector<std::string> flags;
  std::vector<std::string> expect_in_program;  // the symbolic program's pieces
};

// The case's name in the test's listing (gtest would print the struct's bytes).
void PrintTo(const SplitCase& c, std::ostream* os) {
  *os << c.name;
}

class FrontendLoopSplit : public ::testing::TestWithParam<SplitCase> {};

TEST_P(FrontendLoopSplit, RunsAsItsUnrolledTwinAndAWrongSplitDiffers) {
  const SplitCase& c = GetParam();
  const std::string k = kernel("loop_splitting.py", c.function);
  const CliResult imp = run_cli(cat({"import", k}, c.flags));
  ASSERT_EQ(imp.exit_code, 0) << describe(imp);
  for (const std::string& s : c.expect_in_program) {
    EXPECT_NE(imp.out.find(s), std::string::npos) << s << " missing in\n" << imp.out;
  }
  for (const char* n : {"n=384", "n=768"}) {
    const std::vector<std::string> shape = cat({"--param", n}, c.flags);
    const std::string split = checksum_of(cat({k}, shape));
    EXPECT_EQ(split, checksum_of(cat({kernel("loop_splitting.py", c.twin)}, shape))) << n;
    EXPECT_NE(split, checksum_of(cat({k, "--param", "broken=true"}, shape))) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, FrontendLoopSplit,
    ::testing::Values(
        SplitCase{"PeeledLastIteration",
                  "last_tile_doubled",
                  "last_tile_doubled_unrolled",
                  {"--param", "m=64"},
                  {"for j in affine_range(n // 128 + -1) {",
                   "for j in affine_range(n // 128 + -1, n // 128) {"}},
        SplitCase{
            "ResidueClasses",
            "tile_rule",
            "tile_rule_unrolled",
            {"--param", "m=64", "--param", "rule=even"},
            {"for j in affine_range(0, n // 128, 2) {", "for j in affine_range(1, n // 128, 2) {"}},
        SplitCase{"FloorDivision",
                  "tile_rule",
                  "tile_rule_unrolled",
                  {"--param", "m=64", "--param", "rule=band"},
                  {"for j in affine_range(min(min(n // 128, 6), 3), min(n // 128, 6)) {"}},
        SplitCase{"Causal",
                  "tile_mask",
                  "tile_mask_unrolled",
                  {},
                  {"for k in affine_range(q + 1) {", "for k in affine_range(q + 1, n // 128) {"}},
        SplitCase{"SlidingWindow",
                  "tile_mask",
                  "tile_mask_unrolled",
                  {"--param", "window=2"},
                  {"for k in affine_range(max(q + -1, 0)) {",
                   "for k in affine_range(max(q + -1, 0), q + 1) {",
                   "for k in affine_range(q + 1, n // 128) {"}}),
    [](const ::testing::TestParamInfo<SplitCase>& p) { return p.param.name; });

// The split program stays symbolic: prove covers every n of the domain.
TEST(FrontendLoopSplitting, TheSplitProgramIsProvedForTheWholeDomain) {
  const CliResult r =
      run_cli({"prove", kernel("loop_splitting.py", "tile_mask"), "--param", "window=2"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PROVED"), std::string::npos) << r.out;
}

// A condition on the program id inside a loop guards the loop: two pieces, one empty per program.
TEST(FrontendLoopSplitting, AProgramIdConditionGuardsTheLoop) {
  const std::string k = kernel("loop_splitting.py", "first_program_doubles");
  const CliResult imp = run_cli({"import", k, "--grid", "2"});
  ASSERT_EQ(imp.exit_code, 0) << describe(imp);
  EXPECT_NE(imp.out.find("for j in affine_range(n // 128 * (program_id * -1 + 1)) {"),
            std::string::npos)
      << imp.out;
  const CliResult run = run_cli({"run", k, "--grid", "2"});
  EXPECT_EQ(run.exit_code, 0) << describe(run);
}

// `d ** -0.5` as a default scale: the float of the value --param gives d; with d symbolic an
// error at the line that names the param to fix.
TEST(FrontendLoopSplitting, AFloatOfAShapeIsItsValueOnceTheParamIsFixed) {
  const fs::path file = kKernels / "loop_splitting.py";
  const std::string k = kernel("loop_splitting.py", "scaled_by_inverse_sqrt");
  const CliResult symbolic = run_cli({"import", k});
  EXPECT_EQ(symbolic.exit_code, 2) << describe(symbolic);
  EXPECT_NE(symbolic.err.find(
                "loop_splitting.py:" + std::to_string(line_of(file, "scale or d ** -0.5")) + ": "),
            std::string::npos)
      << symbolic.err;
  EXPECT_NE(symbolic.err.find("--param d=VALUE"), std::string::npos) << symbolic.err;
  const CliResult fixed = run_cli({"import", k, "--param", "d=64"});
  ASSERT_EQ(fixed.exit_code, 0) << describe(fixed);
  EXPECT_NE(fixed.out.find("operand0=0.125"), std::string::npos) << fixed.out;
  const std::string by_default = checksum_of({k, "--param", "d=64"});
  EXPECT_EQ(by_default, checksum_of({k, "--param", "d=64", "--param", "scale=0.125"}));
  EXPECT_NE(by_default, checksum_of({k, "--param", "d=64", "--param", "scale=0.12"}));
}

TEST(FrontendErrors, BadTargetsAndFlagsAreUsageErrors) {
  const fs::path syntax = write_temp("syntax_error.py", "import numpy as np\ndef k(a):\n  x = (\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"import", (temp_dir() / "absent.py").string() + ":k"}, "no such file"},
      {{"import", kernel("api_coverage.py", "no_such_function")}, "has no function"},
      {{"import", syntax.string() + ":k"}, "syntax error"},
      {{"import", kernel("api_coverage.py", "copy_rows"), "--param", "colz=3"},
       "no keyword argument or shape named colz"},
      {{"import", kernel("api_coverage.py", "writes_argument")}, "cannot tell the rank"},
      {{"import", kernel("api_coverage.py", "copy_rows"), "--input", "a=int8"}, "int8"},
      {{"run", "sd_attention", "--input", "q=bf16"}, "apply to an NKI kernel"},
      {{"import", kernel("api_coverage.py", "configured"), "--param", "config.facter=2"},
       "Scaling has no field facter"},
      {{"import", "sd_attention"}, "FILE.py:FUNCTION"},
  };
  for (const auto& [args, why] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(why), std::string::npos) << why << "\n" << r.err;
  }
}

// A kernel that never finishes tracing is stopped (here after 2 s) and reported, exit 2.
TEST(FrontendErrors, AKernelThatNeverFinishesIsStopped) {
  const fs::path spin = write_temp("spin.py",
                                   "import neuronxcc.nki.language as nl\n"
                                   "def spin(a):\n"
                                   "  n, m = a.shape\n"
                                   "  while True:\n"
                                   "    pass\n");
  setenv("NCVERIFY_FRONTEND_TIMEOUT_S", "2", 1);
  for (const fs::path& file : {spin}) {
    const CliResult r = run_cli({"import", file.string() + ":spin"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("longer than 2 s"), std::string::npos) << r.err;
  }
  unsetenv("NCVERIFY_FRONTEND_TIMEOUT_S");
}

// Without a Python to run, the front end says what it needs (exit 2), never a crash.
TEST(FrontendErrors, AMissingInterpreterIsReported) {
  setenv("NCVERIFY_PYTHON", "/nonexistent/python3", 1);
  const CliResult r = run_cli({"import", kernel("api_coverage.py", "copy_rows")});
  unsetenv("NCVERIFY_PYTHON");
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("needs python3 and python3-numpy"), std::string::npos) << r.err;
}

TEST(FrontendUnmodified, TracingLeavesTheUsersFolderAsItWas) {
  const fs::path dir = temp_dir() / "user_kernel";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kKernels / "api_coverage.py", dir / "api_coverage.py");
  const std::string before = read_file(dir / "api_coverage.py");
  const CliResult r = run_cli({"import", (dir / "api_coverage.py").string() + ":elementwise"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(read_file(dir / "api_coverage.py"), before);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1) << "the front end wrote into the user's folder (__pycache__?)";
}

}  // namespace
}  // namespace ncv::cli_test
