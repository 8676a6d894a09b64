// Tests of source locations in the .nkir text form (model/nkir/NKIR.md, "Source locations"):
// `source "FILE"` and `@line N` round-trip into Program::source_file and InstrStmt::source_line,
// are not part of program equality, are refused with file:line:col when malformed, and name the
// line in a dynamic-check error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv {
namespace {

// A copy whose second instruction reads one row past the end of `a` at the last tile.
constexpr const char* kTraced =
    "kernel shifted_copy\n"
    "source \"shifted.py\"\n"
    "param N in [128, 1024] multiple_of 128\n"
    "input a : hbm fp32 [N, 64]\n"
    "output o : hbm fp32 [N, 64]\n"
    "\n"
    "for i in affine_range(N // 128) {\n"
    "  buffer t : sbuf fp32 [128, 64]\n"
    "  memset t[:, :], value=0\n"
    "  dma_copy t[:, :], a[i * 128 + 1:+128, :] @line 42\n"
    "  dma_copy o[i * 128:+128, :], t[:, :], queue=1 @line 43\n"
    "}\n";

std::vector<uint32_t> source_lines(const Program& p) {
  std::vector<uint32_t> lines;
  for_each_stmt(p, [&](const auto&, const Stmt& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) lines.push_back(i->source_line.value);
  });
  return lines;
}

TEST(NkirSourceLines, ParseAndPrintRoundTrip) {
  const Program p = parse_program(kTraced, "k.nkir");
  EXPECT_EQ(p.source_file.value, "shifted.py");
  EXPECT_EQ(source_lines(p), (std::vector<uint32_t>{0, 42, 43}));
  EXPECT_EQ(print_program(p), kTraced);
  const Program q = parse_program(print_program(p), "printed.nkir");
  EXPECT_EQ(q.source_file.value, p.source_file.value);
  EXPECT_EQ(source_lines(q), source_lines(p));
}

// Locations are provenance: the same program without them (a registered twin, a file edited by
// hand) is equal, and prints without `source` and `@line`.
TEST(NkirSourceLines, AreNotPartOfProgramEquality) {
  const Program p = parse_program(kTraced, "k.nkir");
  Program bare = p;
  bare.source_file.value.clear();
  for (Stmt& s : bare.body) {
    if (auto* l = std::get_if<Loop>(&s.node)) {
      for (Stmt& b : l->body) {
        if (auto* i = std::get_if<InstrStmt>(&b.node)) i->source_line.value = 0;
      }
    }
  }
  EXPECT_TRUE(bare == p);
  const std::string text = print_program(bare);
  EXPECT_EQ(text.find("source"), std::string::npos) << text;
  EXPECT_EQ(text.find('@'), std::string::npos) << text;
  EXPECT_EQ(source_lines(parse_program(text)), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(NkirSourceLines, AnyFileNameRoundTripsByteForByte) {
  Program p = parse_program(kTraced, "k.nkir");
  p.source_file.value = "dir with space/quo\"te\\back\nline\x7f\xc3\xa9.py";
  const std::string text = print_program(p);
  EXPECT_NE(text.find("source \"dir with space/quo\\\"te\\\\back\\x0aline\\x7f\xc3\xa9.py\"\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(parse_program(text).source_file.value, p.source_file.value);
  EXPECT_EQ(print_program(parse_program(text)), text);
}

void expect_error(const std::string& text, int line, int column, const std::string& detail) {
  try {
    parse_program(text, "k.nkir");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_EQ(e.column, column) << e.what();
    EXPECT_NE(e.detail.find(detail), std::string::npos) << e.what();
    const std::string prefix =
        "k.nkir:" + std::to_string(line) + ":" + std::to_string(column) + ": expected ";
    EXPECT_EQ(e.message.rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(NkirSourceLines, MalformedLocationsAreParseErrors) {
  const std::string h =
      "kernel k\n"
      "input a : hbm fp32 [128, 64]\n"
      "output o : hbm fp32 [128, 64]\n";  // lines 1-3
  const std::string copy = "dma_copy o[:, :], a[:, :] ";
  const std::string positive = "expected line number (a positive integer), got ";
  expect_error(h + copy + "@line -3\n", 4, 33, positive + "'-'");
  expect_error(h + copy + "@line x\n", 4, 33, positive + "'x'");
  expect_error(h + copy + "@line 1.5\n", 4, 33, "expected line number (a positive integer)");
  expect_error(h + copy + "@line\n", 4, 32, positive + "end of line");
  expect_error(h + copy + "@line 0\n", 4, 33, "expected line number in [1, 4294967295], got '0'");
  expect_error(h + copy + "@line 4294967296\n", 4, 33, "expected line number in [1, 4294967295]");
  expect_error(h + copy + "@lines 3\n", 4, 28, "expected 'line' after '@', got 'lines'");
  expect_error(h + copy + "@line 3 @line 4\n", 4, 35, "expected end of line, got '@'");
  expect_error(h + "dma_copy o[:, :] @line 3\n", 4, 18, "expected argument 'src' of dma_copy");
  expect_error("kernel k\nsource shifted.py\n", 2, 8,
               "expected file name (a double-quoted string), got 'shifted'");
  expect_error("kernel k\nsource \"open.py\n", 2, 8, "expected file name (a double-quoted string)");
  expect_error("kernel k\nsource \"a\\tb.py\"\n", 2, 10, "expected an escape");
  expect_error("kernel k\nsource \"\"\n", 2, 8, "expected a non-empty file name");
  expect_error(h + "source \"late.py\"\n", 4, 1, "expected the source line directly after");
}

// A dynamic-check failure of an instruction with a known line names it after the instruction.
TEST(NkirSourceLines, DynamicErrorNamesTheSourceLine) {
  const Program p = parse_program(kTraced, "k.nkir");
  const ParamValues params{{"N", 256}};
  const RunResult r = run_program(p, params, random_inputs(p, params, 1));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, CheckKind::out_of_bounds);
  EXPECT_EQ(r.error->source_file, "shifted.py");
  EXPECT_EQ(r.error->source_line, 42u);
  EXPECT_NE(r.error->message.find("a[i * 128 + 1:+128, :]` (shifted.py:42), at i=1"),
            std::string::npos)
      << r.error->message;
  // Without a location the message is as before; with a line but no file it says `line N`.
  DynamicError e = *r.error;
  e.source_line = 0;
  e.build_message();
  EXPECT_EQ(e.message.find("shifted.py"), std::string::npos) << e.message;
  e.source_line = 7;
  e.source_file.clear();
  e.build_message();
  EXPECT_NE(e.message.find("` (line 7)"), std::string::npos) << e.message;
}

}  // namespace
}  // namespace ncv
