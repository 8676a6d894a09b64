// frontend/tools/nkilib_attention.py on a stand-in nki-library layout (label frontend,
// frontend/tests/nkilib_layout): every configuration of the test files' parametrize lists
// becomes one row (crossed lists, the test body's `if` deciding a negative case, the
// coverage sweeps left out), with the kernel's inputs the test would make, and each row runs
// `ncverify import` and gets its status.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kFrontend = fs::path(NCV_FRONTEND_KERNELS_DIR).parent_path().parent_path();
const fs::path kLayout = kFrontend / "tests" / "nkilib_layout";

// Runs the script with `args`; stdout, stderr and the exit code.
CliResult run_script(const std::vector<std::string>& args) {
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::vector<std::string> all = {(kFrontend / "tools" / "nkilib_attention.py").string()};
  all.insert(all.end(), args.begin(), args.end());
  return run_command(python, all);
}

std::string line_of_row(const std::string& out, const std::string& id) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(id + "\t", 0) == 0) return line;
  }
  return "";
}

TEST(FrontendNkilibRows, EveryConfigurationIsARowWithTheTestsInputs) {
  const CliResult r = run_script({"--nkilib", kLayout.string(), "--list"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // 2 rows x cache_softmax {False, True}; tkg: fast x lnc {1, 2}, slow once; no sweep rows
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 7) << r.out;
  EXPECT_EQ(r.out.find("sweep"), std::string::npos) << r.out;
  // the second row: bs 2, k's seqlen twice q's (the test body's arithmetic), a sink (bs > 1)
  const std::string cte = line_of_row(r.out, "cte/small[1]/cache_softmax=True");
  for (const char* piece : {"attention_cte.py:attention_cte", "'q=fp32[2,200,64]'",
                            "'k=fp32[2,64,400]'", "'sink=fp32[2,1]'", "k_prior=None", "scale=0.5",
                            "causal_mask=False", "cache_softmax=True"}) {
    EXPECT_NE(cte.find(piece), std::string::npos) << piece << "\n" << r.out;
  }
  const std::string fast2 = line_of_row(r.out, "tkg/fast[0]/lnc=2");
  for (const char* piece :
       {"attention_tkg_entry", "'k_prior=bf16[2,1,512,64]'", "'mask=uint8[3,2,1,3]'",
        "'inv_freqs=fp32[32,1]'", "lnc=2", "--grid 2", "AttnTKGConfig(2, 1, 3, 256, 512, 64, 0"}) {
    EXPECT_NE(fast2.find(piece), std::string::npos) << piece << "\n" << r.out;
  }
  // the harness launches kernel[lnc] whatever lnc is; CompilerArgs() is degree 2 (trn2)
  EXPECT_NE(line_of_row(r.out, "tkg/fast[0]/lnc=1").find("--grid 1"), std::string::npos);
  EXPECT_NE(line_of_row(r.out, "tkg/slow[0]").find("--grid 2"), std::string::npos);
  EXPECT_NE(cte.find("--grid 1"), std::string::npos);
  // the tests' default platform target
  EXPECT_NE(cte.find("--gen trn2"), std::string::npos) << cte;
  // block KV (block_len 32), Q and K in SBUF, fp32, a sink, a sliding window
  const std::string slow = line_of_row(r.out, "tkg/slow[0]");
  for (const char* piece :
       {"'q=fp32[128,40]'", "'k_prior=fp32[128,32,128]'", "'active_blocks_table=uint32[4,32]'",
        "'sink=fp32[2,1]'", "dtype=float32", "rope_pos_ids=None"}) {
    EXPECT_NE(slow.find(piece), std::string::npos) << piece << "\n" << r.out;
  }
}

TEST(FrontendNkilibRows, EachRowRunsAndGetsItsStatus) {
  const fs::path rows = temp_dir() / "nkilib_rows.json";
  fs::remove(rows);
  const CliResult r = run_script({"--nkilib", kLayout.string(), "--kernel", "cte", "--ncverify",
                                  NCVERIFY_BINARY, "--json", rows.string(), "--gen", "none"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(read_file(rows));
  ASSERT_EQ(j.size(), 4U) << j.dump(1);
  std::map<std::string, std::string> status;
  for (const auto& row : j) status[row["id"]] = row["status"];
  EXPECT_EQ(status["cte/small[0]/cache_softmax=False"], "traced");
  EXPECT_EQ(status["cte/small[0]/cache_softmax=True"], "traced");
  // an optional tensor given after a keyword argument (sink after scale) is bound by name
  EXPECT_EQ(status["cte/small[1]/cache_softmax=False"], "traced");
  // the test expects the kernel to refuse it (seqlen_q 200 with cache_softmax), and it does
  EXPECT_EQ(status["cte/small[1]/cache_softmax=True"], "negative");
  EXPECT_NE(r.out.find("4 configurations: 1 negative, 3 traced"), std::string::npos) << r.out;
}

// --jobs runs rows at once and the rows keep the lists' order; --resume keeps the rows an earlier
// run's file holds (here one marked by hand) and runs only the others.
TEST(FrontendNkilibRows, JobsKeepTheOrderAndResumeRunsOnlyTheRowsMissing) {
  const fs::path first = temp_dir() / "nkilib_rows_jobs.json";
  const fs::path second = temp_dir() / "nkilib_rows_resumed.json";
  fs::remove(first);
  fs::remove(second);
  const CliResult r =
      run_script({"--nkilib", kLayout.string(), "--kernel", "cte", "--ncverify", NCVERIFY_BINARY,
                  "--json", first.string(), "--gen", "none", "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  nlohmann::json j = nlohmann::json::parse(read_file(first));
  ASSERT_EQ(j.size(), 4U) << j.dump(1);
  const std::vector<std::string> order = {
      "cte/small[0]/cache_softmax=False", "cte/small[0]/cache_softmax=True",
      "cte/small[1]/cache_softmax=False", "cte/small[1]/cache_softmax=True"};
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(j[i]["id"], order[i]);
  // keep two rows (one marked), drop the others: the resumed run traces only those two again
  j[0]["status"] = "kept-from-before";
  const nlohmann::json partial = nlohmann::json::array({j[0], j[3]});
  const fs::path earlier = write_temp("nkilib_rows_partial.json", partial.dump());
  const CliResult again =
      run_script({"--nkilib", kLayout.string(), "--kernel", "cte", "--ncverify", NCVERIFY_BINARY,
                  "--json", second.string(), "--gen", "none", "--resume", earlier.string()});
  ASSERT_EQ(again.exit_code, 0) << describe(again);
  const nlohmann::json k = nlohmann::json::parse(read_file(second));
  ASSERT_EQ(k.size(), 4U);
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(k[i]["id"], order[i]);
  EXPECT_EQ(k[0]["status"], "kept-from-before");
  EXPECT_EQ(k[2]["status"], "traced");
  // only the two missing rows were printed (run)
  EXPECT_EQ(std::count(again.out.begin(), again.out.end(), '\n'), 3) << again.out;
  EXPECT_EQ(again.out.find(order[0] + " "), std::string::npos) << again.out;
}

// --check states each row's problem for `check` (cte_check_plan: the top-left causal mask at
// Sq != Sk, a sink role, any scale, cache_softmax's statistics outputs) and never passes a row
// `check` refuses: the stand-in has no statistics outputs, so its cache_softmax row stays
// `traced` and says why (the layout names out_neg_max, which it lacks). The stand-in
// kernel copies q: every row `check` can run fails; none is compared with the registered kernel
// (scale 0.5).
TEST(FrontendNkilibRows, CheckStatesEachRowsProblemAndSaysWhyOneIsNotChecked) {
  const fs::path rows = temp_dir() / "nkilib_rows_check.json";
  fs::remove(rows);
  const CliResult r =
      run_script({"--nkilib", kLayout.string(), "--kernel", "cte", "--ncverify", NCVERIFY_BINARY,
                  "--json", rows.string(), "--gen", "none", "--check"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(read_file(rows));
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& row : j) by_id[row["id"]] = row;
  const auto command = [&](const std::string& id) {
    std::string s;
    for (const auto& w : by_id[id].value("check_command", nlohmann::json::array())) {
      s += w.get<std::string>() + " ";
    }
    return s;
  };
  const nlohmann::json& softmax = by_id["cte/small[0]/cache_softmax=True"];
  EXPECT_EQ(softmax["status"], "traced") << softmax.dump(1);
  EXPECT_EQ(softmax.value("check", "").rfind("not checked: check refused", 0), 0U)
      << softmax.dump(1);
  EXPECT_NE(softmax.value("check", "").find("'out_neg_max'"), std::string::npos) << softmax.dump(1);
  // causal at Sq 200 != Sk 400: stated top-left; the copy's output [Sq, d] holds [bs, Sq, d]
  // flattened (bs = 1, kernels/layout.h), and the copy is no attention: check says so
  const nlohmann::json& causal = by_id["cte/small[0]/cache_softmax=False"];
  EXPECT_EQ(causal["status"], "failed") << causal.dump(1);
  EXPECT_NE(command("cte/small[0]/cache_softmax=False")
                .find("--scale 0.5 --align top-left "
                      "--causal"),
            std::string::npos)
      << causal.dump(1);
  // a sink: stated by the sink role; the copy is no attention, and check says so
  const nlohmann::json& sink = by_id["cte/small[1]/cache_softmax=False"];
  EXPECT_EQ(sink["status"], "failed") << sink.dump(1);
  EXPECT_NE(command("cte/small[1]/cache_softmax=False").find("sink=h,b"), std::string::npos)
      << sink.dump(1);
  for (const char* id : {"cte/small[0]/cache_softmax=False", "cte/small[0]/cache_softmax=True",
                         "cte/small[1]/cache_softmax=False"}) {
    EXPECT_EQ(by_id[id].value("hand", "").rfind("not compared: ", 0), 0U) << by_id[id].dump(1);
  }
  EXPECT_EQ(by_id["cte/small[1]/cache_softmax=True"]["status"], "negative");
}

TEST(FrontendNkilibRows, ACheckoutWithoutTheTestsIsExitTwo) {
  const CliResult r = run_script({"--nkilib", temp_dir().string(), "--list"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;
}

// --json does not replace a file the user has unless --force says so.
TEST(FrontendNkilibRows, AnExistingJsonFileIsKeptWithoutForce) {
  const std::string file = write_temp("nkilib_rows.json", "the user's file\n").string();
  const CliResult r = run_script({"--nkilib", kLayout.string(), "--list", "--json", file});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("--force replaces it"), std::string::npos) << r.err;
  std::ifstream in(file);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "the user's file\n");
  const CliResult forced =
      run_script({"--nkilib", kLayout.string(), "--list", "--json", file, "--force"});
  EXPECT_EQ(forced.exit_code, 0) << describe(forced);
}

}  // namespace
}  // namespace ncv::cli_test
