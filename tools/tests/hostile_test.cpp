// The hostile-input suite (label `hostile`): what a user who feeds ncverify degenerate programs,
// extreme numbers, devices, huge or malformed files and conflicting flags gets back. One group per
// class of failure; every case asserts the exit code (0 pass, 1 verification failure, 2 bad usage
// or input) and that the message names the place (file:line:col, the JSON path, the param, the
// flag that raises a limit). Each runs the built binary as a user would.
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// A shell line with the binary as $N: for redirections run_cli cannot express.
CliResult run_shell(const std::string& line) {
  const fs::path err_path = temp_dir() / "shell_stderr.txt";
  const std::string cmd = "N=" + shell_quote(NCVERIFY_BINARY) + "; (" + line + ") 2>" +
                          shell_quote(err_path.string()) + " </dev/null";
  CliResult r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_file(err_path);
  return r;
}

const std::string kCopyHeader = "input x : hbm fp32 [128, 64]\noutput y : hbm fp32 [128, 64]\n";

// --- 1. Verdicts are honest: prove refutes what run rejects --------------------------------

TEST(Hostile, ADimensionThatReachesZeroIsRefutedByProveAndFailsRun) {
  const std::string file = write_temp("zero_dim.nkir",
                                      "kernel zd\nparam N in [0, 4]\ninput x : hbm fp32 [128, N]\n"
                                      "output y : hbm fp32 [128, N]\ndma_copy y[:, :], x[:, :]\n")
                               .string();
  const CliResult proof = run_cli({"prove", file});
  EXPECT_EQ(proof.exit_code, 1) << describe(proof);
  EXPECT_NE(proof.out.find("[well-formed] dimensions >= 1"), std::string::npos) << proof.out;
  EXPECT_NE(proof.out.find("with params N=0; replay: reproduced"), std::string::npos) << proof.out;
  // What prove does not cover is said, not implied.
  EXPECT_NE(proof.out.find("not covered by prove"), std::string::npos) << proof.out;
  EXPECT_NE(proof.out.find("uninitialized_read"), std::string::npos) << proof.out;
  const CliResult run = run_cli({"run", file, "--param", "N=0"});
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  EXPECT_NE(run.out.find("[well_formed]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("non-positive dimension N = 0"), std::string::npos) << run.out;
}

TEST(Hostile, ANegativeTripCountIsRefutedAndFails) {
  const std::string file =
      write_temp("negative_trips.nkir", "kernel nt\nparam N in [1, 8]\n" + kCopyHeader +
                                            "for i in sequential_range(N - 3) {\n"
                                            "  dma_copy y[:, :], x[:, :]\n}\n"
                                            "dma_copy y[:, :], x[:, :]\n")
          .string();
  const CliResult proof = run_cli({"prove", file});
  EXPECT_EQ(proof.exit_code, 1) << describe(proof);
  EXPECT_NE(proof.out.find("trip count >= 0"), std::string::npos) << proof.out;
  EXPECT_NE(proof.out.find("N=1"), std::string::npos) << proof.out;
  EXPECT_EQ(run_cli({"run", file, "--param", "N=2"}).exit_code, 1);
  EXPECT_EQ(run_cli({"run", file, "--param", "N=3"}).exit_code, 0);
}

TEST(Hostile, ASizeBeyondInt64IsRefuted) {
  const std::string file =
      write_temp("huge_size.nkir", "kernel hs\nparam N in [1, 4611686018427387904]\n" +
                                       kCopyHeader + "input big : hbm fp32 [N, 8]\n" +
                                       "dma_copy y[:, :], x[:, :]\n")
          .string();
  const CliResult proof = run_cli({"prove", file});
  EXPECT_EQ(proof.exit_code, 1) << describe(proof);
  EXPECT_NE(proof.out.find("size fits int64, bytes of tensor 'big'"), std::string::npos)
      << proof.out;
  // 32 N bytes leave int64 first at N = 2^58.
  EXPECT_NE(proof.out.find("N=288230376151711744"), std::string::npos) << proof.out;
  const CliResult run = run_cli({"run", file, "--param", "N=288230376151711744"});
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  EXPECT_NE(run.out.find("[well_formed]"), std::string::npos) << describe(run);
  EXPECT_NE(run.out.find("exceeds int64"), std::string::npos) << describe(run);
}

TEST(Hostile, AnEmptyDomainIsRefusedNotProved) {
  const std::string relation = write_temp("empty_domain.nkir",
                                          "kernel ed\nparam N in [1, 4]\nparam M in [1, 4]\n"
                                          "require 8 < N + M\n" +
                                              kCopyHeader + "dma_copy y[:, :], x[:, :]\n")
                                   .string();
  expect_exit(run_cli({"prove", relation}), 2, {"no params satisfy its declared domain"});
  const std::string no_multiple =
      write_temp("no_multiple.nkir", "kernel nm\nparam N in [1, 3] multiple_of 4\n" + kCopyHeader +
                                         "dma_copy y[:, :], x[:, :]\n")
          .string();
  expect_exit(run_cli({"prove", no_multiple}), 2, {"no_multiple.nkir:", "no multiple of 4"});
}

// --- 2. Arithmetic on user numbers never overflows ------------------------------------------

TEST(Hostile, ADomainSpanningAllOfInt64IsSearchedToTheEnd) {
  const std::string file =
      write_temp("whole_range.nkir",
                 "kernel wr\nparam N in [-9223372036854775807, 9223372036854775807]\n" +
                     kCopyHeader + "buffer t : sbuf fp32 [128, N]\ndma_copy y[:, :], x[:, :]\n")
          .string();
  const CliResult proof = run_cli({"prove", file});
  EXPECT_EQ(proof.exit_code, 1) << describe(proof);
  EXPECT_NE(proof.out.find("N=-9223372036854775807"), std::string::npos) << proof.out;
  // The frontier search runs over the same range (its step indices are 128-bit) and agrees: a
  // value that gives the buffer a dimension below 1 does not fit (the program cannot run there).
  const CliResult frontier = run_cli({"frontier", file, "--vary", "N", "--gen", "trn1"});
  EXPECT_EQ(frontier.exit_code, 0) << describe(frontier);
  EXPECT_NE(frontier.out.find("fits nowhere: N=-9223372036854775807 already does not "
                              "(dimensions >= 1"),
            std::string::npos)
      << describe(frontier);
  // From 1 to int64's end, the capacity boundary.
  std::string text = read_file(file);
  text.replace(text.find("-9223372036854775807,"), 21, "1,");
  const CliResult positive = run_cli({"frontier", write_temp("positive_range.nkir", text).string(),
                                      "--vary", "N", "--gen", "trn1"});
  EXPECT_EQ(positive.exit_code, 0) << describe(positive);
  EXPECT_NE(positive.out.find("fits up to N=45056"), std::string::npos) << describe(positive);
}

TEST(Hostile, APlacementNearInt64MaxIsACapacityFailureWithExactNumbers) {
  // The offset comes from a param: a constant this far is no address at all and is refused as an
  // invalid program (hostile_limits_test.cpp); one that depends on params is checked where it is
  // evaluated, with exact numbers.
  const std::string file =
      write_temp("far_placement.nkir", "kernel fp\nparam N in [0, 9223372036854775807]\n" +
                                           kCopyHeader +
                                           "buffer t : sbuf fp32 [128, 64] at (0, N)\n"
                                           "dma_copy t[:, :], x[:, :]\ndma_copy y[:, :], t[:, :]\n")
          .string();
  const CliResult run = run_cli({"run", file, "--param", "N=9223372036854775800"});
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  EXPECT_NE(run.out.find("from byte 9223372036854775800"), std::string::npos) << run.out;
  const CliResult proof = run_cli({"prove", file});
  EXPECT_EQ(proof.exit_code, 1) << describe(proof);
  EXPECT_EQ(proof.err.find("overflow"), std::string::npos) << describe(proof);
}

TEST(Hostile, IndexArithmeticBeyondInt64IsWellFormedNotWrapped) {
  const std::string file =
      write_temp("index_overflow.nkir", "kernel io\nparam N in [1, 9223372036854775807]\n" +
                                            kCopyHeader +
                                            "dma_copy y[:, N * 2 - N - N :+ 64], x[:, :]\n")
          .string();
  const CliResult run = run_cli({"run", file, "--param", "N=4611686018427387904"});
  EXPECT_EQ(run.exit_code, 1) << describe(run);
  EXPECT_NE(run.out.find("[well_formed]"), std::string::npos) << run.out;
  const CliResult proof = run_cli({"prove", file});
  EXPECT_EQ(proof.exit_code, 1) << describe(proof);
  EXPECT_NE(proof.out.find("arithmetic fits int64"), std::string::npos) << proof.out;
  EXPECT_NE(proof.out.find("N=4611686018427387904"), std::string::npos) << proof.out;
}

TEST(Hostile, NumbersThatDoNotFitAreInputErrors) {
  expect_exit(run_cli({"run", "sd_attention", "--param", "seqlen=99999999999999999999", "--param",
                       "d_head=64"}),
              2, {"--param", "seqlen=99999999999999999999"});
  const std::string file =
      write_temp("literal_overflow.nkir", "kernel lo\n" + kCopyHeader +
                                              "dma_copy y[:, 9223372036854775807 + 1 :+ 64], "
                                              "x[:, :]\n")
          .string();
  expect_exit(run_cli({"run", file}), 2, {"literal_overflow.nkir:4:", "fit in int64"});
}

// --- 3. Input files: regular files, capped ---------------------------------------------------

TEST(Hostile, DevicesFifosAndDirectoriesAreRefusedBeforeReading) {
  expect_exit(run_cli({"run", "/dev/zero"}), 2, {"/dev/zero", "character device"});
  expect_exit(run_cli({"oracle", "--spec", "/dev/zero"}), 2, {"/dev/zero", "character device"});
  const fs::path fifo = temp_dir() / "pipe.nkir";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_exit(run_cli({"run", fifo.string()}), 2, {"pipe.nkir", "FIFO"});
  expect_exit(run_cli({"dump", temp_dir().string()}), 2, {"directory"});
  const fs::path data = temp_dir() / "calibration_with_fifo";
  fs::create_directories(data);
  fs::remove(data / "a.json");
  ASSERT_EQ(::mkfifo((data / "a.json").c_str(), 0600), 0);
  expect_exit(run_cli({"calibrate", "--data", data.string()}), 2, {"a.json", "FIFO"});
}

TEST(Hostile, AFileOverTheInputLimitIsRefusedNamingTheFlag) {
  std::string big = "kernel big\n" + kCopyHeader + "dma_copy y[:, :], x[:, :]\n";
  big += std::string(2 << 20, '#') + "\n";
  const std::string file = write_temp("big.nkir", big).string();
  expect_exit(run_cli({"run", file, "--max-input-mib", "1"}), 2, {"big.nkir", "--max-input-mib"});
  expect_exit(run_cli({"--max-input-mib", "1", "dump", file}), 2, {"--max-input-mib"});
  EXPECT_EQ(run_cli({"dump", file, "--max-input-mib", "3"}).exit_code, 0);
}

// --- 4. Work limits trigger before the work --------------------------------------------------

TEST(Hostile, RunawayLoopsAreRefusedBeforeTheyRun) {
  const std::string long_loop =
      write_temp("long_loop.nkir", "kernel ll\n" + kCopyHeader +
                                       "for i in sequential_range(1000000000) {\n"
                                       "  dma_copy y[:, :], x[:, :]\n}\n")
          .string();
  std::string nested = "kernel deep\n" + kCopyHeader;
  for (int k = 0; k < 127; ++k) nested += "for i" + std::to_string(k) + " in affine_range(2) {\n";
  nested += "dma_copy y[:, :], x[:, :]\n";
  for (int k = 0; k < 127; ++k) nested += "}\n";
  const std::string deep = write_temp("deep_loops.nkir", nested).string();
  for (const std::string& file : {long_loop, deep}) {
    for (const char* cmd : {"run", "bench"}) {
      expect_exit(run_cli({cmd, file}), 2, {"step budget", "--max-steps"});
    }
  }
  expect_exit(run_cli({"run", long_loop, "--max-steps", "10"}), 2, {"more than 10 steps"});
}

TEST(Hostile, ARunOverItsMemoryBudgetIsRefusedNamingTheFlag) {
  for (const char* cmd : {"run", "check"}) {
    expect_exit(run_cli({cmd, "sd_attention", "--param", "seqlen=4096", "--param", "d_head=128",
                         "--memory-budget-mib", "1"}),
                2, {"MiB", "--memory-budget-mib"});
  }
}

// A program too large to parse within the budget (a small kernel unrolled into millions of
// statements) is refused before parsing, naming the flag, by every command that reads one.
TEST(Hostile, AProgramTooLargeToParseIsRefusedBeforeParsing) {
  std::string text =
      "kernel big\ninput a : hbm fp32 [128, 64]\noutput out : hbm fp32 [128, 64]\n"
      "buffer t : sbuf fp32 [128, 64]\n";
  for (int i = 0; i < 20000; ++i) text += "memset t[:, :], value=0\n";
  text += "dma_copy out[:, :], t[:, :]\n";
  const std::string file = write_temp("unrolled.nkir", text);
  for (const char* cmd : {"dump", "run", "prove"}) {
    expect_exit(run_cli({cmd, file, "--memory-budget-mib", "8"}), 2,
                {"lines needs about", "--memory-budget-mib"});
  }
  // Control: the same program within the default budget.
  const CliResult ok = run_cli({"dump", file});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("kernel big"), std::string::npos);
}

TEST(Hostile, ABenchTraceOverItsMemoryLimitIsRefused) {
  expect_exit(run_cli({"bench", "sd_attention", "--param", "seqlen=4096", "--param", "d_head=64",
                       "--max-trace-mib", "1"}),
              2, {"--max-trace-mib"});
}

TEST(Hostile, AnOracleSpecTooLargeToEvaluateIsRefusedBeforeAllocating) {
  // 2^22 keys from one block of one key: a 8 MiB file that names 2^22 x 128 logical values.
  const int64_t keys = int64_t{1} << 22;
  std::string table;
  table.reserve(static_cast<size_t>(keys) * 2);
  for (int64_t j = 0; j < keys; ++j) table += j ? ",0" : "0";
  std::string vec = "[";
  for (int c = 0; c < 128; ++c) vec += c ? ",0.5" : "0.5";
  vec += "]";
  const std::string spec = R"({"batch":1,"heads":1,"kv_heads":1,"seqlen_q":1,"seqlen_kv":)" +
                           std::to_string(keys) + R"(,"d_head":128,"scale":0.1,)" +
                           R"("block_table":{"block_size":1,"num_blocks":1,"table":[[)" + table +
                           "]]},\"q\":[[[" + vec + "]]],\"k\":[[[" + vec + "]]],\"v\":[[[" + vec +
                           "]]]}";
  const std::string file = write_temp("paged.json", spec).string();
  expect_exit(run_cli({"oracle", "--spec", file}), 2, {"paged.json", "--max-macs"});
  expect_exit(run_cli({"oracle", "--spec", file, "--max-macs", "9223372036854775807"}), 2,
              {"paged.json", "--memory-budget-mib"});
}

// --- 5. Long but legal work runs, and says how far it is -------------------------------------

TEST(Hostile, LongJobsReportProgressOnStandardErrorOnly) {
  // Every update is printed when the interval is 0 (normally: after 2 s, every 2 s), and
  // NCVERIFY_PROGRESS=always prints although standard error is a file here (by default progress
  // shows only on a terminal: tools/tests/cli_progress_test.cpp).
  const CliResult check = run_shell(
      "NCVERIFY_PROGRESS=always NCVERIFY_PROGRESS_EVERY_S=0 $N check sd_attention --param "
      "seqlen=128 --param "
      "d_head=16 --cases 5 --json > " +
      shell_quote((temp_dir() / "check.json").string()));
  EXPECT_EQ(check.exit_code, 0) << describe(check);
  EXPECT_NE(check.err.find("ncverify check: 1/5 cases"), std::string::npos) << describe(check);
  EXPECT_NE(check.err.find("ncverify check: 5/5 cases done in"), std::string::npos)
      << describe(check);
  // Standard output is still exactly the JSON result.
  EXPECT_EQ(read_file(temp_dir() / "check.json").front(), '{');
  // The default sweep plans its shapes as it goes: the closing line counts every shape it ran.
  const CliResult sweep = run_shell(
      "NCVERIFY_PROGRESS=always NCVERIFY_PROGRESS_EVERY_S=0 $N check sd_attention --param "
      "d_head=16 --param "
      "use_causal_mask=false --param mixed_precision=true --param dtype=fp32 --budget-s 2");
  EXPECT_EQ(sweep.exit_code, 0) << describe(sweep);
  const size_t closing = sweep.err.rfind("ncverify check: ");
  ASSERT_NE(closing, std::string::npos) << describe(sweep);
  int done = -1, total = -2;
  ASSERT_EQ(std::sscanf(sweep.err.c_str() + closing, "ncverify check: %d/%d shapes done in", &done,
                        &total),
            2)
      << describe(sweep);
  EXPECT_EQ(done, total) << describe(sweep);
  EXPECT_GT(total, 0) << describe(sweep);
  const CliResult prove = run_shell(
      "NCVERIFY_PROGRESS=always NCVERIFY_PROGRESS_EVERY_S=0 $N prove sd_attention --gen all");
  EXPECT_EQ(prove.exit_code, 0) << describe(prove);
  EXPECT_NE(prove.err.find("ncverify prove: 3/"), std::string::npos) << describe(prove);
  // Without the variable, a short job stays quiet.
  const CliResult quiet = run_cli(
      {"check", "sd_attention", "--param", "seqlen=128", "--param", "d_head=16", "--cases", "2"});
  EXPECT_EQ(quiet.err, "") << describe(quiet);
}

TEST(Hostile, ACheckBeyondWhatTheOracleCanHoldIsRefusedNamingTheParams) {
  // A rewrite that widens its own domain far past the kernel it claims to be like.
  const CliResult dump = run_cli({"dump", "sd_attention"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  std::string text = dump.out;
  const std::string domain = "param seqlen in [128, 4096]";
  const size_t at = text.find(domain);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, domain.size(), "param seqlen in [128, 1099511627776]");
  const std::string file = write_temp("wide_domain.nkir", text).string();
  expect_exit(run_cli({"check", file, "--like", "sd_attention", "--param", "seqlen=1099511627776",
                       "--param", "d_head=64"}),
              2, {"wide_domain.nkir", "seqlen=1099511627776", "attention spec"});
}

// --- 6. Nothing the user gave is lost; every write is checked --------------------------------

TEST(Hostile, NoFileIsReplacedWithoutForce) {
  const fs::path trace = write_temp("kept_trace.json", "precious");
  expect_exit(run_cli({"bench", "sd_attention", "--param", "seqlen=256", "--param", "d_head=64",
                       "--trace", trace.string()}),
              2, {"kept_trace.json", "--force"});
  EXPECT_EQ(read_file(trace), "precious");
  const CliResult forced = run_cli({"bench", "sd_attention", "--param", "seqlen=256", "--param",
                                    "d_head=64", "--trace", trace.string(), "--force"});
  EXPECT_EQ(forced.exit_code, 0) << describe(forced);
  EXPECT_NE(read_file(trace), "precious");
  const fs::path out = write_temp("kept_out.json", "precious");
  const std::string spec =
      write_temp("tiny_spec.json", R"({"batch":1,"heads":1,"kv_heads":1,"seqlen_q":1,)"
                                   R"("seqlen_kv":1,"d_head":1,"scale":1,)"
                                   R"("q":[[[[1]]]],"k":[[[[1]]]],"v":[[[[1]]]]})")
          .string();
  expect_exit(run_cli({"oracle", "--spec", spec, "--out", out.string()}), 2, {"kept_out.json"});
  EXPECT_EQ(read_file(out), "precious");
}

TEST(Hostile, DevicesAreNeverReplacedEvenWithForce) {
  expect_exit(run_cli({"bench", "sd_attention", "--param", "seqlen=256", "--param", "d_head=64",
                       "--trace", "/dev/full", "--force"}),
              2, {"/dev/full", "not a regular file"});
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(Hostile, AnUnwritablePathIsAnErrorNamingIt) {
  const fs::path file = write_temp("a_file", "x");
  expect_exit(run_cli({"bench", "sd_attention", "--param", "seqlen=256", "--param", "d_head=64",
                       "--trace", (file / "trace.json").string()}),
              2, {"a_file/trace.json"});
}

TEST(Hostile, LostStandardOutputIsExitTwo) {
  expect_exit(run_shell("$N list > /dev/full"), 2, {"standard output"});
  expect_exit(run_shell("$N list >&-"), 2, {"standard output"});
  expect_exit(run_shell("$N run sd_attention --param seqlen=256 --param d_head=64 > /dev/full"), 2,
              {"standard output"});
}

// --- 7. JSON inputs: one document, validated fields -----------------------------------------

TEST(Hostile, JsonWithTrailingBytesIsRefusedWithTheOffset) {
  const std::string nul = write_temp("nul.json", std::string("{\"batch\": 1}\0", 13)).string();
  expect_exit(run_cli({"oracle", "--spec", nul}), 2, {"nul.json:1:13", "NUL"});
  const std::string junk = write_temp("junk.json", "{\"batch\": 1} trailing").string();
  expect_exit(run_cli({"oracle", "--spec", junk}), 2, {"junk.json", "byte offset"});
}

// A calibration folder with one file `text`.
std::string calibration_dir(const std::string& name, const std::string& text) {
  const fs::path dir = temp_dir() / name;
  fs::create_directories(dir);
  std::ofstream(dir / "data.json", std::ios::binary | std::ios::trunc) << text;
  return dir.string();
}

TEST(Hostile, CalibrationDataIsValidatedFieldByField) {
  const std::string ok_step = R"({"kernel": "sd_attention", "latency_ms": 0.5})";
  const std::string params = R"("params": {"seqlen": 512, "d_head": 64})";
  const struct {
    const char* name;
    std::string text;
    const char* path;
  } cases[] = {
      {"negative", "{" + params + R"(, "steps": [{"kernel": "sd_attention", "latency_ms": -1}]})",
       "steps[0].latency_ms must be a positive finite number"},
      {"zero", "{" + params + R"(, "steps": [{"kernel": "sd_attention", "latency_ms": 0}]})",
       "steps[0].latency_ms"},
      {"kernel_type", "{" + params + R"(, "steps": [)" + ok_step + R"(, {"kernel": 3}]})",
       "steps[1].kernel must be a string"},
      {"param_type", R"({"params": {"seqlen": "512"}, "steps": [)" + ok_step + "]}",
       "params.seqlen must be an integer"},
      {"steps_type", "{" + params + R"(, "steps": {}})", "steps must be an array"},
      {"generation_type", "{" + params + R"(, "generation": 1, "steps": []})",
       "generation must be a string"},
      {"not_object", "[1, 2]", "the document must be an object"},
      {"unknown_param",
       R"({"params": {"seqlen": 512, "d_head": 64, "bogus": 1}, "steps": [)" + ok_step + "]}",
       "bogus"},
  };
  for (const auto& c : cases) {
    const std::string dir = calibration_dir(std::string("calibration_") + c.name, c.text);
    const CliResult r = run_cli({"calibrate", "--data", dir});
    expect_exit(r, 2, {"data.json", c.path});
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << c.name << "\n" << describe(r);
  }
}

// --- 8. Numeric options: refused out of range, never clamped; no ignored combinations --------

TEST(Hostile, OutOfRangeNumbersAreRefused) {
  const std::vector<std::string> sd = {"sd_attention", "--param", "seqlen=256", "--param",
                                       "d_head=64"};
  const auto with = [&](const std::string& cmd, std::vector<std::string> extra) {
    std::vector<std::string> args{cmd};
    args.insert(args.end(), sd.begin(), sd.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  expect_exit(with("run", {"--seed", "-1"}), 2, {"--seed", "-1"});
  expect_exit(with("run", {"--seed", "18446744073709551616"}), 2, {"--seed"});
  expect_exit(with("check", {"--cases", "0"}), 2, {"--cases"});
  expect_exit(with("check", {"--cases", "-5"}), 2, {"--cases"});
  expect_exit(with("run", {"--memory-budget-mib", "0"}), 2, {"--memory-budget-mib"});
  expect_exit(with("run", {"--max-steps", "0"}), 2, {"--max-steps"});
  expect_exit(with("bench", {"--max-trace-mib", "0"}), 2, {"--max-trace-mib"});
  expect_exit(run_cli({"prove", "sd_attention", "--timeout-ms", "0"}), 2, {"--timeout-ms"});
  expect_exit(run_cli({"list", "--max-input-mib", "0"}), 2, {"--max-input-mib"});
}

TEST(Hostile, OptionsThatWouldBeIgnoredAreErrors) {
  expect_exit(run_cli({"bench", "sd_attention", "--param", "seqlen=256", "--param", "d_head=64",
                       "--seqlens", "512,1024"}),
              2, {"--seqlens"});
  expect_exit(run_cli({"check", "scale_applied_twice", "--param", "seqlen=128", "--param",
                       "d_head=1", "--values", "uniform:s=0:seed=0", "--cases", "4"}),
              2, {"--cases", "--values"});
  expect_exit(run_cli({"check", "scale_applied_twice", "--param", "seqlen=128", "--param",
                       "d_head=1", "--values", "uniform:s=0:seed=0", "--seed", "4"}),
              2, {"--seed", "--values"});
  expect_exit(run_cli({"bench", "sd_attention", "--param", "seqlen=256", "--param", "d_head=64",
                       "--force"}),
              2, {"--force"});
  expect_exit(run_cli({"frontier", "sd_attention", "--param", "d_head=64", "--up-to", "128"}), 2,
              {"--up-to 128", "declared maximum 4096"});
  const std::string spec = write_temp("force_spec.json", "{}").string();
  expect_exit(run_cli({"oracle", "--spec", spec, "--force"}), 2, {"--force"});
}

// --- 9. One exit-code convention --------------------------------------------------------------

TEST(Hostile, ADynamicCheckFailureIsExitOneInRunCheckAndBench) {
  const CliResult dump = run_cli({"dump", "sd_attention"});
  ASSERT_EQ(dump.exit_code, 0) << describe(dump);
  std::string text = dump.out;
  const std::string load = "v[i_k_seq_tile * 128:+128, :]";
  const size_t at = text.find(load);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, load.size(), "v[i_k_seq_tile * 128 + 1:+128, :]");  // the last tile overruns
  const std::string file = write_temp("shifted_v.nkir", text).string();
  const std::vector<std::string> shape = {"--param", "seqlen=256", "--param", "d_head=64"};
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", file}, {"bench", file}, {"check", file, "--like", "sd_attention"}}) {
    std::vector<std::string> all = args;
    all.insert(all.end(), shape.begin(), shape.end());
    const CliResult r = run_cli(all);
    EXPECT_EQ(r.exit_code, 1) << args[0] << "\n" << describe(r);
    EXPECT_NE((r.out + r.err).find("out_of_bounds"), std::string::npos) << args[0] << "\n"
                                                                        << describe(r);
  }
}

}  // namespace
}  // namespace ncv::cli_test
