// `ncverify report`'s row builder in process (tools/report_rows.h, report_timeline.h), checked
// against the built binary: a row's latency is the number `ncverify bench` prints for the same
// kernel, shape and generation; a rewrite's predecessor latency is its predecessor's (a fake
// rewrite of a slower kernel shows a speed-up far from 1, so a predecessor looked up wrongly
// would show); a failing catalogue bug's replay lines reproduce each failing case through
// `ncverify check`; the timeline's busy intervals merge and stay under their cap.
#include "tools/report_rows.h"

#include <gtest/gtest.h>

#include <sstream>

#include "kernels/registry.h"
#include "properties/bug_catalogue.h"
#include "tools/report_sweeps.h"
#include "tools/report_timeline.h"
#include "tools/tests/cli_test_support.h"

namespace ncv::cli {
namespace {

using cli_test::CliResult;
using cli_test::run_cli;

// `ncverify bench KERNEL -p seqlen=.. -p d_head=.. --gen trn1 --json`'s latency_us.
double bench_latency(const std::string& kernel, const ParamValues& params) {
  std::vector<std::string> args{"bench", kernel, "--gen", "trn1", "--json"};
  for (const auto& [name, value] : params) {
    args.push_back("-p");
    args.push_back(name + "=" + std::to_string(value));
  }
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("latency_us").get<double>();
}

CheckRowRequest request(const std::string& target, const kernels::Variant& v,
                        const Program& program, const kernels::Options& given, int cases) {
  CheckRowRequest req;
  req.target = target;
  req.variant = &v;
  req.program = &program;
  req.given = given;
  req.options = v.resolve(given);
  req.params = report_params(program, 128);
  req.mask = "none";
  req.check.cases = cases;
  req.check.run.record_trace = false;
  req.check.run.hw = &hw_config_trn1();
  return req;
}

TEST(ReportRows, LatencyAndSpeedUpAreWhatBenchPrints) {
  // A rewrite of naive_attention (eager, every stage through HBM) that is sd_attention: its
  // row's predecessor latency must be naive_attention's, not its own (a speed-up of 1).
  kernels::Variant fake = *kernels::find_variant("sd_attention");
  fake.name = "fake_rewrite_of_naive";
  fake.rewrites = "naive_attention";
  const Program p = fake.build(fake.resolve({}));
  LatencyCache cache;
  const CheckRow row = run_check_row(request(fake.name, fake, p, {}, 1), cache);
  const nlohmann::json& j = row.json;
  ASSERT_TRUE(row.result.pass) << row.result.summary();
  EXPECT_EQ(j.at("params"), (nlohmann::json{{"d_head", 64}, {"seqlen", 128}}));
  const double own = j.at("latency_us").get<double>();
  const double pred = j.at("predecessor_latency_us").get<double>();
  EXPECT_EQ(j.at("predecessor"), "naive_attention");
  EXPECT_GT(own, 0);
  EXPECT_DOUBLE_EQ(own, bench_latency("sd_attention", row.result.params));
  EXPECT_DOUBLE_EQ(pred, bench_latency("naive_attention", row.result.params));
  EXPECT_DOUBLE_EQ(j.at("speedup").get<double>(), pred / own);
  EXPECT_GT(pred / own, 1.5) << "naive_attention is several times slower than sd_attention";
  EXPECT_EQ(j.at("normalized_errors").size(), 1u);
  EXPECT_LE(j.at("normalized_errors").at(0).get<double>(), 1.0);
  EXPECT_TRUE(j.at("replay").empty()) << "a passing row has nothing to replay";
  EXPECT_EQ(j.at("family"), "sd_attention");

  // A predecessor that does not run on the row's generation has no latency, and says why.
  fake.rewrites = "attention_tkg";
  const PredecessorLatency none =
      predecessor_latency(fake, {}, row.result.params, hw_config_trn1(), cache);
  EXPECT_FALSE(none.latency.us);
  EXPECT_NE(none.latency.error.find("runs on trn2, trn3 only"), std::string::npos)
      << none.latency.error;
  nlohmann::json fields;
  add_latency_fields(fields, row.latency, none);
  EXPECT_TRUE(fields.at("speedup").is_null());
  EXPECT_TRUE(fields.at("predecessor_latency_us").is_null());
  EXPECT_EQ(fields.at("predecessor_latency_error"), none.latency.error);
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(ReportRows, ReplayLinesReproduceEachFailingCaseOfACatalogueBug) {
  const props::BugEntry* bug = props::find_bug("scale_applied_twice");
  ASSERT_NE(bug, nullptr);
  const kernels::Variant& base = *kernels::find_variant(bug->base);
  const Program broken = bug->edit(base.build(base.resolve(bug->options)));
  LatencyCache cache;
  const CheckRow row = run_check_row(request(bug->name, base, broken, bug->options, 2), cache);
  const nlohmann::json& j = row.json;
  ASSERT_FALSE(row.result.pass) << "softmax(s / 64) is not attention";
  ASSERT_EQ(j.at("replay").size(), 2u) << j.dump(1);
  EXPECT_GT(j.at("latency_us").get<double>(), 0);
  EXPECT_TRUE(j.at("predecessor").is_null()) << "a catalogue entry is nobody's rewrite";
  for (size_t i = 0; i < row.result.cases.size(); ++i) {
    const kernels::CaseResult& c = row.result.cases[i];
    const std::string line = j.at("replay").at(i);
    std::vector<std::string> args = words(line);
    ASSERT_GE(args.size(), 3u);
    EXPECT_EQ(args[0], "ncverify");
    EXPECT_EQ(args[2], bug->name);
    args.erase(args.begin());
    args.push_back("--json");
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1) << line << "\n" << r.err;
    const auto replayed = nlohmann::json::parse(r.out);
    ASSERT_EQ(replayed.at("cases").size(), 1u) << line;
    const nlohmann::json& rc = replayed.at("cases").at(0);
    EXPECT_EQ(rc.at("distribution"), c.distribution) << line;
    EXPECT_EQ(rc.at("seed"), c.seed) << line;
    EXPECT_FALSE(rc.at("pass").get<bool>()) << line;
    // The same case: the same normalized error, to the bit.
    EXPECT_EQ(rc.at("case_bound_ratio").get<double>(),
              j.at("normalized_errors").at(i).get<double>())
        << line;
  }
}

TEST(ReportTimeline, BusyIntervalsMergeTouchingOnesAndStayUnderTheCap) {
  Schedule s;
  s.tracks = {Track{"core0 dma q0", 0, Engine::Dma, 0},
              Track{"core0 tensor", 0, Engine::Tensor, 0}};
  // tensor: [0, 10] [10, 20] touch; [15, 18] inside; [30, 40] apart. dma: [0, 5], [100, 200].
  for (auto [track, start, end] : std::vector<std::tuple<int, double, double>>{
           {1, 0, 10}, {1, 10, 20}, {1, 15, 18}, {1, 30, 40}, {0, 0, 5}, {0, 100, 200}}) {
    TimedInstance ti;
    ti.track = track;
    ti.start_ns = start * 1000;
    ti.end_ns = end * 1000;
    s.instances.push_back(ti);
  }
  s.makespan_ns = 200'000;
  const std::vector<int> order = track_order(s);
  ASSERT_EQ(order, (std::vector<int>{1, 0})) << "tensor before the DMA queues";
  double gap = -1;
  std::vector<BusyInterval> b = busy_intervals(s, order, 100, gap);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(gap, 0);
  EXPECT_EQ(b[0].track, 0);
  EXPECT_DOUBLE_EQ(b[0].start_us, 0);
  EXPECT_DOUBLE_EQ(b[0].end_us, 20);
  EXPECT_DOUBLE_EQ(b[1].start_us, 30);
  EXPECT_EQ(b[2].track, 1);
  EXPECT_DOUBLE_EQ(b[3].end_us, 200);
  // A cap of 2: the gaps are merged until one interval per track is left.
  b = busy_intervals(s, order, 2, gap);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_GE(gap, 10);
  EXPECT_DOUBLE_EQ(b[0].start_us, 0);
  EXPECT_DOUBLE_EQ(b[0].end_us, 40);
  EXPECT_DOUBLE_EQ(b[1].start_us, 0);
  EXPECT_DOUBLE_EQ(b[1].end_us, 200);
}

TEST(ReportSweeps, SeqlensArePowersOfTwoInTheDomainUpToTheCap) {
  Param s;
  s.name = "seqlen";
  s.lo = 128;
  s.hi = 4096;
  s.multiple_of = 128;
  EXPECT_EQ(sweep_seqlens(s, 8192), (std::vector<int64_t>{128, 256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(sweep_seqlens(s, 1000), (std::vector<int64_t>{128, 256, 512, 896}));
  s.lo = 512;
  s.hi = 6656;
  s.multiple_of = 512;
  EXPECT_EQ(sweep_seqlens(s, 8192), (std::vector<int64_t>{512, 1024, 2048, 4096, 6656}));
  s.lo = 1;
  s.hi = 8192;
  s.multiple_of = 1;
  EXPECT_EQ(sweep_seqlens(s, 8192), (std::vector<int64_t>{128, 256, 512, 1024, 2048, 4096, 8192}));
  // A domain above the cap: its least value alone.
  s.lo = 16384;
  s.hi = 16384;
  s.multiple_of = 8192;
  EXPECT_EQ(sweep_seqlens(s, 8192), (std::vector<int64_t>{16384}));
}

}  // namespace
}  // namespace ncv::cli
