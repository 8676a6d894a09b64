// The Perfetto trace (chrome_trace.h) read back line by line as printed: slices on one track never
// overlap (times compared in the printed 0.1 ns ticks, so a rounding sliver shows), tracks sort
// tensor, vector, scalar, gpsimd, dma q0, q1, ... on every core whatever ran first, and slices
// name their loop indices. The interpreter's loop values are checked here too: the same in value
// and trace-only runs, per SPMD core, and shared between the instances of one iteration.
#include "model/timing/chrome_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/ir/builder.h"

namespace ncv {
namespace {

// The text after `"key": ` up to the next ',' or '}' (numbers and strings without commas).
std::string field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\": ";
  const size_t at = line.find(k);
  if (at == std::string::npos) return "";
  const size_t from = at + k.size();
  return line.substr(from, line.find_first_of(",}", from) - from);
}

// The string value of `"key": "..."` (its first occurrence, or its last one), without quotes.
std::string string_field(const std::string& line, const std::string& key, bool last = false) {
  const std::string k = "\"" + key + "\": \"";
  const size_t at = last ? line.rfind(k) : line.find(k);
  if (at == std::string::npos) return "";
  const size_t from = at + k.size();
  return line.substr(from, line.find('"', from) - from);
}

// A printed µs time in 0.1 ns ticks, exactly as printed ("12.3456" -> 123456).
int64_t printed_ticks(const std::string& micros) {
  const size_t dot = micros.find('.');
  EXPECT_NE(dot, std::string::npos) << micros;
  EXPECT_EQ(micros.size() - dot - 1, 4u) << micros;
  return std::stoll(micros.substr(0, dot)) * 10000 + std::stoll(micros.substr(dot + 1));
}

struct Slice {
  std::string name, line;
  int64_t ts = 0, end = 0;
};

struct Printed {
  std::map<std::pair<int, int>, std::vector<Slice>> slices;  // per (pid, tid)
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<std::pair<int, int>, int> sort_index;
};

Printed print(const Program& p, const Trace& t, const Schedule& s) {
  std::ostringstream out;
  write_chrome_trace(out, p, t, s);
  Printed r;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    const std::string ph = field(line, "ph");
    if (ph.empty()) continue;
    const std::pair<int, int> track{
        std::stoi(field(line, "pid")),
        line.find("\"tid\"") == std::string::npos ? -1 : std::stoi(field(line, "tid"))};
    if (ph == "\"X\"") {
      Slice sl{string_field(line, "name"), line, printed_ticks(field(line, "ts")), 0};
      sl.end = sl.ts + printed_ticks(field(line, "dur"));
      r.slices[track].push_back(sl);
    } else if (field(line, "name") == "\"thread_name\"") {
      r.thread_names[track] = string_field(line, "name", true);
    } else if (field(line, "name") == "\"thread_sort_index\"") {
      r.sort_index[track] = std::stoi(field(line, "sort_index"));
    }
  }
  return r;
}

// "" when no two printed slices on one track overlap, else the first pair that does.
std::string printed_overlap(const Printed& pr) {
  for (auto [track, list] : pr.slices) {
    std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.ts < b.ts; });
    for (size_t i = 1; i < list.size(); ++i) {
      if (list[i - 1].end > list[i].ts) return list[i - 1].line + "\n  overlaps\n" + list[i].line;
    }
  }
  return "";
}

// A program whose instruction 0 the hand-made schedules below place freely.
Program one_memset() {
  Builder b("one");
  auto y = b.output("y", DType::fp32, {128, 16});
  auto t = b.sbuf("t", DType::fp32, {128, 16});
  b.memset(t(), 0.0f);
  b.dma_copy(y(), t());
  return b.finish();
}

// A trace of one event per instance and a schedule placing instance k on tracks[track[k]].
struct HandMade {
  Trace trace;
  Schedule schedule;
};

HandMade hand_made(std::vector<Track> tracks, const std::vector<TimedInstance>& instances) {
  HandMade h;
  h.schedule.tracks = std::move(tracks);
  for (const TimedInstance& ti : instances) {
    TraceEvent ev;
    const Track& tr = h.schedule.tracks.at(static_cast<size_t>(ti.track));
    ev.core = static_cast<uint16_t>(tr.core);
    ev.engine = tr.engine;
    ev.queue = static_cast<uint8_t>(tr.queue);
    h.trace.events.push_back(ev);
    h.schedule.instances.push_back(ti);
    h.schedule.makespan_ns = std::max(h.schedule.makespan_ns, ti.end_ns);
  }
  return h;
}

TEST(ChromeTrace, TouchingSlicesDoNotOverlapAfterRounding) {
  // 0.06 ns starts at tick 1 and 0.06 ns of duration also rounds to a tick: printing start and
  // duration rounded apart ended the first slice at tick 2, after the second one's start (1).
  const HandMade h = hand_made({{"core0 vector", 0, Engine::Vector}},
                               {{0.06, 0.12, 0}, {0.12, 0.30, 0}, {0.30, 1234.56785, 0}});
  const Printed pr = print(one_memset(), h.trace, h.schedule);
  ASSERT_EQ(pr.slices.size(), 1u);
  EXPECT_EQ(pr.slices.begin()->second.size(), 3u);
  EXPECT_EQ(printed_overlap(pr), "");
  EXPECT_EQ(pr.slices.begin()->second.back().end, 12346);  // the end itself is rounded
}

TEST(ChromeTrace, TracksComeInAFixedOrderOnEveryCore) {
  // Tracks in the order things first ran: the trace orders them by engine and queue instead.
  const HandMade h = hand_made(
      {{"core0 dma q1", 0, Engine::Dma, 1},
       {"core0 scalar", 0, Engine::Scalar},
       {"core1 vector", 1, Engine::Vector},
       {"core0 tensor", 0, Engine::Tensor},
       {"core0 dma q0", 0, Engine::Dma, 0},
       {"core0 gpsimd", 0, Engine::GpSimd},
       {"core0 vector", 0, Engine::Vector},
       {"core1 dma q0", 1, Engine::Dma, 0}},
      {{0, 1, 0}, {0, 1, 1}, {0, 1, 2}, {0, 1, 3}, {0, 1, 4}, {0, 1, 5}, {0, 1, 6}, {0, 1, 7}});
  const Printed pr = print(one_memset(), h.trace, h.schedule);
  std::map<int, std::vector<std::pair<int, std::string>>> per_core;
  for (const auto& [track, index] : pr.sort_index) {
    ASSERT_TRUE(pr.thread_names.count(track));
    per_core[track.first].emplace_back(index, pr.thread_names.at(track));
  }
  for (auto& [core, list] : per_core) std::sort(list.begin(), list.end());
  auto names = [&](int core) {
    std::vector<std::string> out;
    for (const auto& [index, name] : per_core[core]) out.push_back(name);
    return out;
  };
  EXPECT_EQ(names(0), (std::vector<std::string>{"core0 tensor", "core0 vector", "core0 scalar",
                                                "core0 gpsimd", "core0 dma q0", "core0 dma q1"}));
  EXPECT_EQ(names(1), (std::vector<std::string>{"core1 vector", "core1 dma q0"}));
  // Every slice sits on a named track: its tid is the track's fixed position, not its index.
  for (const auto& [track, list] : pr.slices) EXPECT_TRUE(pr.thread_names.count(track));
  EXPECT_EQ(pr.slices.size(), 8u);
}

// Two SPMD cores, each: a kernel-body memset, then for i in 0..2: for j in 0..3: memset t;
// then (in i) a copy of t. Sequential loops: each iteration overwrites the same buffers.
Program nested_loops() {
  Builder b("nested");
  b.grid(2);
  const Expr pid = Builder::program_id();
  auto y = b.output("y", DType::fp32, {256, 16});
  auto acc = b.sbuf("acc", DType::fp32, {128, 16});
  b.memset(acc(), 0.0f);
  b.sequential_range("i", 2, [&](Expr) {
    auto t = b.sbuf("t", DType::fp32, {128, 16});
    b.sequential_range("j", 3, [&](Expr) { b.memset(t(), 1.0f); });
    b.tensor_copy(acc(), t());
  });
  b.dma_copy(y({ds(pid * 128, 128), all()}), acc());
  return b.finish();
}

TEST(ChromeTrace, SlicesNameTheirLoopIndices) {
  const Program p = nested_loops();
  RunOptions trace_only;
  trace_only.compute_values = false;
  const RunResult values = run_program(p, {}, {});
  const RunResult traced = run_program(p, {}, {}, trace_only);
  ASSERT_FALSE(values.error) << values.error->message;
  ASSERT_FALSE(traced.error) << traced.error->message;
  EXPECT_EQ(values.trace, traced.trace);
  const Trace& t = traced.trace;
  // Per core: body memset, 2 x (3 memsets + copy), store.
  ASSERT_EQ(t.events.size(), 2u * (1 + 2 * 4 + 1));
  // One run per innermost iteration and core; the copy after j reuses a prefix of the last run.
  EXPECT_EQ(t.loop_values.size(), 2u * 2 * 3 * 2);
  for (int core = 0; core < 2; ++core) {
    std::vector<std::vector<int64_t>> seen;
    for (const TraceEvent& ev : t.events) {
      if (ev.core != core) continue;
      seen.emplace_back(t.loop_values.begin() + ev.loop_values_begin,
                        t.loop_values.begin() + ev.loop_values_begin + ev.num_loop_values);
    }
    const std::vector<std::vector<int64_t>> expected = {{},     {0, 0}, {0, 1}, {0, 2}, {0},
                                                        {1, 0}, {1, 1}, {1, 2}, {1},    {}};
    EXPECT_EQ(seen, expected) << "core " << core;
  }

  const Schedule s = schedule_trace(p, t, cost_table_trn1());
  // The schedule itself never overlaps on a track (exactly, no tolerance): what printing relies on.
  std::map<int, std::vector<std::pair<double, double>>> per_track;
  for (const TimedInstance& ti : s.instances)
    per_track[ti.track].emplace_back(ti.start_ns, ti.end_ns);
  for (auto& [track, list] : per_track) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) EXPECT_LE(list[i - 1].second, list[i].first);
  }
  const Printed pr = print(p, t, s);
  EXPECT_EQ(printed_overlap(pr), "");
  std::map<std::string, int> names;
  for (const auto& [track, list] : pr.slices) {
    for (const Slice& sl : list) {
      ++names[sl.name];
      const size_t bracket = sl.name.find('[');
      EXPECT_EQ(bracket == std::string::npos, sl.line.find("\"loop\"") == std::string::npos)
          << sl.line;
    }
  }
  EXPECT_EQ(names["memset"], 2);
  EXPECT_EQ(names["memset [i=1, j=2]"], 2);
  EXPECT_EQ(names["tensor_copy [i=0]"], 2);
  EXPECT_EQ(names["dma_copy"], 2);
  int with_loop_arg = 0;
  for (const auto& [track, list] : pr.slices) {
    for (const Slice& sl : list) {
      if (sl.name == "memset [i=1, j=2]") {
        EXPECT_NE(sl.line.find("\"loop\": {\"i\": 1, \"j\": 2}"), std::string::npos) << sl.line;
        ++with_loop_arg;
      }
    }
  }
  EXPECT_EQ(with_loop_arg, 2);
}

// A grid-2 program run through the interpreter and the scheduler: one Perfetto process per core
// ("core 0", "core 1"), each with its own engine and DMA-queue tracks and its own slices.
TEST(ChromeTrace, EachSpmdCoreIsOneProcessWithItsOwnEngineTracks) {
  const Program p = nested_loops();
  RunOptions trace_only;
  trace_only.compute_values = false;
  const RunResult r = run_program(p, {}, {}, trace_only);
  ASSERT_FALSE(r.error) << r.error->message;
  const Schedule s = schedule_trace(p, r.trace, cost_table_trn1());
  std::ostringstream out;
  write_chrome_trace(out, p, r.trace, s);
  std::map<int, std::string> processes;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    if (field(line, "name") == "\"process_name\"") {
      processes[std::stoi(field(line, "pid"))] = string_field(line, "name", true);
    }
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{0, "core 0"}, {1, "core 1"}}));
  const Printed pr = print(p, r.trace, s);
  for (int core = 0; core < 2; ++core) {
    std::vector<std::string> tracks;
    for (const auto& [track, name] : pr.thread_names) {
      if (track.first == core) tracks.push_back(name);
    }
    // The memsets and the copy on compute engines, the store on a DMA queue.
    EXPECT_GE(tracks.size(), 2u) << "core " << core;
    const std::string prefix = "core" + std::to_string(core) + " ";
    bool dma = false;
    for (const std::string& t : tracks) {
      EXPECT_EQ(t.rfind(prefix, 0), 0u) << t;
      dma = dma || t.find("dma q") != std::string::npos;
    }
    EXPECT_TRUE(dma) << "core " << core;
    size_t slices = 0;
    for (const auto& [track, list] : pr.slices) slices += track.first == core ? list.size() : 0;
    EXPECT_EQ(slices, 10u) << "core " << core;  // body memset, 2 x (3 memsets + copy), store
  }
}

}  // namespace
}  // namespace ncv
